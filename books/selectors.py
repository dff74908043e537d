"""Reads of a reader's library that more than one view or command needs."""

from dataclasses import dataclass
from datetime import date

from django.db.models import Count, F, Max, Min, Q, QuerySet

from accounts.models import User
from books.models import Book, Connection, Highlight, Import, Tag


@dataclass(frozen=True)
class EmbeddingProgress:
    highlights: int
    embedded: int
    failed: int
    # Why highlights wait, when the pipeline knows (e.g. the model cannot load).
    reason: str = ""

    @property
    def pending(self) -> int:
        return self.highlights - self.embedded - self.failed

    @property
    def done(self) -> bool:
        return self.pending == 0

    @property
    def percent_embedded(self) -> int:
        return 100 if self.highlights == 0 else (100 * self.embedded) // self.highlights


@dataclass(frozen=True)
class LibraryCounts(EmbeddingProgress):
    books: int = 0


def _progress(highlights: QuerySet[Highlight]) -> EmbeddingProgress:
    status = Highlight.EmbeddingStatus
    totals = highlights.aggregate(
        highlights=Count("id"),
        embedded=Count("id", filter=Q(embedding_status=status.DONE)),
        failed=Count("id", filter=Q(embedding_status=status.FAILED)),
    )
    progress = EmbeddingProgress(**totals)
    if not progress.done:
        reason = (
            highlights.filter(embedding_status__in=[status.PENDING, status.CLAIMED])
            .exclude(embedding_error="")
            .values_list("embedding_error", flat=True)
            .first()
        )
        progress = EmbeddingProgress(**totals, reason=reason or "")
    return progress


def import_progress(the_import: Import) -> EmbeddingProgress:
    return _progress(Highlight.objects.alive().filter(source_import=the_import))


def library_counts(reader: User) -> LibraryCounts:
    progress = _progress(Highlight.objects.alive().filter(reader=reader))
    books = Book.objects.filter(reader=reader).count()
    return LibraryCounts(**vars(progress), books=books)


BOOK_SORTS = {
    "title": ("title",),
    "highlights": ("-highlight_count", "title"),
    "recent": (F("last_added").desc(nulls_last=True), "title"),
}


def books_for(reader: User, *, sort: str = "title", query: str = "") -> list[Book]:
    """The reader's books with their highlight count and last highlight date."""
    alive = Q(highlights__deleted_at__isnull=True)
    books = Book.objects.filter(reader=reader).annotate(
        highlight_count=Count("highlights", filter=alive),
        last_added=Max("highlights__added_at", filter=alive),
    )
    if query:
        books = books.filter(Q(title__icontains=query) | Q(authors__icontains=query))
    return list(books.order_by(*BOOK_SORTS.get(sort, BOOK_SORTS["title"])))


def tags_for(reader: User) -> list[Tag]:
    return list(
        Tag.objects.filter(reader=reader)
        .annotate(count=Count("highlights", filter=Q(highlights__deleted_at__isnull=True)))
        .order_by("name")
    )


def highlight_of_the_day(reader: User, *, today: date) -> Highlight | None:
    """One highlight a day, the same all day: the day picks a position in the library."""
    highlights = Highlight.objects.alive().filter(reader=reader, kind=Highlight.Kind.HIGHLIGHT)
    count = highlights.count()
    if count == 0:
        return None
    return highlights.select_related("book").order_by("pk")[today.toordinal() % count]


def fresh_connections(reader: User, *, limit: int = 3) -> list[Connection]:
    return list(library_connections(reader).order_by("-created", "distance")[:limit])


@dataclass(frozen=True)
class ConnectedHighlight:
    """The other side of a connection, as seen from one highlight."""

    highlight: Highlight
    distance: float

    @property
    def percent(self) -> int:
        return round(100 * (1 - self.distance))


def connections_for(
    highlight: Highlight, *, other_authors_only: bool = False, limit: int = 50
) -> list[ConnectedHighlight]:
    """A highlight's stored connections to the reader's other books, closest first."""
    as_a = Connection.objects.filter(
        highlight_a=highlight, highlight_b__deleted_at__isnull=True
    ).values_list("highlight_b_id", "distance")
    as_b = Connection.objects.filter(
        highlight_b=highlight, highlight_a__deleted_at__isnull=True
    ).values_list("highlight_a_id", "distance")
    distances = dict(as_a.union(as_b, all=True).order_by("distance")[:limit])
    others = Highlight.objects.filter(pk__in=list(distances)).select_related("book")
    if other_authors_only and highlight.book.authors_normalized:
        others = others.exclude(book__authors_normalized=highlight.book.authors_normalized)
    found = [ConnectedHighlight(other, distances[other.pk]) for other in others]
    return sorted(found, key=lambda c: c.distance)


def library_connections(
    reader: User, *, book: Book | None = None, since_import: Import | None = None
) -> QuerySet[Connection]:
    """A reader's connections, strongest first: both sides alive, each pair once."""
    pairs = Connection.objects.filter(
        reader=reader,
        highlight_a__deleted_at__isnull=True,
        highlight_b__deleted_at__isnull=True,
    )
    if book is not None:
        pairs = pairs.filter(Q(highlight_a__book=book) | Q(highlight_b__book=book))
    if since_import is not None:
        pairs = pairs.filter(created__gte=since_import.started_at)
    return pairs.select_related("highlight_a__book", "highlight_b__book").order_by("distance", "pk")


def import_connections_count(the_import: Import) -> int:
    """Connections that involve a highlight this import brought in."""
    return Connection.objects.filter(
        Q(highlight_a__source_import=the_import) | Q(highlight_b__source_import=the_import),
        highlight_a__deleted_at__isnull=True,
        highlight_b__deleted_at__isnull=True,
    ).count()


@dataclass(frozen=True)
class ConnectedBook:
    book: Book
    connections: int
    best_distance: float

    @property
    def percent(self) -> int:
        return round(100 * (1 - self.best_distance))


def connected_books(book: Book, *, limit: int = 10) -> list[ConnectedBook]:
    """The other books a book connects to most: how many pairs, and the closest one."""
    pairs = Connection.objects.filter(
        highlight_a__deleted_at__isnull=True, highlight_b__deleted_at__isnull=True
    )
    tallies: dict[int, tuple[int, float]] = {}
    for mine, other in (("highlight_a", "highlight_b"), ("highlight_b", "highlight_a")):
        rows = (
            pairs.filter(**{f"{mine}__book": book})
            .values(f"{other}__book")
            .annotate(n=Count("id"), best=Min("distance"))
        )
        for row in rows:
            other_book = row[f"{other}__book"]
            count, best = tallies.get(other_book, (0, 2.0))
            tallies[other_book] = (count + row["n"], min(best, row["best"]))
    books = Book.objects.in_bulk(list(tallies))
    ranked = sorted(tallies.items(), key=lambda item: (-item[1][0], item[1][1]))[:limit]
    return [ConnectedBook(books[pk], count, best) for pk, (count, best) in ranked]
