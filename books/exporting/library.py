"""What an export reads: a reader's alive highlights by book, with their tags, in order
(and, for Exogram's own JSON, the ones they deleted)."""

from collections.abc import Iterator
from dataclasses import dataclass, field

from django.db.models import Prefetch
from django.utils.translation import gettext

from accounts.models import User
from books.models import Book, Highlight, Tag


@dataclass(frozen=True)
class BookExport:
    book: Book
    highlights: list[Highlight]
    # The highlights of the book the reader deleted (not yet removed for good), when asked.
    deleted: list[Highlight] = field(default_factory=list)

    @property
    def tags(self) -> list[str]:
        return sorted({tag.name for h in self.highlights for tag in h.tags.all()})

    @property
    def notes(self) -> int:
        return sum(1 for h in self.highlights if h.note or h.kind == Highlight.Kind.NOTE)


def books_to_export(
    reader: User, *, book: Book | None = None, with_deleted: bool = False
) -> Iterator[BookExport]:
    """Each book with highlights, by title; its highlights in reading order. With
    `with_deleted`, a book's deleted highlights too, and a book with only those."""
    highlights = (
        (Highlight.objects.all() if with_deleted else Highlight.objects.alive())
        .filter(reader=reader)
        .defer("embedding", "english_embedding", "search_text")
        .prefetch_related(Prefetch("tags", queryset=Tag.objects.order_by("name")))
        .order_by(
            "book__title_sort", "book_id", "location_start", "reading_key", "page", "created", "pk"
        )
    )
    if book is not None:
        highlights = highlights.filter(book=book)
    books = {b.pk: b for b in Book.objects.filter(reader=reader)}
    current: BookExport | None = None
    # Chunked: a library of 100,000 highlights is never held twice in memory.
    for highlight in highlights.iterator(chunk_size=2000):
        if current is None or current.book.pk != highlight.book_id:
            if current is not None:
                yield current
            current = BookExport(books[highlight.book_id], [])
        highlight.book = current.book
        if highlight.deleted_at is None:
            current.highlights.append(highlight)
        else:
            current.deleted.append(highlight)
    if current is not None:
        yield current


def location_label(highlight: Highlight) -> str:
    """Location 120-124 / page 12 / both, as a reader would cite it."""
    parts = []
    if highlight.location_start is not None:
        where = str(highlight.location_start)
        if highlight.location_end not in (None, highlight.location_start):
            where += f"-{highlight.location_end}"
        parts.append(gettext("Location %(where)s") % {"where": where})
    if highlight.page:
        parts.append(gettext("page %(page)s") % {"page": highlight.page})
    return ", ".join(parts)
