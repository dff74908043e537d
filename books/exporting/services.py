"""One export for the views and the command: which format, which books, what file."""

from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone, translation

from accounts.models import User
from books.exporting import exogram_json, markdown, readwise, streaming
from books.exporting.library import BookExport, books_to_export
from books.models import Book, PurgedHighlight

FORMATS = ("md", "csv", "json")


def export_file_name(extension: str, *, book: Book | None = None) -> str:
    """Every export's name, one scheme: `exogram-DATE.EXT` for the library and
    `exogram-DATE-Title - Author.EXT` for one book, Markdown or not. Only the Markdown
    files inside the library's zip are named by the book alone: they are notes, and their
    name is what Obsidian links by."""
    stem = f"exogram-{timezone.localdate().isoformat()}"
    if book is not None:
        stem = f"{stem}-{markdown.file_stem(book)}"
    return f"{stem}.{extension}"


def _language(reader: User) -> str:
    """The Markdown's labels are in the reader's language: the one they chose, else the
    page's (the request's), else the site's."""
    return reader.language or translation.get_language() or settings.LANGUAGE_CODE


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
    # Exogram's own JSON carries what the reader deleted too (exogram_json).
    exports = books_to_export(reader, book=book, with_deleted=format == "json")
    if format == "md":
        chunks = streaming.markdown_zip_chunks(exports, language=_language(reader))
        return ExportStream(export_file_name("markdown.zip"), "application/zip", chunks)
    name = export_file_name(format, book=book)
    if format == "csv":
        return ExportStream(name, "text/csv; charset=utf-8", streaming.csv_chunks(exports))
    chunks = streaming.json_chunks(exports, removed=_removed_for_good(reader, book=book))
    return ExportStream(name, "application/json", chunks)


def library_export(*, reader: User, format: str, book: Book | None = None) -> ExportFile:
    """The reader's library (or one of their books) as a file to download or write."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    if book is not None and book.reader_id != reader.pk:
        raise ValueError("the book must be one of the reader's books")
    # Exogram's own JSON carries what the reader deleted too (exogram_json).
    exports = books_to_export(reader, book=book, with_deleted=format == "json")
    name = export_file_name(format, book=book)
    if format == "md":
        if book is not None:
            export = next(exports, None) or BookExport(book, [])
            text = markdown.book_markdown(export, language=_language(reader))
            return ExportFile(name, "text/markdown; charset=utf-8", text.encode("utf-8"))
        zipped = markdown.library_zip(exports, language=_language(reader))
        return ExportFile(export_file_name("markdown.zip"), "application/zip", zipped)
    if format == "csv":
        return ExportFile(name, "text/csv; charset=utf-8", readwise.library_csv(exports))
    data = exogram_json.library_json(exports, removed=_removed_for_good(reader, book=book))
    return ExportFile(name, "application/json", data)


def _removed_for_good(reader: User, *, book: Book | None) -> Iterator[PurgedHighlight]:
    """What Exogram's JSON keeps of the reader's highlights the purge removed (of one book's
    key, for a book's export), so that the account it moves to leaves them out too."""
    traces = PurgedHighlight.objects.filter(reader=reader).order_by("pk")
    if book is not None:
        traces = traces.filter(book_key=book.key)
    return traces.iterator(chunk_size=2000)
