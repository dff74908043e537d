"""Search one reader's library by words and by meaning, fused by weights that suit the query.

- **The query** (`parse_query`): words, "quoted phrases" (exact, and required of every
  result), `-word` and `-"a phrase"` (left out of every result), `or` between two terms, and
  `author:` / `book:` prefixes (filters on the book's fields). Titles and authors are fields,
  never searchable text: a name typed among the words ("what did Kierkegaard say about
  despair") is recognised (`_names_in`) and that author's or book's highlights that match
  the rest of the query come first.
- **Keyword**: PostgreSQL full-text search over `Highlight.search_text` (text + note,
  accent- and case-folded in Python) through `books.models.search_document()`: the words as
  written plus their English and Spanish stems, so "habit" finds "habits" and "muertes"
  finds "muerte". All terms first; when nothing has them all, any term. PostgreSQL decides
  *which* highlights match, through the GIN index; the order among them is BM25 computed
  here (see `_bm25`).
- **Meaning**: the query's vector from the same encoder as the highlights', nearest highlights
  by cosine distance through books.connections.neighbours (exact for small libraries,
  iterative HNSW for large ones, so the reader filter never silently loses recall), cut at
  a relevance floor (per model) so that the count is of close matches, not of the top 100.
- **Hybrid**: weighted reciprocal rank fusion (`fusion_weights`): weights from the query
  itself (its length, a quoted phrase, how rare its words are, whether the model reads its
  language), measured on the three tasks of `evaluate_search`. Without the model, keyword
  results come back with a notice: search never fails because the model is missing.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from django.contrib.postgres.search import SearchQuery
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
from books.models import SEARCH_STEM_CONFIGS, Book, Highlight, search_document
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
# How far behind the best result a close match may be, per model (by name). e5's distances
# sit in a band about 0.4 times as wide as MiniLM's (related cuts 0.115 and 0.27-0.40),
# so its margin is scaled alike: not measured on the search tasks yet.
MEANING_MARGIN = 0.35
MEANING_MARGINS: dict[str, float] = {"multilingual-e5-small": 0.15}
# Fusion weights (fusion_weights), chosen on the paraphrase and remembered-words tasks of
# evaluate_search together (half the queries each way gave the same choice) and checked on
# the names task. A query of this many words or fewer is "a few words"; more, a sentence.
FEW_WORDS = 4
SENTENCE_KEYWORD_WEIGHT = 0.25
SOME_WORDS_WEIGHT = 1.0
PHRASE_WEIGHT = 2.0
FOREIGN_MEANING_WEIGHT = 0.3
SURE_MEANING_WEIGHT = 3.0
# Per model (by name): a best match nearer than this (cosine distance) is a paraphrase, and
# the meaning half is sure. all-MiniLM-L6-v2: paraphrase queries' best match sits at a median
# 0.10, remembered words' at 0.42; 0.25-0.35 all measured the same. A model not listed here
# is never "sure": measure it with evaluate_search before adding it.
SURE_DISTANCES: dict[str, float] = {"all-MiniLM-L6-v2": 0.3}
# A name's frame, left out of the topic once the name is recognised: "what did X say about".
_FILLER = "what did does do say says said about on of by think thinks thought write wrote"
NAME_FILLER = frozenset(
    f"{_FILLER} writes in from according to que dijo dice decia sobre de del piensa pensaba "
    "escribio segun en acerca".split(" ")
)
LISTING_MAX = 1000
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

# A word as PostgreSQL's parser cuts one: letters and digits (it splits at "_" too).
_WORD = re.compile(r"[^\W_]+")
_STAND_IN = "\x1fexogram-query\x1f"
# The web's search syntax: "a phrase", -word, -"a phrase", or.
_UNIT = re.compile(r'(-?)"([^"]*)"?|(\S+)')
# author:borges, book:"a death in the family" (title: too).
_PREFIX = re.compile(r'(?<!\S)(author|book|title):(?:"([^"]*)"?|(\S+))')
STEMS_CACHE_SIZE = 20_000
# A last name or a one-word title alone names a book only when it is a word of this many
# letters or more (see _names_in); highlights counted no further than this.
NAME_MIN_LENGTH = 4
NAME_COUNT_CAP = 1000
NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
# The named books' highlights come first when they are this close (cosine distance) to the
# best match of the whole library, or share the words. Measured: 0.35 keeps the names task
# within a point of no margin at all, and gives paraphrases that mention a name (Colin
# Powell, an author of the library) back 1.7 points of MRR@10.
NAMED_MARGIN = 0.35


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
    # The books the query named among its words (their titles), whose highlights come first,
    # and how many of the results are theirs.
    named: tuple[str, ...] = ()
    named_words: frozenset[str] = frozenset()  # the folded query words that named them
    named_first: int = 0
    keyword_capped: bool = False  # more highlights have the words than were ranked
    fusion: str = ""  # which rule weighted the halves (fusion_weights), in a hybrid search

    @property
    def count_label(self) -> str:
        """The number of results as what it is: exact for words, "about" for meaning."""
        if not self.total:
            return "No results"
        noun = "highlight" if self.mode_used == "keyword" else "close match"
        plural = "es" if noun.endswith("ch") else "s"
        if self.mode_used == "keyword":
            exact = not self.keyword_capped and self.total < LISTING_MAX
            count = f"{self.total}" if exact else f"More than {self.total}"
        else:
            count = f"About {self.total}" if self.total > 1 else "1"
        return f"{count} {noun}{plural if self.total != 1 else ''}"

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
    """The reader's query, folded, cut into units: words and phrases, exclusions, prefixes."""

    folded: str
    # Each positive unit (a word, or a phrase) as websearch text and as its folded words.
    units: tuple[tuple[str, tuple[str, ...]], ...]
    exclusions: tuple[str, ...]  # as websearch text: -word, -"a phrase"
    # Which units must all match: each clause is units joined by "or".
    clauses: tuple[tuple[int, ...], ...] = ()
    authors: tuple[str, ...] = ()  # author:… values, folded
    books: tuple[str, ...] = ()  # book:… values, folded

    @property
    def words(self) -> frozenset[str]:
        return frozenset(word for _, words in self.units for word in words)

    @property
    def phrases(self) -> tuple[int, ...]:
        return tuple(i for i, (text, _) in enumerate(self.units) if text.startswith('"'))

    def without(self, words: Collection[str]) -> ParsedQuery:
        """The same query less the single-word units in `words` (a name, its filler)."""
        keep = [i for i, (t, w) in enumerate(self.units) if t.startswith('"') or w[0] not in words]
        kept = {old: new for new, old in enumerate(keep)}
        clauses = tuple(
            clause
            for clause in (tuple(kept[i] for i in c if i in kept) for c in self.clauses)
            if clause
        )
        units = tuple(self.units[i] for i in keep)
        folded = " ".join([*(text for text, _ in units), *self.exclusions])
        return ParsedQuery(folded, units, self.exclusions, clauses, self.authors, self.books)


