"""Which format an uploaded file is, from its content (never its name), and its parser.

Pure Python, no Django. Every parser returns the same ParseResult of Clippings, so the
import workflow is one for all of them.
"""

import csv
import io
import json
import re

from books.importing.bookcision_json import is_bookcision, parse_bookcision
from books.importing.clippings import ParseResult, Problem, parse_clippings
from books.importing.devices import LABELS as DEVICE_LABELS
from books.importing.devices import detect_device, parse_device
from books.importing.exogram_json import is_exogram, parse_exogram_json
from books.importing.koreader import is_koreader_json, parse_koreader_json
from books.importing.marks import gettext_noop
from books.importing.notebook_html import parse_notebook_html
from books.importing.readwise_csv import parse_readwise_csv
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


def detect_format(data: bytes) -> str:
    """The format of an upload, read from its first bytes."""
    device = detect_device(data)  # a device's database, a KOReader sidecar, a zip
    if device is not None:
        return device
    head = decode_text(data[:_SAMPLE]).lstrip("\ufeff \t\r\n")
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


def parse_upload(data: bytes) -> ParseResult:
    """Parse an upload in whichever format it is. Never raises."""
    kind = detect_format(data)
    if kind in DEVICE_LABELS:
        return parse_device(data, kind)
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
    return parse_clippings(data)
