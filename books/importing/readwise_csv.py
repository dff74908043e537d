"""Parse a Readwise-style CSV (Readwise's own import and export layout) into dataclasses.

Pure Python, no Django. `Highlight` is the one column required; Title, Author, URL, Note,
Location and Date are read when present, in any order and any case. A row with a Note and
no Highlight is a note on its own. A cell that an exporter protected from spreadsheet
formulas (`'=SUM(…)`, as books.exporting.readwise writes it) gets its apostrophe back off.

Readwise's import template names its columns Title, Author and Date; the CSV Readwise
exports, what a reader leaving it has, names them Book Title, Book Author and Highlighted
at (`2021-03-14 18:07:00+00:00`), and says in Location Type what its Location counts (see
`_place`). Both are read; a file with both names takes the template's where its cell has
something (it is the name this importer read first, and Exogram's own export writes it).
Its Document tags are the book's tags: Exogram tags highlights, so each highlight of the
book gets them, as a reader who filed the book under them finds it again by any of its
highlights. Amazon Book ID is not read.

Tags are comma separated; a name with a comma in it comes quoted (`"Smith, John", memory`,
as books.exporting.readwise writes it). The tag `favorite` is how Readwise marks a
favourite (it has no favourite column): the highlight becomes a favourite, not tagged so.
"""

import csv
import io
import re
from bisect import bisect_right

from books.importing.clippings import ParseResult, Problem
from books.importing.marks import gettext_noop
from books.importing.rich import decode_text, location_range, parse_date, rich_clipping

REQUIRED = "highlight"
# What each field is read from: the header names it goes by, the first one found in a row
# with something in it winning (Readwise's import template's name before its export's).
COLUMNS = {
    "highlight": ("highlight",),
    "title": ("title", "book title"),
    "author": ("author", "book author"),
    "url": ("url",),
    "note": ("note",),
    "location": ("location",),
    "location type": ("location type",),
    "date": ("date", "highlighted at"),
    "tags": ("tags",),
    "document tags": ("document tags",),
    "color": ("color",),
    # An Exogram CSV's page beside a Kindle location (books.exporting.readwise).
    "page": ("page",),
}
KNOWN = tuple(name for names in COLUMNS.values() for name in names)
NO_HIGHLIGHT_COLUMN = gettext_noop(
    "this CSV's header has no Highlight column, which Exogram needs (Title or Book Title, "
    "Author or Book Author, Note, Location and Location Type, Date or Highlighted at, URL, "
    "Tags, Document tags and Color are read too); found: %(found)s"
)
UNCLOSED_QUOTE = gettext_noop("a quote opened here is never closed")
CSV_UNREADABLE = gettext_noop("this CSV could not be read: %(error)s")
ROW_UNREADABLE = gettext_noop("this row could not be read: %(error)s")
ROW_WITHOUT_TEXT = gettext_noop("a row without a Highlight (or a Note)")
UNRECOGNISED_DATE = gettext_noop("unrecognised date %(date)s")
FAVOURITE_TAG = "favorite"
# An apostrophe before what books.exporting.readwise.neutralize protects: a formula sign,
# perhaps after spaces, a no-break space or a BOM, or a fullwidth one.
_PROTECTED = re.compile(r"'(?=[\s\u00a0\ufeff\u200b\u2060]*[=+\-@\uff1d\uff0b\uff0d\uff20])")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# The csv module refuses a cell over 131,072 characters with an error that ends the
# reading: a row with a 200,000-character highlight lost every row after it. The whole
# file is in memory already, so a cell may be as long as the file; the import's screening
# reports a text too long to keep, on its own row (books.importing.screening).
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))


def _cell(row: list[str], index: int | None) -> str:
    if index is None or index >= len(row):
        return ""
    # A cell's own line breaks come as the spreadsheet wrote them: CRLF from Excel.
    value = row[index].replace("\r\n", "\n").replace("\r", "\n")
    return value[1:] if _PROTECTED.match(value) else value


