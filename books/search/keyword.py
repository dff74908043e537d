"""The keyword side: which highlights have the query's words, and their order.

PostgreSQL full-text search over `Highlight.search_text` (text + note, accent- and
case-folded in Python) through `books.models.search_document()`: the words as written plus
their English and Spanish stems. All terms first; when nothing has them all, any term.
PostgreSQL decides *which* highlights match, through the GIN index; the order among them
is BM25 computed here (see `_bm25`).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import BooleanField, QuerySet
from django.db.models.expressions import RawSQL

from books.models import Highlight, search_document
from books.search.query import ParsedQuery, query_terms, stems_of, tsquery
from books.search.refreshed import Refreshed
from books.statements import execute_with_settings
from books.text import is_prefix, literal_pattern

# Highlights read for the all-words pass, and per word in the any-word pass. A word in more
# highlights than this is common: its first matches are ranked, not all of them, which keeps
# a query for "that" in a library of 100,000 nearly as fast as one for "funes". On STS-B
# dev, 100 per word ranks as well as 200 (keyword Recall@1 0.828 against 0.830).
KEYWORD_CANDIDATES = 300
TERM_CANDIDATES = 100
# In the any-word fallback, a word in this share of all highlights or more ("the", "de") is
# read only when the others find nothing. On STS-B dev, 0.02 cost keyword search 1.5 points
# of Recall@1 ("man" is a content word among captions); 0.1 costs 0.3 and halves the time
# of a sentence-long query.
COMMON_WORD_SHARE = 0.1
WORD_SHARES_TTL_SECONDS = 600.0
# BM25's usual constants: term-frequency saturation and length normalization.
BM25_K1 = 1.2
BM25_B = 0.75
_STAND_IN = "\x1fexogram-query\x1f"


@dataclass(frozen=True)
class KeywordHits:
    # Every highlight read that matches, best first: a search by words pages through all
    # of them, a hybrid search fuses the first DEPTH.
    ranked: list[int]
    passed: str  # "all", "any" or ""
    capped: bool = False  # more match than were read
    # The any-word pass's candidates, and the units it read whole (fewer matches than
    # TERM_CANDIDATES) by their tsquery text: every highlight of the library with one of
    # those words is among the candidates (see `keyword_hits`' `known`).
    candidates: Mapping[int, _Candidate] = field(default_factory=dict, repr=False)
    read_whole: Mapping[str, int] = field(default_factory=dict)


def matching(library: QuerySet[Highlight], tsquery: SearchQuery) -> QuerySet[Highlight]:
    # The expression must be the GIN index's own, search_document(), or PostgreSQL parses
    # every highlight's text instead of reading the index.
    return library.annotate(search=search_document()).filter(search=tsquery)


def word_pattern(words: Sequence[str]) -> str:
    # PostgreSQL's regular expressions: \m and \M are the start and the end of a word. A
    # lone Chinese or Japanese character at the end is the start of a pair (`search_words`).
    end = "" if words and is_prefix(words, len(words) - 1) else r"\M"
    return r"\m" + r"\W+".join(re.escape(word) for word in words) + end


def written_pattern(text: str, words: Sequence[str], *, name: bool = False) -> str:
    """A unit found as written (ParsedQuery.as_written), as a regular expression on the
    folded text: a phrase's words in order, a name with its symbols ("c++": `name`)."""
    return literal_pattern(text) if name else word_pattern(words)


def _unit_pattern(
    text: str, words: Sequence[str], stems: dict[str, tuple[str, ...]], *, name: bool = False
) -> str:
    """A unit as a regular expression on the folded text: a word, or a word of its stem
    and up to four more letters ("habit" → habits, habitual); a phrase or a name with
    symbols as written."""
    if text.startswith('"') or name or len(words) > 1 or is_prefix(words, 0):
        return written_pattern(text, words, name=name)
    forms = [re.escape(words[0]), *(re.escape(stem) + r"\w{0,4}" for stem in stems[words[0]])]
    return r"\m(?:" + "|".join(forms) + r")\M"


