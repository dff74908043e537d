"""Parse a Kobo e-reader's `KoboReader.sqlite`: its highlights and notes.

Pure Python, no Django; read from a temporary read-only copy (`sqlite_read`). Highlights
are rows of `Bookmark` (text, annotation, date, chapter progress), joined to `content` for
the book's title and author (the row whose ContentID is the bookmark's VolumeID) and the
chapter's title (the row whose ContentID is the bookmark's). Rows the reader hid
(`Hidden = 'true'`), dog-ears and rows without text are skipped and counted (a hidden
highlight handed on as deleted on the device, `ParseResult.deleted_on_device`); a database
without these tables is refused with a message saying what it is not.
"""

import sqlite3
from pathlib import PurePosixPath
from urllib.parse import unquote

from books.importing.clippings import ParseResult, Problem
from books.importing.marks import gettext_noop
from books.importing.positions import encode, kobo_span
from books.importing.rich import EMPTY, HIDDEN, parse_date, rich_clipping, skip_entry
from books.importing.sqlite_read import (
    Content,
    UnreadableDatabase,
    columns_of,
    database_copy,
    tables_of,
)

NOT_KOBO = gettext_noop(
    "This SQLite database is not a Kobo 'KoboReader.sqlite' (it has no 'Bookmark' and "
    "'content' tables); upload the file from the Kobo's hidden .kobo folder"
)
KOBO_UNREADABLE = gettext_noop("not a readable Kobo database: %(error)s")
KOBO_LACKS = gettext_noop("a Kobo database whose '%(table)s' table lacks %(columns)s")
KOBO_BAD_DATE = gettext_noop("Bookmark row %(row)s (%(bookmark)s): unrecognised date %(date)s")
KOBO_EMPTY = gettext_noop("This Kobo database has no highlights or notes to import.")
_NEEDED = {
    "Bookmark": {"BookmarkID", "VolumeID", "ContentID", "Text", "Annotation", "DateCreated"},
    "content": {"ContentID", "Title", "Attribution"},
}
_QUERY = """
SELECT b.rowid, b.BookmarkID, b.VolumeID, b.Text, b.Annotation, b.DateCreated,
       {modified}, {hidden}, {kind}, {progress},
       book.Title, book.Attribution, chapter.Title,
       b.ContentID, {start}, {start_offset}, {end}, {end_offset}
FROM Bookmark b
LEFT JOIN content book ON book.ContentID = b.VolumeID
     AND book.rowid = (SELECT rowid FROM content WHERE ContentID = b.VolumeID
                       ORDER BY CAST(ContentType AS INTEGER) = 6 DESC, rowid LIMIT 1)
LEFT JOIN content chapter ON chapter.ContentID = b.ContentID
     AND chapter.rowid = (SELECT min(rowid) FROM content WHERE ContentID = b.ContentID)
ORDER BY b.VolumeID, {progress}, b.DateCreated, b.rowid
"""


def is_kobo(tables: set[str]) -> bool:
    return {"Bookmark", "content"} <= tables


def parse_kobo(data: Content) -> ParseResult:
    """Parse a KoboReader.sqlite (its bytes, or the file unpacked from a zip). Never raises."""
    try:
        with database_copy(data) as connection:
            return _read(connection)
    except UnreadableDatabase as error:
        return ParseResult([], [Problem(1, KOBO_UNREADABLE % {"error": error})], 1)


def _read(connection: sqlite3.Connection) -> ParseResult:
    tables = tables_of(connection)
    if not is_kobo(tables):
        return ParseResult([], [Problem(1, NOT_KOBO)], 1)
    for table, needed in _NEEDED.items():
        missing = needed - columns_of(connection, table)
        if missing:
            message = KOBO_LACKS % {"table": table, "columns": ", ".join(sorted(missing))}
            return ParseResult([], [Problem(1, message)], 1)
    have = columns_of(connection, "Bookmark")

    def column(name: str, default: str = "NULL") -> str:
        return f"b.{name}" if name in have else default

    query = _QUERY.format(
        modified=column("DateModified"),
        hidden=column("Hidden", "'false'"),
        kind=column("Type", "'highlight'"),
        progress=column("ChapterProgress", "0"),
        start=column("StartContainerPath"),
        start_offset=column("StartOffset"),
        end=column("EndContainerPath"),
        end_offset=column("EndOffset"),
    )
    result = ParseResult(clippings=[], problems=[], entries=0)
    for row in connection.execute(query):
        rowid, bookmark_id, volume, text, annotation, created = row[:6]
        modified, hidden, kind, _progress, title, author, chapter = row[6:13]
        content_id, start, start_offset, end, end_offset = row[13:]
        result.entries += 1
        if str(hidden).casefold() == "true":
            skip_entry(result, HIDDEN)
            if _text(text).strip() and kind != "dogear":
                # Kobo hides the row of a highlight the reader deleted (an earlier copy of the
                # database holds the same BookmarkID alive): remembered, not imported.
                result.deleted_on_device.append(
                    rich_clipping(
                        title=_title(title, volume),
                        author=_text(author).strip(),
                        text=_text(text).strip(),
                        added_at=parse_date(_text(created)),
                        line=int(rowid),
                    )
                )
            continue
        if kind == "dogear":
            result.clippings.append(
                rich_clipping(
                    title=_title(title, volume),
                    author=_text(author),
                    kind="bookmark",
                    text="",
                    line=int(rowid),
                )
            )
            continue
        text, note = _text(text).strip(), _text(annotation).strip()
        if not text and not note:
            skip_entry(result, EMPTY)
            continue
        raw = _text(created)
        added_at = parse_date(raw)
        if raw and added_at is None:
            message = KOBO_BAD_DATE % {
                "row": rowid,
                "bookmark": _text(bookmark_id)[:40],
                "date": repr(raw[:40]),
            }
            result.problems.append(Problem(int(rowid), message))
            continue
        result.clippings.append(
            rich_clipping(
                title=_title(title, volume),
                author=_text(author).strip(),
                # A note without highlighted text is kept as a note on its own.
                kind="highlight" if text else "note",
                text=text or note,
                added_at=added_at,
                added_raw=raw,
                line=int(rowid),
                note=note if text else "",
                # A note edited on the device moves DateModified on: the newer note wins.
                note_added_at=(parse_date(_text(modified)) or added_at) if note and text else None,
                chapter=_text(chapter).strip(),
                position=encode(
                    kobo_span(
                        start,
                        end,
                        start_offset=start_offset,
                        end_offset=end_offset,
                        chapter=_text(content_id).removeprefix(_text(volume)),
                    )
                ),
            )
        )
    if not result.problems and all(c.kind == "bookmark" for c in result.clippings):
        result.holds_nothing = KOBO_EMPTY
    return result


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _title(title: object, volume: object) -> str:
    """The book's title, or its file's name when the book's row is gone."""
    if _text(title).strip():
        return _text(title).strip()
    path = unquote(_text(volume).removeprefix("file://"))
    return PurePosixPath(path).stem.strip() or "Untitled"
