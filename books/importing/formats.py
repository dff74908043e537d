"""Which format an uploaded file is, from its content (never its name), and its parser.

Pure Python, no Django. Every parser returns the same ParseResult of Clippings, so the
import workflow is one for all of them.
"""

import codecs
import csv
import io
import json
import re

from books.importing.bookcision_json import is_bookcision, parse_bookcision
from books.importing.clippings import (
    NOT_A_CLIPPINGS_FILE,
    ParseResult,
    Problem,
    parse_clippings,
)
from books.importing.devices import LABELS as DEVICE_LABELS
from books.importing.devices import detect_device, parse_device
from books.importing.exogram_json import is_exogram, parse_exogram_json
from books.importing.koreader import is_koreader_json, parse_koreader_json
from books.importing.marks import gettext_noop
from books.importing.notebook_html import parse_notebook_html
from books.importing.readwise_csv import KNOWN, lacking_columns, parse_readwise_csv
from books.importing.rich import decode_text

CLIPPINGS = "clippings"
NOTEBOOK_HTML = "kindle-html"
READWISE_CSV = "readwise-csv"
BOOKCISION_JSON = "bookcision-json"
EXOGRAM_JSON = "exogram-json"
KOREADER_JSON = "koreader-json"
UNKNOWN_JSON = "json"
LABELS = {
    CLIPPINGS: "Kindle My Clippings",
    NOTEBOOK_HTML: "Kindle notebook (HTML)",
    READWISE_CSV: "Readwise CSV",
    BOOKCISION_JSON: "Bookcision JSON",
    EXOGRAM_JSON: "Exogram JSON",
    KOREADER_JSON: "KOReader JSON export",
    **DEVICE_LABELS,
    UNKNOWN_JSON: "JSON",
}
_NOTEBOOK_MARKS = re.compile(r"""class\s*=\s*["'][^"']*\b(?:noteHeading|bookTitle)\b""")
_SAMPLE = 65536

UNKNOWN_JSON_FILE = gettext_noop(
    "a JSON file that is neither an Exogram export ('format': 'exogram'), a "
    "Bookcision export (a book with 'title' and 'highlights') nor a KOReader "
    "export (a 'documents' list)"
)

# A file the Kindle parser could read nothing of, which is plainly another format, is
# told that format's own problem, where it is (the line is the problem's).
NOT_VALID_JSON = gettext_noop("not valid JSON, at column %(column)s: %(problem)s")
JSON_TRAILING_COMMA = gettext_noop("a comma with nothing after it")
JSON_ENDS_EARLY = gettext_noop("the file ends before the data is closed")
JSON_VALUE_EXPECTED = gettext_noop("a value was expected here")
JSON_NAME_EXPECTED = gettext_noop("a name in double quotes was expected here")
JSON_COLON_EXPECTED = gettext_noop("a ':' was expected here")
JSON_COMMA_EXPECTED = gettext_noop("a ',' was expected here")
JSON_UNFINISHED_STRING = gettext_noop("a string that never ends (its closing quote is missing)")
JSON_CONTROL_CHARACTER = gettext_noop("a line break or control character inside a string")
JSON_BAD_ESCAPE = gettext_noop("an unknown backslash escape")
JSON_EXTRA_DATA = gettext_noop("more text after the end of the data")
JSON_SYNTAX = gettext_noop("a syntax error")
NOT_A_NOTEBOOK = gettext_noop(
    "an HTML file, but not a Kindle notebook export (it has no 'bookTitle' or "
    "'noteHeading' entries)"
)
_JSON_PROBLEMS = {
    "Expecting value": JSON_VALUE_EXPECTED,
    "Expecting property name enclosed in double quotes": JSON_NAME_EXPECTED,
    "Expecting ':' delimiter": JSON_COLON_EXPECTED,
    "Expecting ',' delimiter": JSON_COMMA_EXPECTED,
    "Unterminated string starting at": JSON_UNFINISHED_STRING,
    "Invalid control character at": JSON_CONTROL_CHARACTER,
    "Invalid \\escape": JSON_BAD_ESCAPE,
    "Invalid \\uXXXX escape": JSON_BAD_ESCAPE,
    "Extra data": JSON_EXTRA_DATA,
}
_HTML_START = re.compile(r"<[!?A-Za-z]")
# Column names a highlights CSV of some other program may have: a header with one of them
# is a CSV header, whatever else it holds.
_COLUMN_NAMES = frozenset({*KNOWN, "book", "book title", "text", "quote", "page", "chapter"})


def detect_format(data: bytes) -> str:
    """The format of an upload, read from its first bytes."""
    device = detect_device(data)  # a device's database, a KOReader sidecar, a zip
    if device is not None:
        return device
    head = _sample(data).lstrip("\ufeff \t\r\n")
    if head.startswith(("{", "[")):
        document = _json(data)
        if is_exogram(document):
            return EXOGRAM_JSON
        if is_bookcision(document):
            return BOOKCISION_JSON
        if is_koreader_json(document):
            return KOREADER_JSON
        if document is not None:
            return UNKNOWN_JSON
    if head.startswith("<") and _NOTEBOOK_MARKS.search(head):
        return NOTEBOOK_HTML
    if _has_highlight_column(head):
        return READWISE_CSV
    return CLIPPINGS