def parse_query(query: str) -> ParsedQuery:
    folded = fold(query.strip())[:QUERY_MAX_LENGTH]
    authors: list[str] = []
    books: list[str] = []

    def prefix(match: re.Match[str]) -> str:
        value = " ".join(_WORD.findall(match.group(2) or match.group(3) or ""))
        if value:
            (authors if match.group(1) == "author" else books).append(value)
        return " "

    rest = _PREFIX.sub(prefix, folded)
    units: dict[str, tuple[str, ...]] = {}
    exclusions: list[str] = []
    clauses: list[list[int]] = []
    joined = False  # the last token was "or"
    previous = ""
    for match in _UNIT.finditer(rest):
        negated, phrase, word = match.group(1), match.group(2), match.group(3)
        if phrase is not None:
            text, negated_word = f'"{" ".join(_WORD.findall(phrase))}"', bool(negated)
        elif word.startswith("-") and len(word) > 1:
            text, negated_word = f"-{' '.join(_WORD.findall(word))}", True
        else:
            text, negated_word = " ".join(_WORD.findall(word)), False
        words = tuple(_WORD.findall(text))
        if phrase is None and text == "or":
            # "a or b" joins two terms; after an exclusion ("-a or b") it joins nothing.
            joined = bool(clauses) and previous == "term"
            continue
        if not words:
            continue
        previous = "exclusion" if negated_word else "term"
        if negated_word:
            exclusions.append(text if text.startswith("-") else f"-{text}")
        elif text not in units:
            units[text] = words
            if joined:
                clauses[-1].append(len(units) - 1)
            else:
                clauses.append([len(units) - 1])
        joined = False
    return ParsedQuery(
        folded,
        tuple(units.items()),
        tuple(dict.fromkeys(exclusions)),
        tuple(tuple(clause) for clause in clauses),
        tuple(dict.fromkeys(authors)),
        tuple(dict.fromkeys(books)),
    )


_stems: dict[str, tuple[str, ...]] = {}
_stems_lock = threading.Lock()


def stems_of(words: Collection[str]) -> dict[str, tuple[str, ...]]:
    """Each word's English and Spanish stems other than itself ("habits" → "habit").

    From PostgreSQL's own snowball dictionaries, so they agree with the index; a stop word
    has none. Kept per process: a word's stems never change.
    """
    missing = sorted({w for w in words if w not in _stems})
    if missing:
        dictionaries = ", ".join(f"ts_lexize('{config}_stem', w)" for config in SEARCH_STEM_CONFIGS)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT w, {dictionaries} FROM unnest(%s::text[]) AS w", [missing])
            rows = cursor.fetchall()
        with _stems_lock:
            if len(_stems) > STEMS_CACHE_SIZE:
                _stems.clear()
            for word, *found in rows:
                stems = (s for lexemes in found for s in (lexemes or ()) if s != word)
                _stems[word] = tuple(dict.fromkeys(stems))
    return {w: _stems.get(w, ()) for w in words}


