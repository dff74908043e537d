"""Reads of a reader's connections that pages and commands share.

Every pair carries the judge's verdict, stored when written (Connection.strength,
probability): a read is an indexed filter on it, never a grading. Pairs across authors
lead (Borges and Sacks on memory tell a reader more than Borges and Borges), then the most
probable; a listing of the whole library shows at most PER_BOOK_PAIR pairs of one pair of
books, so that two books that echo each other do not fill the page.
"""

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, Unpack

from django.core.paginator import Page
from django.db import connection
from django.db.models import (
    BigIntegerField,
    BooleanField,
    Case,
    Count,
    ExpressionWrapper,
    F,
    Max,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Greatest, Length

from accounts.models import User
from books.connections.judge import negated, numbers_differ, numbers_of, shared_wording, wording
from books.connections.services import same_author
from books.importing import identity
from books.library_cache import LibraryCache
from books.models import UNLISTED_FIELDS, Book, Connection, Highlight, Import
from exogram.paging import ListPaginator

# A listing of the whole library (the feed, the connections page) shows at most this many
# pairs of one pair of books.
PER_BOOK_PAIR = 3
# A passage longer than this (characters, about 170 words) is a chapter's summary or a list
# of contents more than a passage: near many others on many themes, it took 6 of the 25 pairs
# of a real reader's first page (one of 549 words in 3 of the first 4). Such pairs are
# listed after the rest; 65 of 7,703 passages of the shared Kindle files are that long.
LONG_PASSAGE = 1000
# The newest connections the home feed chooses from.
FRESH_POOL = 50
# A pair sharing this share of its words or more is one passage quoted twice, nearly word
# for word ("you'll" for "you will"): true, and listed after the pairs that tell a reader
# something new. Read on the realistic library's first page, where 14 of 20 pairs were one
# saying in two anthologies: their variants share 0.7-1.0 of their words, paraphrases
# ("Friendship often ends in love…" / "Friendship may grow into love…") under 0.5.
NEAR_COPY = 0.7
STORED = Connection.Strength


class PairAnnotations(TypedDict):
    same_idea: bool
    same_author: bool
    near_copy: bool
    long_side: bool


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    # A connection as library_connections reads it.
    JudgedPair = WithAnnotations[Connection, PairAnnotations]


class Strength(StrEnum):
    SAME_IDEA = "same idea"
    RELATED = "related"
    NEARBY = "nearby"


_STRENGTHS = {
    STORED.SAME_IDEA: Strength.SAME_IDEA,
    STORED.RELATED: Strength.RELATED,
    STORED.NEARBY: Strength.NEARBY,
}


def strength_of(stored: int) -> Strength:
    return _STRENGTHS[STORED(stored)]


@dataclass(frozen=True)
class ConnectedHighlight:
    """The other side of a pair, as seen from one highlight, with the judge's verdict."""

    highlight: Highlight
    distance: float
    strength: Strength | None = None  # None: a nearest passage the judge never saw
    same_author: bool = False
    probability: float | None = None  # P(related), when judged
    # Passages of other books in the very same words (a saying kept in two anthologies):
    # named beside this one instead of read again.
    copies: tuple[Highlight, ...] = ()

    @property
    def percent(self) -> int | None:
        """Rounded down, so a candidate just under the related band never reads as the
        band itself above "a connection needs 70% or more"."""
        return None if self.probability is None else math.floor(round(100 * self.probability, 6))


def connections_for(
    highlight: Highlight,
    *,
    other_authors_only: bool = False,
    limit: int = 50,
    nearby: bool = False,
) -> list[ConnectedHighlight]:
    """A highlight's stored connections (with `nearby`, its nearby pairs too) to the
    reader's other books: other authors first, then most probable first."""
    lowest = STORED.NEARBY if nearby else STORED.RELATED
    verdicts = _stored_pairs(highlight.pk, lowest=lowest)
    others = Highlight.objects.filter(pk__in=list(verdicts)).select_related("book").listed()
    found = []
    for other in others:
        author = same_author(highlight.book.authors_normalized, other.book.authors_normalized)
        if other_authors_only and author:
            continue
        distance, probability, strength = verdicts[other.pk]
        found.append(
            ConnectedHighlight(other, distance, strength_of(strength), author, probability)
        )
    found.sort(key=lambda c: (-(c.probability or 0.0), c.highlight.pk))
    return sorted(found[:limit], key=lambda c: c.same_author)


def _stored_pairs(highlight_id: int, *, lowest: int) -> dict[int, tuple[float, float, int]]:
    """The alive passages a highlight is paired with, from strength `lowest`: distance,
    P(related), strength. SQL as written: the two halves through the ORM cost ten times the
    CPU (the load library's highlight page)."""
    sql = """
        SELECT c.highlight_b_id, c.distance, c.probability, c.strength FROM books_connection c
        JOIN books_highlight other ON other.id = c.highlight_b_id
        WHERE c.highlight_a_id = %(id)s AND c.strength >= %(lowest)s
          AND other.deleted_at IS NULL AND NOT other.is_word
        UNION ALL
        SELECT c.highlight_a_id, c.distance, c.probability, c.strength FROM books_connection c
        JOIN books_highlight other ON other.id = c.highlight_a_id
        WHERE c.highlight_b_id = %(id)s AND c.strength >= %(lowest)s
          AND other.deleted_at IS NULL AND NOT other.is_word
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"id": highlight_id, "lowest": lowest})
        return {
            other: (float(distance), float(probability), int(strength))
            for other, distance, probability, strength in cursor.fetchall()
        }


@dataclass(frozen=True)
class HighlightConnections:
    """What a highlight page shows: the best few of each strength by other authors, the
    same author's behind a toggle, and, with no connection by another author, the judge's
    best other candidates with what it thinks of them (then the nearest passages, unjudged,
    when it has none)."""

    same_idea: list[ConnectedHighlight] = field(default_factory=list)
    related: list[ConnectedHighlight] = field(default_factory=list)
    same_author: list[ConnectedHighlight] = field(default_factory=list)
    nearest: list[ConnectedHighlight] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.same_idea or self.related or self.same_author)

    @property
    def nearest_judged(self) -> bool:
        return any(c.probability is not None for c in self.nearest)

    @property
    def connection_percent(self) -> int:
        """The likelihood a pair needs to be a connection, in percent: the judge's related
        band, which the nearest (shown with theirs) did not reach."""
        from books.connections.services import current_judge

        return round(100 * current_judge().related_band)


def highlight_connections(
    highlight: Highlight, *, per_strength: int = 3, shelf: LibraryCache | None = None
) -> HighlightConnections:
    """`shelf`: the request's cached reads of the reader's library, if it has them. One
    passage in two books is read once within each list shown (_one_per_wording), so a
    connection is never hidden under a candidate of another list."""
    found = connections_for(highlight, limit=100, nearby=True)
    judged = [c for c in found if c.strength != Strength.NEARBY]
    others = _one_per_wording([c for c in judged if not c.same_author])
    nearest: list[ConnectedHighlight] = []
    if not others:
        # Never a dead end, never a page that contradicts itself: the judge's best other
        # candidates, each with its verdict; only with none, the nearest by the vectors.
        nearest = [c for c in found if c.strength == Strength.NEARBY and not c.same_author]
        if not nearest:
            nearest = nearest_in_library(highlight, limit=2 * per_strength, shelf=shelf)
        nearest = _one_per_wording(nearest)[:per_strength]
    return HighlightConnections(
        same_idea=[c for c in others if c.strength == Strength.SAME_IDEA][:per_strength],
        related=[c for c in others if c.strength == Strength.RELATED][:per_strength],
        same_author=_one_per_wording([c for c in judged if c.same_author])[: 2 * per_strength],
        nearest=nearest,
    )


@dataclass(frozen=True)
class _Wording:
    """What tells one passage quoted twice from two passages: its words, whether it
    negates, the numbers it names."""

    words: frozenset[str]
    negated: bool
    numbers: frozenset[str]

    @classmethod
    def of(cls, text: str) -> "_Wording":
        return cls(frozenset(wording(text)), negated(text), numbers_of(text))

    def same_passage(self, other: "_Wording") -> bool:
        """The same words or nearly (NEAR_COPY of them shared: "anybody" for "anyone"),
        saying the same thing: not one negated ("…is not a choice"), not other numbers."""
        small, large = sorted((len(self.words), len(other.words)))
        if not small or small < NEAR_COPY * large:  # the share could not reach NEAR_COPY
            return False
        return (
            shared_wording(self.words, other.words) >= NEAR_COPY
            and self.negated == other.negated
            and not numbers_differ(self.numbers, other.numbers)
        )


def _one_per_wording(found: list[ConnectedHighlight]) -> list[ConnectedHighlight]:
    """The first of each passage, in `found`'s order; the later ones that are the same
    passage (_Wording.same_passage) become its `copies`."""
    kept: list[ConnectedHighlight] = []
    seen: list[_Wording] = []
    for connected in found:
        this = _Wording.of(connected.highlight.text)
        at = next((i for i, other in enumerate(seen) if this.same_passage(other)), None)
        if at is not None:
            kept[at] = replace(kept[at], copies=(*kept[at].copies, connected.highlight))
            continue
        seen.append(this)
        kept.append(connected)
    return kept


def nearest_in_library(
    highlight: Highlight, *, limit: int = 3, shelf: LibraryCache | None = None
) -> list[ConnectedHighlight]:
    """The passages of other books closest to a highlight, however far: other authors
    first. Nothing for a word or a highlight without a vector."""
    from books.connections.neighbours import library_size, nearest_highlights

    if highlight.is_word or highlight.embedding is None:
        return []
    size = None
    if shelf is not None:
        # The size only chooses the scan, exact or HNSW (recall@10 0.996-1.000, see
        # neighbours.py): counted once per version of the library, not at each page (a
        # scan of 2,001 rows, 1-4 ms of database CPU on the 20,000-highlight load library).
        size = shelf.get(
            "embedded-size",
            partial(
                library_size, reader_id=highlight.reader_id, model_id=highlight.embedding_model
            ),
            highlight.embedding_model,
        )
    # An English passage by the English model, which reads English prose better (and then
    # among English passages alone: only they have its vectors).
    english = highlight.english_embedding is not None
    neighbours = nearest_highlights(
        reader_id=highlight.reader_id,
        vector=highlight.english_embedding if english else highlight.embedding,
        column="english_embedding" if english else "embedding",
        model_id=highlight.embedding_model,
        limit=4 * limit,
        exclude_book_id=highlight.book_id,
        passages_only=True,
        size=size,
    )
    rows = (
        Highlight.objects.alive()
        .select_related("book")
        .listed()
        .in_bulk([n.highlight_id for n in neighbours])
    )
    found = []
    for neighbour in neighbours:
        other = rows.get(neighbour.highlight_id)
        if other is not None:
            author = same_author(highlight.book.authors_normalized, other.book.authors_normalized)
            found.append(ConnectedHighlight(other, neighbour.distance, None, author))
    return sorted(found, key=lambda c: (c.same_author, c.distance))[:limit]


_Pairs = TypeVar("_Pairs", bound="QuerySet[Any]")


def _alive(pairs: _Pairs) -> _Pairs:
    return pairs.filter(
        highlight_a__deleted_at__isnull=True,
        highlight_b__deleted_at__isnull=True,
        highlight_a__is_word=False,
        highlight_b__is_word=False,
    )


# Two book ids as one number (the lower one first): same_author_book_pairs' keys.
BOOK_PAIR_KEY = 1 << 32


def same_author_book_pairs(reader: User) -> list[int]:
    """The reader's pairs of books by one author (books.importing.identity.same_author:
    credentials, initials, "Last, First", co-authors), as lower id * BOOK_PAIR_KEY + higher
    id. Books are compared only with books that share a family name or a whole name
    (identity.author_blocks): sharing any word of a name, "de" or "john", made it thousands
    of comparisons a page at 300 books."""
    books = list(
        Book.objects.filter(reader=reader)
        .exclude(authors_normalized="")
        .values_list("pk", "authors_normalized")
    )
    by_block: defaultdict[str, list[int]] = defaultdict(list)
    for index, (_, authors) in enumerate(books):
        for block in identity.author_blocks(authors):
            by_block[block].append(index)
    # Two books in one block are mostly in another too (a name's family name and its whole
    # name): each pair is compared once.
    candidates = {
        (first, second)
        for indexes in by_block.values()
        for i, first in enumerate(indexes)
        for second in indexes[i + 1 :]
    }
    found = set()
    for first, second in candidates:
        (a, a_authors), (b, b_authors) = books[first], books[second]
        if same_author(a_authors, b_authors):
            found.add(min(a, b) * BOOK_PAIR_KEY + max(a, b))
    return sorted(found)


# The order of library_connections (its docstring says what comes first).
SHOWN_ORDER = ("same_author", "near_copy", "long_side", "-probability", "pk")


def library_connections(
    reader: User,
    *,
    book: Book | None = None,
    other: Book | None = None,
    since_import: Import | None = None,
    strength: Strength | None = None,
    per_book_pair: int | None = None,
) -> "QuerySet[JudgedPair]":
    """A reader's connections (related or the same idea): both sides alive passages, each
    pair once; pairs across authors first, one passage quoted twice (NEAR_COPY) and pairs
    with a side longer than a passage (LONG_PASSAGE) after the others, then most probable
    first. Annotated with `same_idea`, `same_author`, `near_copy` and `long_side`
    (PairAnnotations). `per_book_pair`: at most that many of one pair of books (the most
    probable)."""
    return _selected(
        _judged_pairs(reader),
        reader,
        book=book,
        other=other,
        since_import=since_import,
        strength=strength,
        per_book_pair=per_book_pair,
    )


class Selection(TypedDict, total=False):
    """Which of a reader's connections a listing shows (library_connections' filters)."""

    book: Book | None
    other: Book | None
    since_import: Import | None
    strength: Strength | None
    per_book_pair: int | None


def _selected(
    judged: "QuerySet[JudgedPair]", reader: User, **selection: Unpack[Selection]
) -> "QuerySet[JudgedPair]":
    """Of the reader's `judged` pairs (_judged_pairs), those library_connections lists."""
    book, other = selection.get("book"), selection.get("other")
    strength, since_import = selection.get("strength"), selection.get("since_import")
    pairs = _alive(judged)
    if strength == Strength.SAME_IDEA:
        pairs = pairs.filter(strength=STORED.SAME_IDEA)
    elif strength == Strength.RELATED:
        pairs = pairs.filter(strength=STORED.RELATED)
    else:
        pairs = pairs.filter(strength__gte=STORED.RELATED)
    if book is not None and other is not None:
        # The pairs between two books (a book page's "see pairs"), whichever side is which.
        low, high = sorted((book.pk, other.pk))
        pairs = pairs.filter(book_low=low, book_high=high)
    elif book is not None:
        pairs = pairs.filter(Q(book_low=book) | Q(book_high=book))
    if since_import is not None:
        pairs = pairs.filter(created__gte=since_import.started_at)
    per_book_pair = selection.get("per_book_pair")
    if per_book_pair is not None:
        pairs = pairs.filter(
            pk__in=_best_of_each_book_pair(
                reader,
                per_book_pair,
                strength=strength,
                since=since_import.started_at if since_import is not None else None,
            )
        )
    return pairs