def _sample(data: bytes) -> str:
    """The file's first _SAMPLE bytes as decode_text reads the whole: a UTF-8 character the
    cut falls inside is left out, not taken for Windows-1252 (which made Exogram's own CSV
    export of a Chinese library, its byte order mark read as "ï»¿", no CSV at all)."""
    sample = data[:_SAMPLE]
    if len(data) > _SAMPLE and not sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return codecs.getincrementaldecoder("utf-8-sig")().decode(sample, final=False)
        except UnicodeDecodeError:
            pass  # not UTF-8: Windows-1252, as decode_text reads it
    return decode_text(sample)


def _json(data: bytes) -> object | None:
    try:
        document: object = json.loads(decode_text(data))
        return document
    except ValueError:
        return None


def _has_highlight_column(head: str) -> bool:
    first_line = head.split("\n", 1)[0]
    if not first_line.strip() or ("==========" in head[:2000] and "- " in head[:2000]):
        return False
    try:
        header = next(csv.reader(io.StringIO(first_line)), [])
    except csv.Error:
        return False
    if len(header) < 2:  # ";" or tab separated: try those
        header = re.split(r"[;\t]", first_line)
    return any(cell.strip().strip('"').casefold() == "highlight" for cell in header)


def parse_upload(data: bytes, *, upload_limit: int | None = None) -> ParseResult:
    """Parse an upload in whichever format it is. Never raises. `upload_limit`, the largest
    upload in bytes (None: none), is what a zip's problems advise by (devices.parse_zip)."""
    kind = detect_format(data)
    if kind in DEVICE_LABELS:
        return parse_device(data, kind, upload_limit=upload_limit)
    if kind == NOTEBOOK_HTML:
        return parse_notebook_html(data)
    if kind == READWISE_CSV:
        return parse_readwise_csv(data)
    if kind in (EXOGRAM_JSON, BOOKCISION_JSON, KOREADER_JSON, UNKNOWN_JSON):
        document = _json(data)
        if kind == KOREADER_JSON:
            return parse_koreader_json(document)
        if kind == EXOGRAM_JSON:
            return parse_exogram_json(document)
        if kind == BOOKCISION_JSON:
            return parse_bookcision(document)
        return ParseResult([], [Problem(1, UNKNOWN_JSON_FILE)], 1)
    result = parse_clippings(data)
    if result.clippings or [p.message for p in result.problems] != [NOT_A_CLIPPINGS_FILE]:
        return result
    return _another_format(data) or result


def _another_format(data: bytes) -> ParseResult | None:
    """What a file that is not a Kindle file at all is, in its own format's terms: None
    unless it plainly is JSON, HTML or CSV."""
    text = decode_text(data)
    head = text[:_SAMPLE].lstrip("\ufeff \t\r\n")
    if head.startswith(("{", "[")):
        try:
            json.loads(text)
        except json.JSONDecodeError as error:
            return ParseResult([], [_json_problem(error)], 1)
        except (ValueError, RecursionError):
            return None
    if head.startswith("<") and _HTML_START.match(head):
        if _NOTEBOOK_MARKS.search(text):  # a notebook whose marks come late
            return parse_notebook_html(data)
        return ParseResult([], [Problem(1, NOT_A_NOTEBOOK)], 1)
    header = _csv_header(head)
    if header is not None:
        return ParseResult([], [Problem(1, lacking_columns(header))], 1)
    return None


def _json_problem(error: json.JSONDecodeError) -> Problem:
    """Python's words for a JSON error, said in Exogram's (and so translated), at the line
    and column where it is. A trailing comma is pointed at itself, not at what follows."""
    text, at = error.doc, error.pos
    problem = _JSON_PROBLEMS.get(error.msg, JSON_SYNTAX)
    if problem != JSON_UNFINISHED_STRING and not text[at:].strip():
        at, problem = len(text.rstrip()), JSON_ENDS_EARLY  # just after the last character
    if problem in (JSON_VALUE_EXPECTED, JSON_NAME_EXPECTED) and text[at : at + 1] in ("]", "}"):
        before = len(text[:at].rstrip())
        if before and text[before - 1] == ",":
            at, problem = before - 1, JSON_TRAILING_COMMA
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return Problem(line, NOT_VALID_JSON % {"problem": problem, "column": column})


def _csv_header(head: str) -> list[str] | None:
    """The header of what plainly is a CSV file: a row of short names with a column name
    Exogram knows among them, or the first of several rows of three or more cells each."""
    lines = [line for line in head.splitlines()[:6] if line.strip()]
    if not lines:
        return None
    delimiter = max(",;\t", key=lines[0].count)
    try:
        rows = list(csv.reader(lines, delimiter=delimiter))
    except csv.Error:
        return None
    header = rows[0]
    if len(header) < 2 or any(not cell.strip() or len(cell) > 60 for cell in header):
        return None
    if any(cell.strip().casefold() in _COLUMN_NAMES for cell in header):
        return header
    if len(rows) >= 3 and all(len(row) == len(header) for row in rows) and len(header) >= 3:
        return header
    return None
