"""The reader's library as a search sees it: their live highlights that pass the filters
(book, author, dates added, with a note), the one place both halves start."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db.models import Q, QuerySet

from accounts.models import User
from books.importing.clippings import normalize_author
from books.models import Book, Highlight
from books.text import fold


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


def reader_library(reader: User, filters: SearchFilters) -> QuerySet[Highlight]:
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
