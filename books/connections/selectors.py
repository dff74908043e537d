"""Reads of a reader's connections that pages and commands share.

Every read grades a connection by its distance, shifted for the pair's two languages
(services.Thresholds.graded): under the model's *same idea* cut it is the same idea, under
the *related* one it is related, and pairs across authors lead: Borges and Sacks on memory
tell a reader more than Borges and Borges.
"""

from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import connection
from django.db.models import Case, Count, F, Min, Q, QuerySet, Value, When
from django.db.models.fields import BooleanField, FloatField

from accounts.models import User
from books.connections.services import (
    KNOWN_LANGUAGES,
    RELATED_GRADE,
    SAME_IDEA_GRADE,
    Cuts,
    Thresholds,
    cuts_of,
    thresholds_for_display,
)
from books.language import ENGLISH, SPANISH
from books.library_cache import LibraryCache
from books.models import Book, Connection, Highlight, Import

# The newest connections the home feed chooses from, cross-author pairs first.
FRESH_POOL = 50


class PairAnnotations(TypedDict):
    graded: float
    same_idea: bool
    same_author: bool


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    # A connection as library_connections reads it.
    GradedPair = WithAnnotations[Connection, PairAnnotations]


class Strength(StrEnum):
    SAME_IDEA = "same idea"
    RELATED = "related"


def current_thresholds() -> Thresholds:
    """The model's thresholds; the configured built-in model's when the model cannot load,
    so that pages still grade what is stored."""
    from django.conf import settings

    from books.embedding.encoder import builtin_cut_figures

    found = thresholds_for_display()
    if found is not None:
        return found
    return cuts_of(**builtin_cut_figures(settings.EXOGRAM_EMBEDDING_MODEL))


def strength_of(graded: float) -> Strength:
    """The strength of a pair by its graded distance (Thresholds.graded)."""
    return Strength.SAME_IDEA if graded < SAME_IDEA_GRADE else Strength.RELATED


def graded_distance(thresholds: Thresholds) -> Case:
    """A connection's distance on the one scale every kind of pair is graded on, as
    Thresholds.graded computes it (Cuts.grade), so that one cut grades every language pair
    and either model's distances: `.annotate(graded=…)`."""
    a, b = "highlight_a__language", "highlight_b__language"
    kinds: list[tuple[Q, Cuts]] = [
        (
            ~Q(**{a: F(b)})
            & Q(**{f"{a}__in": KNOWN_LANGUAGES})
            & Q(**{f"{b}__in": KNOWN_LANGUAGES}),
            thresholds.across,
        ),
        (Q(**{a: SPANISH, b: SPANISH}), thresholds.spanish),
    ]
    if thresholds.english is not None:
        kinds.insert(0, (Q(**{a: ENGLISH, b: ENGLISH}), thresholds.english))
    distance = F("distance")
    whens = []
    for kind, cuts in [*kinds, (None, thresholds.within)]:
        # The three pieces of Cuts.grade, in order; the last kind is every other pair.
        def when(condition: Q, then: Any, kind: Q | None = kind) -> When:
            return When(condition if kind is None else kind & condition, then=then)

        same = cuts.same_idea if cuts.same_idea > 0 else 1.0
        if cuts is thresholds.english:
            # Two English passages: the same idea when the main model agrees, else the top
            # of the related band (Thresholds.graded).
            agreed = Q(distance__lt=cuts.same_idea, main_distance__lt=thresholds.within.same_idea)
            whens.append(when(agreed, distance * (SAME_IDEA_GRADE / same)))
            whens.append(when(Q(distance__lt=cuts.same_idea), Value(SAME_IDEA_GRADE)))
        else:
            whens.append(when(Q(distance__lt=cuts.same_idea), distance * (SAME_IDEA_GRADE / same)))
        if cuts.related > cuts.same_idea:
            scale = 1.0 / (cuts.related - cuts.same_idea)
            whens.append(
                when(
                    Q(distance__lt=cuts.related),
                    Value(SAME_IDEA_GRADE) + (distance - Value(cuts.same_idea)) * scale,
                )
            )
        if kind is not None:
            whens.append(When(kind, then=Value(RELATED_GRADE) + distance - Value(cuts.related)))
    beyond = Value(RELATED_GRADE) + distance - Value(thresholds.within.related)
    return Case(*whens, default=beyond, output_field=FloatField())


def _same_author(a: Book, b: Book) -> bool:
    # Two books with no author known are not taken for one author's.
    return bool(a.authors_normalized) and a.authors_normalized == b.authors_normalized


