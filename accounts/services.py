import logging
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import User

logger = logging.getLogger(__name__)

# Accounts with up to this many highlights are deleted within the request (well under a
# second); larger ones by a worker, in batches: 200,000 highlights took longer than the
# web server's request timeout and the reader got an error with the account still there.
DELETE_INLINE_MAX_HIGHLIGHTS = 5_000
# Highlights deleted per transaction by the background deletion: short transactions, so
# readers and workers sharing the tables never wait long behind it.
DELETE_BATCH = 5_000
# A deletion not finished after this long lost its task or its worker: the sweep resends it.
DELETION_LEASE = timedelta(minutes=20)


def reader_delete_request(*, reader: User) -> bool:
    """Close the account at once and delete everything in it; True when already gone.

    The account is made inactive first, in its own transaction: the reader can no longer
    log in, and the embedding pipeline stops writing for them (it skips and share-locks
    inactive readers, see books.embedding.pipeline), so nothing new is inserted while the
    rows are deleted.
    """
    User.objects.filter(pk=reader.pk).update(is_active=False, deletion_requested_at=timezone.now())
    if reader.highlights.count() <= DELETE_INLINE_MAX_HIGHLIGHTS:
        reader_delete(reader_id=reader.pk)
        return True
    reader_delete_send(reader_id=reader.pk)
    return False


def reader_delete_send(*, reader_id: int) -> None:
    from accounts.tasks import delete_reader

    try:
        delete_reader.delay(reader_id)
    except Exception:
        # The account is closed already; the sweep sends the deletion when the queue is back.
        logger.exception("could not send the deletion of reader %s", reader_id)


def _lock_reader(reader_id: int) -> bool:
    """Lock the reader's row against the embedding pipeline's share lock; False if gone."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM accounts_user WHERE id = %s FOR UPDATE", [reader_id])
        return cursor.fetchone() is not None


def reader_delete(*, reader_id: int) -> None:
    """Delete a reader and everything they own — books, highlights, notes, imports,
    connections, tags, map, centroid, sharing.

    Highlights go in batches, each in a transaction that first locks the reader's row: an
    embedding write in flight for this reader (which share-locks it) commits first, and
    none starts after, so no connection can be inserted for a highlight being deleted.
    Then the reader row, with what remains (the foreign keys cascade). Safe to run twice.
    """
    from books.models import Connection, Highlight

    while True:
        with transaction.atomic():
            if not _lock_reader(reader_id):
                return
            ids = list(
                Highlight.objects.filter(reader_id=reader_id)
                .order_by("pk")
                .values_list("pk", flat=True)[:DELETE_BATCH]
            )
            if not ids:
                break
            Connection.objects.filter(reader_id=reader_id, highlight_a_id__in=ids).delete()
            Connection.objects.filter(reader_id=reader_id, highlight_b_id__in=ids).delete()
            Highlight.objects.filter(pk__in=ids).delete()
    with transaction.atomic():
        if _lock_reader(reader_id):
            User.objects.filter(pk=reader_id).delete()


def deletions_to_resend() -> list[int]:
    cutoff = timezone.now() - DELETION_LEASE
    return list(
        User.objects.filter(deletion_requested_at__lt=cutoff)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
