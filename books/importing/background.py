"""Large imports run on a worker: the upload returns at once and the report shows progress.

A 200,000-entry file took longer than the web server's request timeout to import and the
reader got a bare error with nothing saved. A file above IMPORT_INLINE_MAX_BYTES is now
stored with a queued Import; a worker reads and saves it (`import_run`) while the report
page polls its status: waiting for a worker, reading the file (how far, for a Kindle
file read in pieces: ReadingCount), saving (how far: the highlights gone through,
books.importing.saving), done.
"""

import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from functools import partial

from django.db import DatabaseError, Error, connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.models import User
from books.events import announce, highlights_to_embed, import_queued
from books.importing.clippings import (
    NOT_UTF8_FILE,
    Clipping,
    ParseResult,
    Problem,
    parse_clippings,
)
from books.importing.devices import zip_unpacked_bytes
from books.importing.reader_books import (
    book_key_of,
    clippings_follow_merges,
    clippings_orient,
    clippings_unify_authors,
)
from books.importing.saving import SavingProgress
from books.importing.screening import screen_entries
from books.importing.services import BOOK_TITLES_KEPT, IMPORT_FAILED, parsed_clippings_save
from books.importing.untitled import untitled_notes
from books.importing.upload import ImportRejected, check_upload, problems_record, upload_parse
from books.library_cache import library_version_bump
from books.models import Highlight, Import, ImportUpload

logger = logging.getLogger(__name__)

# Files up to this size import within the request: about 10,000 entries, read and saved
# in one to two seconds (bench: `python -m bench import`), so the reader sees the report
# at once and nothing waits on a worker. Larger files go to the background.
IMPORT_INLINE_MAX_BYTES = 2 * 1024 * 1024
# A large file is parsed this many bytes at a time (see parse_in_pieces).
PARSE_PIECE_BYTES = 4 * 1024 * 1024
# At most this many writes of how far the reading of a file in pieces has got (ReadingCount).
READING_WRITES = 50
# A large file is saved this many entries (whole books) at a time: the memory of one part.
IMPORT_PART = 20_000
# A queued import whose task has not started after this long lost its message (the broker
# was down at upload, or restarted): the sweep sends it again.
IMPORT_QUEUED_LEASE = timedelta(minutes=5)
# A reading or saving import untouched this long belonged to a worker that died; its
# transaction rolled back with it, so it starts over.
IMPORT_STALE = timedelta(minutes=20)

# A worker that takes an import this many times without finishing it (killed, out of
# memory, a crash in a parser's C code) will not finish it the next time either.
IMPORT_MAX_ATTEMPTS = 3
IMPORT_GAVE_UP = gettext_noop(
    "The import stopped %(attempts)s times before it finished (the worker was stopped or ran "
    "out of memory); nothing was saved and the file was dropped. Try a smaller file, or "
    "ask the server's owner to look at the worker's log."
)
# A parser that raised (RecursionError on 3 MB of "[[[[", a bug): stored in Import.error
# with the exception as Python says it, for the admin (and logged with its traceback); its
# reader is told FILE_UNREADABLE instead, in plain words (books.wording). No line is known
# for such a crash: the one seen is in reading the whole file as JSON, and the Kindle
# parser, the only one read in pieces, is fuzzed not to raise. Marked for the catalogue
# like every stored template (tests/i18n/test_service_messages.py).
IMPORT_UNREADABLE = gettext_noop(
    "This file could not be read (%(error)s); nothing was imported and the file was dropped."
)
FILE_UNREADABLE = gettext_noop(
    "The file could not be read: Exogram could not make sense of what is in it. Nothing "
    "was imported, and the file was dropped."
)
# At most this much of an exception's text is kept in Import.error.
ERROR_KEPT = 500
FILE_GONE = gettext_noop("The uploaded file is gone; upload it again.")
# What a reader sees while the queue cannot be reached.
IMPORT_QUEUE_UNREACHABLE = gettext_noop(
    "The task queue cannot be reached: your file is saved and is imported as soon as it is back."
)