def _judged_pairs(reader: User) -> "QuerySet[JudgedPair]":
    """All the reader's pairs as library_connections lists them, not yet selected (_selected):
    annotated (PairAnnotations), read with both passages and their books, in SHOWN_ORDER."""
    judged = (
        Connection.objects.filter(reader=reader)
        .annotate(longest=Greatest(Length("highlight_a__text"), Length("highlight_b__text")))
        .annotate(
            long_side=ExpressionWrapper(Q(longest__gt=LONG_PASSAGE), output_field=BooleanField()),
            same_idea=ExpressionWrapper(Q(strength=STORED.SAME_IDEA), output_field=BooleanField()),
            # Not yet measured (stored before it was), a pair is no copy until re-judged.
            near_copy=ExpressionWrapper(
                Q(wording_shared__gte=NEAR_COPY, wording_shared__isnull=False),
                output_field=BooleanField(),
            ),
            book_pair=ExpressionWrapper(
                F("book_low") * BOOK_PAIR_KEY + F("book_high"), output_field=BigIntegerField()
            ),
        )
        .annotate(
            same_author=Case(
                When(book_pair__in=same_author_book_pairs(reader), then=Value(True)),
                default=Value(False),
                output_field=BooleanField(),
            ),
        )
    )
    return judged.select_related("highlight_a__book", "highlight_b__book").order_by(*SHOWN_ORDER)


