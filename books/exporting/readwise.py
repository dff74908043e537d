"""CSV in Readwise's column layout: Highlight, Title, Author, Note, Location, Date, Tags,
Color, and Location Type (as in Readwise's own export).

Location is the highlight's Kindle locations as the file gave them (`412-414`), or its page,
and Location Type says which (`location`, `page`): the importer finds the same highlight by
them. Only the first location, and a page written as a location, made another highlight's
place: its tags and favourite never reached the highlight a library already held, and a
page's highlight came back twice.

Tags lists the highlight's tags, those added in Exogram as well as a note's hashtags, comma
separated; a favourite carries the tag `favorite`, as Readwise marks its own favourites
(Readwise has no favourite column), and the Readwise CSV importer reads that tag back as a
favourite. A tag with a comma or a quote in its name is quoted inside the cell (`"Smith,
John", memory`), as the importer reads it. Color is the highlight's colour from a richer format.

UTF-8 with a BOM, so that Excel reads accents right. A cell a spreadsheet would read as
a formula gets a leading apostrophe: a highlight `=HYPERLINK("http://evil", "click")` stays
text (OWASP's CSV injection advice). Spreadsheets skip what comes before the formula sign
(spaces, tabs, line breaks, a no-break space, a stray BOM) and some read the fullwidth
equals, plus, minus and at signs as the ASCII ones, so those starts count too. The
Readwise CSV importer takes that apostrophe off again.
"""

import csv
import io
import re
from collections.abc import Iterable, Iterator

from books.exporting.library import BookExport
from books.models import Highlight
from books.text import without_bidi_controls, without_controls

# Page after Readwise's own columns: a Kindle highlight has a page and a location, and
# Location holds one of them (its location); the page travels beside it, so that the CSV
# comes back as whole as the JSON does. Readwise ignores a column it does not know.
COLUMNS = [
    "Highlight", "Title", "Author", "Note", "Location", "Date", "Tags", "Color", "Location Type",
    "Page",
]  # fmt: skip
# Readwise's own favourites are this tag; it is how a favourite travels in its columns.
FAVOURITE_TAG = "favorite"
# Anything a spreadsheet may skip or fold, then a sign that starts a formula.
_FORMULA_START = re.compile(r"[\s\u00a0\ufeff\u200b\u2060]*[=+\-@\uff1d\uff0b\uff0d\uff20]")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralize(cell: str) -> str:
    # A spreadsheet shows the cell to a person: no explicit bidirectional control reverses
    # it, and none hides a formula sign behind it (docs/security.md).
    # No control character but tab and line breaks either (a bell, an escape: a terminal
    # that shows the file acts on them).
    cell = without_controls(without_bidi_controls(cell))
    if cell.startswith(FORMULA_STARTS) or _FORMULA_START.match(cell):
        return f"'{cell}"
    return cell


def _location(highlight: Highlight) -> tuple[str, str]:
    """The Location cell and its Location Type."""
    start, end = highlight.location_start, highlight.location_end
    if start is not None:
        return (f"{start}-{end}" if end is not None else str(start)), "location"
    return highlight.page, "page" if highlight.page else ""


def _tags(highlight: Highlight) -> str:
    """The highlight's tags (prefetched, by name), then `favorite` for a favourite."""
    names = [tag.name for tag in highlight.tags.all()]
    if highlight.favourite and FAVOURITE_TAG not in (name.casefold() for name in names):
        names.append(FAVOURITE_TAG)
    return tags_cell(names)


def tags_cell(names: list[str]) -> str:
    """The names in one cell, comma separated: a name with a comma or a quote is quoted as
    a CSV cell is, and so is one that starts with an apostrophe (the importer would take
    it for the formula guard: `'=a`), the rest left plain."""
    return ", ".join(_quoted(name) if _needs_quotes(name) else name for name in names)


def _needs_quotes(name: str) -> bool:
    return "," in name or '"' in name or name.startswith("'")


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def book_rows(export: BookExport) -> Iterator[list[str]]:
    """The book's rows, each cell neutralized."""
    book = export.book
    for h in export.highlights:
        # A standalone note has no highlighted text: its words go in Note.
        text, note = ("", h.text) if h.kind == Highlight.Kind.NOTE else (h.text, h.note)
        added = h.added_at.strftime("%Y-%m-%d %H:%M:%S") if h.added_at else ""
        location, location_type = _location(h)
        row = [
            text,
            book.title,
            book.authors_display,
            note,
            location,
            added,
            _tags(h),
            h.colour,
            location_type,
            h.page,
        ]
        yield [neutralize(cell) for cell in row]


def library_csv(exports: Iterable[BookExport]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for export in exports:
        writer.writerows(book_rows(export))
    return buffer.getvalue().encode("utf-8-sig")
