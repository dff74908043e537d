"""Reads of a reader's connections that pages and commands share."""

from dataclasses import dataclass

from django.db.models import Count, Min, Q, QuerySet

from accounts.models import User
from books.models import Book, Connection, Highlight, Import


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