# Each pair of books the reader's pairs join, read from the index by skipping from one to the
# next (a loose index scan: a step per pair of books, not per pair), then each one's best
# few alive passages' pairs from the same index, walked in order until enough are alive.
_BEST_OF_EACH_BOOK_PAIR = """
WITH RECURSIVE book_pairs AS (
    (SELECT book_low_id, book_high_id FROM books_connection
     WHERE reader_id = %s AND strength >= %s
     ORDER BY reader_id, book_low_id, book_high_id LIMIT 1)
    UNION ALL
    SELECT next.book_low_id, next.book_high_id FROM book_pairs AS last
    CROSS JOIN LATERAL (
        SELECT c.book_low_id, c.book_high_id FROM books_connection AS c
        WHERE c.reader_id = %s AND c.strength >= %s
          AND (c.book_low_id, c.book_high_id) > (last.book_low_id, last.book_high_id)
        ORDER BY c.reader_id, c.book_low_id, c.book_high_id LIMIT 1
    ) AS next
)
SELECT best.id FROM book_pairs CROSS JOIN LATERAL (
    SELECT c.id FROM books_connection AS c
    JOIN books_highlight AS a ON a.id = c.highlight_a_id
    JOIN books_highlight AS b ON b.id = c.highlight_b_id
    WHERE c.reader_id = %s AND c.strength >= %s
      AND c.book_low_id = book_pairs.book_low_id AND c.book_high_id = book_pairs.book_high_id
      AND c.strength BETWEEN %s AND %s AND (%s::timestamptz IS NULL OR c.created >= %s)
      AND a.deleted_at IS NULL AND b.deleted_at IS NULL AND NOT a.is_word AND NOT b.is_word
    ORDER BY c.probability DESC, c.id LIMIT %s
) AS best
"""


