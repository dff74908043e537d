"""Search one reader's library by words and by meaning, fused by reciprocal rank.

- **Keyword**: PostgreSQL full-text search over `Highlight.search_text` (text + note + book
  title + authors, accent- and case-folded in Python) with `websearch_to_tsquery('simple',
  fold(query))`: quotes, `-word` and `or` work as on the web. All terms first; when nothing
  has them all, any term. PostgreSQL decides *which* highlights match, through the GIN index;
  the order among them is BM25 computed here (see `_bm25`).
- **Meaning**: the query's vector from the same encoder as the highlights', nearest highlights
  by cosine distance through books.connections.neighbours (exact for small libraries,
  iterative HNSW for large ones, so the reader filter never silently loses recall).
- **Hybrid**: reciprocal rank fusion, score = sum of 1 / (60 + rank) over the top 100 of each
  half, so BM25 and cosine never need a common scale, and only when both halves are
  meaningful: when no highlight has all the words, the meaning half alone ranks (see
  `search`). Without the model, keyword results come back with a notice: search never fails
  because the model is missing.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone
from pgvector.django import CosineDistance

from accounts.models import User
from books.connections.neighbours import (
    EXACT_SCAN_MAX,
    HNSW_EF_SEARCH,
    Neighbour,
    iterative_scan,
    nearest_highlights,
)
from books.importing.clippings import normalize_author
from books.models import Book, Highlight
from books.text import fold

if TYPE_CHECKING:
    from books.embedding.encoder import Encoder

MODES = ("auto", "keyword", "meaning")
# Reciprocal rank fusion: k = 60 (Cormack et al.), over the top 100 of each half.
RRF_K = 60
DEPTH = 100
# Recency boost: a fused score times 1 + 0.15 * 0.5 ** (age_days / 14).
RECENCY_WEIGHT = 0.15
RECENCY_HALF_LIFE_DAYS = 14.0
# A meaning result farther than this (cosine distance) shares nothing with the query worth
# showing; for all-MiniLM-L6-v2, unrelated sentences sit at 0.8-1.0, paraphrases below 0.4.
# Each model has its own (ModelSpec.search_max_distance); this is the default of a model
# folder that names none.
MEANING_MAX_DISTANCE = 0.75
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
PAGE_SIZE = 20
QUERY_MAX_LENGTH = 500
QUERY_CACHE_SIZE = 256

NOTICE_MODEL_UNAVAILABLE = "Keyword results only: the model is unavailable."

_WORD = re.compile(r"\w+")
_STAND_IN = "\x1fexogram-query\x1f"
# websearch_to_tsquery's syntax: "a phrase", -word, -"a phrase", or.
_UNIT = re.compile(r'(-?)"([^"]*)"?|(\S+)')


@dataclass(frozen=True)
class SearchFilters:
    book: Book | None = None
    author: str = ""
    added_from: date | None = None
    added_to: date | None = None
    has_note: bool | None = None

    def __bool__(self) -> bool:
        return bool(
            self.book is not None
            or self.author.strip()
            or self.added_from
            or self.added_to
            or self.has_note is not None
        )


@dataclass(frozen=True)
class SearchResult:
    highlight: Highlight
    score: float
    keyword_rank: int | None = None
    meaning_rank: int | None = None
    distance: float | None = None
    # The folded query words this highlight's text or note has, to mark: only when the
    # keyword half found it.
    marked_words: frozenset[str] = frozenset()

    @property
    def halves(self) -> tuple[str, ...]:
        found = []
        if self.keyword_rank is not None:
            found.append("keyword")
        if self.meaning_rank is not None:
            found.append("meaning")
        return tuple(found)

    @property
    def similarity_percent(self) -> int | None:
        return None if self.distance is None else round(100 * (1 - self.distance))

    def location(self) -> str:
        h = self.highlight
        if h.location_start is None:
            return ""
        if h.location_end is not None and h.location_end != h.location_start:
            return f"{h.location_start}-{h.location_end}"
        return str(h.location_start)

    def as_json(self) -> dict[str, Any]:
        """The shape the JSON endpoint, the command and the MCP server share."""
        h = self.highlight
        return {
            "code": str(h.code),
            "text": h.text,
            "note": h.note,
            "book": h.book.title,
            "book_code": str(h.book.code),
            "author": h.book.authors,
            "location": self.location(),
            "page": h.page,
            "added_at": h.added_at.isoformat() if h.added_at else None,
            "score": round(self.score, 6),
            "matched": list(self.halves),
            "distance": None if self.distance is None else round(self.distance, 4),
            "url": h.get_absolute_url(),
        }


@dataclass(frozen=True)
class SearchResults:
    query: str
    mode: str  # as asked: auto, keyword or meaning
    mode_used: str  # hybrid, keyword, meaning, or "" for an empty query
    results: list[SearchResult]  # the requested page
    total: int  # results over all pages
    offset: int
    limit: int
    # The folded words of the query (phrases split), for marking.
    words: frozenset[str] = frozenset()
    # "all" when every term matched, "any" when the any-term fallback ran, "" otherwise.
    keyword_pass: str = ""
    notice: str = ""
    ids: list[int] = field(default_factory=list, repr=False)  # all results' ids, in order

    @property
    def page(self) -> int:
        return self.offset // self.limit + 1 if self.limit else 1

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.limit)) if self.limit else 1

    @property
    def has_previous(self) -> bool:
        return self.offset > 0

    @property
    def has_next(self) -> bool:
        return self.offset + self.limit < self.total


# --- the query -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedQuery:
    """The reader's query, folded, cut into the units websearch_to_tsquery sees."""

    folded: str
    # Each positive unit (a word, or a phrase) as websearch text and as its folded words.
    units: tuple[tuple[str, tuple[str, ...]], ...]
    exclusions: tuple[str, ...]  # as websearch text: -word, -"a phrase"

    @property
    def words(self) -> frozenset[str]:
        return frozenset(word for _, words in self.units for word in words)


