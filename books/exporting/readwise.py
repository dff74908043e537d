"""CSV in Readwise's column layout: Highlight, Title, Author, Note, Location, Date.

UTF-8 with a BOM, so that Excel reads accents right. A cell a spreadsheet would read as
a formula (it starts with = + - @, or a tab or carriage return that some strip first)
gets a leading apostrophe: a highlight `=HYPERLINK("http://evil", "click")` stays text
(OWASP's CSV injection advice). The Readwise CSV importer takes that apostrophe off again.
"""

import csv
import io
from collections.abc import Iterable

from books.exporting.library import BookExport
from books.models import Highlight

COLUMNS = ["Highlight", "Title", "Author", "Note", "Location", "Date"]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralize(cell: str) -> str:
    return f"'{cell}" if cell.startswith(FORMULA_STARTS) else cell


def _location(highlight: Highlight) -> str:
    if highlight.location_start is not None:
        return str(highlight.location_start)
    return highlight.page


def library_csv(exports: Iterable[BookExport]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for export in exports:
        book = export.book
        for h in export.highlights:
            # A standalone note has no highlighted text: its words go in Note.
            text, note = ("", h.text) if h.kind == Highlight.Kind.NOTE else (h.text, h.note)
            added = h.added_at.strftime("%Y-%m-%d %H:%M:%S") if h.added_at else ""
            row = [text, book.title, book.authors, note, _location(h), added]
            writer.writerow([neutralize(cell) for cell in row])
    return buffer.getvalue().encode("utf-8-sig")
