"""Reads of a reader's library that more than one view or command needs."""

from dataclasses import dataclass
from datetime import date

from django.db.models import Count, F, Max, Q, QuerySet

from accounts.models import User
from books.models import Book, Highlight, Import, Tag


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