def keyword_candidates_sql(
    library: QuerySet[Highlight],
    tsqueries: Sequence[str],
    limit: int,
    check: Sequence[str] = (),
) -> tuple[str, list[Any]]:
    """One statement: up to `limit` highlights per tsquery (to_tsquery('simple', …) text), as
    (query index, id, length of the folded text, which of the `check` patterns it has).

    Each query's matches are a MATERIALIZED CTE read through the GIN index as a bitmap: with
    the LIMIT inside, the planner would rather walk the table in order and parse each text
    (measured: 200 ms instead of 5 ms for a word in half of 100,000 highlights). A unit to
    check is a regular expression on each candidate's folded text (~3 µs).
    """
    return _candidates_sql(_matching_sql(library), tsqueries, limit, check)


def _matching_sql(library: QuerySet[Highlight]) -> tuple[str, tuple[Any, ...]]:
    """The library's highlights that have a stand-in query's words, as SQL: compiled once
    for a search and given each query's text in place of the stand-in, since compiling a
    queryset cost more than running the statement (and the fallback pass reads the same
    library again)."""
    condition, condition_params = _matching_condition()
    sql, params = (
        library.filter(RawSQL(condition, condition_params, output_field=BooleanField()))
        .values_list("id", "search_text", "book_id")
        .query.sql_with_params()
    )
    return sql, tuple(params)


@functools.cache
def _matching_condition() -> tuple[str, tuple[Any, ...]]:
    """`matching`'s condition for the stand-in query, as SQL: the same for every library, so
    compiled once per process (the index's expression took 0.4 ms of each compile, the
    library itself 0.1)."""
    query = matching(Highlight.objects.order_by(), tsquery(_STAND_IN)).query
    sql, params = query.get_compiler(connection.alias).compile(query.where)
    return sql, tuple(params)


def _candidates_sql(
    matching_sql: tuple[str, tuple[Any, ...]],
    tsqueries: Sequence[str],
    limit: int,
    check: Sequence[str] = (),
) -> tuple[str, list[Any]]:
    sql, template = matching_sql
    ctes: list[str] = []
    selects: list[str] = []
    params: list[Any] = []
    for index, text in enumerate(tsqueries):
        ctes.append(f"query_{index} AS MATERIALIZED ({sql})")
        params.extend(text if value == _STAND_IN else value for value in template)
    # In the order of the placeholders: the patterns in the SELECT list, then the LIMITs.
    has = ", ".join(["search_text ~ %s"] * len(check))
    params.extend(check)
    for index in range(len(tsqueries)):
        selects.append(
            f"(SELECT {index} AS query, id, book_id, search_text FROM query_{index} LIMIT %s)"
        )
        params.append(limit)
    return (
        f"WITH {', '.join(ctes)} SELECT query, id, length(search_text), book_id, "
        f"ARRAY[{has}]::boolean[] FROM ({' UNION ALL '.join(selects)}) AS candidates",
        params,
    )


class _Candidate(NamedTuple):
    # A tuple, not a dataclass: a search makes a thousand of these (0.3 µs each, not 1).
    length: int
    units: frozenset[int]
    book_id: int


def _candidates(
    matching_sql: tuple[str, tuple[Any, ...]],
    tsqueries: Sequence[str],
    limit: int,
    found_by: Sequence[Collection[int]],
    patterns: Sequence[str],
    check: Sequence[int] = (),
) -> dict[int, _Candidate]:
    """Candidates by id, with the units each has: those its query stands for
    (`found_by[i]` for query i) and those of `check` its text has (`patterns[i]`)."""
    sql, params = _candidates_sql(matching_sql, tsqueries, limit, [patterns[i] for i in check])
    # One process reads the candidates: the planner costs each CTE for all its matches, not
    # the LIMIT read from it, and a word in thousands of highlights got a parallel bitmap
    # scan, whose LIMIT keeps whichever rows the workers hand over first. The same query
    # then found other highlights from run to run (at 100,000 highlights, 17 of 30 sentence
    # queries by keyword differed between two runs), and two more processes did the work.
    with connection.cursor() as cursor:
        execute_with_settings(cursor, {"max_parallel_workers_per_gather": 0}, sql, params)
        rows = cursor.fetchall()
    found: dict[int, _Candidate] = {}
    by_query = [frozenset(units) for units in found_by]
    for query, pk, length, book_id, has in rows:
        present = by_query[query]
        if check:
            present = present.union(unit for unit, yes in zip(check, has, strict=True) if yes)
        earlier = found.get(pk)
        if earlier is not None:
            present |= earlier.units
        found[pk] = _Candidate(length, present, book_id)
    return found


