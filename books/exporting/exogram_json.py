"""Exogram's own JSON: every field a reader owns, so it re-imports elsewhere without loss.

What the reader made is all here: the text, locations and dates as the device wrote them
(and a KOReader's, Kobo's or Apple Books' position, so that a later upload from that device
still merges a highlight extended there), notes (and whether the reader edited them here),
favourites, tags, chapters, colours. What the machine can recompute is not: vectors,
connections, search copies.

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
from books.models import Highlight
from books.text import BIDI_CONTROLS

FORMAT = "exogram"
VERSION = 1


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


def library_json(exports: Iterable[BookExport], *, exported_at: datetime | None = None) -> bytes:
    books = [
        {
            "code": str(export.book.code),
            "title": export.book.title,
            "authors": export.book.authors,
            "highlights": [highlight_record(h) for h in export.highlights],
        }
        for export in exports
    ]
    document = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": (exported_at or timezone.now()).isoformat(),
        "books": books,
    }
    return dumps(document).encode("utf-8")