@dataclass(frozen=True)
class ConnectedHighlight:
    """The other side of a connection, as seen from one highlight."""

    highlight: Highlight
    distance: float
    strength: Strength | None = None  # None: a nearest passage, not a connection
    same_author: bool = False
    # The distance shifted for the pair's languages (Thresholds.graded): what ranks them.
    graded: float = 0.0


def connections_for(
    highlight: Highlight,
    *,
    other_authors_only: bool = False,
    limit: int = 50,
    thresholds: Thresholds | None = None,
) -> list[ConnectedHighlight]:
    """A highlight's stored connections to the reader's other books, other authors first,
    then closest first."""
    thresholds = thresholds or current_thresholds()
    distances = _connected_distances(highlight.pk, below=thresholds.loosest_stored)
    others = Highlight.objects.filter(pk__in=list(distances)).select_related("book").listed()
    found = []
    for other in others:
        same_author = _same_author(highlight.book, other.book)
        if other_authors_only and same_author:
            continue
        distance, main_distance = distances[other.pk]
        graded = thresholds.graded(distance, highlight.language, other.language, main_distance)
        if graded < RELATED_GRADE:
            strength = strength_of(graded)
            found.append(ConnectedHighlight(other, distance, strength, same_author, graded))
    found.sort(key=lambda c: (c.graded, c.highlight.pk))
    return sorted(found[:limit], key=lambda c: (c.same_author, c.graded))


def _connected_distances(
    highlight_id: int, *, below: float
) -> dict[int, tuple[float, float | None]]:
    """The alive passages a highlight connects to, with their distances and main distances
    (a pair is stored once, the highlight on either side). SQL as written: the same two
    halves through the ORM took 1.07 ms of CPU to compile and run against 0.12 ms (the load
    library's highlight page, 300 connected highlights)."""
    sql = """
        SELECT c.highlight_b_id, c.distance, c.main_distance FROM books_connection c
        JOIN books_highlight other ON other.id = c.highlight_b_id
        WHERE c.highlight_a_id = %(id)s AND c.distance < %(below)s
          AND other.deleted_at IS NULL AND NOT other.is_word
        UNION ALL
        SELECT c.highlight_a_id, c.distance, c.main_distance FROM books_connection c
        JOIN books_highlight other ON other.id = c.highlight_a_id
        WHERE c.highlight_b_id = %(id)s AND c.distance < %(below)s
          AND other.deleted_at IS NULL AND NOT other.is_word
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"id": highlight_id, "below": below})
        return {
            other: (float(distance), None if main is None else float(main))
            for other, distance, main in cursor.fetchall()
        }


@dataclass(frozen=True)
class HighlightConnections:
    """What a highlight page shows: the best few of each strength by other authors, the
    same author's behind a toggle, and the nearest passages when nothing connects."""

    same_idea: list[ConnectedHighlight] = field(default_factory=list)
    related: list[ConnectedHighlight] = field(default_factory=list)
    same_author: list[ConnectedHighlight] = field(default_factory=list)
    nearest: list[ConnectedHighlight] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.same_idea or self.related or self.same_author)


def highlight_connections(
    highlight: Highlight,
    *,
    per_strength: int = 3,
    thresholds: Thresholds | None = None,
    shelf: LibraryCache | None = None,
) -> HighlightConnections:
    """`shelf`: the request's cached reads of the reader's library, if it has them."""
    thresholds = thresholds or current_thresholds()
    found = connections_for(highlight, limit=100, thresholds=thresholds)
    others = [c for c in found if not c.same_author]
    return HighlightConnections(
        same_idea=[c for c in others if c.strength == Strength.SAME_IDEA][:per_strength],
        related=[c for c in others if c.strength == Strength.RELATED][:per_strength],
        same_author=[c for c in found if c.same_author][: 2 * per_strength],
        # Never a dead end: with no connection by another author, the closest passages
        # of other books, however far.
        nearest=[] if others else nearest_in_library(highlight, limit=per_strength, shelf=shelf),
    )


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
            same_author = _same_author(highlight.book, other.book)
            found.append(
                ConnectedHighlight(other, neighbour.distance, None, same_author, neighbour.distance)
            )
    return sorted(found, key=lambda c: (c.same_author, c.distance))[:limit]