def _word_tsquery(word: str, stems: dict[str, tuple[str, ...]]) -> str:
    # Lexemes quoted: a folded word is letters and digits only, never a quote.
    forms = [word, *stems.get(word, ())]
    return "(" + " | ".join(f"'{form}'" for form in forms) + ")"


def _unit_tsquery(text: str, words: Sequence[str], stems: dict[str, tuple[str, ...]]) -> str:
    """A word with its stems; a phrase (or a word PostgreSQL splits, "don't") exactly, as
    written and in order."""
    if len(words) == 1 and not text.lstrip("-").startswith('"'):
        return _word_tsquery(words[0], stems)
    return "(" + " <-> ".join(f"'{word}'" for word in words) + ")"


@dataclass(frozen=True)
class QueryTerms:
    """The tsquery texts (for to_tsquery('simple', …)) of a parsed query."""

    units: tuple[str, ...]  # each positive unit's
    exclusions: str  # "& !(…) & !(…)", or ""
    everything: str  # every clause, with the exclusions
    # The units every result must have (quoted phrases), with the exclusions: what the
    # meaning half must respect too. "" when the query has neither.
    constraint: str


def query_terms(parsed: ParsedQuery) -> QueryTerms:
    excluded = [tuple(_WORD.findall(text)) for text in parsed.exclusions]
    stems = stems_of(
        {w for _, words in parsed.units for w in words} | {w for ws in excluded for w in ws}
    )
    units = tuple(_unit_tsquery(text, words, stems) for text, words in parsed.units)
    exclusions = "".join(
        f" & !{_unit_tsquery(text, words, stems)}"
        for text, words in zip(parsed.exclusions, excluded, strict=True)
    )
    clauses = [" | ".join(units[i] for i in clause) for clause in parsed.clauses]
    everything = " & ".join(f"({clause})" for clause in clauses) + exclusions
    required = [units[i] for i in parsed.phrases if (i,) in parsed.clauses]
    constraint = " & ".join(required) + exclusions
    if not required and exclusions:
        constraint = exclusions.removeprefix(" & ")
    return QueryTerms(units, exclusions, everything, constraint)


def _tsquery(text: str) -> SearchQuery:
    return SearchQuery(text, config="simple", search_type="raw")


# --- names: authors and titles are fields, never text --------------------------------------


@dataclass(frozen=True)
class NamedBooks:
    """Books a query names: by an author: or book: prefix, or by a name among its words."""

    book_ids: frozenset[int]
    names: tuple[str, ...]  # as the reader's books write them
    words: frozenset[str] = frozenset()  # the query words that named them


def _reader_books(reader: User) -> list[tuple[int, str, str]]:
    return list(Book.objects.filter(reader=reader).values_list("id", "title", "authors_normalized"))


def _author_names(authors_normalized: str) -> list[str]:
    return [fold(name) for name in authors_normalized.split("; ") if name]


def _title_words(title: str) -> tuple[str, ...]:
    # The title before its subtitle: "Thinking, Fast and Slow: …" is named "thinking fast
    # and slow".
    return tuple(_WORD.findall(fold(re.split(r"\s[\u2013\u2014-]\s|:\s|\(", title)[0])))


def books_with_fields(
    books: Sequence[tuple[int, str, str]], authors: Sequence[str], titles: Sequence[str]
) -> NamedBooks:
    """The books whose authors contain every author: value and whose titles contain every
    book: value (folded, as whole words)."""
    chosen: set[int] = set()
    names: list[str] = []
    for pk, title, authors_normalized in books:
        author_text = f" {' '.join(_author_names(authors_normalized))} "
        title_text = f" {' '.join(_WORD.findall(fold(title)))} "
        if all(f" {a} " in author_text for a in authors) and all(
            f" {t} " in title_text for t in titles
        ):
            chosen.add(pk)
            names.append(title)
    return NamedBooks(frozenset(chosen), tuple(names))


def _contains(sequence: Sequence[str], part: Sequence[str]) -> bool:
    width = len(part)
    return any(
        tuple(sequence[i : i + width]) == tuple(part) for i in range(len(sequence) - width + 1)
    )


def _capitalized(query: str) -> frozenset[str]:
    """The query's words written with a capital, folded: how a reader writes a name."""
    return frozenset(fold(word) for word in _WORD.findall(query) if word[0].isupper())