def _read_word_shares() -> dict[str, float]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = %s",
            ["highlight_search_stems_gin"],
        )
        row = cursor.fetchone()
    # The frequency array ends with three summary figures, past the last word.
    return dict(zip(row[0], row[1], strict=False)) if row and row[0] else {}


_word_shares = Refreshed(_read_word_shares, ttl=WORD_SHARES_TTL_SECONDS)


def forget_word_shares() -> None:
    """Read the statistics afresh at the next search (after an ANALYZE, in tests)."""
    _word_shares.forget()


def word_shares() -> dict[str, float]:
    """The share of highlights each common word is in, from PostgreSQL's own statistics.

    ANALYZE keeps the most common lexemes of the GIN index's expression with their
    frequencies (pg_stats.most_common_elems): free to read, where counting a word's
    highlights costs as much as a search. Over all readers, which is fine for telling "the"
    from "cartographer". Re-read every few minutes; empty until the first ANALYZE.
    """
    return _word_shares.get()


def _bm25(candidates: dict[int, _Candidate], idf: Sequence[float]) -> list[int]:
    """Ids ordered by BM25, best first.

    Term frequency is 0 or 1: a highlight is a sentence or two, where a word seldom comes
    twice, and counting occurrences meant reading and scanning every candidate's text in
    Python, which cost more than the rest of the search. Length is in characters: BM25 only
    compares it with the average.
    """
    average = sum(c.length for c in candidates.values()) / max(1, len(candidates)) or 1.0
    weights = [weight * (BM25_K1 + 1) for weight in idf]
    scores = {}
    for pk, candidate in candidates.items():
        norm = 1 + BM25_K1 * (1 - BM25_B + BM25_B * candidate.length / average)
        scores[pk] = sum(weights[unit] / norm for unit in candidate.units)
    # Ties: the newer highlight (higher id) first.
    return [-newer for _, newer in sorted((-score, -pk) for pk, score in scores.items())]