def parse_query(query: str) -> ParsedQuery:
    folded = fold(query.strip())[:QUERY_MAX_LENGTH]
    units: dict[str, tuple[str, ...]] = {}
    exclusions: list[str] = []
    for match in _UNIT.finditer(folded):
        negated, phrase, word = match.group(1), match.group(2), match.group(3)
        if phrase is not None:
            text, negated_word = f'"{phrase}"', bool(negated)
        elif word.startswith("-") and len(word) > 1:
            text, negated_word = word, True
        else:
            text, negated_word = word, False
        words = tuple(_WORD.findall(text))
        if not words or (phrase is None and text == "or"):
            continue
        if negated_word:
            exclusions.append(text if text.startswith("-") else f"-{text}")
        else:
            units.setdefault(text, words)
    return ParsedQuery(folded, tuple(units.items()), tuple(exclusions))


def _tsquery(text: str) -> SearchQuery:
    return SearchQuery(text, config="simple", search_type="websearch")


# --- filters -------------------------------------------------------------------------------


def _library(reader: User, filters: SearchFilters) -> QuerySet[Highlight]:
    """The reader's live highlights that pass the filters: the one place both halves start."""
    highlights = Highlight.objects.alive().filter(reader=reader)
    if filters.book is not None:
        highlights = highlights.filter(book=filters.book)
    if filters.author.strip():
        highlights = highlights.filter(
            book__authors_normalized__contains=normalize_author(filters.author)
        )
    # Highlights from files without dates count from when they were imported.
    if filters.added_from:
        highlights = highlights.filter(
            Q(added_at__date__gte=filters.added_from)
            | Q(added_at__isnull=True, created__date__gte=filters.added_from)
        )
    if filters.added_to:
        highlights = highlights.filter(
            Q(added_at__date__lte=filters.added_to)
            | Q(added_at__isnull=True, created__date__lte=filters.added_to)
        )
    if filters.has_note is not None:
        with_note = ~Q(note="") | Q(kind=Highlight.Kind.NOTE)
        highlights = highlights.filter(with_note if filters.has_note else ~with_note)
    # The model's default ordering would make PostgreSQL sort every match before a LIMIT.
    return highlights.order_by()


# --- keyword -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _KeywordHits:
    ranked: list[int]
    passed: str  # "all", "any" or ""


