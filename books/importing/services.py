"""The import workflow: a parsed file becomes the reader's books and highlights.

One transaction per file; books matched by normalized title and author, highlights by a
stable dedupe key, versions of one passage merged, notes attached, an Import recording what
happened. New rows go in with COPY; their embedding is enqueued after commit.
"""

import hashlib
import logging
import re
from bisect import bisect_right, insort
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import User
from books.connections.services import connections_forget
from books.embedding.pipeline import EMBED_TASK_SIZE
from books.importing.clippings import (
    Clipping,
    ParseResult,
    is_utf16,
    normalize_author,
    normalize_title,
    parse_clippings,
)
from books.models import Book, Highlight, Import

logger = logging.getLogger(__name__)

# A note belongs to the highlight that contains its location or, failing that, to the
# nearest highlight that ends at most this many locations before it.
NOTE_REACH = 10
# Extended highlights are found among ranges that overlap or touch: 120-125 and 126-130.
ADJACENT = 1
# Two versions of one highlight share at least this share of the shorter one's words.
SAME_HIGHLIGHT_OVERLAP = 0.6

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
_BINARY_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


class ImportRejected(Exception):
    """The file is not something we can import; nothing was written."""


@dataclass
class ImportReport:
    books_touched: int = 0
    new_highlights: int = 0
    duplicates_skipped: int = 0
    extended_merged: int = 0
    notes_attached: int = 0
    standalone_notes: int = 0
    bookmarks_skipped: int = 0
    deleted_skipped: int = 0
    truncated_by_book: dict[str, int] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fold(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def _book_key(clipping: Clipping) -> str:
    return _book_key_of(clipping.title, clipping.author)


@lru_cache(maxsize=4096)
def _book_key_of(title: str, author: str) -> str:
    # Cached: a file names the same few hundred books over and over.
    return f"{normalize_title(title)}\x1f{normalize_author(author)}"[:600]


def highlight_dedupe_key(
    *, book_key: str, kind: str, page: str, start: int | None, end: int | None, text: str
) -> str:
    """Stable across imports: the same entry in two files gives the same key."""
    where = f"{start}-{end}" if start is not None else f"p{page}"
    raw = f"{book_key}\x1f{kind}\x1f{where}\x1f{_fold(text)}"
    return hashlib.sha256(raw.encode()).hexdigest()


def _same_highlight(a: str, b: str) -> bool:
    """One text contains the other, or they share most words (a re-selected passage)."""
    fa, fb = _fold(a), _fold(b)
    if not fa or not fb:
        return False
    if fa in fb or fb in fa:
        return True
    wa, wb = _words(fa), _words(fb)
    shorter = min(len(wa), len(wb))
    return shorter > 0 and len(wa & wb) / shorter >= SAME_HIGHLIGHT_OVERLAP


def check_upload(data: bytes) -> None:
    """Refuse what is not a clippings file before anything is parsed or written."""
    limit_mb: int = settings.EXOGRAM_MAX_UPLOAD_MB
    if len(data) > limit_mb * 1024 * 1024:
        raise ImportRejected(
            f"The file is {len(data) / 1024 / 1024:.1f} MB; the limit is {limit_mb} MB."
        )
    if not data.strip(b" \t\r\n\xef\xbb\xbf\x00"):
        raise ImportRejected("The file is empty: there is nothing to import.")
    utf16 = is_utf16(data)
    sample = data[:8192]
    if not utf16 and (b"\x00" in sample or len(_BINARY_CONTROL.findall(sample)) > 8):
        raise ImportRejected(
            "This looks like a binary file, not a text file. Upload the 'My Clippings.txt' "
            "file from your Kindle's documents folder."
        )


def _parse_or_reject(data: bytes) -> ParseResult:
    check_upload(data)
    result = parse_clippings(data)
    if not result.clippings:
        if result.problems:
            first = result.problems[0]
            raise ImportRejected(
                "No clipping in this file could be read "
                f"({len(result.problems)} problem(s); the first, at line {first.line}: "
                f"{first.message})."
            )
        raise ImportRejected(
            "This is not a Kindle clippings file: no entries separated by '==========' lines "
            "were found."
        )
    return result


class _Library:
    """The reader's highlights of the touched books, indexed for merging and notes."""

    def __init__(self, reader: User, books: dict[str, Book]) -> None:
        self.keys: dict[str, Highlight] = {}
        # per book: sorted location starts, and the highlight at each position
        self._starts: dict[int, list[tuple[int, int]]] = {}
        self._by_pk: dict[int, Highlight] = {}
        self._pages: dict[int, dict[str, list[Highlight]]] = {}
        # The longest range per book bounds how far back an overlapping one can start.
        self._longest: dict[int, int] = {}
        self._serial = 0
        by_pk = {book.pk: book for book in books.values()}
        # Only what merging and notes read: not the vectors (384 floats a row), not the
        # search copy, and fewer timestamps to parse.
        existing = Highlight.objects.filter(reader=reader, book__in=list(by_pk)).only(
            "reader_id", "book_id", "kind", "text", "note", "note_edited", "note_added_at",
            "page", "location_start", "location_end", "added_at", "dedupe_key", "deleted_at",
            "embedding_status",
        )  # fmt: skip
        for highlight in existing:
            # The book is at hand: refresh_search_text() must not fetch it row by row.
            highlight.book = by_pk[highlight.book_id]
            self.add(highlight)

    def add(self, highlight: Highlight) -> None:
        self.keys[highlight.dedupe_key] = highlight
        if highlight.kind != Highlight.Kind.HIGHLIGHT:
            return
        self._serial += 1
        self._by_pk[self._serial] = highlight
        if highlight.location_start is not None:
            starts = self._starts.setdefault(highlight.book_id, [])
            insort(starts, (highlight.location_start, self._serial))
            length = (highlight.location_end or highlight.location_start) - highlight.location_start
            self._longest[highlight.book_id] = max(self._longest.get(highlight.book_id, 0), length)
        elif highlight.page:
            pages = self._pages.setdefault(highlight.book_id, {})
            pages.setdefault(highlight.page, []).append(highlight)

    def rekey(self, highlight: Highlight, old_key: str) -> None:
        self.keys.pop(old_key, None)
        self.keys[highlight.dedupe_key] = highlight

    def near(self, book_id: int, start: int, end: int, reach_before: int = 0) -> list[Highlight]:
        """Highlights of a book whose range overlaps [start - reach_before, end]."""
        starts = self._starts.get(book_id, [])
        index = bisect_right(starts, (end, 1 << 62))
        found = []
        while index > 0:
            index -= 1
            cand_start, serial = starts[index]
            if cand_start < start - reach_before - self._longest.get(book_id, 0):
                break
            cand = self._by_pk[serial]
            cand_end = cand.location_end or cand_start
            if cand_end >= start - reach_before:
                found.append(cand)
        return found

    def on_page(self, book_id: int, page: str) -> list[Highlight]:
        return self._pages.get(book_id, {}).get(page, [])


def _newer(a: datetime | None, b: datetime | None) -> bool:
    return a is not None and (b is None or a >= b)


def clippings_import(*, reader: User, data: bytes, file_name: str) -> Import:
    """Import a clippings file for a reader: one transaction, idempotent, lossless.

    Raises ImportRejected (nothing written) for input that is not a clippings file. A
    failure while writing rolls everything back and leaves a failed Import saying why.
    """
    result = _parse_or_reject(data)
    sha256 = hashlib.sha256(data).hexdigest()
    try:
        with transaction.atomic():
            the_import = _import_parsed(
                reader=reader, result=result, file_name=file_name, sha256=sha256
            )
    except Exception as error:
        logger.exception("import of %s for %s failed", file_name, reader)
        Import.objects.create(
            reader=reader,
            file_name=file_name,
            sha256=sha256,
            status=Import.Status.FAILED,
            error=f"The import failed and nothing was saved: {error}",
            finished_at=timezone.now(),
        )
        raise
    return the_import


def _import_parsed(*, reader: User, result: ParseResult, file_name: str, sha256: str) -> Import:
    the_import = Import.objects.create(reader=reader, file_name=file_name[:255], sha256=sha256)
    report = ImportReport(
        problems=[{"line": p.line, "message": p.message} for p in result.problems]
    )
    books = _books_for(reader, result.clippings)
    library = _Library(reader, books)
    work = _ImportWork()
    notes = _match_highlights(result.clippings, books, library, work, report, the_import)
    _attach_notes(notes, books, library, work, report, the_import)
    _write_rows(work)
    _finish_report(the_import, report, books, work)
    _enqueue_embedding(the_import, work)
    return the_import


@dataclass
class _ImportWork:
    """What one import changes: rows to insert, rows to update, books it touched."""

    created: list[Highlight] = field(default_factory=list)
    changed: dict[int, Highlight] = field(default_factory=dict)  # existing rows, by pk
    touched: set[int] = field(default_factory=set)
    truncated: Counter[str] = field(default_factory=Counter)

    def change(self, highlight: Highlight) -> None:
        if highlight.pk:
            self.changed[highlight.pk] = highlight


def _match_highlights(
    clippings: list[Clipping],
    books: dict[str, Book],
    library: _Library,
    work: _ImportWork,
    report: ImportReport,
    the_import: Import,
) -> list[Clipping]:
    """Match each highlight clipping to the library: new, duplicate or a version of one.

    Returns the notes, which attach once every highlight of the file is known.
    """
    notes: list[Clipping] = []
    for clipping in clippings:
        if clipping.location_end is not None and clipping.location_end < (
            clipping.location_start or 0
        ):
            # Never seen on a device, but a reversed range must not sink the whole import.
            clipping = replace(
                clipping, location_start=clipping.location_end, location_end=clipping.location_start
            )
        book = books[_book_key(clipping)]
        if clipping.kind == "bookmark":
            report.bookmarks_skipped += 1
            continue
        if clipping.truncated:
            work.truncated[book.title] += 1
            continue
        if clipping.kind == "note":
            notes.append(clipping)
            continue
        work.touched.add(book.pk)
        key = _clipping_key(book, clipping, Highlight.Kind.HIGHLIGHT)
        existing = library.keys.get(key)
        if existing is not None:
            if existing.deleted_at is not None:
                report.deleted_skipped += 1
            else:
                report.duplicates_skipped += 1
            continue
        twin = _find_version(library, book, clipping)
        if twin is not None:
            if twin.deleted_at is not None:
                report.deleted_skipped += 1
            elif _replace_version(twin, clipping, key, library):
                report.extended_merged += 1
                work.change(twin)
            else:
                report.duplicates_skipped += 1
            continue
        highlight = _new_highlight(
            book=book,
            the_import=the_import,
            clipping=clipping,
            key=key,
            kind=Highlight.Kind.HIGHLIGHT,
        )
        library.add(highlight)
        work.created.append(highlight)
    return notes


def _attach_notes(
    notes: list[Clipping],
    books: dict[str, Book],
    library: _Library,
    work: _ImportWork,
    report: ImportReport,
    the_import: Import,
) -> None:
    """Each note goes to its highlight; a note with none is kept on its own."""
    for clipping in notes:
        book = books[_book_key(clipping)]
        work.touched.add(book.pk)
        target = _note_target(library, book, clipping)
        if target is None:
            key = _clipping_key(book, clipping, Highlight.Kind.NOTE)
            if key in library.keys:
                report.duplicates_skipped += 1
                continue
            note = _new_highlight(
                book=book,
                the_import=the_import,
                clipping=clipping,
                key=key,
                kind=Highlight.Kind.NOTE,
            )
            library.add(note)
            work.created.append(note)
            report.standalone_notes += 1
        elif _attach_note(target, clipping):
            report.notes_attached += 1
            work.change(target)
        else:
            report.duplicates_skipped += 1


# The columns an import may change on an existing highlight.
_UPDATED_FIELDS = [
    "text", "page", "location_start", "location_end", "added_at", "added_raw", "dedupe_key",
    "note", "note_added_at", "search_text", "embedding", "embedding_model", "embedding_status",
    "embedding_claimed_at", "embedding_error",
]  # fmt: skip


def _write_rows(work: _ImportWork) -> None:
    for highlight in [*work.created, *work.changed.values()]:
        highlight.refresh_search_text()
    _copy_highlights(work.created)
    if work.changed:
        Highlight.objects.bulk_update(list(work.changed.values()), _UPDATED_FIELDS, batch_size=1000)


def _finish_report(
    the_import: Import, report: ImportReport, books: dict[str, Book], work: _ImportWork
) -> None:
    report.new_highlights = sum(1 for h in work.created if h.kind == Highlight.Kind.HIGHLIGHT)
    truncated_books = {b.pk for b in books.values() if work.truncated[b.title]}
    report.books_touched = len(work.touched | truncated_books)
    report.truncated_by_book = dict(sorted(work.truncated.items()))
    the_import.counts = {k: v for k, v in report.as_dict().items() if k != "problems"}
    the_import.problems = report.problems
    the_import.status = Import.Status.DONE
    the_import.finished_at = timezone.now()
    the_import.save(update_fields=["counts", "problems", "status", "finished_at"])


def _enqueue_embedding(the_import: Import, work: _ImportWork) -> None:
    from books.tasks import embed_highlights

    changed_words = [
        h.pk
        for h in work.changed.values()
        if h.embedding_status == Highlight.EmbeddingStatus.PENDING
    ]
    # Changed words: the old vectors, and the connections found with them, are void.
    connections_forget(ids=changed_words)
    new_ids = list(Highlight.objects.filter(source_import=the_import).values_list("pk", flat=True))
    to_embed = new_ids + changed_words
    # Several tasks, not one: with more than one worker process they share the work.
    for start in range(0, len(to_embed), EMBED_TASK_SIZE):
        # celery-types does not know DjangoTask, the app's task class, which adds this.
        embed_highlights.delay_on_commit(to_embed[start : start + EMBED_TASK_SIZE])  # type: ignore[attr-defined]


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
_COPY_COLUMNS = [
    "reader_id", "book_id", "source_import_id", "code", "kind", "text", "note", "note_edited",
    "note_added_at", "page", "location_start", "location_end", "added_at", "added_raw",
    "dedupe_key", "favourite", "search_text", "embedding_model", "embedding_status",
    "embedding_error", "created", "updated",
]  # fmt: skip


def _copy_highlights(highlights: list[Highlight]) -> None:
    """Insert new highlights with COPY. Their ids are read back by import afterwards."""
    if not highlights:
        return
    now = timezone.now()
    table = Highlight._meta.db_table
    copy_sql = f"COPY {table} ({', '.join(_COPY_COLUMNS)}) FROM STDIN"
    # wrap_database_errors: psycopg's errors become Django's, as with any ORM call.
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(copy_sql) as copy,
    ):
        for h in highlights:
            copy.write_row(
                (
                    h.reader_id, h.book_id, h.source_import_id, h.code, h.kind, h.text,
                    h.note, h.note_edited, h.note_added_at, h.page, h.location_start,
                    h.location_end, h.added_at, h.added_raw, h.dedupe_key, h.favourite,
                    h.search_text, h.embedding_model, h.embedding_status,
                    h.embedding_error, now, now,
                )
            )  # fmt: skip