def imports_in_background(data: bytes) -> bool:
    """Whether an upload is imported on a worker: a file larger than IMPORT_INLINE_MAX_BYTES,
    or a zip that unpacks to more (a 267 KB zip of 32 sidecars of 8 MB each of repeated text
    grew the web process by 260 MB when it was read in the request)."""
    return max(len(data), zip_unpacked_bytes(data)) > IMPORT_INLINE_MAX_BYTES


def import_queue(*, reader: User, data: bytes, file_name: str) -> Import:
    """Store the file with a queued Import and send its task after commit."""
    with transaction.atomic():
        the_import = Import.objects.create(
            reader=reader,
            file_name=file_name[:255],
            sha256=hashlib.sha256(data).hexdigest(),
            status=Import.Status.QUEUED,
        )
        ImportUpload.objects.create(the_import=the_import, data=data)
        transaction.on_commit(lambda: import_send(the_import=the_import))
    return the_import


def import_send(*, the_import: Import) -> bool:
    """Send the import's task; when the broker is down, say so on the import."""
    try:
        announce(import_queued, import_id=the_import.pk)
    except Exception:
        logger.exception("could not send the import task of %s", the_import.code)
        Import.objects.filter(pk=the_import.pk, status=Import.Status.QUEUED).update(
            error=IMPORT_QUEUE_UNREACHABLE
        )
        return False
    Import.objects.filter(pk=the_import.pk, status=Import.Status.QUEUED).update(
        error="", finished_at=None
    )
    return True


def _advance(
    the_import: Import,
    *,
    attempt: int,
    from_statuses: list[str],
    to: str,
    counts: dict[str, int] | None = None,
) -> bool:
    """Move the import on, only from the statuses given and only while `attempt` (the
    worker's take of it, import_claim) holds it: the guard against a duplicate task
    (acks_late, a sweep) running an import that another task runs or finished, and against
    a slow worker taken for dead whose import another worker took again. False when
    nothing moved: the import is no longer this attempt's."""
    changes: dict[str, object] = {"status": to, "error": "", "finished_at": timezone.now()}
    if counts is not None:
        changes["counts"] = counts
    moved = Import.objects.filter(
        pk=the_import.pk, status__in=from_statuses, attempts=attempt
    ).update(**changes)
    if moved:
        the_import.status = to
    return bool(moved)


def saving_counts(result: ParseResult) -> dict[str, int]:
    """What a saving import is saving, for its report and the home page to say.

    Written when saving starts; the finished report replaces it. How far the save has got
    is written apart, as it goes (books.importing.saving)."""
    notes = sum(1 for clipping in result.clippings if clipping.kind == "note")
    return {"saving_highlights": _highlights_in(result.clippings), "saving_notes": notes}


def _highlights_in(clippings: list[Clipping]) -> int:
    # Bookmarks are counted in the report, never saved; notes go on their highlights.
    return sum(1 for clipping in clippings if clipping.kind not in ("note", "bookmark"))


