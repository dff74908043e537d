"""Where an imported note goes: the highlight that holds its place, alive or deleted, and
whether it replaces the note already there."""

from datetime import datetime

from books.importing.clippings import Clipping
from books.importing.library_index import Library
from books.models import Book, Highlight
from books.text import fold_spacing

# A note belongs to the highlight that contains its location or, failing that, to the
# nearest highlight that ends at most this many locations before it.
NOTE_REACH = 10


def _newer(a: datetime | None, b: datetime | None) -> bool:
    return a is not None and (b is None or a >= b)


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
    """Attach a note unless the reader edited theirs here or it is already there."""
    text = clipping.text.strip()
    if highlight.note_edited or fold_spacing(highlight.note) == fold_spacing(text):
        return False
    if highlight.note and not _newer(clipping.added_at, highlight.note_added_at):
        return False
    highlight.note = text
    highlight.note_added_at = clipping.added_at
    return True
