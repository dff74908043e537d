"""The import workflow: a parsed file becomes the reader's books and highlights.

One transaction per file; books matched by normalized title and author, highlights by a
stable dedupe key, versions of one passage merged without losing a word (see `versions`),
notes attached, an Import recording what happened and which entries were merged. New rows
go in with COPY; their embedding is enqueued after commit.

One import reaches the final state: each book's highlights are matched in reading order,
a highlight grown by a merge is merged again with every neighbour it now overlaps, and an
entry whose text a stored highlight nearby already holds is a duplicate. So importing the
same file again, or a longer copy of it after a shorter one, changes nothing it need not.
"""

import hashlib
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial

from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.models import User
from books.connections.services import connections_forget
from books.events import announce, highlights_to_embed
from books.importing.book_merge import books_merge_duplicates
from books.importing.clippings import Clipping, ParseResult
from books.importing.device_deleted import deleted_on_device_remember
from books.importing.enrich import import_enrich
from books.importing.hashtags import note_hashtags
from books.importing.identity import highlight_dedupe_key
from books.importing.library_index import Library, holder_near, page_span
from books.importing.merging import long_run
from books.importing.notes import note_attach, note_target, note_with_deleted
from books.importing.positions import sort_key
from books.importing.purged import Purged, traces_remember
from books.importing.reader_books import (
    book_key_of,
    books_for_file,
    clippings_follow_merges,
    clippings_orient,
    clippings_unify_authors,
    is_empty_note,
)
from books.importing.rich import RichClipping
from books.importing.rows import highlights_copy
from books.importing.untitled import untitled_rehome

# ImportRejected is what clippings_import raises for a file it refuses: its callers catch it here.
from books.importing.upload import ImportRejected as ImportRejected
from books.importing.upload import problems_record, upload_parse
from books.importing.versions import VECTORS_RESET, highlight_settle
from books.importing.work import ImportReport, ImportWork, Version
from books.library_cache import library_version_bump
from books.models import Book, Highlight, HighlightMerge, Import
from books.text import fold_spacing_and_bom

logger = logging.getLogger(__name__)


# The first key of the per-reader advisory lock that serializes imports (any constant
# that no other advisory lock in the project uses).
IMPORT_LOCK = 19_0001


class ImportFailed(Exception):
    """Writing an import failed and was rolled back; `the_import` is the failed record.

    The cause (an exception's own text, SQL) is chained as `__cause__`, kept in
    `Import.error` for the admin and logged; a reader is told it in plain words.
    """

    def __init__(self, the_import: Import) -> None:
        super().__init__(the_import.error)
        self.the_import = the_import


# What an import fails with, stored and shown in English here, in the reader's language on
# a page (books.wording).
IMPORT_FAILED = gettext_noop("The import failed and nothing was saved: %(error)s")
# What a reader is told of IMPORT_FAILED, whose error is the server's, not the file's.
IMPORT_FAILED_ON_THE_SERVER = gettext_noop(
    "The server could not save this import; nothing was saved, and your file is not the "
    "cause. Try again in a while. If it fails again, the server's operator can find the "
    "details in its log."
)


BOOK_TITLES_KEPT = Import.TITLES_KEPT


def clippings_import(*, reader: User, data: bytes, file_name: str) -> Import:
    """Import a clippings file for a reader: one transaction, idempotent, lossless.

    Raises ImportRejected (nothing written) for input that is not a clippings file. A
    failure while writing rolls everything back, leaves a failed Import saying why and
    raises ImportFailed with it.
    """
    result = upload_parse(data)
    sha256 = hashlib.sha256(data).hexdigest()
    try:
        with transaction.atomic():
            the_import = parsed_clippings_save(
                reader=reader, result=result, file_name=file_name, sha256=sha256
            )
        # After the transaction, not inside it: a bump there would hold the version's row
        # in the cache table until the import commits, and a note saved meanwhile would wait.
        library_version_bump(reader_ids={reader.pk})
    except Exception as error:
        failed = Import.objects.create(
            reader=reader,
            file_name=file_name[:255],
            sha256=sha256,
            status=Import.Status.FAILED,
            error=IMPORT_FAILED % {"error": error},
            finished_at=timezone.now(),
        )
        # The reason in one line (the command prints no traceback); the trace when debugging.
        # The import's code is the one in its report's address, so an operator finds it here.
        logger.error(
            "import %s of %s for %s failed: %s",
            failed.code,
            file_name,
            reader,
            error,
            exc_info=logger.isEnabledFor(logging.DEBUG),
        )
        raise ImportFailed(failed) from error
    return the_import


