"""The reader's library as a search sees it: their live highlights that pass the filters
(book, author, dates added, with a note), the one place both halves start."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db import connection
from django.db.models import F, Q, QuerySet

from accounts.models import User
from books.importing.clippings import normalize_author
from books.models import Book, Highlight
from books.search.refreshed import Refreshed
from books.text import fold

# A reader who holds this share of all highlights or more is found among the rows the words
# or the books select, never through the reader index. The planner costs a keyword CTE for
# every highlight with the word, not for the LIMIT read from it, and so ANDed the word's
# bitmap with the reader's: for a reader of 100,000 in a table of 121,000 (bench_search), a
# bitmap of 100,000 rows built for each common word to leave out 17 % of its rows, 3.6-8.7 ms
# a word; the words of a name query then took 23 ms of PostgreSQL CPU instead of 10, and a
# keyword search's p95 fell from 44 to 21 ms of CPU, the same rows found. A smaller reader
# keeps the index, which then leaves out the many rows of others.
READER_INDEX_MAX_SHARE = 0.5
READER_SHARES_TTL_SECONDS = 600.0


def _read_reader_shares() -> dict[int, float]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT most_common_vals::text::bigint[], most_common_freqs FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = %s AND attname = %s",
            [Highlight._meta.db_table, "reader_id"],
        )
        row = cursor.fetchone()
    return dict(zip(row[0], row[1], strict=True)) if row and row[0] else {}


_reader_shares = Refreshed(_read_reader_shares, ttl=READER_SHARES_TTL_SECONDS)


def forget_reader_shares() -> None:
    """Read the statistics afresh at the next search (after an ANALYZE, in tests)."""
    _reader_shares.forget()


def reader_shares() -> dict[int, float]:
    """The share of all highlights the readers who hold many have, from PostgreSQL's own
    statistics (pg_stats.most_common_vals of the reader column): free to read. Re-read
    every few minutes; empty until the first ANALYZE."""
    return _reader_shares.get()


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
    highlights = Highlight.objects.alive()
    if reader_shares().get(reader.pk, 0.0) >= READER_INDEX_MAX_SHARE:
        # `+ 0`: the same rows, in a form no index answers (see READER_INDEX_MAX_SHARE).
        highlights = highlights.alias(reader_row=F("reader_id") + 0).filter(reader_row=reader.pk)
    else:
        highlights = highlights.filter(reader=reader)
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
