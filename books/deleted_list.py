"""The Recently deleted list (/deleted/), one row per delete: a whole book or what an import
added is one group of highlights, brought back together or one by one; a highlight deleted
on its own is a row of its own.

A group is the highlights of one Deletion (books.services.highlights_delete). Those
deleted before Deletions were recorded have none: their book and the moment they were
deleted (stamped alike on every highlight of one delete) group them instead, so a book
deleted whole is still one group, and an import spread over three books three groups.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.core.paginator import Page
from django.db.models import Case, Count, F, IntegerField, Q, QuerySet, When, Window
from django.db.models.functions import RowNumber

from accounts.models import User
from books.models import EMPTY_NOTE, Book, Deletion, Highlight, Import
from exogram.paging import ListPaginator

# Groups a page lists.
DELETED_PAGE_SIZE = 50
# Highlights a group shows inside it; the rest are on the book's page or the import's
# report ("and N more"). A deleted import can hold 100,000.
GROUP_SHOWN = 50


@dataclass
class DeletedGroup:
    """One delete: its highlights (up to GROUP_SHOWN of them), how many, and when."""

    at: datetime
    highlights: int
    notes: int
    # The Deletion, for one recorded as such; else the book of an older delete.
    deletion: Deletion | None
    book: Book | None
    shown: list[Highlight] = field(default_factory=list)
    kept_until: datetime | None = None

    @property
    def total(self) -> int:
        return self.highlights + self.notes

    @property
    def single(self) -> Highlight | None:
        """The highlight of a delete of one highlight on its own: a row, not a group."""
        return self.shown[0] if self.deletion is None and self.total == 1 and self.shown else None

    @property
    def the_import(self) -> Import | None:
        if self.deletion is not None and self.deletion.kind == Deletion.Kind.IMPORT:
            return self.deletion.source_import
        return None

    @property
    def is_import(self) -> bool:
        return self.deletion is not None and self.deletion.kind == Deletion.Kind.IMPORT

    @property
    def more(self) -> int:
        return self.total - len(self.shown)


def _lone_book() -> Case:
    """The book, for a highlight deleted without a Deletion: what groups older deletes."""
    return Case(When(deletion__isnull=True, then=F("book_id")), output_field=IntegerField())


def _deleted(reader: User) -> QuerySet[Highlight]:
    """The reader's deleted highlights the list shows and counts: not an empty note an older
    import kept (EMPTY_NOTE), which is still deleted, brought back and removed for good with
    the rest of its delete."""
    return Highlight.objects.filter(reader=reader, deleted_at__isnull=False).exclude(EMPTY_NOTE)


def deleted_groups(
    *, reader: User, page_number: Any, kept_for: timedelta | None
) -> tuple[Page[Any], list[DeletedGroup]]:
    """A page of the reader's deletes, the latest first (for its links), and its groups."""
    note = Q(kind=Highlight.Kind.NOTE)
    groups = (
        _deleted(reader)
        .annotate(lone_book=_lone_book())
        .values("deletion_id", "lone_book", "deleted_at")
        .annotate(highlights=Count("pk", filter=~note), notes=Count("pk", filter=note))
        .order_by("-deleted_at", "deletion_id", "lone_book")
    )
    page = ListPaginator(groups, DELETED_PAGE_SIZE).get_page(page_number)
    rows: list[dict[str, Any]] = [dict(row) for row in page.object_list]
    deletions = Deletion.objects.select_related("book", "source_import").in_bulk(
        [row["deletion_id"] for row in rows if row["deletion_id"] is not None]
    )
    books = Book.objects.in_bulk([row["lone_book"] for row in rows if row["lone_book"] is not None])
    listed = [
        DeletedGroup(
            at=row["deleted_at"],
            highlights=row["highlights"],
            notes=row["notes"],
            deletion=deletions.get(row["deletion_id"]),
            book=books.get(row["lone_book"]),
            kept_until=row["deleted_at"] + kept_for if kept_for is not None else None,
        )
        for row in rows
    ]
    for group in listed:
        if group.deletion is not None and group.book is None:
            group.book = group.deletion.book
    _fill(reader, rows, listed)
    return page, listed


def _fill(reader: User, rows: list[dict[str, Any]], listed: list[DeletedGroup]) -> None:
    """Each group's first GROUP_SHOWN highlights, in the order of the books, in one query."""
    if not rows:
        return
    which = Q()
    for row in rows:
        if row["deletion_id"] is not None:
            which |= Q(deletion_id=row["deletion_id"])
        else:
            which |= Q(deletion=None, book_id=row["lone_book"], deleted_at=row["deleted_at"])
    shown = (
        _deleted(reader)
        .filter(which)
        .select_related("book")
        .annotate(
            lone_book=_lone_book(),
            row=Window(
                RowNumber(),
                partition_by=[F("deletion_id"), _lone_book(), F("deleted_at")],
                order_by=[F("book__title_sort"), F("location_start").asc(nulls_last=True), "pk"],
            ),
        )
        .filter(row__lte=GROUP_SHOWN)
        .order_by("book__title_sort", F("location_start").asc(nulls_last=True), "pk")
    )
    by_group = {
        (row["deletion_id"], row["lone_book"], row["deleted_at"]): group
        for row, group in zip(rows, listed, strict=True)
    }
    for highlight in shown:
        key = (highlight.deletion_id, highlight.lone_book, highlight.deleted_at)
        by_group[key].shown.append(highlight)
