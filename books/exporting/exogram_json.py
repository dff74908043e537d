"""Exogram's own JSON: every field a reader owns, so it re-imports elsewhere without loss.

What the reader made is all here: the text, locations and dates as the device wrote them
(and a KOReader's, Kobo's or Apple Books' position, so that a later upload from that device
still merges a highlight extended there), notes (and whether the reader edited them here),
favourites, tags, chapters, colours. What the machine can recompute is not: vectors,
connections, search copies.
"""

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.utils import timezone

from books.exporting.library import BookExport
from books.models import Highlight

FORMAT = "exogram"
VERSION = 1


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
    return json.dumps(document, ensure_ascii=False, indent=1).encode("utf-8")