def refusal_record(*, reader: User, file_name: str, reason: str) -> Import:
    """Keep a file refused at upload in the reader's Past imports: its name, when, and why
    (`reason` as ImportRejected stored it, in English; a page says it in the reader's
    language). Nothing of the file itself is kept, not even its sha256: a refused file may
    be anything the reader did not mean to give."""
    return Import.objects.create(
        reader=reader,
        file_name=file_name[:255],
        status=Import.Status.REFUSED,
        error=reason,
        finished_at=timezone.now(),
    )


def parsed_clippings_save(
    *,
    reader: User,
    result: ParseResult,
    file_name: str,
    sha256: str,
    the_import: Import | None = None,
    enqueue: bool = True,
    on_match: Callable[[int], None] | None = None,
    untitled_notes: frozenset[str] | None = None,
) -> Import:
    """Save a parsed file in the caller's transaction (clippings_import's, or one part of a
    large file's in books.importing.background). `enqueue=False`: the caller announces the
    highlights to embed, once for the whole file. `on_match` is told how many highlights
    of the file have been matched so far, after each (most of the save's time: a few
    hundred a second), for the page to say how far the save has got. `untitled_notes`:
    those of the whole file when `result` is one part of it (books.importing.untitled)."""
    # One import of a reader at a time: a second one (a double submit, two tabs) waits
    # here for the first to commit, then finds its highlights and adds nothing, where it
    # used to fail on the unique dedupe key. An advisory lock, taken before any row lock,
    # so it cannot deadlock, and not the reader's row, which embedding workers share-lock.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [IMPORT_LOCK, reader.pk])
    if the_import is None:
        the_import = Import.objects.create(reader=reader, file_name=file_name[:255], sha256=sha256)
    report = ImportReport(problems=problems_record(result))
    # Books the library holds twice under an older rule become one first (a no-op once
    # done), so that this file's books are matched against one book each.
    books_merge_duplicates(reader=reader)
    clippings_orient(reader=reader, clippings=result.clippings)
    clippings_unify_authors(reader=reader, clippings=result.clippings)
    if result.deleted_on_device:
        clippings_orient(reader=reader, clippings=result.deleted_on_device)
        clippings_unify_authors(reader=reader, clippings=result.deleted_on_device)
    # A book the reader merged into another is that other one's, for every step below.
    clippings_follow_merges(reader=reader, clippings=result.clippings)
    clippings_follow_merges(reader=reader, clippings=result.deleted_on_device)
    file_books = books_for_file(reader=reader, clippings=result.clippings)
    books = file_books.books
    report.books_with_nothing = file_books.empty
    report.new_books = file_books.created
    # Entries an older Exogram put in "Untitled" find themselves there first, and go to
    # their books: the Library below holds them where this file places them.
    untitled = untitled_rehome(
        reader=reader, clippings=result.clippings, books=books, notes=untitled_notes
    )
    report.untitled_moved, report.untitled_joined = untitled.moved, untitled.joined
    report.untitled_removed = int(untitled.removed)
    # The books of its highlights deleted on the device too: one whose highlights were all
    # deleted there is not among the file's books, but may be in the library (from an older
    # copy), and its traces are known by its key.
    deleted_keys = set(map(book_key_of, result.deleted_on_device)) - set(books)
    deleted_books = {
        book.key: book for book in Book.objects.filter(reader=reader, key__in=deleted_keys)
    }
    library = Library(reader, {**books, **deleted_books})
    book_keys = sorted({*books, *deleted_keys})
    # Before the traces are read: an export's own removed highlights stay out of it too.
    report.removed_remembered = traces_remember(reader_id=reader.pk, traces=result.removed_for_good)
    work = ImportWork(purged=Purged(reader_id=reader.pk, book_keys=book_keys))
    work.moved_in, work.embed_again = untitled.books, untitled.embed_again
    notes = _match_highlights(
        result.clippings, books, library, work, report, the_import, on_match=on_match
    )
    _attach_notes(notes, books, library, work, report, the_import)
    _keep_deleted(books, library, work, report, the_import)
    _write_rows(work, the_import)
    if result.deleted_on_device and work.purged is not None:
        report.moved_deleted_on_device = deleted_on_device_remember(
            reader_id=reader.pk,
            clippings=result.deleted_on_device,
            books={**books, **deleted_books},
            library=library,
            purged=work.purged,
            in_this_file=work.holds_an_entry,
        )
    if report.already_deleted or report.deleted_on_device:
        _drop_books_left_empty(books, work, report)
    changed_books = _finish_report(the_import, report, books, work)
    # Notes on the highlight itself, favourites, tags, chapters (richer formats), and the
    # tags the file's notes name as hashtags.
    import_enrich(
        the_import=the_import,
        result=result,
        changed_books=changed_books,
        notes=_notes_brought(work, the_import),
        held_by=work.held_by,
    )
    _enqueue_embedding(the_import, work, send=enqueue)
    return the_import


