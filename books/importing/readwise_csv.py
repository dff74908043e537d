"""Parse a Readwise-style CSV (Readwise's own import and export layout) into dataclasses.

Pure Python, no Django. `Highlight` is the one column required; Title, Author, URL, Note,
Location and Date are read when present, in any order and any case. A row with a Note and
no Highlight is a note on its own. A cell that an exporter protected from spreadsheet
formulas (`'=SUM(…)`, as books.exporting.readwise writes it) gets its apostrophe back off.
"""

import csv
import io
import re

from books.importing.clippings import ParseResult, Problem
from books.importing.marks import gettext_noop
from books.importing.rich import decode_text, location_range, parse_date, rich_clipping

REQUIRED = "highlight"
KNOWN = ("highlight", "title", "author", "url", "note", "location", "date", "tags", "color")
NOT_A_READWISE_CSV = gettext_noop("not a Readwise CSV: the first row has no 'Highlight' column")
CSV_UNREADABLE = gettext_noop("this CSV could not be read: %(error)s")
ROW_UNREADABLE = gettext_noop("this row could not be read: %(error)s")
ROW_WITHOUT_TEXT = gettext_noop("a row without a Highlight (or a Note)")
UNRECOGNISED_DATE = gettext_noop("unrecognised date %(date)s")
# An apostrophe before what books.exporting.readwise.neutralize protects: a formula sign,
# perhaps after spaces, a no-break space or a BOM, or a fullwidth one.
_PROTECTED = re.compile(r"'(?=[\s\u00a0\ufeff\u200b\u2060]*[=+\-@\uff1d\uff0b\uff0d\uff20])")
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


def parse_readwise_csv(data: bytes) -> ParseResult:
    """Parse the bytes of a Readwise CSV. Never raises."""
    text = decode_text(data)
    # The delimiter is the header's: a comma, or what a non-English Excel writes instead.
    # (csv.Sniffer guesses from the data and got quoting wrong on quoted multi-line cells.)
    first_line = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=first_line.count)
    reader = csv.reader(io.StringIO(text, newline=""), csv.excel, delimiter=delimiter)
    result = ParseResult(clippings=[], problems=[], entries=0)
    try:
        header = next(reader, [])
    except csv.Error as error:
        return ParseResult([], [Problem(1, CSV_UNREADABLE % {"error": error})], 1)
    columns = {name.strip().casefold(): i for i, name in enumerate(header)}
    if REQUIRED not in columns:
        return ParseResult([], [Problem(1, NOT_A_READWISE_CSV)], 1)
    at = {name: columns.get(name) for name in KNOWN}
    line = reader.line_num
    while True:
        start = line + 1
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
        highlight = _cell(row, at["highlight"]).strip()
        note = _cell(row, at["note"]).strip()
        title = _cell(row, at["title"]).strip()
        if not highlight and not note:
            result.problems.append(Problem(start, ROW_WITHOUT_TEXT))
            continue
        where = _cell(row, at["location"]).strip()
        location_start, location_end = location_range(where)
        raw_date = _cell(row, at["date"]).strip()
        added_at = parse_date(raw_date)
        if raw_date and added_at is None:
            result.problems.append(
                Problem(start, UNRECOGNISED_DATE % {"date": repr(raw_date[:40])})
            )
            continue
        tags = tuple(t.strip() for t in _cell(row, at["tags"]).split(",") if t.strip())
        result.clippings.append(
            rich_clipping(
                title=title or "Untitled",
                author=_cell(row, at["author"]).strip(),
                kind="highlight" if highlight else "note",
                text=highlight or note,
                note=note if highlight else "",
                page=where.casefold() if where and location_start is None else None,
                location_start=location_start,
                location_end=location_end,
                added_at=added_at,
                added_raw=raw_date,
                line=start,
                tags=tags,
                colour=_cell(row, at["color"]).strip().casefold(),
            )
        )
    return result
