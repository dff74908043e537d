"""Highlights an older Exogram put in "Untitled", found again by a file that names their books.

Until 2026-12-07 Exogram did not read the columns Readwise's own export CSV names a book
by (Book Title, Book Author): every row of that file went into one book, "Untitled", with
no author. Read today, the same file (or a later export) puts each row in its own book, and
the reader held every highlight twice: once in "Untitled", once in its book.

An entry an older Exogram would have put in "Untitled" (`RichClipping.untitled_before`)
looks, by its words, for a highlight of the reader's "Untitled" book that holds the same
words, is of the same kind (a highlight, a note of its own) and has no device's position (a
device's highlight there is the device's untitled document, where its next upload looks for
it again). Such a highlight is that entry, imported before:

- it moves to the entry's book, at the entry's place (a page where Readwise says page, not
  the Kindle location the old reading made of it; none for an article's order) and with
  its date when it had none, keeping everything of the reader's on it: note, edits, tags,
  favourite, review state, deleted or not. The import then finds it there by its dedupe key,
  as any entry imported before, and adds what the file brings now (Document tags, a date);
- unless that book already holds the passage (its words from a Kindle, or from another file
  imported since): the two become one, the book's highlight taking everything of the
  reader's on the other (joining.highlights_join), as a merge of two books joins them.

With every book one, the older import gave a highlight the notes of other rows: a note of
its own of another book (a row with a Note and no Highlight) at a place near it, the note
of another book's row of the same words at the same place. Those notes of this file leave
a note the reader never edited, which keeps its own row's note: the import then puts each
where its own row says, beside a highlight or on its own, as a fresh import of the file
does; no word is lost.

A highlight of "Untitled" removed for good (books.purging) left its trace under that book's
key: a copy of it goes under the key of the book of the entry with its words, so that the
import leaves that entry out of its book too (as purging copies a trace under every key of
a merged book).

Only the placeholder: the book "Untitled" with no author that importers make for an entry
with no title (a book another was merged into and kept is one the reader named), and only
the importing reader's. Emptied, it goes, as book_merge removes a book with no highlight.
Connections follow the highlights' books; the moved passages are embedded again after
commit, as a merge of books does (same_book._connect_again): their words and so their
vectors are the same, but their book, its authors and the books they may connect to are not.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef
from django.utils import timezone

from accounts.models import User
from books.connections.services import connections_follow_books
from books.importing.book_merge import _wait_for_the_embedding_writer, exclusions_follow
from books.importing.clippings import Clipping
from books.importing.identity import book_key, highlight_dedupe_key
from books.importing.joining import highlights_join, highlights_update
from books.importing.library_index import Library, holder_near
from books.importing.notes import NOTES_JOINED
from books.importing.purged import note_hash, text_hash
from books.importing.reader_books import book_key_of
from books.importing.rich import RichClipping, location_range
from books.models import Book, BookAlias, Highlight, PurgedHighlight
from books.text import fold_spacing, fold_spacing_and_bom

# The title importers give a book whose entries name none (reader_books.books_for_file).
UNTITLED = "Untitled"

# What moving a highlight to its book changes on it.
_MOVED_FIELDS = [
    "book", "page", "location_start", "location_end", "added_at", "added_raw", "dedupe_key",
    "reading_key", "note", "search_text", "updated",
]  # fmt: skip


@dataclass
class UntitledFound:
    """What untitled_rehome did: highlights moved to their books, highlights joined to the
    one their book already held, whether "Untitled" went, the books that gained them, and
    the moved passages to embed again."""

    moved: int = 0
    joined: int = 0
    removed: bool = False
    books: set[int] = field(default_factory=set)
    embed_again: list[int] = field(default_factory=list)


def untitled_placeholder(reader: User) -> Book | None:
    """The reader's "Untitled" book, as importers made it, if they have one."""
    aliased = BookAlias.objects.filter(book=OuterRef("pk"))
    return (
        Book.objects.filter(reader=reader, key=book_key(UNTITLED, ""), title=UNTITLED, authors="")
        .exclude(Exists(aliased))
        .first()
    )


