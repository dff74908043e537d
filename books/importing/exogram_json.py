"""Parse Exogram's own JSON export (books.exporting.exogram_json) into dataclasses.

Pure Python, no Django. Everything the reader owns comes back: text, locations, dates as
the device wrote them, a device's position (absent from exports made before it was kept),
notes (and whether and when they were edited in Exogram), favourites, tags; from version 2,
what the reader deleted: a book's `deleted` highlights with when, and the traces of those
removed for good or deleted on the device (`removed_for_good`). A version 1 export has
neither, and reads as before.
"""

from datetime import UTC, datetime
from typing import Any

from books.importing.clippings import ParseResult, Problem, RemovedTrace
from books.importing.marks import gettext_noop
from books.importing.positions import decode, encode
from books.importing.rich import NO_LINE, rich_clipping

FORMAT = "exogram"
SUPPORTED_VERSIONS = (1, 2)


def is_exogram(document: Any) -> bool:
    return isinstance(document, dict) and document.get("format") == FORMAT


NOT_EXOGRAM = gettext_noop("not an Exogram export ('format' is not 'exogram')")
UNKNOWN_VERSION = gettext_noop(
    "an Exogram export of version %(version)s, which this Exogram cannot read"
)
NO_BOOKS = gettext_noop("an Exogram export without a list of books")
NO_HIGHLIGHTS = gettext_noop("book %(number)s: no list of highlights")
ENTRY_PROBLEM = gettext_noop("'%(title)s', highlight %(number)s: %(problem)s")
NOT_AN_OBJECT = gettext_noop("not an object")
UNKNOWN_KIND = gettext_noop("unknown kind %(kind)s")
TEXT_NOT_STRING = gettext_noop("the text is not a string")
# An empty note, refused before 2026-12-07: still said in the reader's language on an old
# import's report.
ENTRY_NO_TEXT = gettext_noop("no text")
ENTRY_NOTHING = gettext_noop("no text, no location, no date")
TAGS_NOT_LIST = gettext_noop("tags must be a list of names")
DATE_OUT_OF_RANGE = gettext_noop("a date out of range: %(date)s")
LOCATION_NOT_NUMBER = gettext_noop("a location must be a whole number, not %(value)s")
DELETED_PROBLEM = gettext_noop("'%(title)s', deleted highlight %(number)s: %(problem)s")
NO_DELETED_DATE = gettext_noop("no date it was deleted")
REMOVED_PROBLEM = gettext_noop(
    "removed highlight %(number)s: not a record of a highlight removed for good"
)


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    when = datetime.fromisoformat(value)
    try:
        return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:59:59-14:00 is in the year 10000 in UTC
        raise ValueError(DATE_OUT_OF_RANGE % {"date": repr(value[:40])}) from None