def _field(row: list[str], indexes: tuple[int, ...]) -> str:
    """A field's cell: the first of its columns (`COLUMNS`) with something in the row."""
    for index in indexes:
        value = _cell(row, index)
        if value.strip():
            return value
    return ""


def parse_readwise_csv(data: bytes) -> ParseResult:
    """Parse the bytes of a Readwise CSV. Never raises."""
    text = decode_text(data)
    # The delimiter is the header's: a comma, or what a non-English Excel writes instead.
    # (csv.Sniffer guesses from the data and got quoting wrong on quoted multi-line cells.)
    delimiter = _delimiter(text)
    unclosed = unclosed_quotes(text, delimiter)
    if unclosed and unclosed[0] == 1:
        return ParseResult([], [Problem(1, UNCLOSED_QUOTE)], 1)
    reader = csv.reader(io.StringIO(text, newline=""), csv.excel, delimiter=delimiter)
    try:
        header = next(reader, [])
    except csv.Error as error:
        return ParseResult([], [Problem(1, CSV_UNREADABLE % {"error": error})], 1)
    columns = {name.strip().casefold(): i for i, name in enumerate(header)}
    if REQUIRED not in columns:
        return ParseResult([], [Problem(1, lacking_columns(header))], 1)
    at = {
        field: tuple(columns[name] for name in names if name in columns)
        for field, names in COLUMNS.items()
    }
    # The columns an Exogram before 2026-12-07 read a row's book from (only these names).
    at["title before"] = (columns["title"],) if "title" in columns else ()
    at["author before"] = (columns["author"],) if "author" in columns else ()
    result = ParseResult(clippings=[], problems=[], entries=0)
    # A quote never closed would swallow every row after it into one cell: the rows are
    # read up to its line, the line is a problem of its own, and reading starts again on
    # the line after it.
    starts = _line_starts(text)
    first = reader.line_num + 1
    for bad in [*unclosed, len(starts) + 1]:
        begin = starts[first - 1] if first <= len(starts) else len(text)
        end = starts[bad - 1] if bad <= len(starts) else len(text)
        _read_rows(text[begin:end], first - 1, delimiter, at, result)
        if bad <= len(starts):
            result.entries += 1
            result.problems.append(Problem(bad, UNCLOSED_QUOTE))
        first = bad + 1
    return result


def _delimiter(text: str) -> str:
    first_line = text.split("\n", 1)[0]
    return max(",;\t", key=first_line.count)


def lacking_columns(header: list[str]) -> str:
    """Why a CSV's header is not one Exogram reads: what it needs, and what it found."""
    found = ", ".join(cell.strip() for cell in header if cell.strip())[:200]
    return NO_HIGHLIGHT_COLUMN % {"found": found or "-"}


def _line_starts(text: str) -> list[int]:
    """Where each line starts (line N at index N-1), counted as the csv module counts."""
    return [0, *(match.end() for match in _LINE_BREAK.finditer(text) if match.end() < len(text))]


def unclosed_quotes(text: str, delimiter: str) -> list[int]:
    """The lines where a quoted cell opens and is never properly closed.

    A quote opens a cell only at its start. Its cell ends at the next lone quote (a doubled
    one is a quote inside the cell), which must be followed by the delimiter, a line break
    or the end. A cell that runs over a line break and ends otherwise, or never, did not
    mean to: the quote on its first line was left open, and the file's later quote closed
    it by accident. (A cell on one line quoted untidily, `"a "word" here"`, the csv
    module reads as the spreadsheet meant; it is left to it.)
    """
    found: list[int] = []
    if '"' not in text:
        return found
    starts = _line_starts(text)
    at = text.find('"')
    while at >= 0:
        if at > 0 and text[at - 1] not in (delimiter, "\n", "\r"):
            at = text.find('"', at + 1)  # a quote inside an unquoted cell is just a quote
            continue
        close = at + 1
        while True:
            close = text.find('"', close)
            if close < 0 or not text.startswith('""', close):
                break
            close += 2
        blank = " \t".replace(delimiter, "")
        after = text[close + 1 : close + 81].lstrip(blank)[:1] if close >= 0 else ""
        ends_well = close >= 0 and after in ("", delimiter, "\n", "\r")  # spaces may follow
        span = text[at:close] if close >= 0 else text[at:].rstrip()
        if not ends_well and ("\n" in span or "\r" in span):
            line = bisect_right(starts, at)
            found.append(line)
            if line >= len(starts):
                break
            at = text.find('"', starts[line])  # read on from the next line
            continue
        if close < 0:
            break
        at = text.find('"', close + 1)
    return found