def _best_of_each_book_pair(
    reader: User, limit: int, *, strength: Strength | None, since: datetime | None
) -> RawSQL:
    """The ids of each pair of books' `limit` most probable pairs of alive passages, of
    that strength (related or the same idea: None) and stored since then, as a subquery.
    Costs a few index reads per pair of books, whatever the number of pairs they hold."""
    lowest, highest = {
        Strength.SAME_IDEA: (STORED.SAME_IDEA, STORED.SAME_IDEA),
        Strength.RELATED: (STORED.RELATED, STORED.RELATED),
    }.get(strength, (STORED.RELATED, STORED.SAME_IDEA))  # type: ignore[arg-type]
    in_the_index = [reader.pk, STORED.RELATED.value]  # the index's condition, asked each time
    params = [*in_the_index * 3, lowest.value, highest.value, since, since, limit]
    return RawSQL(_BEST_OF_EACH_BOOK_PAIR, params)


# A listed pair shows its two passages, not their vectors: 384 numbers each to read and parse.
_UNSHOWN_PAIR_FIELDS = [
    f"{side}__{field}" for side in ("highlight_a", "highlight_b") for field in UNLISTED_FIELDS
]


def connections_page(
    reader: User, number: str | int | None, *, per_page: int, **selection: Unpack[Selection]
) -> "Page[Any]":
    """The page `number` of the reader's connections (library_connections, `selection` its
    filters), in their order: its pairs, read whole but for their vectors.

    One query selects, orders and counts the pairs by their ids alone (the keys of the order
    selected beside them, as PostgreSQL sorts by them), then one reads the page's 25 pairs
    by their ids: reading every listed pair whole to count and slice them cost the texts of
    all of them, twice (docs/evaluation.md), and reading the page's pairs through the
    selection again ran its per-book-pair subquery twice.
    """
    judged = _judged_pairs(reader)
    keys = [key.removeprefix("-") for key in SHOWN_ORDER if key != "pk"]
    ids = [row[0] for row in _selected(judged, reader, **selection).values_list("pk", *keys)]
    page: Page[Any] = ListPaginator(ids, per_page).get_page(number)  # of ids, then of pairs
    if page.object_list:
        # A plain read by id: the selection (its per-book-pair subquery) ran once, above.
        shown = judged.filter(pk__in=page.object_list).defer(*_UNSHOWN_PAIR_FIELDS)
        page.object_list = list(shown)
    return page


