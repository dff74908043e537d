"""Where an imported note goes: the highlight that holds its place, alive or deleted, and
what becomes of the note already there (`note_kept`, docs/readers-import.md)."""

from datetime import datetime

from books.importing.clippings import Clipping
from books.importing.library_index import Library
from books.models import Book, Highlight
from books.text import fold_spacing

# A note belongs to the highlight that contains its location or, failing that, to the
# nearest highlight that ends at most this many locations before it.
NOTE_REACH = 10


# A note kept beside another goes after it, on a paragraph of its own.
NOTES_JOINED = "\n\n"


def note_kept(
    *,
    held: str,
    held_at: datetime | None,
    brought: str,
    brought_at: datetime | None,
    held_edited: bool = False,
    brought_edited: bool = False,
) -> tuple[str, datetime | None] | None:
    """The note a highlight keeps, and its date, when a file brings `brought` (written at
    `brought_at`) for a highlight that holds `held` (written at `held_at`); None when the
    note held stays as it is.

    A reader's words are never lost, and a file imported again changes nothing:
    - the same words (spacing and case aside) change nothing;
    - two notes both dated, at different times: the newer one is the reader's latest and
      wins; an older copy of a file never takes it back;
    - no date to tell which is newer (a format without one, or two copies that disagree
      under the same date: Apple Books' "#cynicism" and "#cyn"): the words of both are
      kept, the one held first; a note whose words the other holds adds nothing;
    - a note the reader edited in Exogram (`held_edited`, or `brought_edited` from an
      Exogram export) has no date of its own: the device's note it was edited from, or an
      older one, gives way to it; any other note is kept beside it, as without a date.
    """
    brought = brought.strip()
    if not brought or fold_spacing(brought) == fold_spacing(held):
        return None
    if held_edited != brought_edited and held_at is not None and brought_at is not None:
        # `held_at`/`brought_at` of an edited note is the date of the device's note the
        # reader edited: a device's note dated no later is that one, or an older copy.
        if held_edited and brought_at <= held_at:
            return None
        if brought_edited and held_at <= brought_at:
            return brought, brought_at
    if held_edited or brought_edited:
        held_at, brought_at = (
            None,
            max((d for d in (held_at, brought_at) if d is not None), default=None),
        )
    if not held.strip():
        return brought, brought_at
    if held_at is not None and brought_at is not None and held_at != brought_at:
        return (brought, brought_at) if brought_at > held_at else None
    latest = max((d for d in (held_at, brought_at) if d is not None), default=None)
    if fold_spacing(brought) in fold_spacing(held):
        return None
    if fold_spacing(held) in fold_spacing(brought):
        return brought, latest
    return f"{held.rstrip()}{NOTES_JOINED}{brought}", latest


def note_with_deleted(library: Library, book: Book, clipping: Clipping) -> bool:
    """Whether the highlight this note would go to is deleted and holds it already."""
    gone = note_target(library, book, clipping, deleted=True)
    return gone is not None and fold_spacing(gone.note) == fold_spacing(clipping.text.strip())


def note_target(
    library: Library, book: Book, clipping: Clipping, *, deleted: bool = False
) -> Highlight | None:
    """The highlight a note goes to: among the alive ones, or among the deleted ones."""
    if clipping.location_start is None:
        if clipping.page:
            on_page = [
                h
                for h in library.on_page(book.pk, clipping.page)
                if (h.deleted_at is not None) == deleted
            ]
            return on_page[-1] if on_page else None
        return None
    where = clipping.location_end or clipping.location_start
    candidates = [
        h
        for h in library.near(book.pk, where, where, reach_before=NOTE_REACH)
        if (h.deleted_at is not None) == deleted
    ]
    containing = [
        h
        for h in candidates
        if h.location_start is not None
        and h.location_start <= where <= (h.location_end or h.location_start)
    ]
    if containing:
        # The narrowest range is the most specific highlight.
        return min(containing, key=lambda h: (h.location_end or 0) - (h.location_start or 0))
    preceding = [h for h in candidates if (h.location_end or h.location_start or 0) <= where]
    if not preceding:
        return None
    return max(preceding, key=lambda h: h.location_end or h.location_start or 0)


def note_attach(highlight: Highlight, clipping: Clipping) -> bool:
    """Attach a Kindle note (an entry of its own, dated when it was written) by the rule of
    `note_kept`; True when the note changed. A note the reader edited here keeps their
    words, and a newer note from the device is kept beside them."""
    kept = note_kept(
        held=highlight.note,
        held_at=highlight.note_added_at,
        brought=clipping.text,
        brought_at=clipping.added_at,
        held_edited=highlight.note_edited,
    )
    if kept is None:
        return False
    highlight.note, highlight.note_added_at = kept
    return True