def _names_in(
    parsed: ParsedQuery,
    books: Sequence[tuple[int, str, str]],
    *,
    capitalized: frozenset[str],
    library: QuerySet[Highlight],
) -> NamedBooks:
    """The books a query names among its free words: a whole title or author's name, or an
    author's last name (or a one-word title) written as a name and more theirs than a word.

    "death" never names *A Death in the Family*: a title is named whole. A last name alone
    ("Kierkegaard on despair") must be written with a capital (or be the whole query), and
    the books it names must hold more highlights than the library's highlights that have it
    as a word: "Wooden chairs" never names John Wooden, and "Robinson was fired" does not
    name Marilynne Robinson in a library of news.
    """
    free = [w for text, words in parsed.units if not text.startswith('"') for w in words]
    if not free:
        return NamedBooks(frozenset(), ())
    alone = len(parsed.units) == 1
    whole: dict[int, list[tuple[str, ...]]] = defaultdict(list)  # book → whole names in it
    single: dict[str, set[int]] = defaultdict(set)  # a one-word name → its books
    for pk, title, authors_normalized in books:
        title_words = _title_words(title)
        if len(title_words) > 1 and _contains(free, title_words):
            whole[pk].append(title_words)
        elif len(title_words) == 1:
            single[title_words[0]].add(pk)
        for name in _author_names(authors_normalized):
            name_words = tuple(w for w in _WORD.findall(name) if w not in NAME_SUFFIXES)
            if len(name_words) > 1 and _contains(free, name_words):
                whole[pk].append(name_words)
            elif name_words:
                single[name_words[-1]].add(pk)
    for word, pks in single.items():
        if len(word) < NAME_MIN_LENGTH or word not in free or not (alone or word in capitalized):
            continue
        own = library.filter(book_id__in=pks)[:NAME_COUNT_CAP].count()
        mentions = _matching(library, _tsquery(f"'{word}'"))[: own + 1].count()
        if mentions <= own:
            for pk in pks:
                whole[pk].append((word,))
    names = [title for pk, title, _ in books if pk in whole]
    used = {word for found in whole.values() for words in found for word in words}
    return NamedBooks(frozenset(whole), tuple(names), frozenset(used))


# --- filters -------------------------------------------------------------------------------


def _library(reader: User, filters: SearchFilters) -> QuerySet[Highlight]:
    """The reader's live highlights that pass the filters: the one place both halves start."""
    highlights = Highlight.objects.alive().filter(reader=reader)
    if filters.book is not None:
        highlights = highlights.filter(book=filters.book)
    if filters.author.strip():
        # Folded in Python, as the keyword text: "Garcia Marquez" finds García Márquez.
        wanted = fold(normalize_author(filters.author))
        authors = Book.objects.filter(reader=reader).values_list("pk", "authors_normalized")
        highlights = highlights.filter(book_id__in=[pk for pk, a in authors if wanted in fold(a)])
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
    matched: int = 0  # highlights read that match, DEPTH or more when there are many
    capped: bool = False  # more match than were read


def _matching(library: QuerySet[Highlight], tsquery: SearchQuery) -> QuerySet[Highlight]:
    # The expression must be the GIN index's own, search_document(), or PostgreSQL parses
    # every highlight's text instead of reading the index.
    return library.annotate(search=search_document()).filter(search=tsquery)


def _word_pattern(words: Sequence[str]) -> str:
    # PostgreSQL's regular expressions: \m and \M are the start and the end of a word.
    return r"\m" + r"\W+".join(re.escape(word) for word in words) + r"\M"