def untitled_rehome(
    *,
    reader: User,
    clippings: list[Clipping],
    books: dict[str, Book],
    notes: frozenset[str] | None = None,
) -> UntitledFound:
    """Move to the file's books (`books`, by key) the highlights of the reader's "Untitled"
    that are entries of this file an older Exogram put there (module docstring). `notes`:
    untitled_notes of the whole file, when `clippings` are one part of it (a note's row
    may be in another part); by default, those of `clippings`."""
    found = UntitledFound()
    untitled_key = book_key(UNTITLED, "")
    entries = [
        c
        for c in clippings
        if isinstance(c, RichClipping)
        and c.untitled_before
        and c.kind in ("highlight", "note")
        and c.deleted_at is None
        and fold_spacing_and_bom(c.text)
    ]
    placeholder = untitled_placeholder(reader) if entries else None
    # Those the file places in a book of their own.
    placed: list[Clipping] = [
        c for c in entries if book_key_of(c) != untitled_key and book_key_of(c) in books
    ]
    if placeholder is not None or (
        entries and not Book.objects.filter(reader=reader, key=untitled_key).exists()
    ):
        # Its highlights removed for good, by the placeholder or with it (it went with
        # its last highlight): the file's entries of them stay out of their books too.
        _traces_follow(reader, placed)
    if placeholder is None:
        return found
    pairs = _pairs(placeholder, placed, books)
    if not pairs:
        return found
    # Connections are about to follow the highlights: no pair judged with the old books is
    # written after this (book_merge, for a merge of books).
    _wait_for_the_embedding_writer(reader)
    # The moves write the note: what the reader may have saved meanwhile (a note edited on
    # the page) is read again, locked until the import commits, so their words win.
    _read_again_locked([highlight for _, highlight in pairs])
    targets = {book.pk: book for book in (books[book_key_of(entry)] for entry, _ in pairs)}
    library = Library(reader, {book.key: book for book in targets.values()})
    moved: list[Highlight] = []
    joins: list[tuple[Highlight, Highlight]] = []
    if notes is None:
        notes = untitled_notes(clippings)
    own_notes: dict[int, str] = {}
    for entry, highlight in pairs:
        own = _own_note(highlight, entry, notes)
        if own is not None:
            own_notes[highlight.pk] = own
        book = books[book_key_of(entry)]
        key = highlight_dedupe_key(
            book_key=book.key,
            kind=highlight.kind,
            page=entry.page or "",
            start=entry.location_start,
            end=entry.location_end,
            text=entry.text,
        )
        holder = library.keys.get(key)
        if holder is None and highlight.kind == Highlight.Kind.HIGHLIGHT:
            holder = holder_near(library, book.pk, entry)
        if holder is not None:
            joins.append((holder, highlight))
            continue
        highlight.book = book
        highlight.page = (entry.page or "")[:32]
        highlight.location_start, highlight.location_end = entry.location_start, entry.location_end
        if highlight.added_at is None and entry.added_at is not None:
            highlight.added_at, highlight.added_raw = entry.added_at, entry.added_raw[:200]
        highlight.dedupe_key = key
        highlight.refresh_reading_key()
        highlight.note = own_notes.get(highlight.pk, highlight.note)
        highlight.refresh_search_text()
        library.add(highlight)  # a second entry of its words finds it here
        moved.append(highlight)
    now = timezone.now()
    for highlight in moved:
        highlight.updated = now
    highlights_update(moved, _MOVED_FIELDS)
    # After the moves (a highlight moved above may be the one another joins), each copy
    # with its own note, then joined as a merge of two books joins them.
    renoted = Highlight.objects.only("note").in_bulk([c.pk for _, c in joins if c.pk in own_notes])
    for pk, row in renoted.items():
        row.note = own_notes[pk]
    highlights_update(renoted.values(), ["note"])
    highlights_join([(holder.pk, copy.pk) for holder, copy in joins])
    connections_follow_books(reader_id=reader.pk, books=[placeholder.pk, *targets])
    # A reader who kept "Untitled" out of sharing keeps its highlights out.
    exclusions_follow(kept=list(targets.values()), absorbed=[placeholder])
    found.moved, found.joined = len(moved), len(joins)
    found.books = {h.book_id for h in moved} | {holder.book_id for holder, _ in joins}
    found.embed_again = _embed_again([h.pk for h in moved])
    if placeholder.key not in books and not placeholder.highlights.exists():
        placeholder.delete()
        found.removed = True
    return found


def _traces_follow(reader: User, entries: list[Clipping]) -> None:
    """A copy, under the entry's book's key, of each trace of a highlight of "Untitled"
    removed for good (books.purging) that is one of these entries by its words, as purging
    copies a trace under every key of its book (_under_every_key): an import reads the
    traces of its books' keys, and the entry is now of its own book. Not a trace of a
    highlight deleted on a device: that device's untitled document stays where it is."""
    if not entries:
        return
    traces = list(
        PurgedHighlight.objects.filter(
            reader=reader, book_key=book_key(UNTITLED, ""), on_device=False
        )
    )
    if not traces:
        return
    # Traces of removals for good only: one of a device's deletion with the same key is
    # judged by its date (books.importing.purged), and would keep this one from coming.
    held = set(
        PurgedHighlight.objects.filter(
            reader=reader, book_key__in={book_key_of(c) for c in entries}, on_device=False
        ).values_list("book_key", "dedupe_key")
    )
    # By each of their texts' hashes: a file of 10,000 entries against 5,000 traces read
    # every trace for every entry.
    by_hash: defaultdict[str, list[PurgedHighlight]] = defaultdict(list)
    for trace in traces:
        for hashed in trace.text_hashes:
            by_hash[hashed].append(trace)
    copies: list[PurgedHighlight] = []
    for entry in entries:
        if entry.kind == "note":
            words, kinds = note_hash(entry.text), {Highlight.Kind.NOTE, Highlight.Kind.HIGHLIGHT}
        else:
            words, kinds = text_hash(entry.text), {Highlight.Kind.HIGHLIGHT}
        key = book_key_of(entry)
        for trace in by_hash.get(words, []):
            if trace.kind not in kinds:
                continue
            if (key, trace.dedupe_key) in held:
                continue
            held.add((key, trace.dedupe_key))
            copies.append(trace.filed_under(key))
    PurgedHighlight.objects.bulk_create(copies)


