"""A clipping with what formats richer than My Clippings carry: the reader's note on the
highlight itself, tags, favourite, chapter and colour.

A subclass, so that the import workflow takes it as any Clipping; what it adds beyond a
Clipping is applied once the import has written the highlights (books.importing.enrich).
Pure Python, like the parsers.
"""

import codecs
from dataclasses import dataclass, field
from datetime import UTC, datetime

from books.importing.clippings import Clipping, ParseResult
from books.importing.marks import gettext_noop


@dataclass(slots=True)
class RichClipping(Clipping):
    chapter: str = ""
    colour: str = ""  # yellow, blue, pink, orange, …: as the source names it
    note: str = ""  # the reader's note on this highlight (a Clipping of kind "note" is apart)
    note_edited: bool = False
    note_edited_at: datetime | None = None  # when, as an Exogram export says it
    note_added_at: datetime | None = None
    favourite: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)
    # The file has a place for the highlight's tags (a Readwise CSV with a Tags column, an
    # Exogram export), so `tags` is what it lists, none perhaps; without one (Bookcision,
    # Apple Books, Kobo, KOReader, a Readwise CSV with no Tags column) the file says
    # nothing of tags, and the highlight's `file_tags` stays (books.importing.enrich).
    tags_carried: bool = False
    # The file says every tag of the highlight (an Exogram export): a `#word` in its note
    # is not one more (books.importing.hashtags).
    tags_listed: bool = False
    # A highlight the reader deleted, and when (an Exogram export's): kept deleted.
    deleted_at: datetime | None = None
    # A Readwise export's row whose title and author only its Book Title and Book Author
    # give, columns an Exogram before 2026-12-07 did not read: that Exogram put it in the
    # book "Untitled" with no author, where books.importing.untitled finds it again.
    untitled_before: bool = False


def rich_clipping(
    *,
    title: str,
    author: str,
    text: str,
    line: int,
    kind: str = "highlight",
    page: str | None = None,
    location_start: int | None = None,
    location_end: int | None = None,
    added_at: datetime | None = None,
    added_raw: str = "",
    language: str = "",
    **extras: object,
) -> RichClipping:
    return RichClipping(
        title=title,
        author=author,
        kind=kind,
        text=text,
        page=page,
        location_start=location_start,
        location_end=location_end,
        added_at=added_at,
        added_raw=added_raw,
        language=language,
        line=line,
        truncated=False,
        **extras,  # type: ignore[arg-type]
    )


# Why a device's row was skipped (ParseResult.skipped), as the import report says it.
DELETED = gettext_noop("deleted on the device")
HIDDEN = gettext_noop("hidden on the device")
EMPTY = gettext_noop("without highlighted text")


# The line of a problem whose message says where it is ("'Title', highlight 3: no text"):
# a JSON file's entries have no line of their own, and "Line 1" before each said nothing.
NO_LINE = 0


def skip_entry(result: ParseResult, reason: str) -> None:
    result.skipped[reason] = result.skipped.get(reason, 0) + 1


def decode_text(data: bytes) -> str:
    """UTF-8 (with or without a BOM), UTF-16 with a BOM, or Windows-1252 from old Excel."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


_DATE_FORMATS = (
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d",
    "%B %d, %Y %I:%M:%S %p",
    "%B %d, %Y %I:%M %p",
    "%B %d, %Y",
    "%b %d, %Y %I:%M %p",
    "%b %d, %Y",
    "%d/%m/%Y %H:%M",
    "%d/%m/%Y",
)


def parse_date(raw: str) -> datetime | None:
    """ISO 8601 or a few spreadsheet spellings; naive times are taken as UTC."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        for pattern in _DATE_FORMATS:
            try:
                when = datetime.strptime(raw, pattern)
                break
            except ValueError:
                continue
        else:
            return None
    if when.tzinfo is None:
        return when.replace(tzinfo=UTC)
    try:
        return when.astimezone(UTC)
    except OverflowError:  # past year 9999 (or before year 1) once in UTC
        return None


def location_range(raw: str) -> tuple[int | None, int | None]:
    """`"120"` → (120, None); `"120-124"` → (120, 124); anything else → (None, None)."""
    start, _, end = raw.strip().partition("-")
    if not start.strip().isdigit():
        return None, None
    if end.strip().isdigit() and int(end) != int(start):
        return int(start), int(end)
    return int(start), None