def fresh_connections(reader: User, *, limit: int = 3) -> list[Connection]:
    """The home feed: of the newest connections, those across authors first, most probable
    first, at most PER_BOOK_PAIR of one pair of books, and each passage in one pair only: a
    passage with two kin ("The only true wisdom…" and "True knowledge…" both beside one
    Spanish line) would fill the feed with itself."""
    newest = list(
        _alive(Connection.objects.filter(reader=reader, strength__gte=STORED.RELATED))
        .order_by("-created", "-probability")
        .values_list("pk", flat=True)[:FRESH_POOL]
    )
    # Capped among the newest: a new pair of two books that echoed each other before is news.
    pairs = library_connections(reader).filter(pk__in=newest)
    shown: list[Connection] = []
    seen: set[int] = set()
    of_books: Counter[tuple[int, int]] = Counter()
    for pair in pairs:
        sides = {pair.highlight_a_id, pair.highlight_b_id}
        books = (pair.book_low_id, pair.book_high_id)
        if sides.isdisjoint(seen) and of_books[books] < PER_BOOK_PAIR:
            shown.append(pair)
            seen |= sides
            of_books[books] += 1
            if len(shown) == limit:
                break
    return shown


def import_connections_count(the_import: Import) -> int:
    """Connections that involve a highlight this import brought in."""
    pairs = Connection.objects.filter(
        Q(highlight_a__source_import=the_import) | Q(highlight_b__source_import=the_import),
        strength__gte=STORED.RELATED,
    )
    return _alive(pairs).count()


@dataclass(frozen=True)
class ConnectedBook:
    book: Book
    connections: int
    best_probability: float
    strength: Strength


def connected_books(book: Book, *, limit: int = 10) -> list[ConnectedBook]:
    """The other books a book connects to most: how many pairs, and the strongest one."""
    pairs = _alive(Connection.objects.filter(strength__gte=STORED.RELATED))
    tallies: dict[int, tuple[int, float, int]] = {}
    for mine, other in (("book_low", "book_high"), ("book_high", "book_low")):
        rows = (
            pairs.filter(**{mine: book})
            .values(other)
            .annotate(n=Count("id"), best=Max("probability"), strongest=Max("strength"))
        )
        for row in rows:
            other_book = row[other]
            count, best, strongest = tallies.get(other_book, (0, 0.0, 0))
            tallies[other_book] = (
                count + row["n"],
                max(best, row["best"]),
                max(strongest, row["strongest"]),
            )
    books = Book.objects.in_bulk(list(tallies))
    ranked = sorted(tallies.items(), key=lambda item: (-item[1][0], -item[1][1]))[:limit]
    return [
        ConnectedBook(books[pk], count, best, strength_of(strongest))
        for pk, (count, best, strongest) in ranked
    ]