def _unit_pattern(text: str, words: Sequence[str], stems: dict[str, tuple[str, ...]]) -> str:
    """A unit as a regular expression on the folded text: a word, or a word of its stem
    and up to four more letters ("habit" → habits, habitual); a phrase exactly."""
    if len(words) == 1 and not text.startswith('"'):
        forms = [re.escape(words[0]), *(re.escape(stem) + r"\w{0,4}" for stem in stems[words[0]])]
        return r"\m(?:" + "|".join(forms) + r")\M"
    return _word_pattern(words)


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
    params.extend(check)
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
    patterns: Sequence[str],
    check: Sequence[int] = (),
) -> dict[int, _Candidate]:
    """Candidates by id, with the units each has: those its query stands for
    (`found_by[i]` for query i) and those of `check` its text has (`patterns[i]`)."""
    sql, params = keyword_candidates_sql(library, tsqueries, limit, [patterns[i] for i in check])
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
            ["highlight_search_stems_gin"],
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
    if not units:
        return _KeywordHits([], "")
    terms = query_terms(parsed)
    stems = stems_of({word for words in units for word in words})
    patterns = [_unit_pattern(text, words, stems) for text, words in parsed.units]
    everything = list(range(len(units)))
    # Pass 1: the reader's own query, every term required (and their or / - / quotes).
    candidates = _candidates(
        library, [terms.everything], KEYWORD_CANDIDATES, [everything], patterns
    )
    passed = "all"
    capped = len(candidates) >= KEYWORD_CANDIDATES
    # A phrase in quotes is required: the fallback never drops it.
    if not candidates and len(units) > 1 and fallback and not parsed.phrases:
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
        for read in [informative, everything] if informative != everything else [everything]:
            tsqueries = [f"{terms.units[i]}{terms.exclusions}" for i in read]
            found_by = [[i] for i in read]
            common = [i for i in everything if i not in read]
            candidates = _candidates(
                library, tsqueries, TERM_CANDIDATES, found_by, patterns, common
            )
            if candidates:
                break
        passed = "any"
        capped = any(
            sum(1 for c in candidates.values() if i in c.units) >= TERM_CANDIDATES for i in read
        )
    if not candidates:
        return _KeywordHits([], "")
    # BM25's inverse document frequency, from the candidates: the library's size is not
    # counted (at 100,000 highlights, a count costs more than the whole search). The
    # candidates hold every highlight of a rare word, and a sample of the common ones.
    size = max(len(candidates), 2 * TERM_CANDIDATES)
    frequency = [sum(1 for c in candidates.values() if unit in c.units) for unit in everything]
    idf = [math.log(1 + (size - df + 0.5) / (df + 0.5)) for df in frequency]
    ranked = _bm25(candidates, idf)
    return _KeywordHits(ranked[:DEPTH], passed, len(ranked), capped)


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
    filtered: bool,
    vector: Sequence[float],
    model_id: str,
    exclude_ids: Sequence[int],
    *,
    absolute_floor: bool = True,
) -> list[Neighbour]:
    # Meaning ranks passages only: a looked-up word (books.vocabulary) sits near anything
    # on its topic and says nothing; words stay findable by keyword.
    if filtered:
        embedded = library.filter(is_word=False).filter(
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
            passages_only=True,
        )
    return meaning_floor(found, model_id, absolute=absolute_floor)


def meaning_floor(
    found: Sequence[Neighbour], model_id: str, *, absolute: bool = True
) -> list[Neighbour]:
    """The close matches: nearer than the model's floor, and not far behind the best one.

    A library of 100,000 always has 100 nearest highlights; the count shown is of those
    that are close (the model's `search_max_distance`, `MEANING_MARGIN`). Without the
    `absolute` floor (the books a reader named), the best is kept however far it is."""
    floor = _meaning_max_distance(model_id)
    if not absolute:
        floor = math.inf
    margin = MEANING_MARGINS.get(model_id.split("@")[0], MEANING_MARGIN)
    if not found:
        return []
    best = min(n.distance for n in found)
    return [n for n in found if n.distance < floor and n.distance <= best + margin]


def _meaning_max_distance(model_id: str) -> float:
    """The model's own floor (ModelSpec.search_max_distance) when it is the active one."""
    from books.embedding.encoder import EncoderUnavailable, get_encoder

    try:
        encoder = get_encoder()
    except EncoderUnavailable:
        return MEANING_MAX_DISTANCE
    if encoder.model_id != model_id:
        return MEANING_MAX_DISTANCE
    return encoder.spec.search_max_distance


# --- fusion --------------------------------------------------------------------------------


@dataclass
class _Fused:
    score: float = 0.0
    keyword_rank: int | None = None
    meaning_rank: int | None = None
    distance: float | None = None


def fuse(
    keyword: Sequence[int],
    meaning: Sequence[Neighbour],
    *,
    keyword_weight: float = 1.0,
    meaning_weight: float = 1.0,
) -> dict[int, _Fused]:
    """Weighted reciprocal rank fusion: sum of weight / (RRF_K + rank) over the lists an id
    is in."""
    fused: dict[int, _Fused] = {}
    for rank, pk in enumerate(keyword[:DEPTH], start=1):
        entry = fused.setdefault(pk, _Fused())
        entry.score += keyword_weight / (RRF_K + rank)
        entry.keyword_rank = rank
    for rank, neighbour in enumerate(meaning[:DEPTH], start=1):
        entry = fused.setdefault(neighbour.highlight_id, _Fused())
        entry.score += meaning_weight / (RRF_K + rank)
        entry.meaning_rank = rank
        entry.distance = neighbour.distance
    return fused


@dataclass(frozen=True)
class FusionWeights:
    keyword: float
    meaning: float
    why: str  # for the evaluation and for tests: which rule chose them


