"""Exports written as they are read, one book at a time, so that memory stays bounded.

Built whole in the web request, a 28,000-highlight JSON export held 20 MB per request and
eight at once grew the web processes to 1.3 GB. Here each format is a generator of byte
chunks (one book each) that the web server sends as it goes: memory holds the largest
book, whatever the library's size. The formats themselves (exogram_json, readwise,
markdown) decide what a record or a row holds; this module only frames them.
"""

import csv
import io
import zipfile
from collections.abc import Iterable, Iterator
from datetime import datetime

from django.utils import timezone

from books.exporting import exogram_json, markdown, readwise
from books.exporting.library import BookExport
from books.models import PurgedHighlight


def json_chunks(
    exports: Iterable[BookExport],
    *,
    removed: Iterable[PurgedHighlight] = (),
    exported_at: datetime | None = None,
) -> Iterator[bytes]:
    """exogram_json.library_json's document, a book at a time."""
    head = {
        "format": exogram_json.FORMAT,
        "version": exogram_json.VERSION,
        "exported_at": (exported_at or timezone.now()).isoformat(),
    }
    opening = exogram_json.dumps(head)[:-2]  # without "\n}"
    yield (opening + ',\n "books": [').encode("utf-8")
    separator = "\n"
    for export in exports:
        book = exogram_json.book_record(export)
        yield (separator + exogram_json.dumps(book)).encode("utf-8")
        separator = ",\n"
    yield b'\n ],\n "removed_for_good": ['
    separator = "\n"
    for trace in removed:
        record = exogram_json.removed_record(trace)
        yield (separator + exogram_json.dumps(record)).encode("utf-8")
        separator = ",\n"
    yield b"\n ]\n}"


def csv_chunks(exports: Iterable[BookExport]) -> Iterator[bytes]:
    """readwise.library_csv's file, a book at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(readwise.COLUMNS)
    yield b"\xef\xbb\xbf" + buffer.getvalue().encode("utf-8")
    for export in exports:
        buffer.seek(0)
        buffer.truncate()
        for row in readwise.book_rows(export):
            writer.writerow(row)
        yield buffer.getvalue().encode("utf-8")


class _Pipe(io.RawIOBase):
    """A write-only stream whose bytes are taken out as they come (zipfile writes to it)."""

    def __init__(self) -> None:
        self.pending = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.pending += data
        return len(data)

    def take(self) -> bytes:
        data = bytes(self.pending)
        self.pending.clear()
        return data


def markdown_zip_chunks(exports: Iterable[BookExport], *, language: str) -> Iterator[bytes]:
    """markdown.library_zip's archive, a book at a time (zipfile writes data descriptors
    when it cannot seek back, which every unzip tool reads)."""
    pipe = _Pipe()
    taken: set[str] = set()
    with zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED) as archive:
        for export in exports:
            text = markdown.book_markdown(export, language=language)
            archive.writestr(markdown.file_name(export, taken), text)
            yield pipe.take()
    yield pipe.take()