def keyword_hits(
    library: QuerySet[Highlight],
    parsed: ParsedQuery,
    *,
    fallback: bool = True,
    common_alone: bool = True,
    known: KeywordHits | None = None,
    book_ids: Collection[int] = (),
) -> KeywordHits:
    """The highlights with the query's words, best first.

    `known`: the hits of another query in a library that `library` is the part of in
    `book_ids` (the books a query names, and the whole query's hits): a word it read whole
    is not read again.

    `common_alone`: whether the any-word fallback may rank highlights that share only the
    query's common words ("and", "in") when its other words find nothing. Asked for words
    alone, the reader gets them; beside the meaning half they are no match at all: on a
    4,605-highlight library, "volcanic eruptions in Iceland" found 100 highlights with "in"
    and said "About 199 close matches".
    """
    units = [words for _, words in parsed.units]
    if not units:
        return KeywordHits([], "")
    terms = query_terms(parsed)
    everything = list(range(len(units)))
    if known is not None and len(units) == 1 and not parsed.phrases:
        unit = known.read_whole.get(f"{terms.units[0]}{terms.exclusions}")
        if unit is not None:
            # Pass 1 of a single word that `known` read whole: its matches in these books.
            alone = frozenset(everything)
            candidates = {
                pk: _Candidate(c.length, alone, c.book_id)
                for pk, c in known.candidates.items()
                if unit in c.units and c.book_id in book_ids
            }
            return _ranked_hits(candidates, "all", everything)
    stems = stems_of({word for words in units for word in words})
    patterns = [
        _unit_pattern(text, words, stems, name=i in parsed.names)
        for i, (text, words) in enumerate(parsed.units)
    ]
    matching_sql = _matching_sql(library)
    # Pass 1: the reader's own query, every term required (and their or / - / quotes) but
    # the stop words standing alone, which are looked for in what the others find.
    required = [i for i in everything if i not in terms.optional]
    candidates = _candidates(
        matching_sql,
        [terms.informative],
        KEYWORD_CANDIDATES,
        [required],
        patterns,
        terms.optional,
    )
    passed = "all"
    reads_by_unit: dict[str, int] = {}
    # A phrase in quotes is required: the fallback never drops it.
    if not candidates and len(units) > 1 and fallback and not parsed.phrases:
        # Pass 2: any term (exclusions still apply), each term's matches read separately so
        # a highlight sharing two rare words is never crowded out by the thousands with
        # "the". Common words are not read, only looked for in the candidates the others
        # bring (they would bring thousands that share nothing else with the query), unless
        # the others find nothing and `common_alone` allows it; stop words, never.
        # Stop words standing alone are never read either, however rare the statistics
        # say they are: in an English library "de" and "la" are rare, and before ANALYZE
        # every word is; "the art of war" found passages that had only "the" and "of".
        content = [i for i in everything if i not in terms.stop_alone] or everything
        shares = word_shares()
        informative = [
            index
            for index in content
            if min(shares.get(word, 0.0) for word in units[index]) < COMMON_WORD_SHARE
        ]
        reads = [informative] if informative else []
        if common_alone and content != informative:
            reads.append(content)
        tsqueries: list[str] = []
        read: list[int] = []
        for read in reads:
            tsqueries = [f"{terms.units[i]}{terms.exclusions}" for i in read]
            found_by = [[i] for i in read]
            # A stop word is not looked for either: sharing "the" with the query says
            # nothing, and counted, it put "The river…" above "A cartographer…".
            common = [i for i in content if i not in read]
            candidates = _candidates(
                matching_sql, tsqueries, TERM_CANDIDATES, found_by, patterns, common
            )
            if candidates:
                break
        passed = "any"
        reads_by_unit = dict(zip(tsqueries, read, strict=True))
    return _ranked_hits(candidates, passed, everything, reads_by_unit)


def _ranked_hits(
    candidates: dict[int, _Candidate],
    passed: str,
    everything: Sequence[int],
    reads_by_unit: Mapping[str, int] | None = None,
) -> KeywordHits:
    """`reads_by_unit`: the any-word pass's queries (tsquery text → unit), if it ran."""
    if not candidates:
        return KeywordHits([], "")
    with_unit = Counter(unit for c in candidates.values() for unit in c.units)
    # Capped: a read hit its limit, so more match than were read.
    capped = len(candidates) >= KEYWORD_CANDIDATES
    read_whole = {}
    if reads_by_unit:
        capped = any(with_unit[i] >= TERM_CANDIDATES for i in reads_by_unit.values())
        read_whole = {t: i for t, i in reads_by_unit.items() if with_unit[i] < TERM_CANDIDATES}
    # BM25's inverse document frequency, from the candidates: the library's size is not
    # counted (at 100,000 highlights, a count costs more than the whole search). The
    # candidates hold every highlight of a rare word, and a sample of the common ones.
    size = max(len(candidates), 2 * TERM_CANDIDATES)
    idf = [
        math.log(1 + (size - with_unit[unit] + 0.5) / (with_unit[unit] + 0.5))
        for unit in everything
    ]
    ranked = _bm25(candidates, idf)
    kept = candidates if read_whole else {}  # for a name query's second ranking (`known`)
    return KeywordHits(ranked, passed, capped, kept, read_whole)