def _books_for(reader: User, clippings: list[Clipping]) -> dict[str, Book]:
    wanted: dict[str, Clipping] = {}
    for clipping in clippings:
        wanted.setdefault(_book_key(clipping), clipping)
    books = {b.key: b for b in Book.objects.filter(reader=reader, key__in=list(wanted))}
    missing = [
        Book(
            reader=reader,
            key=key,
            title=c.title.strip()[:1000] or "Untitled",
            authors=c.author.strip()[:1000],
            authors_normalized=normalize_author(c.author)[:1000],
        )
        for key, c in wanted.items()
        if key not in books
    ]
    for book in Book.objects.bulk_create(missing):
        books[book.key] = book
    return books


def _new_highlight(
    *, book: Book, the_import: Import, clipping: Clipping, key: str, kind: str
) -> Highlight:
    return Highlight(
        reader_id=book.reader_id,
        book=book,
        source_import=the_import,
        kind=kind,
        text=clipping.text,
        page=(clipping.page or "")[:32],
        location_start=clipping.location_start,
        location_end=clipping.location_end,
        added_at=clipping.added_at,
        added_raw=clipping.added_raw[:200],
        dedupe_key=key,
    )


def _find_version(library: _Library, book: Book, clipping: Clipping) -> Highlight | None:
    """Another version of the same passage: an extended or re-selected highlight."""
    if clipping.location_start is not None:
        end = clipping.location_end or clipping.location_start
        candidates = library.near(book.pk, clipping.location_start - ADJACENT, end + ADJACENT)
    elif clipping.page:
        candidates = library.on_page(book.pk, clipping.page)
    else:
        return None
    for candidate in candidates:
        if _same_highlight(candidate.text, clipping.text):
            return candidate
    return None


