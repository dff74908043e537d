"""Workflows that span models, files and tasks: importing clippings, embedding highlights.

books.embedding (onnxruntime, numpy) is imported inside the embedding functions: the web
processes that only import and read never load the model's runtime.
"""

import hashlib
import logging
import re
from bisect import bisect_right, insort
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from books.clippings import (
    Clipping,
    ParseResult,
    normalize_author,
    normalize_title,
    parse_clippings,
)
from books.models import Book, Connection, Highlight, Import, Tag

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
    utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
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
    from books.tasks import embed_highlights

    report = ImportReport(
        problems=[{"line": p.line, "message": p.message} for p in result.problems]
    )
    the_import = Import.objects.create(reader=reader, file_name=file_name[:255], sha256=sha256)

    books = _books_for(reader, result.clippings)
    library = _Library(reader, books)
    touched: set[int] = set()
    created: list[Highlight] = []
    changed: dict[int, Highlight] = {}  # existing rows to update, by pk
    truncated: Counter[str] = Counter()
    notes: list[Clipping] = []

    for clipping in result.clippings:
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
            truncated[book.title] += 1
            continue
        if clipping.kind == "note":
            notes.append(clipping)
            continue
        touched.add(book.pk)
        key = highlight_dedupe_key(
            book_key=book.key,
            kind=Highlight.Kind.HIGHLIGHT,
            page=clipping.page or "",
            start=clipping.location_start,
            end=clipping.location_end,
            text=clipping.text,
        )
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
                if twin.pk:
                    changed[twin.pk] = twin
            else:
                report.duplicates_skipped += 1
            continue
        highlight = _new_highlight(
            reader,
            book,
            the_import,
            clipping,
            key,
            kind=Highlight.Kind.HIGHLIGHT,
            text=clipping.text,
        )
        library.add(highlight)
        created.append(highlight)

    for clipping in notes:
        book = books[_book_key(clipping)]
        touched.add(book.pk)
        target = _note_target(library, book, clipping)
        if target is None:
            key = highlight_dedupe_key(
                book_key=book.key,
                kind=Highlight.Kind.NOTE,
                page=clipping.page or "",
                start=clipping.location_start,
                end=clipping.location_end,
                text=clipping.text,
            )
            if key in library.keys:
                report.duplicates_skipped += 1
                continue
            note = _new_highlight(
                reader,
                book,
                the_import,
                clipping,
                key,
                kind=Highlight.Kind.NOTE,
                text=clipping.text,
            )
            library.add(note)
            created.append(note)
            report.standalone_notes += 1
        elif _attach_note(target, clipping):
            report.notes_attached += 1
            if target.pk:
                changed[target.pk] = target
        else:
            report.duplicates_skipped += 1

    for highlight in [*created, *changed.values()]:
        highlight.refresh_search_text()
    _copy_highlights(created)
    if changed:
        Highlight.objects.bulk_update(
            list(changed.values()),
            [
                "text",
                "page",
                "location_start",
                "location_end",
                "added_at",
                "added_raw",
                "dedupe_key",
                "note",
                "note_added_at",
                "search_text",
                "embedding",
                "embedding_model",
                "embedding_status",
                "embedding_claimed_at",
                "embedding_error",
            ],
            batch_size=1000,
        )

    report.new_highlights = sum(1 for h in created if h.kind == Highlight.Kind.HIGHLIGHT)
    report.books_touched = len(touched | {b.pk for b in books.values() if truncated[b.title]})
    report.truncated_by_book = dict(sorted(truncated.items()))
    the_import.counts = {k: v for k, v in report.as_dict().items() if k != "problems"}
    the_import.problems = report.problems
    the_import.status = Import.Status.DONE
    the_import.finished_at = timezone.now()
    the_import.save(update_fields=["counts", "problems", "status", "finished_at"])

    # Changed words: the old vectors, and the connections found with them, are void.
    connections_forget(
        ids=[
            h.pk
            for h in changed.values()
            if h.embedding_status == Highlight.EmbeddingStatus.PENDING
        ]
    )
    new_ids = list(Highlight.objects.filter(source_import=the_import).values_list("pk", flat=True))
    to_embed = new_ids + [
        h.pk for h in changed.values() if h.embedding_status == Highlight.EmbeddingStatus.PENDING
    ]
    # Several tasks, not one: with more than one worker process they share the work.
    for start in range(0, len(to_embed), EMBED_TASK_SIZE):
        # celery-types does not know DjangoTask, the app's task class, which adds this.
        embed_highlights.delay_on_commit(to_embed[start : start + EMBED_TASK_SIZE])  # type: ignore[attr-defined]
    return the_import


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
    reader: User,
    book: Book,
    the_import: Import,
    clipping: Clipping,
    key: str,
    *,
    kind: str,
    text: str,
) -> Highlight:
    return Highlight(
        reader=reader,
        book=book,
        source_import=the_import,
        kind=kind,
        text=text,
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


# --- Embedding ----------------------------------------------------------------------------

# Highlights per embedding task: small enough for workers to share a large import, large
# enough that the per-task overhead stays small.
EMBED_TASK_SIZE = 256

# Highlights are claimed and written in sub-batches this small so that no write lock is
# held for long. The task's texts are encoded in one call between the two: the encoder
# sorts them by length, and encoding sub-batches of 16 one by one ran at half the speed
# (82 against 183 texts/s, measured on the benchmark's library).
EMBED_BATCH = 16
# A claim older than this belongs to a worker that died: the sweep hands it out again.
STALE_CLAIM = timedelta(minutes=5)


def _needs_embedding(model_id: str, now: datetime) -> Q:
    status = Highlight.EmbeddingStatus
    return Q(deleted_at__isnull=True) & (
        Q(embedding_status=status.PENDING)
        | (Q(embedding_status=status.DONE) & ~Q(embedding_model=model_id))
        | Q(embedding_status=status.CLAIMED, embedding_claimed_at__lt=now - STALE_CLAIM)
    )


def _claim(ids: list[int], model_id: str) -> tuple[datetime, list[Highlight]]:
    """Claim the highlights among `ids` that still need a vector from this model.

    Two workers given the same ids (a retry, a sweep, a duplicate delivery) race here:
    FOR UPDATE lets only one take each row, and the loser, once the winner's claim
    commits, finds the row claimed and leaves it. Not SKIP LOCKED: with two worker
    processes it skipped about 4% of the rows of a 10,000-highlight import that no other
    worker was claiming, and they waited for the next sweep. Rows are locked in id order,
    so two claims of overlapping batches cannot deadlock.
    """
    now = timezone.now()
    with transaction.atomic():
        rows = list(
            Highlight.objects.select_for_update()
            .filter(_needs_embedding(model_id, now), pk__in=ids)
            .order_by("pk")
            .only("pk", "reader_id", "text", "note")
        )
        Highlight.objects.filter(pk__in=[h.pk for h in rows]).update(
            embedding_status=Highlight.EmbeddingStatus.CLAIMED, embedding_claimed_at=now
        )
    return now, rows


def _fail_empty(rows: list[Highlight]) -> list[Highlight]:
    """Mark the claimed highlights with no text as failed; returns the others."""
    empty = [h.pk for h in rows if not (h.text or h.note).strip()]
    if empty:
        Highlight.objects.filter(pk__in=empty).update(
            embedding_status=Highlight.EmbeddingStatus.FAILED,
            embedding_claimed_at=None,
            embedding_error="There is no text to embed.",
        )
    return [h for h in rows if h.pk not in empty]


def _release(rows: list[Highlight], claimed_at: datetime, reason: str) -> None:
    Highlight.objects.filter(
        pk__in=[h.pk for h in rows],
        embedding_status=Highlight.EmbeddingStatus.CLAIMED,
        embedding_claimed_at=claimed_at,
    ).update(
        embedding_status=Highlight.EmbeddingStatus.PENDING,
        embedding_claimed_at=None,
        embedding_error=reason,
    )


@dataclass
class EmbedOutcome:
    embedded_ids: list[int] = field(default_factory=list)
    skipped: int = 0
    readers: set[int] = field(default_factory=set)

    @property
    def embedded(self) -> int:
        return len(self.embedded_ids)


def highlights_embed(*, ids: list[int]) -> EmbedOutcome:
    """Give each highlight in `ids` that needs one a vector from the current model.

    Idempotent: a highlight already embedded by this model, deleted, or claimed by another
    worker is left alone, so calling this twice changes nothing the second time.
    Raises EncoderUnavailable after leaving the claimed rows pending with the reason.
    """
    from books.embedding import EncoderUnavailable, get_encoder

    outcome = EmbedOutcome()
    try:
        encoder = get_encoder()
    except EncoderUnavailable as error:
        Highlight.objects.filter(pk__in=ids, deleted_at__isnull=True).exclude(
            embedding_status=Highlight.EmbeddingStatus.DONE
        ).update(embedding_error=str(error))
        raise
    claims: list[tuple[datetime, list[Highlight]]] = []
    for start in range(0, len(ids), EMBED_BATCH):
        claimed_at, rows = _claim(ids[start : start + EMBED_BATCH], encoder.model_id)
        outcome.skipped += min(EMBED_BATCH, len(ids) - start) - len(rows)
        rows = _fail_empty(rows)
        if rows:
            claims.append((claimed_at, rows))
    texts = [(h.text or h.note).strip() for _, rows in claims for h in rows]
    try:
        vectors = encoder.encode(texts)
    except Exception as error:
        for claimed_at, rows in claims:
            _release(rows, claimed_at, f"Embedding failed: {error}")
        raise
    done = 0
    for claimed_at, rows in claims:
        batch_vectors = vectors[done : done + len(rows)]
        done += len(rows)
        with transaction.atomic():
            written_ids = _write_vectors(rows, batch_vectors, claimed_at, encoder.model_id)
            outcome.skipped += len(rows) - len(written_ids)
            written = set(written_ids)
            outcome.readers.update(h.reader_id for h in rows if h.pk in written)
            # A new vector makes the old connections of these highlights meaningless; the
            # new ones are found in the same transaction, so a highlight that reads as
            # embedded has its connections too (the import report counts on that).
            connections_forget(ids=written_ids)
            highlights_connect(ids=written_ids)
        outcome.embedded_ids += written_ids
    return outcome


def _write_vectors(
    rows: list[Highlight], vectors: Any, claimed_at: datetime, model_id: str
) -> list[int]:
    """Write a sub-batch's vectors in one statement; returns the ids actually written.

    The guard: only our own, still-current claim is written. A sweep that re-claimed a
    row, a re-import that changed its text, or a delete in the meantime each make the
    row fall out of the WHERE, and it keeps whatever state it has now.
    """
    if not rows:
        return []
    values = ", ".join(["(%s, %s::vector)"] * len(rows))
    params: list[Any] = []
    for highlight, vector in zip(rows, vectors, strict=True):
        params += [highlight.pk, "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"]
    sql = f"""
        UPDATE books_highlight AS h
        SET embedding = v.embedding, embedding_model = %s, embedding_status = 'done',
            embedding_claimed_at = NULL, embedding_error = '', updated = now()
        FROM (VALUES {values}) AS v(id, embedding)
        WHERE h.id = v.id AND h.deleted_at IS NULL AND h.embedding_status = 'claimed'
          AND h.embedding_claimed_at = %s
        RETURNING h.id
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [model_id, *params, claimed_at])
        return [row[0] for row in cursor.fetchall()]


def pending_highlight_ids(*, older_than: timedelta | None = None) -> list[int]:
    """Highlights that need a vector from the current model (for sweeps and embed_pending).

    Without a model (it cannot load) every highlight that is not done counts as pending.
    """
    from books.embedding import EncoderUnavailable, get_encoder

    now = timezone.now()
    try:
        condition = _needs_embedding(get_encoder().model_id, now)
    except EncoderUnavailable:
        condition = Q(deleted_at__isnull=True) & ~Q(embedding_status=Highlight.EmbeddingStatus.DONE)
    queryset = Highlight.objects.filter(condition)
    if older_than is not None:
        # Young pending rows are most likely still queued from their import.
        queryset = queryset.filter(updated__lt=now - older_than)
    return list(queryset.order_by("pk").values_list("pk", flat=True))


def readers_embeddings_changed(*, reader_ids: set[int]) -> None:
    """A batch of a reader's vectors landed: refresh what is derived from them."""
    from affinity.services import centroids_mark_stale

    centroids_mark_stale(reader_ids=reader_ids)


# --- Connections --------------------------------------------------------------------------

# Neighbours kept per highlight when it is embedded. Pairs found from either side are
# stored, so a highlight can end up with more.
CONNECTIONS_PER_HIGHLIGHT = 20


def connection_threshold() -> float:
    """The cosine distance below which two highlights connect: the setting, else the model's."""
    from books.embedding import get_encoder

    override: float | None = settings.EXOGRAM_CONNECTION_THRESHOLD
    return override if override is not None else get_encoder().threshold


def connection_threshold_for_display() -> float | None:
    """The threshold for pages to show, or None when the model cannot load."""
    from books.embedding import EncoderUnavailable

    try:
        return connection_threshold()
    except EncoderUnavailable:
        return None


def highlights_connect(*, ids: list[int]) -> int:
    """Find and store the connections of freshly embedded highlights. Returns pairs added.

    Idempotent: pairs are stored once (lower id first, unique), so running it twice adds
    nothing the second time.
    """
    from books.neighbours import library_size, nearest_highlights

    threshold = connection_threshold()
    highlights = list(
        Highlight.objects.alive()
        .filter(pk__in=ids, embedding_status=Highlight.EmbeddingStatus.DONE)
        .values_list("pk", "reader_id", "book_id", "embedding", "embedding_model")
    )
    sizes: dict[tuple[int, str], int] = {}
    pairs: dict[tuple[int, int], Connection] = {}
    for pk, reader_id, book_id, vector, model_id in highlights:
        size_key = (reader_id, model_id)
        if size_key not in sizes:
            sizes[size_key] = library_size(reader_id=reader_id, model_id=model_id)
        for neighbour in nearest_highlights(
            reader_id=reader_id,
            vector=vector,
            model_id=model_id,
            limit=CONNECTIONS_PER_HIGHLIGHT,
            max_distance=threshold,
            exclude_book_id=book_id,
            size=sizes[size_key],
        ):
            a, b = sorted((pk, neighbour.highlight_id))
            pairs[(a, b)] = Connection(
                reader_id=reader_id,
                highlight_a_id=a,
                highlight_b_id=b,
                distance=neighbour.distance,
                embedding_model=model_id,
            )
    existing = set(
        Connection.objects.filter(
            Q(highlight_a_id__in=ids) | Q(highlight_b_id__in=ids)
        ).values_list("highlight_a_id", "highlight_b_id")
    )
    new = [pair for key, pair in pairs.items() if key not in existing]
    # ignore_conflicts: a worker connecting a neighbour at the same moment may have
    # stored the same pair since the read above.
    Connection.objects.bulk_create(new, ignore_conflicts=True, batch_size=1000)
    return len(new)


def connections_forget(*, ids: list[int]) -> None:
    """Drop the stored connections of highlights whose vector changed or went away."""
    Connection.objects.filter(Q(highlight_a_id__in=ids) | Q(highlight_b_id__in=ids)).delete()


# --- A reader's own changes ---------------------------------------------------------------

# How long a deleted highlight can be brought back from the undo link.
UNDO_WINDOW = timedelta(minutes=30)
TAG_MAX_LENGTH = 64


def highlight_note_update(*, highlight: Highlight, note: str) -> None:
    """The reader's own words: marked edited, so no re-import ever overwrites them."""
    highlight.note = note.strip()
    highlight.note_edited = True
    highlight.refresh_search_text()
    highlight.save(update_fields=["note", "note_edited", "search_text", "updated"])


def highlight_tag(*, highlight: Highlight, name: str) -> Tag:
    clean = " ".join(name.split())[:TAG_MAX_LENGTH].casefold()
    if not clean:
        raise ValueError("A tag needs a name.")
    tag, _ = Tag.objects.get_or_create(reader_id=highlight.reader_id, name=clean)
    highlight.tags.add(tag)
    return tag


def highlight_untag(*, highlight: Highlight, tag: Tag) -> None:
    highlight.tags.remove(tag)
    # A tag that labels nothing any more is not worth keeping in the reader's list.
    if not tag.highlights.exists():
        tag.delete()


def highlight_favourite_toggle(*, highlight: Highlight) -> bool:
    highlight.favourite = not highlight.favourite
    highlight.save(update_fields=["favourite", "updated"])
    return highlight.favourite


def highlight_delete(*, highlight: Highlight) -> None:
    """Soft delete: gone from every read path at once; its dedupe key keeps a re-import
    from bringing it back, and the undo link can restore it for UNDO_WINDOW."""
    highlight.deleted_at = timezone.now()
    highlight.save(update_fields=["deleted_at", "updated"])
    readers_embeddings_changed(reader_ids={highlight.reader_id})


def highlight_restore(*, highlight: Highlight) -> bool:
    """Undo a delete made within UNDO_WINDOW. False when it is too late (or not deleted)."""
    if highlight.deleted_at is None or highlight.deleted_at < timezone.now() - UNDO_WINDOW:
        return False
    highlight.deleted_at = None
    highlight.save(update_fields=["deleted_at", "updated"])
    readers_embeddings_changed(reader_ids={highlight.reader_id})
    return True