def _matching(library: QuerySet[Highlight], tsquery: SearchQuery) -> QuerySet[Highlight]:
    # The expression must be the GIN index's own, SearchVector("search_text", "simple"),
    # or PostgreSQL parses every highlight's text instead of reading the index.
    return library.annotate(search=SearchVector("search_text", config="simple")).filter(
        search=tsquery
    )


def _word_pattern(words: Sequence[str]) -> str:
    # PostgreSQL's regular expressions: \m and \M are the start and the end of a word.
    return r"\m" + r"\W+".join(re.escape(word) for word in words) + r"\M"


def keyword_candidates_sql(
    library: QuerySet[Highlight],
    tsqueries: Sequence[str],
    limit: int,
    check: Sequence[Sequence[str]] = (),
) -> tuple[str, list[Any]]:
    """One statement: up to `limit` highlights per websearch query, as (query index, id,
    length of the folded text, which of the `check` units the text has).

    Each query's matches are a MATERIALIZED CTE read through the GIN index as a bitmap: with
    the LIMIT inside, the planner would rather walk the table in order and parse each text
    (measured: 200 ms instead of 5 ms for a word in half of 100,000 highlights). A unit to
    check is a regular expression on each candidate's folded text (~3 µs).
    """
    # Compiled once with a stand-in for the query text, which each query then replaces:
    # compiling a queryset per query cost more than running the statement.
    sql, template = (
        _matching(library, _tsquery(_STAND_IN))
        .values_list("id", "search_text")
        .query.sql_with_params()
    )
    ctes: list[str] = []
    selects: list[str] = []
    params: list[Any] = []
    for index, tsquery in enumerate(tsqueries):
        ctes.append(f"query_{index} AS MATERIALIZED ({sql})")
        params.extend(tsquery if value == _STAND_IN else value for value in template)
    # In the order of the placeholders: the patterns in the SELECT list, then the LIMITs.
    has = ", ".join(["search_text ~ %s"] * len(check))
    params.extend(_word_pattern(words) for words in check)
    for index in range(len(tsqueries)):
        selects.append(f"(SELECT {index} AS query, id, search_text FROM query_{index} LIMIT %s)")
        params.append(limit)
    return (
        f"WITH {', '.join(ctes)} SELECT query, id, length(search_text), ARRAY[{has}]::boolean[] "
        f"FROM ({' UNION ALL '.join(selects)}) AS candidates",
        params,
    )


@dataclass(frozen=True)
class _Candidate:
    length: int
    units: frozenset[int]


def _candidates(
    library: QuerySet[Highlight],
    tsqueries: Sequence[str],
    limit: int,
    found_by: Sequence[Collection[int]],
    units: Sequence[tuple[str, ...]],
    check: Sequence[int] = (),
) -> dict[int, _Candidate]:
    """Candidates by id, with the units each has: those its query stands for
    (`found_by[i]` for query i) and those of `check` its text has."""
    sql, params = keyword_candidates_sql(library, tsqueries, limit, [units[i] for i in check])
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    found: dict[int, _Candidate] = {}
    for query, pk, length, has in rows:
        present = {*found_by[query], *(unit for unit, yes in zip(check, has, strict=True) if yes)}
        if pk in found:
            present |= found[pk].units
        found[pk] = _Candidate(int(length), frozenset(present))
    return found


_word_shares: tuple[float, dict[str, float]] = (-math.inf, {})
_word_shares_lock = threading.Lock()


def forget_word_shares() -> None:
    """Read the statistics afresh at the next search (after an ANALYZE, in tests)."""
    global _word_shares
    with _word_shares_lock:
        _word_shares = (-math.inf, {})


def word_shares() -> dict[str, float]:
    """The share of highlights each common word is in, from PostgreSQL's own statistics.

    ANALYZE keeps the most common lexemes of the GIN index's expression with their
    frequencies (pg_stats.most_common_elems): free to read, where counting a word's
    highlights costs as much as a search. Over all readers, which is fine for telling "the"
    from "cartographer". Re-read every few minutes; empty until the first ANALYZE.
    """
    global _word_shares
    now = time.monotonic()
    read_at, shares = _word_shares
    if now - read_at < WORD_SHARES_TTL_SECONDS:
        return shares
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = %s",
            ["highlight_search_gin"],
        )
        row = cursor.fetchone()
    # The frequency array ends with three summary figures, past the last word.
    shares = dict(zip(row[0], row[1], strict=False)) if row and row[0] else {}
    with _word_shares_lock:
        _word_shares = (now, shares)
    return shares