def _reading_order(clipping: Clipping) -> tuple[int, int, int, str, str, datetime, int]:
    if clipping.location_start is not None:
        where = (0, clipping.location_start, clipping.location_end or clipping.location_start)
    elif clipping.position:
        where = (1, 0, 0)
    else:
        span = page_span(clipping.page or "")
        where = (2, *span) if span else (3, 0, 0)
    return (
        *where,
        sort_key(clipping.position),
        clipping.page or "",
        clipping.added_at or _EPOCH,
        clipping.line,
    )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _match_highlights(
    clippings: list[Clipping],
    books: dict[str, Book],
    library: Library,
    work: ImportWork,
    report: ImportReport,
    the_import: Import,
    *,
    on_match: Callable[[int], None] | None = None,
) -> list[Clipping]:
    """Match each highlight clipping to the library: new, duplicate or a version of one.

    A book's clippings are matched in reading order, not in the order the Kindle wrote
    them, so that what merges does not depend on when each version was made. Returns the
    notes, which attach once every highlight of the file is known.
    """
    notes: list[Clipping] = []
    per_book: dict[int, tuple[Book, list[Clipping]]] = {}
    for clipping in clippings:
        if clipping.location_end is not None and clipping.location_end < (
            clipping.location_start or 0
        ):
            # Never seen on a device, but a reversed range must not sink the whole import.
            clipping = replace(
                clipping, location_start=clipping.location_end, location_end=clipping.location_start
            )
        if clipping.kind == "bookmark":
            report.bookmarks_skipped += 1
            continue
        if is_empty_note(clipping):
            # Never a book, a row or a vector of its own (reader_books.books_for_file).
            report.empty_notes_skipped += 1
            continue
        # None for a book of placeholders only (books_for_file makes no Book for it).
        book = books.get(book_key_of(clipping))
        if clipping.truncated:
            work.truncated[book.title if book else clipping.title.strip()] += 1
            if not clipping.text:
                continue  # only the placeholder: nothing of the reader's to keep
        assert book is not None  # an entry with something to keep has its book
        work.touched.add(book.pk)
        if isinstance(clipping, RichClipping) and clipping.deleted_at is not None:
            work.deleted_entries.append(clipping)
            continue
        if clipping.kind == "note":
            notes.append(clipping)
            continue
        per_book.setdefault(book.pk, (book, []))[1].append(clipping)
    matched = 0
    for book, group in per_book.values():
        for clipping in sorted(group, key=_reading_order):
            _match_clipping(clipping, book, library, work, report, the_import)
            matched += 1
            if on_match is not None:
                on_match(matched)
    return notes