def library_connections(
    reader: User,
    *,
    book: Book | None = None,
    other: Book | None = None,
    since_import: Import | None = None,
    strength: Strength | None = None,
    thresholds: Thresholds | None = None,
) -> "QuerySet[GradedPair]":
    """A reader's connections: both sides alive passages, each pair once; pairs across
    authors first, then strongest first. Each is annotated with `graded` (its distance on
    the common scale), `same_idea` and `same_author` (PairAnnotations)."""
    thresholds = thresholds or current_thresholds()
    pairs = Connection.objects.filter(
        reader=reader,
        highlight_a__deleted_at__isnull=True,
        highlight_b__deleted_at__isnull=True,
        highlight_a__is_word=False,
        highlight_b__is_word=False,
    )
    if book is not None and other is not None:
        # The pairs between two books (a book page's "see pairs"), whichever side is which.
        pairs = pairs.filter(
            Q(highlight_a__book=book, highlight_b__book=other)
            | Q(highlight_a__book=other, highlight_b__book=book)
        )
    elif book is not None:
        pairs = pairs.filter(Q(highlight_a__book=book) | Q(highlight_b__book=book))
    if since_import is not None:
        pairs = pairs.filter(created__gte=since_import.started_at)
    pairs = pairs.annotate(graded=graded_distance(thresholds))
    if strength == Strength.SAME_IDEA:
        pairs = pairs.filter(graded__lt=SAME_IDEA_GRADE)
    elif strength == Strength.RELATED:
        pairs = pairs.filter(graded__gte=SAME_IDEA_GRADE)
    graded = pairs.filter(graded__lt=RELATED_GRADE).annotate(
        same_idea=Case(
            When(graded__lt=SAME_IDEA_GRADE, then=Value(True)),
            default=Value(False),
            output_field=BooleanField(),
        ),
        same_author=Case(
            # Two books with no author known are not taken for one author's.
            When(
                Q(highlight_a__book__authors_normalized=F("highlight_b__book__authors_normalized"))
                & ~Q(highlight_a__book__authors_normalized=""),
                then=Value(True),
            ),
            default=Value(False),
            output_field=BooleanField(),
        ),
    )
    return graded.select_related("highlight_a__book", "highlight_b__book").order_by(
        "same_author", "graded", "pk"
    )


def fresh_connections(reader: User, *, limit: int = 3) -> list[Connection]:
    """The home feed: of the newest connections, those across authors first, strongest
    first."""
    thresholds = current_thresholds()
    newest = list(
        library_connections(reader, thresholds=thresholds)
        .order_by("-created", "distance")
        .values_list("pk", flat=True)[:FRESH_POOL]
    )
    pairs = library_connections(reader, thresholds=thresholds).filter(pk__in=newest)
    return list(pairs[:limit])


def import_connections_count(the_import: Import) -> int:
    """Connections that involve a highlight this import brought in."""
    thresholds = current_thresholds()
    pairs = Connection.objects.filter(
        Q(highlight_a__source_import=the_import) | Q(highlight_b__source_import=the_import),
        highlight_a__deleted_at__isnull=True,
        highlight_b__deleted_at__isnull=True,
        highlight_a__is_word=False,
        highlight_b__is_word=False,
    )
    graded = pairs.annotate(graded=graded_distance(thresholds))
    return graded.filter(graded__lt=RELATED_GRADE).count()


@dataclass(frozen=True)
class ConnectedBook:
    book: Book
    connections: int
    best_distance: float
    strength: Strength


def connected_books(book: Book, *, limit: int = 10) -> list[ConnectedBook]:
    """The other books a book connects to most: how many pairs, and the closest one."""
    thresholds = current_thresholds()
    pairs = Connection.objects.filter(
        highlight_a__deleted_at__isnull=True,
        highlight_b__deleted_at__isnull=True,
        highlight_a__is_word=False,
        highlight_b__is_word=False,
    )
    pairs = pairs.annotate(graded=graded_distance(thresholds)).filter(graded__lt=RELATED_GRADE)
    tallies: dict[int, tuple[int, float]] = {}
    for mine, other in (("highlight_a", "highlight_b"), ("highlight_b", "highlight_a")):
        rows = (
            pairs.filter(**{f"{mine}__book": book})
            .values(f"{other}__book")
            .annotate(n=Count("id"), best=Min("graded"))
        )
        for row in rows:
            other_book = row[f"{other}__book"]
            count, best = tallies.get(other_book, (0, 2.0))
            tallies[other_book] = (count + row["n"], min(best, row["best"]))
    books = Book.objects.in_bulk(list(tallies))
    ranked = sorted(tallies.items(), key=lambda item: (-item[1][0], item[1][1]))[:limit]
    return [
        ConnectedBook(books[pk], count, best, strength_of(best)) for pk, (count, best) in ranked
    ]
