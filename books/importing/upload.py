"""What an upload is refused with before anything is written: too large, empty, binary, or
nothing in it read. The messages are stored and shown in English here, in the reader's
language on a page (books.wording)."""

import math
import re
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.utils.translation import gettext_noop

from books.importing.clippings import NOT_A_CLIPPINGS_FILE, ParseResult, is_utf16
from books.importing.devices import is_device_binary, zip_refusal
from books.importing.rich import NO_LINE
from books.importing.screening import screen_entries
from exogram.wording import plural_message, plural_noop

_BINARY_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


class ImportRejected(Exception):
    """The file is not something we can import; nothing was written."""


FILE_TOO_LARGE = gettext_noop("The file is %(size)s MB; the limit is %(limit)s MB.")
FILE_EMPTY = gettext_noop("The file is empty: there is nothing to import.")
# What Exogram reads: said on the import page and after each refusal of a file in no such
# format, one sentence for both (a refusal names it as its nested `what`).
FORMATS_READ = gettext_noop(
    "Exogram reads a Kindle's 'My Clippings.txt', a KOReader sidecar ('metadata.epub.lua'), "
    "a zip of its '.sdr' folders or its JSON export, a Kobo's 'KoboReader.sqlite', a zip "
    "of Apple Books' 'AEAnnotation' and 'BKLibrary' folders, and the Kindle notebook "
    "(HTML), Readwise CSV, Bookcision JSON and Exogram JSON exports."
)
FILE_BINARY = gettext_noop(
    "This file is not text, nor a device's database or a zip: nothing in it can be "
    "imported. %(what)s"
)
# A file whose first bytes say what it is: an image, a PDF, an e-book (%(kind)s: "PNG").
FILE_IMAGE = gettext_noop("This file is an image (%(kind)s), not highlights. %(what)s")
FILE_DOCUMENT = gettext_noop(
    "This file is a document (%(kind)s), not an export of its highlights. %(what)s"
)
# A text file that is none of the formats: no Kindle entry, not JSON, HTML or CSV.
NOT_A_KNOWN_TEXT = gettext_noop(
    "This text file is in none of the formats Exogram reads: it has no Kindle entries "
    "(separated by '==========' lines), and it is not a JSON, HTML or CSV export. %(what)s"
)
# Stored before 2026-12-07; still said in the reader's language when an old import shows it.
FILE_BINARY_LISTED_BEFORE = gettext_noop(
    "This file cannot be imported: it is neither a text export nor a device's database or "
    "zip. Exogram reads a Kindle's 'My Clippings.txt', a KOReader sidecar "
    "('metadata.epub.lua') or a zip of its '.sdr' folders, a Kobo's 'KoboReader.sqlite', "
    "a zip of Apple Books' 'AEAnnotation' and 'BKLibrary' folders, and the Kindle "
    "notebook, Readwise CSV, Bookcision and Exogram JSON exports."
)
# Stored before 2026-12-06; still said in the reader's language when an old import shows it.
FILE_BINARY_BEFORE = gettext_noop(
    "This looks like a binary file, not a text file. Upload the 'My Clippings.txt' "
    "file from your Kindle's documents folder."
)
NOTHING_READ = plural_noop(
    "No clipping in this file could be read (%(count)s problem, at line %(line)s: %(problem)s).",
    "No clipping in this file could be read "
    "(%(count)s problems; the first, at line %(line)s: %(problem)s).",
)
# The same, for a file in a format other than the Kindle's (whose entries are "clippings").
NOTHING_READ_OF_HIGHLIGHTS = plural_noop(
    "No highlight or note in this file could be read "
    "(%(count)s problem, at line %(line)s: %(problem)s).",
    "No highlight or note in this file could be read "
    "(%(count)s problems; the first, at line %(line)s: %(problem)s).",
)
# The same, for a file whose problems say where they are (a JSON file's: rich.NO_LINE).
NOTHING_READ_OF_ENTRIES = plural_noop(
    "No highlight or note in this file could be read (%(count)s problem: %(problem)s).",
    "No highlight or note in this file could be read (%(count)s problems; the first: %(problem)s).",
)
# As imports that failed before NOTHING_READ counted in words stored it.
NOTHING_READ_BEFORE_PLURALS = gettext_noop(
    "No clipping in this file could be read "
    "(%(count)s problem(s); the first, at line %(line)s: %(problem)s)."
)
# Nothing read from a database or a zip: its problem is the whole file's (no lines).
NOTHING_READ_IN_FILE = gettext_noop("Nothing in this file could be imported: %(problem)s.")
NOT_CLIPPINGS = gettext_noop(
    "This is not a Kindle clippings file: no entries separated by '==========' lines were found."
)


MEGABYTE = 1024 * 1024

# The first bytes of files readers upload by mistake: a screenshot of a page, the book.
_IMAGES = {
    b"\x89PNG\r\n\x1a\n": "PNG",
    b"\xff\xd8\xff": "JPEG",
    b"GIF87a": "GIF",
    b"GIF89a": "GIF",
    b"II*\x00": "TIFF",
    b"MM\x00*": "TIFF",
}
_DOCUMENTS = {b"%PDF-": "PDF"}