def _match_clipping(
    clipping: Clipping,
    book: Book,
    library: Library,
    work: ImportWork,
    report: ImportReport,
    the_import: Import,
) -> None:
    key = _clipping_key(book, clipping, Highlight.Kind.HIGHLIGHT)
    existing = library.keys.get(key)
    if existing is not None:
        if clipping.position and not existing.position and existing.location_start is None:
            # Imported before positions were kept: a later version of it can now find it.
            library.remove(existing)
            existing.position = clipping.position
            library.add(existing)
            work.change(existing)
        _count_covered(existing, clipping, work, report)
        return
    folded = fold_spacing_and_bom(clipping.text)
    neighbours = []
    if folded:
        neighbours = library.neighbours(
            book.pk,
            clipping.location_start,
            clipping.location_end,
            clipping.page,
            clipping.position,
            folded,
        )
        # Its words are already in a highlight here: the same passage, selected again (or
        # a version merged before). Alive highlights come first, so a version of one the
        # reader deleted and of one they kept counts as the kept one's. Another device's
        # highlight holds it only when its words are a long run (merging.SHARED_RUN_WORDS).
        located = clipping.location_start is not None
        for neighbour in neighbours:
            if folded in library.folded(neighbour) and (
                (neighbour.location_start is not None) == located or long_run(folded)
            ):
                _count_covered(neighbour, clipping, work, report)
                return
    if work.purged and work.purged.deleted_on_device(
        book_key=book.key, dedupe_key=key, text=clipping.text, added_at=clipping.added_at
    ):
        # The reader deleted it on the device; this is an older copy of it.
        report.deleted_on_device += 1
        return
    if work.purged and work.purged.holds(book_key=book.key, dedupe_key=key, text=clipping.text):
        # Deleted, then removed for good: it stays gone, as a deleted one does (above).
        report.already_deleted += 1
        return
    highlight = _new_highlight(
        book=book, the_import=the_import, clipping=clipping, key=key, kind=Highlight.Kind.HIGHLIGHT
    )
    library.add(highlight)
    work.created[id(highlight)] = highlight
    work.origins[id(highlight)] = Version(clipping.text, _where(clipping), clipping.added_at)
    if neighbours:
        highlight_settle(highlight, library, work, report)


def _count_covered(
    highlight: Highlight, clipping: Clipping, work: ImportWork, report: ImportReport
) -> None:
    work.covered.add(id(highlight))
    if highlight.pk and highlight.deleted_at is None:
        work.held_by.setdefault(id(clipping), highlight.pk)
    if highlight.deleted_at is not None:
        report.deleted_skipped += 1
    else:
        report.duplicates_skipped += 1


def _where(clipping: Clipping) -> str:
    if clipping.location_start is not None:
        end = clipping.location_end
        single = end is None or end == clipping.location_start
        where = f"location {clipping.location_start}" + ("" if single else f"-{end}")
    else:
        where = f"page {clipping.page}" if clipping.page else ""
    return where[:64]


def _attach_notes(
    notes: list[Clipping],
    books: dict[str, Book],
    library: Library,
    work: ImportWork,
    report: ImportReport,
    the_import: Import,
) -> None:
    """Each note goes to its highlight; a note with none is kept on its own."""
    for clipping in notes:
        book = books[book_key_of(clipping)]
        work.touched.add(book.pk)
        target = note_target(library, book, clipping)
        if target is None and note_with_deleted(library, book, clipping):
            # The note was on a highlight the reader deleted (one by one, or with its book
            # or its import): it goes with it, not back as a note of its own.
            report.deleted_skipped += 1
            continue
        # An Exogram export lists its tags: a hashtag in its note is not one more.
        hashtags = not (isinstance(clipping, RichClipping) and clipping.tags_listed)
        if target is None:
            key = _clipping_key(book, clipping, Highlight.Kind.NOTE)
            if key in library.keys:
                report.duplicates_skipped += 1
                continue
            if work.purged and work.purged.holds_note(
                book_key=book.key, dedupe_key=key, text=clipping.text
            ):
                report.already_deleted += 1
                continue
            note = _new_highlight(
                book=book,
                the_import=the_import,
                clipping=clipping,
                key=key,
                kind=Highlight.Kind.NOTE,
            )
            library.add(note)
            work.created[id(note)] = note
            report.standalone_notes += 1
            if hashtags:
                work.notes_brought.append((note, clipping.text, ""))
            continue
        before = target.note
        if not note_attach(target, clipping):
            # The note the highlight holds already: its hashtags were read when it came.
            report.duplicates_skipped += 1
            continue
        report.notes_attached += 1
        work.change(target)
        if hashtags:
            work.notes_brought.append((target, clipping.text, before))


def _notes_brought(work: ImportWork, the_import: Import) -> list[tuple[int, str, str]]:
    """`work.notes_brought` that name a hashtag, by the highlights' ids, once the rows are
    written (COPY gives no ids back: a new row's is read by its unique key)."""
    tagging = [
        (h, words, before) for h, words, before in work.notes_brought if note_hashtags(words)
    ]
    new = [h.dedupe_key for h, _, _ in tagging if not h.pk]
    new_ids = dict(
        Highlight.objects.filter(source_import=the_import, dedupe_key__in=new).values_list(
            "dedupe_key", "pk"
        )
        if new
        else []
    )
    brought = [(h.pk or new_ids.get(h.dedupe_key), words, before) for h, words, before in tagging]
    return [(pk, words, before) for pk, words, before in brought if pk is not None]


