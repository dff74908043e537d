"""How long deleted highlights are kept, and their removal for good.

A delete (a highlight, a whole book, what an import added: books.services) only stamps
`deleted_at`; the rows wait on /deleted/ to be brought back. After EXOGRAM_DELETED_DAYS the
daily purge (books.tasks.purge_deleted, `manage.py purge_deleted`) deletes them: with their
connections, tags' links, merges, review cards and passage echoes (every foreign key to a
highlight cascades), a tag left labelling nothing, and a book left with no highlight at all.
Nothing derived needs recounting: a deleted highlight already counts nowhere (the centroid,
the map, the counts and every other reader's echo weights read only the alive ones).

Once gone, a trace of it stays (a PurgedHighlight: its dedupe key and hashes, never its
words), so that a later import of a file that still holds the passage leaves it out
(books.importing.purged says what is and is not caught). The Deletions its removal leaves
with no highlight go too.
"""

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from books.importing.purged import purged_traces
from books.importing.services import IMPORT_LOCK
from books.library_cache import library_version_bump
from books.models import Book, BookAlias, Highlight, PurgedHighlight, Tag
from books.services import deletions_forget_empty

# Highlights removed per transaction: short transactions, since each holds the reader's
# import lock (an upload of theirs waits for it) and their row against the embedding
# pipeline's writes. Not measured; small beside accounts' DELETE_BATCH of 5,000, as a
# reader using the site may be waiting.
PURGE_BATCH = 1_000


@dataclass(frozen=True)
class PurgeCount:
    """What a purge removes (or would): passages and words, standalone notes, and books
    left with nothing."""

    highlights: int = 0
    notes: int = 0
    books: int = 0

    def __add__(self, other: "PurgeCount") -> "PurgeCount":
        return PurgeCount(
            self.highlights + other.highlights, self.notes + other.notes, self.books + other.books
        )

    @property
    def total(self) -> int:
        return self.highlights + self.notes + self.books


def deleted_kept_for() -> timedelta | None:
    """How long a deleted highlight is kept; None: until its reader brings it back."""
    days = settings.EXOGRAM_DELETED_DAYS
    return timedelta(days=days) if days else None


def purge_cutoff(*, now: datetime) -> datetime | None:
    """Highlights deleted before this moment are due; None when nothing ever is."""
    kept_for = deleted_kept_for()
    return None if kept_for is None else now - kept_for


def _due(*, reader_id: int, before: datetime) -> QuerySet[Highlight]:
    return Highlight.objects.filter(reader_id=reader_id, deleted_at__lt=before)


def readers_with_due(*, before: datetime) -> list[int]:
    """Readers with a highlight deleted before `before` (the partial index highlight_deleted)."""
    return list(
        Highlight.objects.filter(deleted_at__lt=before)
        .order_by("reader_id")
        .values_list("reader_id", flat=True)
        .distinct()
    )


def purge_due(*, reader_id: int, before: datetime) -> PurgeCount:
    """What deleted_purge would remove for this reader now, without removing it."""
    due = _due(reader_id=reader_id, before=before)
    counts = due.aggregate(
        notes=Count("pk", filter=Q(kind=Highlight.Kind.NOTE)),
        highlights=Count("pk", filter=~Q(kind=Highlight.Kind.NOTE)),
    )
    # A book goes when every highlight it has is due: none alive, none deleted later.
    kept = Highlight.objects.filter(book=OuterRef("pk")).exclude(pk__in=due.values("pk"))
    books = (
        Book.objects.filter(reader_id=reader_id, pk__in=due.values("book_id"))
        .exclude(Exists(kept))
        .count()
    )
    return PurgeCount(highlights=counts["highlights"], notes=counts["notes"], books=books)