def _bm25(candidates: dict[int, _Candidate], idf: Sequence[float]) -> list[int]:
    """Ids ordered by BM25, best first.

    Term frequency is 0 or 1: a highlight is a sentence or two, where a word seldom comes
    twice, and counting occurrences meant reading and scanning every candidate's text in
    Python, which cost more than the rest of the search. Length is in characters: BM25 only
    compares it with the average.
    """
    average = sum(c.length for c in candidates.values()) / max(1, len(candidates)) or 1.0
    scores = {
        pk: sum(
            idf[unit]
            * (BM25_K1 + 1)
            / (1 + BM25_K1 * (1 - BM25_B + BM25_B * candidate.length / average))
            for unit in candidate.units
        )
        for pk, candidate in candidates.items()
    }
    # Ties: the newer highlight (higher id) first.
    return sorted(scores, key=lambda pk: (-scores[pk], -pk))


def _keyword(
    library: QuerySet[Highlight], parsed: ParsedQuery, *, fallback: bool = True
) -> _KeywordHits:
    units = [words for _, words in parsed.units]
    everything = list(range(len(units)))
    # Pass 1: the reader's own query, every term required (and their or / - / quotes).
    candidates = _candidates(library, [parsed.folded], KEYWORD_CANDIDATES, [everything], units)
    passed = "all"
    if not candidates and len(units) > 1 and fallback:
        # Pass 2: any term (exclusions still apply), each term's matches read separately so
        # a highlight sharing two rare words is never crowded out by the thousands with
        # "the". Common words are not read, only looked for in the candidates the others
        # bring (they would bring thousands that share nothing else with the query), unless
        # the others find nothing ("the sleeps").
        shares = word_shares()
        informative = [
            index
            for index, words in enumerate(units)
            if min(shares.get(word, 0.0) for word in words) < COMMON_WORD_SHARE
        ]
        exclusions = " ".join(parsed.exclusions)
        for read in [informative, everything] if informative != everything else [everything]:
            tsqueries = [f"{parsed.units[i][0]} {exclusions}".strip() for i in read]
            found_by = [[i] for i in read]
            common = [i for i in everything if i not in read]
            candidates = _candidates(library, tsqueries, TERM_CANDIDATES, found_by, units, common)
            if candidates:
                break
        passed = "any"
    if not candidates:
        return _KeywordHits([], "")
    # BM25's inverse document frequency, from the candidates: the library's size is not
    # counted (at 100,000 highlights, a count costs more than the whole search). The
    # candidates hold every highlight of a rare word, and a sample of the common ones.
    size = max(len(candidates), 2 * TERM_CANDIDATES)
    frequency = [sum(1 for c in candidates.values() if unit in c.units) for unit in everything]
    idf = [math.log(1 + (size - df + 0.5) / (df + 0.5)) for df in frequency]
    return _KeywordHits(_bm25(candidates, idf)[:DEPTH], passed)


# --- meaning -------------------------------------------------------------------------------

_query_vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
_query_vectors_lock = threading.Lock()


def query_vector(encoder: Encoder, text: str) -> list[float]:
    """The query's vector; a repeated query (the next page, a changed filter) is not re-run.

    Keyed by model id, so a model change never serves a vector of the old model. Per
    process and only a speed-up: two processes computing the same vector agree anyway.
    """
    key = (encoder.model_id, text)
    with _query_vectors_lock:
        vector = _query_vectors.get(key)
        if vector is not None:
            _query_vectors.move_to_end(key)
            return vector
    vector = [float(x) for x in encoder.encode_one(text)]
    with _query_vectors_lock:
        _query_vectors[key] = vector
        while len(_query_vectors) > QUERY_CACHE_SIZE:
            _query_vectors.popitem(last=False)
    return vector


def clear_query_cache() -> None:
    with _query_vectors_lock:
        _query_vectors.clear()


def _vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