_INSTANT = timedelta(microseconds=1)


def _keep_deleted(
    books: dict[str, Book],
    library: Library,
    work: ImportWork,
    report: ImportReport,
    the_import: Import,
) -> None:
    """An Exogram export's highlights its reader deleted stay deleted here, with their date
    and everything of the reader's on them, so that a device's file that still holds one
    does not bring it back (it is a version of a deleted highlight, as in the account the
    export came from). Never merged with another: there it was a highlight of its own. One
    this library already holds (alive or deleted: the same entry, or its words in a
    highlight), or that was removed for good here, adds nothing."""
    for clipping in work.deleted_entries:
        book = books[book_key_of(clipping)]
        kind = Highlight.Kind.NOTE if clipping.kind == "note" else Highlight.Kind.HIGHLIGHT
        key = _clipping_key(book, clipping, kind)
        if key in library.keys or _held_by_neighbour(library, book, clipping):
            continue
        purged = work.purged
        if purged and (
            purged.holds_note(book_key=book.key, dedupe_key=key, text=clipping.text)
            if kind == Highlight.Kind.NOTE
            else purged.holds(book_key=book.key, dedupe_key=key, text=clipping.text)
        ):
            report.already_deleted += 1
            continue
        highlight = _new_highlight(
            book=book, the_import=the_import, clipping=clipping, key=key, kind=kind
        )
        # Deleted before this import began (an export's date past it is a wrong clock): so
        # the report never offers it back as one deleted since (books.services).
        deleted_at = clipping.deleted_at or the_import.started_at  # always given: the parser's
        highlight.deleted_at = min(deleted_at, the_import.started_at - _INSTANT)
        highlight.note, highlight.note_added_at = clipping.note.strip(), clipping.note_added_at
        highlight.note_edited, highlight.note_edited_at = (
            clipping.note_edited,
            clipping.note_edited_at,
        )
        highlight.favourite = clipping.favourite
        highlight.chapter, highlight.colour = clipping.chapter[:500], clipping.colour[:32]
        library.add(highlight)
        work.kept_deleted.append(highlight)
        report.deleted_kept += 1


def _held_by_neighbour(library: Library, book: Book, clipping: Clipping) -> bool:
    """Whether a highlight here already holds every word of this entry (as `_match_clipping`
    finds a passage selected again)."""
    return holder_near(library, book.pk, clipping) is not None


# The columns an import may change on an existing highlight, all read by the library index
# (a column bulk_update writes but the rows were read without costs a query per row); on
# the rows whose words changed, their vectors too (versions.VECTORS_RESET).
_UPDATED_FIELDS = [
    "text", "page", "location_start", "location_end", "position", "added_at", "added_raw",
    "dedupe_key", "note", "note_added_at", "search_text", "is_word", "language", "reading_key",
]  # fmt: skip


def _write_rows(work: ImportWork, the_import: Import) -> None:
    created = list(work.created.values())
    for highlight in [*created, *work.kept_deleted, *work.changed.values()]:
        highlight.refresh_search_text()
        highlight.refresh_reading_key()
    highlights_copy([*created, *work.kept_deleted])
    if work.changed:
        Highlight.objects.bulk_update(list(work.changed.values()), _UPDATED_FIELDS, batch_size=1000)
    if work.reembed:
        Highlight.objects.filter(pk__in=work.reembed).update(**VECTORS_RESET)
    _record_merges(work, the_import, created)


def _record_merges(work: ImportWork, the_import: Import, created: list[Highlight]) -> None:
    """One row per merged entry, for the import report: what went into which highlight."""
    if not work.merges:
        return
    # COPY gives no ids back: the new highlights' are read by their (unique) keys.
    new_ids = dict(
        Highlight.objects.filter(source_import=the_import).values_list("dedupe_key", "pk")
    )
    by_identity = {id(h): h for h in [*created, *work.changed.values()]}
    rows: list[HighlightMerge] = []
    for identity, versions in work.merges.items():
        highlight = by_identity.get(identity)
        if highlight is None:
            continue
        pk = highlight.pk or new_ids[highlight.dedupe_key]
        rows.extend(
            HighlightMerge(
                reader_id=the_import.reader_id,
                source_import=the_import,
                highlight_id=pk,
                how=how.value,
                merged_text=version.text,
                where=version.where,
                added_at=version.added_at,
            )
            for how, version in versions
        )
    HighlightMerge.objects.bulk_create(rows, batch_size=1000)