def tag_names(cell: str) -> tuple[str, ...]:
    """The names in a Tags cell: split at commas outside quotes, each stripped."""
    if not cell.strip():
        return ()
    # One line, so one row: a stray quote only runs to the cell's end.
    [names] = csv.reader([cell.replace("\n", " ")], skipinitialspace=True)
    return tuple(name.strip() for name in names if name.strip())


def _place(where: str, kind: str) -> tuple[str | None, int | None, int | None]:
    """The page, and the first and last Kindle location, of a Location cell.

    Readwise's export says in Location Type what the number counts: `location` a Kindle
    location, `page` a page; `order` only orders an article's highlights, `time` and
    `offset` are a place in a recording or a text: none is a place to show, so none is
    kept (its highlights keep their date and the file's order). With no type, a number is
    a location and anything else a page ("xii"), as in Readwise's import template.
    """
    kind = kind.casefold()
    if not where or kind not in ("", "location", "page"):
        return None, None, None
    start, end = location_range(where) if kind != "page" else (None, None)
    if start is None:
        return where.casefold(), None, None
    return None, start, end


def _tags(row: list[str], at: dict[str, tuple[int, ...]]) -> tuple[tuple[str, ...], bool]:
    """The highlight's tags, then its book's (Document tags), once each; and whether the
    highlight is a favourite (its own tag `favorite`: a favourite book is not one)."""
    own = tag_names(_field(row, at["tags"]))
    book = tag_names(_field(row, at["document tags"]))
    kept: dict[str, str] = {}
    for name in (*own, *book):
        if name.casefold() != FAVOURITE_TAG:
            kept.setdefault(name.casefold(), name)
    return tuple(kept.values()), any(t.casefold() == FAVOURITE_TAG for t in own)


def _read_rows(
    text: str,
    lines_before: int,
    delimiter: str,
    at: dict[str, tuple[int, ...]],
    result: ParseResult,
) -> None:
    reader = csv.reader(io.StringIO(text, newline=""), csv.excel, delimiter=delimiter)
    line = 0
    while True:
        start = lines_before + line + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            result.entries += 1
            result.problems.append(Problem(start, ROW_UNREADABLE % {"error": error}))
            break
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        result.entries += 1
        highlight = _field(row, at["highlight"]).strip()
        note = _field(row, at["note"]).strip()
        title = _field(row, at["title"]).strip()
        if not highlight and not note:
            result.problems.append(Problem(start, ROW_WITHOUT_TEXT))
            continue
        page, location_start, location_end = _place(
            _field(row, at["location"]).strip(), _field(row, at["location type"]).strip()
        )
        page = page or _field(row, at["page"]).strip().casefold() or None
        raw_date = _field(row, at["date"]).strip()
        added_at = parse_date(raw_date)
        if raw_date and added_at is None:
            result.problems.append(
                Problem(start, UNRECOGNISED_DATE % {"date": repr(raw_date[:40])})
            )
            continue
        tags, favourite = _tags(row, at)
        result.clippings.append(
            rich_clipping(
                title=title or "Untitled",
                author=_field(row, at["author"]).strip(),
                kind="highlight" if highlight else "note",
                text=highlight or note,
                note=note if highlight else "",
                page=page,
                location_start=location_start,
                location_end=location_end,
                added_at=added_at,
                added_raw=raw_date,
                line=start,
                tags=tags,
                favourite=favourite,
                tags_carried=bool(at["tags"] or at["document tags"]),
                colour=_field(row, at["color"]).strip().casefold(),
                untitled_before=bool(title)
                and not _field(row, at["title before"]).strip()
                and not _field(row, at["author before"]).strip(),
            )
        )