def fusion_weights(
    parsed: ParsedQuery,
    keyword_pass: str,
    *,
    model_reads: bool,
    best_distance: float | None = None,
    model_id: str = "",
) -> FusionWeights:
    """How much each half counts, from the query and from how sure the meaning half is.

    - A query in a language the model reads poorly: the words lead.
    - A quoted phrase: the reader asked for those words, exactly.
    - The meaning half is sure (its best match nearer than the model's SURE_DISTANCES: a
      paraphrase): it leads, and the words count only for a few words that all matched.
    - A few words ("habit entrance ramp"): remembered words, so a highlight with only some
      of them (a typo, a word misremembered) counts as much as one with all.
    - A sentence (more than FEW_WORDS words): words shared with it say little; highlights
      with only some of them do not count at all.
    Measured on the three tasks of `evaluate_search` (see the README): with equal weights,
    hybrid search lost 1.5 points of MRR@10 to meaning alone on paraphrases and 1.3 to
    keyword alone on remembered words.
    """
    words = sum(len(words) for _, words in parsed.units)
    few = words <= FEW_WORDS
    if not model_reads:
        return FusionWeights(1.0, FOREIGN_MEANING_WEIGHT, "a language the model reads poorly")
    if parsed.phrases:
        return FusionWeights(PHRASE_WEIGHT, 1.0, "a quoted phrase")
    sure = SURE_DISTANCES.get(model_id.split("@")[0])
    if sure is not None and best_distance is not None and best_distance < sure:
        keyword = 1.0 if few and keyword_pass == "all" else 0.0
        return FusionWeights(keyword, SURE_MEANING_WEIGHT, "a close match by meaning")
    if keyword_pass == "any":
        if few:
            return FusionWeights(SOME_WORDS_WEIGHT, 1.0, "some of a few words")
        return FusionWeights(0.0, 1.0, "some words of a sentence")
    if not few:
        return FusionWeights(SENTENCE_KEYWORD_WEIGHT, 1.0, "a sentence")
    return FusionWeights(1.0, 1.0, "a few words")


def recency_factor(added: datetime, now: datetime) -> float:
    age_days = max(0.0, (now - added).total_seconds() / 86400)
    return 1 + RECENCY_WEIGHT * math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def fused_order(fused: dict[int, _Fused]) -> list[int]:
    def key(pk: int) -> tuple[float, float, float, int]:
        entry = fused[pk]
        # Equal scores (first by words, first by meaning): the words' exact evidence first
        # (measured: +1 point of MRR@10 on remembered words, nothing lost on paraphrases),
        # then the better meaning rank, then the newer highlight.
        keyword = math.inf if entry.keyword_rank is None else entry.keyword_rank
        meaning = math.inf if entry.meaning_rank is None else entry.meaning_rank
        return (-entry.score, keyword, meaning, -pk)

    return sorted(fused, key=key)


def _words_of(highlight: Highlight) -> frozenset[str]:
    return frozenset(_WORD.findall(fold(f"{highlight.text} {highlight.note}")))


def _marked(query_words: frozenset[str], highlight: Highlight) -> frozenset[str]:
    """The highlight's folded words that a query word or its stem found."""
    # A word and its stems as roots, with up to three letters more: "habit" marks "habits",
    # "muerte" marks "muertes". Only on highlights the words found, so a near miss
    # ("habitat" beside "habits") is rare and harmless.
    roots = {stem for word in query_words for stem in (word, *_stems.get(word, ()))}
    return frozenset(
        word
        for word in _words_of(highlight)
        if word in query_words
        or any(
            len(root) >= 3 and word.startswith(root) and len(word) - len(root) <= 3
            for root in roots
        )
    )


# --- the language of a query ---------------------------------------------------------------

# A few of each language's commonest words: enough to tell a query's language when it has
# one of them, and a guess never made on a query with none ("Pessoa", "entropy").
_LANGUAGE_WORDS = {
    "en": "the of and to is in that it was for with as you what why how not are this be about",
    "es": "el la los las de del que y en un una por con para es se no lo como mas pero sus "
    "le ya este esta cuando muy sin sobre hay donde quien porque todo nos yo",
    "fr": "le la les des est et une dans pour pas qui que sur avec ce je il elle nous vous",
    "de": "der die das und ist nicht ein eine mit sich auf fur ich du wir sie zu dem den",
    "pt": "o os as um uma do da dos das em para com nao que por mais como seu sua voce",
    "it": "il lo gli della di che e un una per con non sono come piu questo anche",
}
_LANGUAGE_SETS = {language: frozenset(words.split()) for language, words in _LANGUAGE_WORDS.items()}
# Letters Spanish writes and English never does (Portuguese shares some: a tie it loses).
_SPANISH_LETTERS = re.compile(r"[ñ¿¡áíóú]", re.IGNORECASE)
LANGUAGE_NAMES = {
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "de": "German",
    "pt": "Portuguese",
    "it": "Italian",
}
# The languages each model reads well, by model name, for models that do not say so
# themselves (an encoder's own `languages` attribute wins). None: many languages.
MODEL_LANGUAGES: dict[str, tuple[str, ...] | None] = {
    "all-MiniLM-L6-v2": ("en",),
    "multilingual-e5-small": None,
}