def _drop_books_left_empty(books: dict[str, Book], work: ImportWork, report: ImportReport) -> None:
    """A book this import made for entries that were all removed for good goes again: it
    would sit in the library with nothing in it. (A book it did not make has a highlight.)"""
    empty = Book.objects.filter(pk__in=[b.pk for b in books.values()]).exclude(
        Exists(Highlight.objects.filter(book=OuterRef("pk")))
    )
    gone = set(empty.values_list("pk", flat=True))
    if not gone:
        return
    Book.objects.filter(pk__in=gone).delete()
    for key in [key for key, book in books.items() if book.pk in gone]:
        del books[key]
    work.touched -= gone
    report.new_books -= len(gone)


def _finish_report(
    the_import: Import, report: ImportReport, books: dict[str, Book], work: ImportWork
) -> set[int]:
    """Write the report; returns the books the import changed (`books_changed`)."""
    report.new_highlights = sum(
        1 for h in work.created.values() if h.kind == Highlight.Kind.HIGHLIGHT
    )
    truncated_books = {b.pk for b in books.values() if work.truncated[b.title]}
    report.books_touched = len(work.touched | truncated_books)
    titles = {b.title for b in books.values() if b.pk in work.touched | truncated_books}
    report.book_titles = sorted(titles, key=str.casefold)[:BOOK_TITLES_KEPT]
    changed_books = {h.book_id for h in [*work.created.values(), *work.changed.values()]}
    changed_books |= work.moved_in
    report.books_changed = len(changed_books)
    changed_titles = {b.title for b in books.values() if b.pk in changed_books}
    report.changed_titles = sorted(changed_titles, key=str.casefold)[:BOOK_TITLES_KEPT]
    report.truncated_by_book = dict(sorted(work.truncated.items()))
    the_import.counts = {k: v for k, v in report.as_dict().items() if k != "problems"}
    the_import.problems = report.problems
    the_import.status = Import.Status.DONE
    the_import.finished_at = timezone.now()
    the_import.save(update_fields=["counts", "problems", "status", "finished_at"])
    return changed_books


def _enqueue_embedding(the_import: Import, work: ImportWork, *, send: bool = True) -> None:
    changed_words = [
        h.pk
        for h in work.changed.values()
        if h.embedding_status == Highlight.EmbeddingStatus.PENDING and h.deleted_at is None
    ]
    # Changed words: the old vectors, and the connections found with them, are void.
    connections_forget(ids=changed_words)
    if not send:
        return  # the caller sends them (books.importing.background, once per file)
    new_ids = list(
        Highlight.objects.filter(source_import=the_import, deleted_at__isnull=True).values_list(
            "pk", flat=True
        )
    )
    to_embed = new_ids + changed_words + work.embed_again
    # Several tasks, not one: with more than one worker process they share the work. Sent
    # after commit; a broker that is down leaves them saved and marked as delayed.
    if to_embed:
        transaction.on_commit(partial(announce, highlights_to_embed, ids=to_embed))


def _clipping_key(book: Book, clipping: Clipping, kind: str) -> str:
    return highlight_dedupe_key(
        book_key=book.key,
        kind=kind,
        page=clipping.page or "",
        start=clipping.location_start,
        end=clipping.location_end,
        text=clipping.text,
    )


# The columns COPY writes, in order. COPY rather than bulk_create: for 10,000 highlights
# Django's INSERT building and psycopg's parameter handling took ~10x the database's time.
def _new_highlight(
    *, book: Book, the_import: Import, clipping: Clipping, key: str, kind: str
) -> Highlight:
    highlight = Highlight(
        reader_id=book.reader_id,
        book=book,
        source_import=the_import,
        kind=kind,
        text=clipping.text,
        page=(clipping.page or "")[:32],
        location_start=clipping.location_start,
        location_end=clipping.location_end,
        position=clipping.position if len(clipping.position) <= 500 else "",
        added_at=clipping.added_at,
        added_raw=clipping.added_raw[:200],
        dedupe_key=key,
    )
    highlight.refresh_is_word()
    highlight.refresh_language()
    return highlight