def _read_again_locked(highlights: list[Highlight]) -> None:
    """Their notes as the rows hold them now, the rows locked (FOR NO KEY UPDATE, in id
    order, after the reader's row: as the embedding writer takes them, so the two cannot
    deadlock; and no connection's key-share lock on a highlight is waited for). A note
    saved from now on waits for the import's commit, then replaces what it wrote."""
    by_pk = {highlight.pk: highlight for highlight in highlights}
    rows = (
        Highlight.objects.select_for_update(no_key=True, of=("self",))
        .filter(pk__in=by_pk)
        .order_by("pk")
        .values_list("pk", "note", "note_edited")
    )
    for pk, note, note_edited in rows:
        by_pk[pk].note, by_pk[pk].note_edited = note, note_edited


def _pairs(
    placeholder: Book, entries: list[Clipping], books: dict[str, Book]
) -> list[tuple[Clipping, Highlight]]:
    """Each entry and the highlight of "Untitled" it is, by its words (each highlight one
    entry's at most): of several with its words, the one at the place an older Exogram read
    from its Location, alive before deleted, then the oldest."""
    if not entries:
        return []
    held: defaultdict[tuple[str, str], list[Highlight]] = defaultdict(list)
    rows = placeholder.highlights.filter(position="").only(
        "reader_id", "book_id", "kind", "text", "note", "note_edited", "page", "location_start",
        "location_end", "position", "added_at", "added_raw", "dedupe_key", "deleted_at",
    )  # fmt: skip
    for highlight in rows.order_by("pk"):
        held[(highlight.kind, fold_spacing_and_bom(highlight.text))].append(highlight)
    pairs: list[tuple[Clipping, Highlight]] = []
    for entry in entries:
        if book_key_of(entry) not in books:
            continue
        kind = Highlight.Kind.NOTE if entry.kind == "note" else Highlight.Kind.HIGHLIGHT
        candidates = held.get((kind, fold_spacing_and_bom(entry.text)))
        if not candidates:
            continue
        chosen = min(
            candidates,
            key=lambda h: (not _read_there_before(h, entry), h.deleted_at is not None, h.pk),
        )
        candidates.remove(chosen)
        pairs.append((entry, chosen))
    return pairs


def untitled_notes(clippings: list[Clipping]) -> frozenset[str]:
    """The words (folded) of every note of the file's rows an older Exogram read into
    "Untitled": each comes to its own row's highlight, or stands on its own, in this import."""
    return frozenset(
        {
            fold_spacing((c.text if c.kind == "note" else c.note).strip())
            for c in clippings
            if isinstance(c, RichClipping) and c.untitled_before
        }
        - {""}
    )


def _own_note(highlight: Highlight, entry: Clipping, notes: frozenset[str]) -> str | None:
    """The note the highlight keeps instead of its own when every other part of it
    (NOTES_JOINED) is a note of another of the file's rows (`notes`): its own row's note;
    None to keep its note as it is (the reader edited it, or it holds other words)."""
    if highlight.kind != Highlight.Kind.HIGHLIGHT or highlight.note_edited:
        return None
    own = entry.note.strip() if isinstance(entry, RichClipping) else ""
    parts = [part.strip() for part in highlight.note.split(NOTES_JOINED) if part.strip()]
    others = [part for part in parts if fold_spacing(part) != fold_spacing(own)]
    if not others or not all(fold_spacing(part) in notes for part in others):
        return None
    return own


def _read_there_before(highlight: Highlight, entry: Clipping) -> bool:
    """Whether the highlight's place is the one an older Exogram read from the entry's
    Location cell: a number was a Kindle location whatever Location Type said, anything
    else a page. (An order or a time is no place now: nothing to compare.)"""
    if entry.location_start is not None:
        return (highlight.location_start, highlight.location_end) == (
            entry.location_start,
            entry.location_end,
        )
    if not entry.page:
        return False
    start, end = location_range(entry.page)
    if start is None:
        return highlight.page == entry.page
    return (highlight.location_start, highlight.location_end) == (start, end)


def _embed_again(ids: list[int]) -> list[int]:
    """The moved passages with a vector, back to pending (their vectors stay), so that the
    pipeline connects them again in their books (same_book._connect_again)."""
    done = (
        Highlight.objects.alive()
        .passages()
        .filter(pk__in=ids, embedding_status=Highlight.EmbeddingStatus.DONE)
    )
    again = list(done.values_list("pk", flat=True))
    Highlight.objects.filter(pk__in=again).update(
        embedding_status=Highlight.EmbeddingStatus.PENDING, embedding_claimed_at=None
    )
    return again