def import_run(*, import_id: int) -> Import | None:
    """Read and save a queued import. Idempotent: one that is not queued is left alone.

    `finished_at` doubles as the time of the last step while the import is under way, so
    the sweep can tell a stalled import from a running one. Every write of the run is
    guarded by the attempt it claimed (import_claim): a worker taken for dead whose import
    another worker took again writes nothing more on it, stops reading when its count
    finds that out (ImportTakenOver), and saves nothing.
    """
    the_import = Import.objects.select_related("reader").filter(pk=import_id).first()
    if the_import is None:
        return None
    attempt = import_claim(import_id=import_id)
    if attempt is None:
        # Left to take but taken too often already: given up (one not left to take, this
        # fails nothing).
        if _fail(the_import, IMPORT_GAVE_UP % {"attempts": IMPORT_MAX_ATTEMPTS}, attempt=None):
            ImportUpload.objects.filter(the_import_id=import_id).delete()
        return the_import
    upload = ImportUpload.objects.filter(the_import_id=import_id).first()
    if upload is None:
        _fail(the_import, FILE_GONE, attempt=attempt)
        return the_import
    data = bytes(upload.data)
    del upload
    count = ReadingCount(the_import=the_import, size=len(data), attempt=attempt)
    try:
        result = parse_in_pieces(data, on_piece=count)
    except ImportTakenOver:
        _taken_over(the_import, attempt, when="while it read the file")
        return the_import
    except ImportRejected as rejection:
        # The file goes only with a failure that is this attempt's: another one reads it.
        if _fail(the_import, str(rejection), attempt=attempt):
            ImportUpload.objects.filter(the_import_id=import_id).delete()
        return the_import
    except Exception as error:
        # A parser is documented never to raise but ImportRejected; a file found a way
        # (RecursionError on 3 MB of "[[[[", a bug). Ended here, the import says so and the
        # sweep does not send the same file to the same failure every minute.
        logger.exception("import %s could not be read", the_import.code)
        said = f"{type(error).__name__}: {error}"[:ERROR_KEPT]
        if _fail(the_import, IMPORT_UNREADABLE % {"error": said}, attempt=attempt):
            ImportUpload.objects.filter(the_import_id=import_id).delete()
        return the_import
    del data
    counts = saving_counts(result)
    if not _advance(
        the_import,
        attempt=attempt,
        from_statuses=[Import.Status.READING],
        to=Import.Status.SAVING,
        counts=counts,
    ):
        _taken_over(the_import, attempt, when="before it saved")
        return the_import
    try:
        # The count is written outside the save's transaction (SavingProgress): it starts
        # before it and goes on from a connection of its own.
        with (
            SavingProgress(the_import=the_import, total=counts["saving_highlights"]) as progress,
            transaction.atomic(),
        ):
            # The import's row is held until the commit: a claim of it (the sweep, another
            # worker) waits for the save, then finds it done. Taken between the move to
            # saving and here, it is not this attempt's to save.
            if not _held(the_import, attempt, status=Import.Status.SAVING):
                raise ImportTakenOver(the_import.code)
            _import_in_parts(the_import, result, progress)
            ImportUpload.objects.filter(the_import_id=import_id).delete()
        # After the commit: see clippings_import.
        library_version_bump(reader_ids={the_import.reader_id})
        highlights_analyze()
    except ImportTakenOver:
        _taken_over(the_import, attempt, when="as its save began")
        return the_import
    except Exception as error:
        logger.exception("import %s failed", the_import.code)
        failed = _fail(the_import, IMPORT_FAILED % {"error": error}, attempt=attempt)
        try:  # failed for good (a failed import is never taken again): the file goes
            if failed:
                ImportUpload.objects.filter(the_import_id=import_id).delete()
        except Exception:
            logger.exception("could not drop the upload of import %s", the_import.code)
        raise
    return the_import


class ImportTakenOver(Exception):
    """The import a run reads is no longer its attempt's (ReadingCount found out)."""


def _held(the_import: Import, attempt: int, *, status: str) -> bool:
    """Whether `attempt` still holds the import, in `status`; the row locked until the
    transaction ends."""
    rows = Import.objects.select_for_update(no_key=True).filter(
        pk=the_import.pk, status=status, attempts=attempt
    )
    return rows.exists()


def _taken_over(the_import: Import, attempt: int, *, when: str) -> None:
    logger.warning(
        "import %s stopped being attempt %s's %s (another worker took it again, or it "
        "ended): this attempt stops and saves nothing",
        the_import.code,
        attempt,
        when,
    )


def highlights_analyze() -> None:
    """Refresh the planner's statistics of the highlights after a large import.

    Right after 110,938 highlights were saved pending, the planner still saw the table as
    it was before (an estimate of 1 pending row), and every embedding turn chose its
    highlights (embedding_turn_take) by sorting all the pending rows: 0.19 + 0.24 s a turn;
    after ANALYZE 0.08 + 0.003 s (docs/operations.md, 2026-12-06). Autovacuum does the
    same within a minute or so on a quiet server, not for minutes on a busy one. ANALYZE
    reads a fixed sample (1.1-1.5 s on that 162 MB table); it takes a lock that neither
    reads nor writes wait for, and waits at most a few seconds for a running vacuum.
    """
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '5s'")
            cursor.execute(f"ANALYZE {Highlight._meta.db_table}")
    except DatabaseError:
        # Only a plan left to autovacuum: the import itself is saved.
        logger.warning("could not analyze the highlights after a large import", exc_info=True)


