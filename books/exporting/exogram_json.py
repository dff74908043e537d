"""Exogram's own JSON: every field a reader owns, so it re-imports elsewhere without loss.

What the reader made is all here: the text, locations and dates as the device wrote them
(and a KOReader's, Kobo's or Apple Books' position, so that a later upload from that device
still merges a highlight extended there), notes (and whether and when the reader edited
them here), favourites, tags, chapters, colours. What the machine can recompute is not:
vectors, connections, search copies.

What the reader deleted goes too (version 2), so that a library moved to another account
keeps it deleted and the device's next file does not bring it back: a book's `deleted`
highlights, with when (in Recently deleted there, until the purge), and `removed_for_good`,
the traces of highlights the purge removed (books.importing.purged: hashes, never words)
and of those deleted on the device (`on_device`, with when the device made them).

Explicit bidirectional controls in the reader's words (books.text.BIDI_CONTROLS) are kept,
written as `\u202e` escapes: the same string to a JSON reader, never a reversed line to a
person reading the file (docs/security.md).
"""

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.utils import timezone

from books.exporting.library import BookExport
from books.models import Highlight, PurgedHighlight
from books.text import BIDI_CONTROLS

FORMAT = "exogram"
# 2: `deleted` highlights in each book, `removed_for_good` traces, `note_edited_at`.
VERSION = 2


def dumps(value: Any) -> str:
    # The controls can only stand inside a JSON string, where an escape means the same.
    text = json.dumps(value, ensure_ascii=False, indent=1)
    return BIDI_CONTROLS.sub(lambda control: f"\\u{ord(control[0]):04x}", text)


def _when(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def highlight_record(h: Highlight) -> dict[str, Any]:
    return {
        "code": str(h.code),
        "kind": h.kind,
        "text": h.text,
        "note": h.note,
        "note_edited": h.note_edited,
        "note_edited_at": _when(h.note_edited_at),
        "note_added_at": _when(h.note_added_at),
        "page": h.page,
        "location_start": h.location_start,
        "location_end": h.location_end,
        # Where a KOReader, Kobo or Apple Books device put it (books.importing.positions):
        # the next upload of that device finds this highlight by it. "" for a Kindle's.
        "position": h.position,
        "added_at": _when(h.added_at),
        "added_raw": h.added_raw,
        "favourite": h.favourite,
        "tags": [tag.name for tag in h.tags.all()],
        "chapter": h.chapter,
        "colour": h.colour,
    }


def book_record(export: BookExport) -> dict[str, Any]:
    return {
        "code": str(export.book.code),
        "title": export.book.title,
        "authors": export.book.authors,
        "highlights": [highlight_record(h) for h in export.highlights],
        "deleted": [
            {**highlight_record(h), "deleted_at": _when(h.deleted_at)} for h in export.deleted
        ],
    }


def removed_record(trace: PurgedHighlight) -> dict[str, Any]:
    return {
        "book_key": trace.book_key,
        "kind": trace.kind,
        "dedupe_key": trace.dedupe_key,
        "text_hashes": trace.text_hashes,
        "runs": trace.runs,
        # Deleted on the device (books.importing.device_deleted), and when the device made
        # it: an entry made after it is the reader's new highlight of the same passage.
        "on_device": trace.on_device,
        "added_at": _when(trace.added_at),
    }


def library_json(
    exports: Iterable[BookExport],
    *,
    removed: Iterable[PurgedHighlight] = (),
    exported_at: datetime | None = None,
) -> bytes:
    document = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": (exported_at or timezone.now()).isoformat(),
        "books": [book_record(export) for export in exports],
        "removed_for_good": [removed_record(trace) for trace in removed],
    }
    return dumps(document).encode("utf-8")
