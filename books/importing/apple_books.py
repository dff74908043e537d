"""Parse Apple Books' highlights: the AEAnnotation database, with BKLibrary for the books.

Pure Python, no Django. Apple Books keeps two Core Data stores in WAL mode: the `-wal`
beside each database can hold most of its rows, so each is read together with its `-wal`
and `-shm` (from a temporary read-only copy, `sqlite_read`). Rows of `ZAEANNOTATION`
the reader deleted (`ZANNOTATIONDELETED`) and rows without selected text (position
markers, type 1 and 3) are skipped and counted; a deleted row's highlight is handed on as
deleted on the device (`ParseResult.deleted_on_device`), for the import to remember.
"""

import sqlite3
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from books.importing.clippings import ParseResult, Problem
from books.importing.marks import gettext_noop
from books.importing.positions import cfi_span, encode
from books.importing.rich import DELETED, EMPTY, rich_clipping, skip_entry
from books.importing.sqlite_read import (
    Content,
    UnreadableDatabase,
    columns_of,
    database_copy,
    tables_of,
)

APPLE_UNREADABLE = gettext_noop("not readable Apple Books databases: %(error)s")
NO_LIBRARY_TABLE = gettext_noop("the BKLibrary database has no %(table)s table")
LIBRARY_LACKS = gettext_noop("%(table)s lacks ZASSETID, ZTITLE or ZAUTHOR")
NO_ANNOTATIONS_TABLE = gettext_noop("the AEAnnotation database has no %(table)s table")
ANNOTATIONS_LACK = gettext_noop("%(table)s lacks %(columns)s")
BOOK_NOT_IN_LIBRARY = gettext_noop(
    "annotation row %(row)s: its book (asset %(asset)s) is not in BKLibrary"
)
APPLE_EMPTY = gettext_noop("These Apple Books databases have no highlights or notes to import.")
ANNOTATIONS_TABLE = "ZAEANNOTATION"
LIBRARY_TABLE = "ZBKLIBRARYASSET"
# Core Data counts seconds from the first moment of 2001, UTC.
_CORE_DATA_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)
# ZANNOTATIONSTYLE as Books shows it; 0 is an underline.
_STYLES = {0: "underline", 1: "green", 2: "blue", 3: "yellow", 4: "pink", 5: "purple"}
_NEEDED = {
    "Z_PK", "ZANNOTATIONASSETID", "ZANNOTATIONSELECTEDTEXT", "ZANNOTATIONDELETED",
}  # fmt: skip
_OPTIONAL = (
    "ZANNOTATIONNOTE", "ZANNOTATIONCREATIONDATE", "ZANNOTATIONMODIFICATIONDATE",
    "ZANNOTATIONSTYLE", "ZANNOTATIONISUNDERLINE", "ZFUTUREPROOFING5", "ZANNOTATIONLOCATION",
    "ZPLLOCATIONRANGESTART",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Store:
    """One database and its companions, as found in the upload (or unpacked from its zip)."""

    data: Content
    wal: Content | None = None
    shm: Content | None = None


def parse_apple_books(annotations: Store, library: Store | None) -> ParseResult:
    """Parse the pair of stores. Never raises."""
    try:
        with ExitStack() as stack:
            notes_db = stack.enter_context(
                database_copy(annotations.data, annotations.wal, annotations.shm)
            )
            books: dict[str, tuple[str, str]] = {}
            if library is not None:
                library_db = stack.enter_context(
                    database_copy(library.data, library.wal, library.shm)
                )
                books = _books(library_db)
            return _read(notes_db, books)
    except UnreadableDatabase as error:
        return ParseResult([], [Problem(1, APPLE_UNREADABLE % {"error": error})], 1)


def _books(connection: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    if LIBRARY_TABLE not in tables_of(connection):
        raise UnreadableDatabase(NO_LIBRARY_TABLE % {"table": LIBRARY_TABLE})
    if not {"ZASSETID", "ZTITLE", "ZAUTHOR"} <= columns_of(connection, LIBRARY_TABLE):
        raise UnreadableDatabase(LIBRARY_LACKS % {"table": LIBRARY_TABLE})
    query = f"SELECT ZASSETID, ZTITLE, ZAUTHOR FROM {LIBRARY_TABLE} WHERE ZASSETID IS NOT NULL"
    return {
        str(asset): (_text(title).strip(), _text(author).strip())
        for asset, title, author in connection.execute(query)
    }


def _read(connection: sqlite3.Connection, books: dict[str, tuple[str, str]]) -> ParseResult:
    if ANNOTATIONS_TABLE not in tables_of(connection):
        message = NO_ANNOTATIONS_TABLE % {"table": ANNOTATIONS_TABLE}
        return ParseResult([], [Problem(1, message)], 1)
    have = columns_of(connection, ANNOTATIONS_TABLE)
    missing = _NEEDED - have
    if missing:
        message = ANNOTATIONS_LACK % {
            "table": ANNOTATIONS_TABLE,
            "columns": ", ".join(sorted(missing)),
        }
        return ParseResult([], [Problem(1, message)], 1)
    optional = [name if name in have else "NULL" for name in _OPTIONAL]
    query = (
        f"SELECT Z_PK, ZANNOTATIONASSETID, ZANNOTATIONSELECTEDTEXT, ZANNOTATIONDELETED, "
        f"{', '.join(optional)} FROM {ANNOTATIONS_TABLE} ORDER BY ZANNOTATIONASSETID, "
        f"{optional[-1]}, {optional[1]}, Z_PK"
    )
    result = ParseResult(clippings=[], problems=[], entries=0)
    for row in connection.execute(query):
        pk, asset, text, deleted, note, created, modified, style, underline, chapter = row[:10]
        location = row[10]
        pk = pk if isinstance(pk, int) else 0  # the row's number, where problems point
        result.entries += 1
        text, note = _text(text).strip(), _text(note).strip()
        book = books.get(_text(asset))
        if deleted not in (0, None, "0"):
            skip_entry(result, DELETED)
            if text and book is not None and book[0]:
                # Remembered, not imported: an older copy still holds it as a live row
                # (same Z_PK, same creation date; the deletion only changed its
                # modification date).
                result.deleted_on_device.append(
                    rich_clipping(
                        title=book[0],
                        author=book[1],
                        text=text,
                        added_at=_core_data_time(created),
                        line=pk,
                        note=note,
                        position=encode(cfi_span(location)) if isinstance(location, str) else "",
                    )
                )
            continue
        if not text and not note:
            skip_entry(result, EMPTY)
            continue
        if book is None or not book[0]:
            message = BOOK_NOT_IN_LIBRARY % {"row": pk, "asset": _text(asset)[:40]}
            result.problems.append(Problem(pk, message))
            continue
        added_at = _core_data_time(created)
        colour = "underline" if underline in (1, "1") else _STYLES.get(_int(style), "")
        result.clippings.append(
            rich_clipping(
                title=book[0],
                author=book[1],
                # A note without selected text is kept as a note on its own.
                kind="highlight" if text else "note",
                text=text or note,
                added_at=added_at,
                added_raw=added_at.isoformat() if added_at else "",
                line=pk,
                note=note if text else "",
                note_added_at=(_core_data_time(modified) or added_at) if note and text else None,
                chapter=_text(chapter).strip(),
                colour=colour,
                position=encode(cfi_span(location)) if isinstance(location, str) else "",
            )
        )
    if not result.problems and not result.clippings:
        result.holds_nothing = APPLE_EMPTY
    return result


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _int(value: object) -> int:
    """A style number; -1 when there is none."""
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError):
        return -1


def _core_data_time(value: object) -> datetime | None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if not -3e9 < value < 3e9:  # Core Data's "never" sentinels and nonsense
        return None
    return _CORE_DATA_EPOCH + timedelta(seconds=value)