def _abandoned(now: datetime) -> Q:
    """Reading or saving, and not heard of for IMPORT_STALE: its worker died. A reading in
    pieces moves `finished_at` as it goes (ReadingCount). A save cannot touch its import's
    row (its transaction holds it until the commit) but moves its count (ImportSaving) as
    it goes: a long save whose count moves is alive."""
    stale = now - IMPORT_STALE
    return Q(status__in=[Import.Status.READING, Import.Status.SAVING], finished_at__lt=stale) & ~Q(
        saving__updated_at__gte=stale
    )


def _claimable(import_id: int) -> QuerySet[Import]:
    return Import.objects.filter(pk=import_id).filter(
        Q(status=Import.Status.QUEUED) | _abandoned(timezone.now())
    )


def import_claim(*, import_id: int) -> int | None:
    """Take a queued import, or one whose worker died, for this worker; count the try.

    The attempt taken (the import's `attempts` after it), which guards every later write
    of the run; None when the import is not left to take, or was taken too often."""
    with transaction.atomic():
        # counts: a dead worker's count of its reading, or of its save, is not this one's.
        claimed = (
            _claimable(import_id)
            .filter(attempts__lt=IMPORT_MAX_ATTEMPTS)
            .update(
                status=Import.Status.READING,
                error="",
                finished_at=timezone.now(),
                attempts=F("attempts") + 1,
                counts={},
            )
        )
        if not claimed:
            return None
        # Read in the update's transaction, whose lock on the row no other claim passes.
        return Import.objects.filter(pk=import_id).values_list("attempts", flat=True).get()


