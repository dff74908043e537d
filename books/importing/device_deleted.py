"""Highlights the reader deleted on the device, remembered so that an older copy of the
file does not bring them back.

Apple Books keeps a deleted highlight's row, marked `ZANNOTATIONDELETED`, with its words and
its creation date; an older backup holds the same row alive. The parser hands such rows on
(`ParseResult.deleted_on_device`); the import then, for each one it has not seen before:

- keeps nothing of it when this file's live entries hold its words (the reader highlighted
  the passage again, or extended it: the live row is the reader's latest);
- moves the library's highlight of exactly its words, made no later than it, to Recently
  deleted, when an earlier import brought it (from an older copy): deleted as one deleted
  here, so it can be brought back, and a reader's note written here keeps it where it is
  (one made after it is the reader's new highlight of the passage, and stays);
- and leaves a trace of it (a PurgedHighlight marked `on_device`: hashes, never its words,
  and the date the device made it): an entry of a later import with its key or its words,
  made no later than it, is left out and counted as deleted on the device. One made after
  it is the reader's new highlight of the same passage, and imported.

A trace is left once: a highlight brought back from Recently deleted stays, and the same
file imported again changes nothing.
"""

from collections.abc import Callable
from functools import partial

from django.db import transaction
from django.utils import timezone

from books.embedding.pipeline import readers_embeddings_changed
from books.importing.clippings import Clipping
from books.importing.identity import highlight_dedupe_key
from books.importing.library_index import Library
from books.importing.purged import Purged, text_hash
from books.importing.reader_books import book_key_of
from books.models import Book, Highlight, PurgedHighlight
from books.text import fold_spacing_and_bom


def deleted_on_device_remember(
    *,
    reader_id: int,
    clippings: list[Clipping],
    books: dict[str, Book],
    library: Library,
    purged: Purged,
    in_this_file: Callable[[Highlight], bool],
) -> int:
    """Remember the file's highlights deleted on the device; returns how many of the
    library's highlights went to Recently deleted with them. `in_this_file` tells whether
    a highlight holds a live entry of this file."""
    traces: dict[str, PurgedHighlight] = {}
    moving: dict[int, Highlight] = {}
    for clipping in clippings:
        book = books.get(book_key_of(clipping))
        # The key the import matches the book's entries by (the Book's, when there is one).
        book_key = book.key if book is not None else book_key_of(clipping)
        key = highlight_dedupe_key(
            book_key=book_key,
            kind=Highlight.Kind.HIGHLIGHT,
            page=clipping.page or "",
            start=clipping.location_start,
            end=clipping.location_end,
            text=clipping.text,
        )
        if key in traces or purged.known_on_device(key):
            continue
        stored = _stored(library, book, clipping, key) if book is not None else None
        if stored is not None and in_this_file(stored):
            continue
        if stored is not None and stored.pk and stored.deleted_at is None:
            same_words = library.folded(stored) == fold_spacing_and_bom(clipping.text)
            # One made after the deleted one is the reader's new highlight of the passage,
            # as an entry of a later import is (Purged.deleted_on_device): it stays.
            made_before = (
                clipping.added_at is None
                or stored.added_at is None
                or stored.added_at <= clipping.added_at
            )
            if same_words and made_before and not stored.note_edited:
                moving[stored.pk] = stored
        traces[key] = PurgedHighlight(
            reader_id=reader_id,
            book_key=book_key,
            kind=Highlight.Kind.HIGHLIGHT,
            dedupe_key=key,
            text_hashes=[text_hash(clipping.text)],
            runs=[],
            on_device=True,
            added_at=clipping.added_at,
        )
    PurgedHighlight.objects.bulk_create(traces.values(), batch_size=1000)
    if moving:
        now = timezone.now()
        Highlight.objects.filter(pk__in=list(moving), deleted_at__isnull=True).update(
            deleted_at=now, deletion=None, updated=now
        )
        for highlight in moving.values():
            highlight.deleted_at = now
        # After commit, as a delete of the reader's does it: the reader's row is locked
        # there, and embedding workers share-lock it (services.IMPORT_LOCK).
        transaction.on_commit(partial(readers_embeddings_changed, reader_ids={reader_id}))
    return len(moving)


def _stored(library: Library, book: Book, clipping: Clipping, key: str) -> Highlight | None:
    """The library's highlight holding the entry's words: by its key, or a neighbour whose
    words hold them (alive ones first)."""
    exact = library.keys.get(key)
    if exact is not None:
        return exact
    folded = fold_spacing_and_bom(clipping.text)
    if not folded:
        return None
    for neighbour in library.neighbours(
        book.pk,
        clipping.location_start,
        clipping.location_end,
        clipping.page,
        clipping.position,
        folded,
    ):
        if folded in library.folded(neighbour):
            return neighbour
    return None