def query_language(query: str) -> str | None:
    """The query's language when its words say so, else None."""
    if _SPANISH_LETTERS.search(query):
        return "es"
    words = _WORD.findall(fold(query))
    counts = {
        language: sum(1 for w in words if w in vocabulary)
        for language, vocabulary in _LANGUAGE_SETS.items()
    }
    # A tie goes to the library's languages first, in the order of _LANGUAGE_WORDS ("la
    # muerte" is Spanish before it is French).
    best = max(counts, key=lambda language: counts[language])
    return best if counts[best] else None


def model_languages(encoder: object) -> tuple[str, ...] | None:
    declared = getattr(encoder, "languages", None)
    if declared is not None:
        return tuple(declared) or None
    name = str(getattr(encoder, "model_id", "")).split("@")[0]
    return MODEL_LANGUAGES.get(name)


def language_notice(query: str, encoder: object) -> str:
    """A word for the reader when the model reads the query's language poorly."""
    languages = model_languages(encoder)
    language = query_language(query)
    if languages is None or language is None or language in languages:
        return ""
    name = str(getattr(encoder, "model_id", "the model")).split("@")[0]
    read = ", ".join(LANGUAGE_NAMES.get(code, code) for code in languages)
    return (
        f"This looks like {LANGUAGE_NAMES.get(language, language)}: the model ({name}) reads "
        f"{read} only, so results by meaning may miss. Results by words work in any language."
    )


# --- the service ---------------------------------------------------------------------------


@dataclass
class _Ranked:
    fused: dict[int, _Fused]
    order: list[int]
    keyword: _KeywordHits
    mode_used: str
    weights: FusionWeights | None = None


def _rank(
    reader: User,
    library: QuerySet[Highlight],
    parsed: ParsedQuery,
    *,
    mode: str,
    filtered: bool,
    vector: Sequence[float] | None,
    model_id: str,
    exclude_ids: Sequence[int],
    model_reads: bool,
    named: bool = False,
) -> _Ranked:
    """One library's results for one query, fused: the heart of `search`."""
    meaning: list[Neighbour] = []
    if vector is not None and mode != "keyword":
        meaning = _meaning(
            reader, library, filtered, vector, model_id, exclude_ids, absolute_floor=not named
        )
    if vector is None or mode == "keyword":
        mode_used = "keyword"
    elif mode == "meaning":
        mode_used = "meaning"
    else:
        mode_used = "hybrid" if meaning else "keyword"
    keyword = _KeywordHits([], "")
    words = sum(len(words) for _, words in parsed.units)
    if mode_used != "meaning":
        # In a hybrid search of a sentence, highlights with only some of its words (the
        # any-word fallback) outvote the meaning half rather than add to it: the fallback
        # runs for a few words only (see fusion_weights).
        fallback = mode_used == "keyword" or words <= FEW_WORDS
        keyword = _keyword(library, parsed, fallback=fallback)
    weights = None
    if mode_used == "hybrid":
        weights = fusion_weights(
            parsed,
            keyword.passed,
            model_reads=model_reads,
            best_distance=min(n.distance for n in meaning),
            model_id=model_id,
        )
        fused = fuse(
            keyword.ranked if weights.keyword else [],
            meaning,
            keyword_weight=weights.keyword,
            meaning_weight=weights.meaning,
        )
    else:
        fused = fuse(keyword.ranked, meaning)
    return _Ranked(fused, fused_order(fused), keyword, mode_used, weights)