class ReadingCount:
    """Write how far the reading of a file in pieces has got, into its import's counts:
    the bytes of the file parsed (`reading_done` of `reading_size`) and the entries read.

    Written on the Import's row itself, not ImportSaving's: reading is in no transaction,
    so the row is free and each write is seen at once; `_advance` to saving replaces these
    counts with the save's. Each write moves `finished_at` too, the time of the import's
    last step: a long reading that moves on is not taken for a dead worker (`_abandoned`).
    At most READING_WRITES writes for a file. A write that fails stops the count, never the
    reading: inside import_run's guard against a parser's crash, it would have called a
    good file unreadable and dropped it.

    Each write is guarded by the run's `attempt` (import_claim) as well as the status: a
    slow worker taken for dead, whose import another worker took again, writes nothing on
    the new attempt's count. A write that finds the import no longer its attempt's raises
    ImportTakenOver, and the reading stops there: what it would read is never saved.
    """

    def __init__(self, *, the_import: Import, size: int, attempt: int) -> None:
        self.the_import = the_import
        self.size = size
        self.attempt = attempt
        self.step = max(1, -(-size // READING_WRITES))
        self.written = 0
        self.given_up = False

    def __call__(self, done: int, entries: int) -> None:
        if self.given_up or done - self.written < self.step:
            return
        counts = {"reading_done": done, "reading_size": self.size, "reading_entries": entries}
        try:
            written = Import.objects.filter(
                pk=self.the_import.pk, status=Import.Status.READING, attempts=self.attempt
            ).update(counts=counts, finished_at=timezone.now())
        except Error:  # the next step's own query meets the database again, and retries
            logger.warning("could not write how far import %s is read", self.the_import.code)
            self.given_up = True
            return
        if not written:
            self.given_up = True
            raise ImportTakenOver(self.the_import.code)
        self.written = done


def parse_in_pieces(
    data: bytes, *, on_piece: Callable[[int, int], None] | None = None
) -> ParseResult:
    """Parse a large UTF-8 file a few megabytes at a time, cut after separator lines.

    The same result as parsing it whole (the line numbers carry on from piece to piece),
    without the parser's copies of the whole text at once: parsing 55 MB in one go took the
    worker from 128 to 410 MB. UTF-16 files, and files with no newline, are parsed whole.
    After each piece, `on_piece` is told the bytes of the file parsed so far and the
    entries read (a file parsed whole tells nothing).
    """
    from books.importing.formats import CLIPPINGS, detect_format

    check_upload(data)
    # Other formats (a notebook, a CSV, JSON) are parsed whole by their own parser.
    if (
        data.startswith((b"\xff\xfe", b"\xfe\xff"))
        or b"\n" not in data
        or detect_format(data) != CLIPPINGS
    ):
        return upload_parse(data)
    clippings: list[Clipping] = []
    problems: list[Problem] = []
    warnings: list[Problem] = []
    entries = 0
    lines = 0
    done = 0
    for piece in _pieces(data):
        parsed = parse_clippings(piece)
        entries += parsed.entries
        if lines:
            clippings += [replace(c, line=c.line + lines) for c in parsed.clippings]
            problems += [replace(p, line=p.line + lines) for p in parsed.problems]
            warnings += [Problem(w.line + lines, w.message) for w in parsed.warnings]
        else:
            clippings += parsed.clippings
            problems += parsed.problems
            warnings += parsed.warnings
        # Universal newlines, as the parser counts them: CRLF, LF and a lone CR.
        lines += piece.count(b"\n") + piece.count(b"\r") - piece.count(b"\r\n")
        del parsed
        done += len(piece)
        if on_piece is not None:
            on_piece(done, entries)
    # Each piece tells a file that is Windows-1252 throughout: the file is named once.
    whole_file = [w for w in warnings if w.message == NOT_UTF8_FILE][1:]
    warnings = [w for w in warnings if w not in whole_file]
    result = screen_entries(
        ParseResult(clippings=clippings, problems=problems, entries=entries, warnings=warnings)
    )
    if not result.clippings:
        return upload_parse(data)  # raises ImportRejected, with the usual reason
    return result


def _pieces(data: bytes) -> Iterator[bytes]:
    """The file in pieces of about PARSE_PIECE_BYTES, each ending after a separator line."""
    start = 0
    while start < len(data):
        cut = len(data)
        search = start + PARSE_PIECE_BYTES
        while search < len(data):
            at = data.find(b"\n==========", search)
            if at < 0:
                break
            end = data.find(b"\n", at + 1)
            end = len(data) if end < 0 else end
            if not data[at + 11 : end].strip(b" \t\r"):
                cut = end + 1
                break
            search = at + 1
        yield data[start:cut]
        start = cut


def _import_in_parts(the_import: Import, result: ParseResult, progress: SavingProgress) -> None:
    """Save a large file a few books at a time, in the caller's one transaction.

    Merging and notes never reach across books, so whole books in parts give the same
    library as the file at once; but only one part's rows are in memory at a time (a
    200,000-entry file held 136,000 new rows at once: 573 MB in the worker).
    """
    # Turned round before the file is cut by book, so a book is never in two parts.
    clippings_orient(reader=the_import.reader, clippings=result.clippings)
    clippings_unify_authors(reader=the_import.reader, clippings=result.clippings)
    clippings_orient(reader=the_import.reader, clippings=result.deleted_on_device)
    clippings_unify_authors(reader=the_import.reader, clippings=result.deleted_on_device)
    clippings_follow_merges(reader=the_import.reader, clippings=result.clippings)
    clippings_follow_merges(reader=the_import.reader, clippings=result.deleted_on_device)
    # The notes of the file's rows an older Exogram read into "Untitled", of every part: a
    # highlight of one part may hold a note whose row is in another (untitled_rehome).
    notes = untitled_notes(result.clippings)
    parts = _parts_by_book(result.clippings)
    # Each highlight deleted on the device goes with its book's part (the live entries of
    # the book it is checked against); those of books with none, with the last part.
    deleted_by_book: dict[str, list[Clipping]] = {}
    for clipping in result.deleted_on_device:
        deleted_by_book.setdefault(book_key_of(clipping), []).append(clipping)
    problems = problems_record(result)
    result.clippings = []
    # An Exogram export's traces of highlights removed for good: kept with the first part.
    removed = result.removed_for_good
    totals: Counter[str] = Counter()
    truncated: Counter[str] = Counter()
    nothing: dict[str, str] = {}
    titles: set[str] = set()
    changed_titles: set[str] = set()
    started = timezone.now()
    while parts:
        part = parts.pop(0)
        deleted = [
            clipping
            for key in dict.fromkeys(map(book_key_of, part))
            for clipping in deleted_by_book.pop(key, [])
        ]
        if not parts:
            deleted += [clipping for rest in deleted_by_book.values() for clipping in rest]
        piece = ParseResult(
            clippings=part,
            problems=[],
            entries=len(part),
            deleted_on_device=deleted,
            removed_for_good=removed,
        )
        removed = []
        parsed_clippings_save(
            reader=the_import.reader,
            result=piece,
            file_name=the_import.file_name,
            sha256=the_import.sha256,
            the_import=the_import,
            enqueue=False,
            on_match=progress.matched,
            untitled_notes=notes,
        )
        progress.part_saved(_highlights_in(part))
        del part, piece
        for key, value in the_import.counts.items():
            if key == "truncated_by_book":
                truncated.update(value)
            elif key == "books_with_nothing":
                nothing.update(value)
            elif key == "book_titles":
                titles.update(value)
            elif key == "changed_titles":
                changed_titles.update(value)
            else:
                totals[key] += value
    the_import.counts = {
        **totals,
        "truncated_by_book": dict(sorted(truncated.items())),
        "books_with_nothing": dict(sorted(nothing.items())),
        "book_titles": sorted(titles, key=str.casefold)[:BOOK_TITLES_KEPT],
        "changed_titles": sorted(changed_titles, key=str.casefold)[:BOOK_TITLES_KEPT],
    }
    if result.skipped:
        the_import.counts["skipped_in_file"] = dict(result.skipped)
    the_import.problems = problems
    the_import.save(update_fields=["counts", "problems"])
    # Sent once for the whole file: this import's new rows, and rows it changed.
    to_embed = list(
        Highlight.objects.filter(
            reader=the_import.reader,
            deleted_at__isnull=True,
            embedding_status=Highlight.EmbeddingStatus.PENDING,
        )
        .exclude(embedding_enqueued_at__gte=started)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if to_embed:
        transaction.on_commit(partial(announce, highlights_to_embed, ids=to_embed))


def _parts_by_book(clippings: list[Clipping]) -> list[list[Clipping]]:
    by_book: dict[str, list[Clipping]] = {}
    for clipping in clippings:
        by_book.setdefault(book_key_of(clipping), []).append(clipping)
    parts: list[list[Clipping]] = [[]]
    for book_clippings in by_book.values():
        if parts[-1] and len(parts[-1]) + len(book_clippings) > IMPORT_PART:
            parts.append([])
        parts[-1].extend(book_clippings)
    return parts


def _fail(the_import: Import, message: str, *, attempt: int | None) -> bool:
    """End the import as failed, saying why; False when it was not this run's to end.

    With the `attempt` the run took (import_claim), only while that attempt holds the
    import (reading or saving): a slow worker taken for dead fails nothing of the worker
    that took the import again. With none (given up), only while it is left to take and was
    taken IMPORT_MAX_ATTEMPTS times already. The counts go: a failed import has none, as a
    failed import within the request (clippings_import), and its page says only why
    (`error`); a reading's count left there would be a count of nothing saved.
    """
    if attempt is None:
        rows = _claimable(the_import.pk).filter(attempts__gte=IMPORT_MAX_ATTEMPTS)
    else:
        rows = Import.objects.filter(
            pk=the_import.pk,
            status__in=[Import.Status.READING, Import.Status.SAVING],
            attempts=attempt,
        )
    failed = rows.update(
        status=Import.Status.FAILED, error=message, finished_at=timezone.now(), counts={}
    )
    if failed:
        the_import.status = Import.Status.FAILED
        the_import.error = message
        the_import.counts = {}
    return bool(failed)


def imports_to_resend() -> list[int]:
    """Queued imports whose task never started, and imports whose worker died."""
    now = timezone.now()
    lost = Import.objects.filter(
        Q(started_at__lt=now - IMPORT_QUEUED_LEASE) | ~Q(error=""), status=Import.Status.QUEUED
    ) | Import.objects.filter(_abandoned(now))
    return list(lost.order_by("pk").values_list("pk", flat=True))