def _replace_version(highlight: Highlight, clipping: Clipping, key: str, library: _Library) -> bool:
    """Keep the longest version (the newest when equally long). True when it changed."""
    longer = len(_fold(clipping.text)) > len(_fold(highlight.text))
    same_length_newer = len(_fold(clipping.text)) == len(_fold(highlight.text)) and _newer(
        clipping.added_at, highlight.added_at
    )
    if not (longer or same_length_newer) or _fold(clipping.text) == _fold(highlight.text):
        return False
    old_key = highlight.dedupe_key
    highlight.text = clipping.text
    highlight.page = (clipping.page or "")[:32]
    highlight.location_start = clipping.location_start
    highlight.location_end = clipping.location_end
    highlight.added_at = clipping.added_at
    highlight.added_raw = clipping.added_raw[:200]
    highlight.dedupe_key = key
    # New words mean a new vector: the embedding pipeline picks it up again.
    highlight.embedding = None
    highlight.embedding_model = ""
    highlight.embedding_status = Highlight.EmbeddingStatus.PENDING
    highlight.embedding_claimed_at = None
    highlight.embedding_error = ""
    library.rekey(highlight, old_key)
    return True


def _note_target(library: _Library, book: Book, clipping: Clipping) -> Highlight | None:
    if clipping.location_start is None:
        if clipping.page:
            on_page = [h for h in library.on_page(book.pk, clipping.page) if h.deleted_at is None]
            return on_page[-1] if on_page else None
        return None
    where = clipping.location_end or clipping.location_start
    candidates = [
        h
        for h in library.near(book.pk, where, where, reach_before=NOTE_REACH)
        if h.deleted_at is None
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


def _attach_note(highlight: Highlight, clipping: Clipping) -> bool:
    """Attach a note unless the reader edited theirs here or it is already there."""
    text = clipping.text.strip()
    if highlight.note_edited or _fold(highlight.note) == _fold(text):
        return False
    if highlight.note and not _newer(clipping.added_at, highlight.note_added_at):
        return False
    highlight.note = text
    highlight.note_added_at = clipping.added_at
    return True