def lock_reader_for_change(reader_id: int) -> bool:
    """The reader's import lock, then their row; False when the reader is gone.

    The import lock first, as an import takes it (books.importing.services), so the two
    cannot deadlock: an import reads deleted highlights to keep a re-import from bringing
    them back and adds highlights to books, so none runs while a batch removes them (or
    while two books are merged: books.importing.same_book). The
    row: the embedding pipeline share-locks it to write vectors and connections, so no
    connection is inserted for a highlight being removed. NO KEY UPDATE, not UPDATE: rows
    that merely point at the reader (a new session, a token) are not held up.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [IMPORT_LOCK, reader_id])
        cursor.execute("SELECT id FROM accounts_user WHERE id = %s FOR NO KEY UPDATE", [reader_id])
        return cursor.fetchone() is not None


def _purge_batch(*, reader_id: int, before: datetime) -> PurgeCount | None:
    """Remove up to PURGE_BATCH due highlights of the reader in one transaction; None when
    there were none left."""
    with transaction.atomic():
        if not lock_reader_for_change(reader_id):
            return None
        # Locked, and read again under the lock: a highlight brought back meanwhile no
        # longer matches `deleted_at < before` and stays.
        rows = list(
            _due(reader_id=reader_id, before=before)
            .order_by("pk")
            .select_for_update()
            .values_list("pk", "kind", "book_id")[:PURGE_BATCH]
        )
        if not rows:
            return None
        ids = [pk for pk, _kind, _book in rows]
        notes = sum(1 for _pk, kind, _book in rows if kind == Highlight.Kind.NOTE)
        book_ids = {book for _pk, _kind, book in rows}
        tag_ids = list(
            Tag.objects.filter(highlights__in=ids).values_list("pk", flat=True).distinct()
        )
        PurgedHighlight.objects.bulk_create(_under_every_key(reader_id, purged_traces(ids=ids)))
        # Only the key: the cascade would otherwise read every row's three vectors. It
        # deletes the rows that point at them in one statement each (connections, tags'
        # links, merges, echoes, review state and cards), none of them read.
        Highlight.objects.filter(pk__in=ids).only("pk").delete()
        # A tag that labels nothing any more goes, as when its last highlight is untagged.
        Tag.objects.filter(pk__in=tag_ids).exclude(
            Exists(Highlight.tags.through.objects.filter(tag_id=OuterRef("pk")))
        ).delete()
        # A book deleted whole goes with its last highlight. The import lock keeps an
        # import from adding to it meanwhile.
        _, removed = (
            Book.objects.filter(reader_id=reader_id, pk__in=book_ids)
            .exclude(Exists(Highlight.objects.filter(book=OuterRef("pk"))))
            .delete()
        )
        deletions_forget_empty(reader_id=reader_id)
    return PurgeCount(
        highlights=len(ids) - notes, notes=notes, books=removed.get(Book._meta.label, 0)
    )


def _under_every_key(reader_id: int, traces: list[PurgedHighlight]) -> list[PurgedHighlight]:
    """The traces, and a copy of each under every key of a book merged into its book
    (BookAlias, books.importing.same_book): the book, and its aliases with it, may go with
    its last highlight, and a later import of the merged-away title must still leave the
    passage out."""
    aliases: defaultdict[str, list[str]] = defaultdict(list)
    for kept_key, alias_key in (
        BookAlias.objects.filter(reader_id=reader_id, book__key__in={t.book_key for t in traces})
        .exclude(key__startswith="\x1e")  # kept only for its code (same_book.CODE_ONLY)
        .values_list("book__key", "key")
    ):
        aliases[kept_key].append(alias_key)
    copies = [t.filed_under(alias_key) for t in traces for alias_key in aliases.get(t.book_key, [])]
    return traces + copies


def deleted_purge(*, reader_id: int, before: datetime) -> PurgeCount:
    """Remove for good the reader's highlights deleted before `before`, batch by batch.
    Safe to run twice (the second finds nothing) and to stop half way (what is left is
    still deleted, and the next run takes it)."""
    total = PurgeCount()
    for batch in _batches(reader_id=reader_id, before=before):
        total = total + batch
    if total.total:
        # Pages that count deleted highlights (a book's "Recently deleted") show it at once.
        library_version_bump(reader_ids={reader_id})
    return total


def _batches(*, reader_id: int, before: datetime) -> Iterator[PurgeCount]:
    while (batch := _purge_batch(reader_id=reader_id, before=before)) is not None:
        yield batch


def deleted_purge_everyone(*, now: datetime) -> PurgeCount:
    """The daily purge: every reader's highlights deleted more than EXOGRAM_DELETED_DAYS
    before `now`, one reader at a time. Nothing when they are kept forever (0)."""
    before = purge_cutoff(now=now)
    total = PurgeCount()
    if before is None:
        return total
    for reader_id in readers_with_due(before=before):
        total = total + deleted_purge(reader_id=reader_id, before=before)
    return total