def _listing(library: QuerySet[Highlight]) -> _Ranked:
    """A name with no other words ("Pessoa", "author:borges"): the books' highlights in
    reading order, as their book pages list them."""
    ids = list(
        library.order_by("book__title", "location_start", "pk").values_list("pk", flat=True)[
            :LISTING_MAX
        ]
    )
    fused = {pk: _Fused(score=1 / (RRF_K + rank)) for rank, pk in enumerate(ids, start=1)}
    return _Ranked(fused, ids, _KeywordHits([], ""), "keyword")


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
    if not parsed.units and not parsed.authors and not parsed.books:
        # An empty query (or one of exclusions only) finds nothing, never everything.
        return SearchResults(query, mode, "", [], total=0, offset=offset, limit=limit)

    filters = SearchFilters(book, author, added_from, added_to, has_note)
    library = _library(reader, filters)
    if exclude_ids:
        library = library.exclude(pk__in=list(exclude_ids))
    filtered = bool(filters)
    books = _reader_books(reader)
    named = NamedBooks(frozenset(), ())
    if parsed.authors or parsed.books:
        # author: and book: are filters: the reader said which field the words are in.
        by_field = books_with_fields(books, parsed.authors, parsed.books)
        if not by_field.book_ids:
            asked = [*(f"author:{a}" for a in parsed.authors), *(f"book:{b}" for b in parsed.books)]
            return SearchResults(
                query, mode, "keyword", [], total=0, offset=offset, limit=limit,
                notice=f"No book of yours matches {' '.join(asked)}.",
            )  # fmt: skip
        library = library.filter(book_id__in=by_field.book_ids)
        filtered = True
    elif parsed.units:
        named = _names_in(parsed, books, capitalized=_capitalized(query), library=library)
    terms = query_terms(parsed) if parsed.units or parsed.exclusions else None
    if terms and terms.constraint:
        # Quoted phrases and exclusions hold for the meaning half too.
        library = library.alias(constrained=search_document()).filter(
            constrained=_tsquery(terms.constraint)
        )
        # The index holds stems beside the words as written ("habits" is there as "habit"
        # too): the text itself tells that a quoted phrase is there exactly.
        for i in parsed.phrases:
            if (i,) in parsed.clauses:
                library = library.filter(search_text__regex=_word_pattern(parsed.units[i][1]))
        filtered = True

    notices: list[str] = []
    vector: list[float] | None = None
    model_id = ""
    model_reads = True
    if mode != "keyword":
        from books.embedding.encoder import EncoderUnavailable, get_encoder

        try:
            encoder = get_encoder()
        except EncoderUnavailable:
            notices.append(NOTICE_MODEL_UNAVAILABLE)
        else:
            vector = query_vector(encoder, query.strip()[:QUERY_MAX_LENGTH])
            model_id = encoder.model_id
            language = language_notice(query, encoder)
            if language:
                notices.append(language)
                model_reads = False

    def rank(
        highlights: QuerySet[Highlight], asked: ParsedQuery, narrowed: bool, named: bool = False
    ) -> _Ranked:
        if not asked.units:
            return _listing(highlights)
        return _rank(
            reader, highlights, asked, mode=mode, filtered=narrowed, vector=vector,
            model_id=model_id, exclude_ids=exclude_ids, model_reads=model_reads, named=named,
        )  # fmt: skip

    ranked = rank(library, parsed, filtered)
    fused, ordered = ranked.fused, ranked.order
    named_first = 0
    if named.book_ids:
        # The named books' highlights that match the rest of the query come first; then
        # everything else the whole query finds (a highlight that quotes the name).
        topic = parsed.without(named.words | NAME_FILLER)
        # The reader named them: their best match on the topic shows, however far it is.
        first = rank(library.filter(book_id__in=named.book_ids), topic, True, named=True)
        # Only those close to the query, when the library has something closer: a sentence
        # about Colin Powell with a paraphrase in the library is not a question for Powell.
        best = min((e.distance for e in fused.values() if e.distance is not None), default=None)
        if best is not None and topic.units:
            reach = best + NAMED_MARGIN
            first.order = [
                pk
                for pk in first.order
                if first.fused[pk].keyword_rank is not None
                or (first.fused[pk].distance or math.inf) <= reach
            ]
            first.fused = {pk: first.fused[pk] for pk in first.order}
        if first.order:
            named_first = len(first.order)
            rest = [pk for pk in ordered if pk not in first.fused]
            fused = {**fused, **first.fused}
            ordered = [*first.order, *rest]
            if topic.units:
                ranked = _Ranked(fused, ordered, first.keyword, first.mode_used, first.weights)
            else:
                ranked = _Ranked(fused, ordered, ranked.keyword, ranked.mode_used, ranked.weights)
    if recency_boost and fused:
        now = clock()
        added = Highlight.objects.filter(pk__in=list(fused)).values_list(
            "pk", Coalesce("added_at", "created")
        )
        for pk, when in added:
            fused[pk].score *= recency_factor(when, now)
        # Within each part: the named books' highlights stay first.
        head = fused_order({pk: fused[pk] for pk in ordered[:named_first]})
        ordered = [*head, *fused_order({pk: fused[pk] for pk in ordered[named_first:]})]
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
                _marked(parsed.words, highlights[pk])
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
        mode_used=ranked.mode_used,
        results=results,
        total=len(ordered),
        offset=offset,
        limit=limit,
        words=parsed.words,
        keyword_pass=ranked.keyword.passed,
        notice=" ".join(notices),
        ids=ordered,
        named=named.names if named_first else (),
        named_words=named.words if named_first else frozenset(),
        named_first=named_first,
        keyword_capped=ranked.keyword.capped,
        fusion=ranked.weights.why if ranked.weights else "",
    )
