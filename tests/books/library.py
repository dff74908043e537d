"""A reader's library built straight in the database (no import, no model run)."""

import html
import re
import uuid

from accounts.models import User
from books.importing.clippings import normalize_author
from books.models import Book, Highlight


def book_of(reader: User, title: str, authors: str = "") -> Book:
    book, _ = Book.objects.get_or_create(
        reader=reader,
        key=f"{title}|{authors}".casefold(),
        defaults={
            "title": title,
            "authors": authors,
            "authors_normalized": normalize_author(authors),
        },
    )
    return book


def highlight_in(book: Book, text: str, *, location: int, favourite: bool = False) -> Highlight:
    highlight = Highlight(
        reader_id=book.reader_id,
        book=book,
        text=text,
        location_start=location,
        location_end=location + 1,
        dedupe_key=uuid.uuid4().hex,
        favourite=favourite,
    )
    highlight.refresh_search_text()
    highlight.save()
    return highlight


def library_of(reader: User, count: int) -> list[Highlight]:
    """`count` highlights over two books, each a whole sentence of its own."""
    books = [book_of(reader, "Ficciones", "Borges, Jorge Luis"), book_of(reader, "Walden")]
    start = Highlight.objects.filter(reader=reader).count()
    return [
        highlight_in(
            books[i % 2],
            f"Sentence number {start + i} says something of its own.",
            location=10 * (start + i) + 1,
        )
        for i in range(count)
    ]


def pending_backlog(reader: User, count: int) -> list[int]:
    """`count` pending highlights of `reader`, in id order."""
    book = book_of(reader, f"Book of {reader.username}")
    rows = Highlight.objects.bulk_create(
        Highlight(
            reader=reader,
            book=book,
            text=f"{reader.username} marked passage {i}, a sentence of its own.",
            location_start=i + 1,
            dedupe_key=uuid.uuid4().hex,
        )
        for i in range(count)
    )
    return sorted(h.pk for h in rows)


_LISTED_BOOK = re.compile(
    r'<a href="/books/[^"]+/"><strong>(.*?)</strong></a>\s*'
    r'<div class="meta">(?:[^<]*? · )?(\d[\d,]*) highlights?'
)


def listed_books(page: bytes) -> list[tuple[str, int]]:
    """The books the library page lists, in its order, with the count each shows."""
    return [
        (html.unescape(title), int(count.replace(",", "")))
        for title, count in _LISTED_BOOK.findall(page.decode())
    ]
