"""The embedding pipeline: claim highlights, encode them, write vectors, connect them.

Every step is guarded so that a retried, duplicated or swept task changes nothing twice.
The encoder (onnxruntime, numpy) is imported inside the functions: web processes that
only enqueue never load the model's runtime.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from books.connections.services import connections_forget, highlights_connect
from books.models import Connection, Highlight

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
    from books.embedding.encoder import EncoderUnavailable, get_encoder

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


def embeddings_switch_model(*, model_id: str) -> int:
    """Hand the vectors of any other model over to re-embedding; returns how many.

    Vectors of two models are never compared, so after a model change the old vectors
    leave every read path at once: their highlights go back to pending (the reader's
    progress bar shows the re-embedding; the old vector stays in the row until the new
    one is written), the connections found with them are forgotten, and the readers'
    centroids are refreshed from the vectors of the model in use. Idempotent.
    """
    from affinity.services import centroids_mark_stale

    status = Highlight.EmbeddingStatus
    with transaction.atomic():
        stale = Highlight.objects.filter(deleted_at__isnull=True, embedding_status=status.DONE)
        stale = stale.exclude(embedding_model=model_id)
        readers = set(stale.values_list("reader_id", flat=True).distinct())
        switched = stale.update(embedding_status=status.PENDING, embedding_claimed_at=None)
        Connection.objects.exclude(embedding_model=model_id).delete()
        if readers:
            centroids_mark_stale(reader_ids=readers)
    return switched


def pending_highlight_ids(*, older_than: timedelta | None = None) -> list[int]:
    """Highlights that need a vector from the current model (for sweeps and embed_pending).

    Without a model (it cannot load) every highlight that is not done counts as pending.
    """
    from books.embedding.encoder import EncoderUnavailable, get_encoder

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
