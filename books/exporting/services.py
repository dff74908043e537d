"""One export for the views and the command: which format, which books, what file."""

from collections.abc import Iterator
from dataclasses import dataclass

from django.utils import timezone

from accounts.models import User
from books.exporting import exogram_json, markdown, readwise, streaming
from books.exporting.library import BookExport, books_to_export
from books.models import Book

FORMATS = ("md", "csv", "json")


@dataclass(frozen=True)
class ExportFile:
    name: str
    content_type: str
    data: bytes


@dataclass(frozen=True)
class ExportStream:
    name: str
    content_type: str
    chunks: Iterator[bytes]


def library_export_stream(*, reader: User, format: str, book: Book | None = None) -> ExportStream:
    """The same file as library_export, as chunks of a book each: what the web sends."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    if book is not None and book.reader_id != reader.pk:
        raise ValueError("the book must be one of the reader's books")
    if format == "md" and book is not None:
        export = library_export(reader=reader, format=format, book=book)  # one book: small
        return ExportStream(export.name, export.content_type, iter([export.data]))
    exports = books_to_export(reader, book=book)
    stem = f"exogram-{timezone.localdate().isoformat()}"
    if format == "md":
        chunks = streaming.markdown_zip_chunks(exports)
        return ExportStream(f"{stem}-markdown.zip", "application/zip", chunks)
    if book is not None:
        stem = f"{stem}-{markdown.file_stem(book)}"
    if format == "csv":
        return ExportStream(f"{stem}.csv", "text/csv; charset=utf-8", streaming.csv_chunks(exports))
    return ExportStream(f"{stem}.json", "application/json", streaming.json_chunks(exports))


def library_export(*, reader: User, format: str, book: Book | None = None) -> ExportFile:
    """The reader's library (or one of their books) as a file to download or write."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    if book is not None and book.reader_id != reader.pk:
        raise ValueError("the book must be one of the reader's books")
    exports = books_to_export(reader, book=book)
    stem = f"exogram-{timezone.localdate().isoformat()}"
    if format == "md":
        if book is not None:
            export = next(exports, None) or BookExport(book, [])
            text = markdown.book_markdown(export)
            name = markdown.file_name(export, set())
            return ExportFile(name, "text/markdown; charset=utf-8", text.encode("utf-8"))
        return ExportFile(f"{stem}-markdown.zip", "application/zip", markdown.library_zip(exports))
    if book is not None:
        stem = f"{stem}-{markdown.file_stem(book)}"
    if format == "csv":
        return ExportFile(f"{stem}.csv", "text/csv; charset=utf-8", readwise.library_csv(exports))
    return ExportFile(f"{stem}.json", "application/json", exogram_json.library_json(exports))