def _rows_up_to(highlights: QuerySet[Highlight], cap: int) -> int:
    """How many rows, counted no further than `cap`: enough to choose a strategy."""
    sql, params = highlights.values("id").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM ({sql} LIMIT %s) AS capped", [*params, cap])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def _nearest_filtered(
    library: QuerySet[Highlight], vector: Sequence[float], *, limit: int
) -> list[Neighbour]:
    """The two strategies of books.connections.neighbours, for a library narrowed by filters."""
    if _rows_up_to(library, EXACT_SCAN_MAX + 1) <= EXACT_SCAN_MAX:
        # MATERIALIZED, as in books.connections.neighbours: an exact sort of the filtered rows,
        # never a filtered HNSW walk that runs out of tuples before it finds a small book's rows.
        sql, params = library.values_list("id", "embedding").query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(
                f"WITH library AS MATERIALIZED ({sql}) "
                "SELECT id, embedding <=> %s::vector AS distance FROM library "
                "ORDER BY distance LIMIT %s",
                [*params, _vector_literal(vector), limit],
            )
            rows = cursor.fetchall()
    else:
        nearest = library.annotate(distance=CosineDistance("embedding", vector)).order_by(
            "distance"
        )
        with iterative_scan(HNSW_EF_SEARCH):
            rows = list(nearest.values_list("id", "distance")[:limit])
        rows.sort(key=lambda row: row[1])  # relaxed order: nearly sorted, now exactly
    return [Neighbour(highlight_id=int(pk), distance=float(d)) for pk, d in rows]


def _meaning(
    reader: User,
    library: QuerySet[Highlight],
    filters: SearchFilters,
    vector: Sequence[float],
    model_id: str,
    exclude_ids: Sequence[int],
    max_distance: float = MEANING_MAX_DISTANCE,
) -> list[Neighbour]:
    if filters:
        embedded = library.filter(
            embedding_status=Highlight.EmbeddingStatus.DONE, embedding_model=model_id
        )
        found = _nearest_filtered(embedded, vector, limit=DEPTH)
    else:
        # The reader's rows counted up to the strategy's boundary from the reader index
        # alone: an upper bound of the embedded ones that needs no row read, where
        # books.connections.neighbours.library_size reads each row for its status and model.
        size = _rows_up_to(Highlight.objects.filter(reader=reader).order_by(), EXACT_SCAN_MAX + 1)
        found = nearest_highlights(
            reader_id=reader.pk,
            vector=vector,
            model_id=model_id,
            limit=DEPTH,
            exclude_ids=exclude_ids,
            size=size,
        )
    return [n for n in found if n.distance < max_distance]


# --- fusion --------------------------------------------------------------------------------


@dataclass
class _Fused:
    score: float = 0.0
    keyword_rank: int | None = None
    meaning_rank: int | None = None
    distance: float | None = None


def fuse(keyword: Sequence[int], meaning: Sequence[Neighbour]) -> dict[int, _Fused]:
    """Reciprocal rank fusion: sum of 1 / (RRF_K + rank) over the lists an id is in."""
    fused: dict[int, _Fused] = {}
    for rank, pk in enumerate(keyword[:DEPTH], start=1):
        entry = fused.setdefault(pk, _Fused())
        entry.score += 1 / (RRF_K + rank)
        entry.keyword_rank = rank
    for rank, neighbour in enumerate(meaning[:DEPTH], start=1):
        entry = fused.setdefault(neighbour.highlight_id, _Fused())
        entry.score += 1 / (RRF_K + rank)
        entry.meaning_rank = rank
        entry.distance = neighbour.distance
    return fused


def recency_factor(added: datetime, now: datetime) -> float:
    age_days = max(0.0, (now - added).total_seconds() / 86400)
    return 1 + RECENCY_WEIGHT * math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def fused_order(fused: dict[int, _Fused]) -> list[int]:
    def key(pk: int) -> tuple[float, int, int]:
        entry = fused[pk]
        best = min(r for r in (entry.keyword_rank, entry.meaning_rank) if r is not None)
        # Equal scores: the better single rank, then the newer highlight.
        return (-entry.score, best, -pk)

    return sorted(fused, key=key)


def _words_of(highlight: Highlight) -> frozenset[str]:
    return frozenset(_WORD.findall(fold(f"{highlight.text} {highlight.note}")))


# --- the service ---------------------------------------------------------------------------