def _location(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(LOCATION_NOT_NUMBER % {"value": repr(value)})
    return value


def _position(value: Any) -> str:
    """A device's position as the export wrote it; "" when absent (an export from before
    positions were exported, or a Kindle's highlight) or unreadable: the highlight is kept,
    only a later version of it from the device is then found by its words and page."""
    if not isinstance(value, str) or len(value) > 500:
        return ""
    return encode(decode(value))


def parse_exogram_json(document: Any) -> ParseResult:
    """Read an already-decoded Exogram export. Never raises."""
    if not is_exogram(document):
        return ParseResult([], [Problem(1, NOT_EXOGRAM)], 1)
    if document.get("version") not in SUPPORTED_VERSIONS:
        version = document.get("version")
        message = UNKNOWN_VERSION % {"version": repr(version)}
        return ParseResult([], [Problem(1, message)], 1)
    books = document.get("books")
    if not isinstance(books, list):
        return ParseResult([], [Problem(1, NO_BOOKS)], 1)
    result = ParseResult(clippings=[], problems=[], entries=0)
    for book_number, book in enumerate(books, start=1):
        if not isinstance(book, dict) or not isinstance(book.get("highlights"), list):
            result.entries += 1
            result.problems.append(Problem(NO_LINE, NO_HIGHLIGHTS % {"number": book_number}))
            continue
        title = str(book.get("title") or "").strip() or "Untitled"
        for number, entry in enumerate(book["highlights"], start=1):
            result.entries += 1
            where = {"title": title[:60], "number": number}
            try:
                clipping = _clipping(entry, title, str(book.get("authors") or ""), number)
            except (TypeError, ValueError, AttributeError) as error:
                result.problems.append(
                    Problem(NO_LINE, ENTRY_PROBLEM % {**where, "problem": error})
                )
                continue
            result.clippings.append(clipping)
        # Version 2: the highlights the reader deleted, kept deleted (Recently deleted).
        deleted = book.get("deleted")
        for number, entry in enumerate(deleted if isinstance(deleted, list) else [], start=1):
            result.entries += 1
            where = {"title": title[:60], "number": number}
            try:
                clipping = _clipping(entry, title, str(book.get("authors") or ""), number)
                clipping.deleted_at = _when(entry.get("deleted_at"))
                if clipping.deleted_at is None:
                    raise ValueError(NO_DELETED_DATE)
            except (TypeError, ValueError, AttributeError) as error:
                result.problems.append(
                    Problem(NO_LINE, DELETED_PROBLEM % {**where, "problem": error})
                )
                continue
            result.clippings.append(clipping)
    removed = document.get("removed_for_good")
    for number, record in enumerate(removed if isinstance(removed, list) else [], start=1):
        trace = _removed(record)
        if trace is None:
            result.problems.append(Problem(NO_LINE, REMOVED_PROBLEM % {"number": number}))
        else:
            result.removed_for_good.append(trace)
    return result


def _removed(record: Any) -> RemovedTrace | None:
    """A PurgedHighlight's fields as the export wrote them; None when they are not."""
    if not isinstance(record, dict):
        return None
    book_key, kind, key = record.get("book_key"), record.get("kind"), record.get("dedupe_key")
    hashes, runs = record.get("text_hashes"), record.get("runs")
    # Absent from the version 2 exports made before they were kept: removed for good.
    on_device = record.get("on_device", False)
    try:
        added_at = _when(record.get("added_at"))
    except ValueError:
        return None
    if not (
        isinstance(on_device, bool)
        and isinstance(book_key, str)
        and 0 < len(book_key) <= 600
        and kind in ("highlight", "note")
        and isinstance(key, str)
        and 0 < len(key) <= 64
        and isinstance(hashes, list)
        and all(isinstance(h, str) and len(h) <= 40 for h in hashes)
        and isinstance(runs, list)
        # PostgreSQL's bigint: a run is a signed 64-bit hash (books.importing.merging).
        and all(
            isinstance(r, int) and not isinstance(r, bool) and -(2**63) <= r < 2**63 for r in runs
        )
    ):
        return None
    return RemovedTrace(book_key, kind, key, tuple(hashes), tuple(runs), on_device, added_at)


def _clipping(entry: Any, title: str, authors: str, number: int) -> Any:
    if not isinstance(entry, dict):
        raise TypeError(NOT_AN_OBJECT)
    kind = entry.get("kind", "highlight")
    if kind not in ("highlight", "note"):
        raise ValueError(UNKNOWN_KIND % {"kind": repr(kind)})
    text = entry.get("text")
    if text is None and kind == "highlight":
        text = ""
    if not isinstance(text, str):
        raise ValueError(TEXT_NOT_STRING)
    placed = any(entry.get(name) for name in ("location_start", "page", "added_at"))
    # A highlight with no text (an image, a figure) is kept for its place and date, as
    # the import of its first file kept it. A note with none (an empty note an older
    # import kept) goes on: the import skips it and counts it, as it does a Kindle's.
    if not text.strip() and kind == "highlight" and not placed:
        raise ValueError(ENTRY_NOTHING)
    tags = entry.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError(TAGS_NOT_LIST)
    return rich_clipping(
        title=title,
        author=authors.strip(),
        kind=kind,
        text=text,
        page=str(entry.get("page") or "") or None,
        location_start=_location(entry.get("location_start")),
        location_end=_location(entry.get("location_end")),
        position=_position(entry.get("position")),
        added_at=_when(entry.get("added_at")),
        added_raw=str(entry.get("added_raw") or ""),
        line=number,
        note=str(entry.get("note") or ""),
        note_edited=bool(entry.get("note_edited")),
        note_edited_at=_when(entry.get("note_edited_at")),
        note_added_at=_when(entry.get("note_added_at")),
        favourite=bool(entry.get("favourite")),
        tags=tuple(tags),
        tags_listed=True,
        tags_carried=True,
        chapter=str(entry.get("chapter") or ""),
        colour=str(entry.get("colour") or ""),
    )