def _what_it_is(data: bytes) -> str | None:
    """The refusal of a file whose first bytes say it is an image or a document."""
    head = data[:64]
    kind = next((k for magic, k in _IMAGES.items() if head.startswith(magic)), None)
    if kind is None and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        kind = "WebP"
    if kind is None and head[4:8] == b"ftyp" and head[8:12] in (b"heic", b"heix", b"avif"):
        kind = "HEIC" if head[8:11] == b"hei" else "AVIF"
    if kind is not None:
        return FILE_IMAGE % {"kind": kind, "what": FORMATS_READ}
    document = next((k for magic, k in _DOCUMENTS.items() if head.startswith(magic)), None)
    if document is None and data[60:68] == b"BOOKMOBI":
        document = "MOBI/AZW"  # a Kindle book's own format, named as its files are
    if document is not None:
        return FILE_DOCUMENT % {"kind": document, "what": FORMATS_READ}
    return None


def megabytes(size: int) -> Decimal:
    """A size in MB to one decimal, rounded up: a file just over a 1 MB limit is 1.1 MB,
    never "1.0 MB; the limit is 1 MB". A page says it as the reader's language writes
    numbers ("1,1" in Spanish: books.wording)."""
    return Decimal(math.ceil(size * 10 / MEGABYTE)) / 10


def check_size(size: int) -> None:
    """Refuse a file larger than the upload limit, from its size alone: a page checks it
    before reading the file, and the browser before sending it (books.importing.views)."""
    limit_mb: int = settings.EXOGRAM_MAX_UPLOAD_MB
    if size > limit_mb * MEGABYTE:
        raise ImportRejected(FILE_TOO_LARGE % {"size": megabytes(size), "limit": limit_mb})


def check_upload(data: bytes) -> None:
    """Refuse what is not a clippings file before anything is parsed or written."""
    check_size(len(data))
    if not data.strip(b" \t\r\n\xef\xbb\xbf\x00"):
        raise ImportRejected(FILE_EMPTY)
    what_it_is = _what_it_is(data)
    if what_it_is is not None:
        raise ImportRejected(what_it_is)
    # UTF-16's NUL bytes are text; a device's database or a zip is binary on purpose. A
    # clippings file with a few damaged bytes is text: its damaged entries are reported.
    expected_nuls = is_utf16(data) or is_device_binary(data)
    sample = data[:8192]
    controls = len(_BINARY_CONTROL.findall(sample))
    damaged_text = b"\n==========" in data and controls <= 8
    if not expected_nuls and (controls > 8 or (b"\x00" in sample and not damaged_text)):
        raise ImportRejected(FILE_BINARY % {"what": FORMATS_READ})
    # A zip too large once unpacked, or a bomb, is refused from its directory alone: in the
    # request, before it is queued or a byte of it is inflated.
    refusal = zip_refusal(data)
    if refusal is not None:
        raise ImportRejected(NOTHING_READ_IN_FILE % {"problem": refusal})


def upload_parse(data: bytes) -> ParseResult:
    """The upload read in whichever known format it is, screened; ImportRejected, with the
    reason a reader is shown, when nothing in it can be imported."""
    check_upload(data)
    # Any known format, told by its content: My Clippings, a Kindle notebook, a CSV, JSON.
    from books.importing.formats import CLIPPINGS, detect_format, parse_upload

    upload_limit = settings.EXOGRAM_MAX_UPLOAD_MB * MEGABYTE
    result = screen_entries(parse_upload(data, upload_limit=upload_limit))
    if result.holds_nothing and not result.problems:
        # A device's file with nothing in it to keep (a sidecar of a book read without
        # highlighting): it says so, in its own words, not as a problem.
        raise ImportRejected(result.holds_nothing)
    if not result.clippings:
        if result.problems:
            first = result.problems[0]
            if [p.message for p in result.problems] == [NOT_A_CLIPPINGS_FILE]:
                raise ImportRejected(NOT_A_KNOWN_TEXT % {"what": FORMATS_READ})
            if is_device_binary(data):
                # A database or a zip has no lines: its problem is the whole file's.
                raise ImportRejected(NOTHING_READ_IN_FILE % {"problem": first.message})
            if first.line == NO_LINE:
                said = NOTHING_READ_OF_ENTRIES
            elif detect_format(data) == CLIPPINGS:
                said = NOTHING_READ
            else:
                said = NOTHING_READ_OF_HIGHLIGHTS
            raise ImportRejected(
                plural_message(said, len(result.problems), line=first.line, problem=first.message)
            )
        raise ImportRejected(NOT_CLIPPINGS)
    return result


def problems_record(result: ParseResult) -> list[dict[str, Any]]:
    """What an Import keeps of a file's problems, in the order of the file: the entries it
    could not read, and the entries it kept with a warning (`"kept": True`)."""
    unread = [
        {"line": p.line, "message": p.message}
        # What could be read of the entry, where the parser has it.
        | ({"title": p.title} if p.title else {})
        | ({"words": p.words} if p.words else {})
        for p in result.problems
    ]
    kept = [{"line": w.line, "message": w.message, "kept": True} for w in result.warnings]
    return sorted([*unread, *kept], key=lambda problem: problem["line"])