def search(
    reader: User,
    query: str,
    *,
    mode: str = "auto",
    book: Book | None = None,
    author: str = "",
    added_from: date | None = None,
    added_to: date | None = None,
    has_note: bool | None = None,
    recency_boost: bool = False,
    limit: int = PAGE_SIZE,
    offset: int = 0,
    page: int | None = None,
    clock: Callable[[], datetime] = timezone.now,
    exclude_ids: Sequence[int] = (),
) -> SearchResults:
    """A reader's highlights for a query, best first; never another reader's, never deleted.

    `mode`: "auto" (hybrid when the model is there and highlights have vectors), "keyword"
    or "meaning"; `SearchResults.mode_used` says what ran and `notice` why, if it differs.
    `exclude_ids` leaves highlights out before ranking (the evaluation's query highlight).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if book is not None and book.reader_id != reader.pk:
        raise ValueError("the book filter must be one of the reader's books")
    limit = max(1, limit)
    if page is not None:
        offset = (max(1, page) - 1) * limit
    offset = max(0, offset)
    parsed = parse_query(query)
    if not parsed.units:
        # An empty query (or one of exclusions only) finds nothing, never everything.
        return SearchResults(query, mode, "", [], total=0, offset=offset, limit=limit)

    filters = SearchFilters(book, author, added_from, added_to, has_note)
    library = _library(reader, filters)
    if exclude_ids:
        library = library.exclude(pk__in=list(exclude_ids))

    notice = ""
    meaning: list[Neighbour] = []
    if mode != "keyword":
        from books.embedding.encoder import EncoderUnavailable, get_encoder

        try:
            encoder = get_encoder()
        except EncoderUnavailable:
            notice = NOTICE_MODEL_UNAVAILABLE
        else:
            vector = query_vector(encoder, query.strip()[:QUERY_MAX_LENGTH])
            meaning = _meaning(
                reader, library, filters, vector, encoder.model_id, exclude_ids,
                encoder.spec.search_max_distance,
            )  # fmt: skip

    if notice or mode == "keyword":
        mode_used = "keyword"
    elif mode == "meaning":
        mode_used = "meaning"
    else:
        mode_used = "hybrid" if meaning else "keyword"
    keyword = _KeywordHits([], "")
    if mode_used != "meaning":
        # Fuse only when both halves are meaningful: in a hybrid search, highlights with only
        # some of the words (the any-word fallback) outvote the meaning half rather than add
        # to it. On STS-B train (2,722 paraphrase queries, Recall@1 / MRR@10 against the
        # meaning half alone): fusing them too cost 3.2 / 2.6 points, at a fifth of the
        # weight 1.1 / 1.0; fusing the all-words list only, 0.5 / 0.4, whatever its weight.
        keyword = _keyword(library, parsed, fallback=mode_used == "keyword")
    fused = fuse(keyword.ranked, meaning)
    if recency_boost and fused:
        now = clock()
        added = Highlight.objects.filter(pk__in=list(fused)).values_list(
            "pk", Coalesce("added_at", "created")
        )
        for pk, when in added:
            fused[pk].score *= recency_factor(when, now)
    ordered = fused_order(fused)
    page_ids = ordered[offset : offset + limit]
    # Not the vector: turning 384 numbers into an array costs more than the rest of the row.
    highlights = (
        Highlight.objects.select_related("book").defer("embedding", "search_text").in_bulk(page_ids)
    )
    results = [
        SearchResult(
            highlight=highlights[pk],
            score=fused[pk].score,
            keyword_rank=fused[pk].keyword_rank,
            meaning_rank=fused[pk].meaning_rank,
            distance=fused[pk].distance,
            # Marked only where the words made the match: a result found by meaning alone
            # would otherwise light up every "is" and "the" it shares with the query.
            marked_words=(
                parsed.words & _words_of(highlights[pk])
                if fused[pk].keyword_rank is not None
                else frozenset()
            ),
        )
        for pk in page_ids
        if pk in highlights
    ]
    return SearchResults(
        query=query,
        mode=mode,
        mode_used=mode_used,
        results=results,
        total=len(ordered),
        offset=offset,
        limit=limit,
        words=parsed.words,
        keyword_pass=keyword.passed,
        notice=notice,
        ids=ordered,
    )
