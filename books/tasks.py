"""Thin Celery tasks: each takes ids and calls one service."""

import logging
import time

from celery import shared_task
from celery.signals import worker_ready
from django.db import InterfaceError, OperationalError
from django.dispatch import receiver
from django.utils import timezone
from django.utils.translation import gettext_noop

from books import events
from books.embedding import pipeline
from books.library_cache import library_background_bump, library_version_bump
from books.library_map.services import library_maps_refresh_when_embedded

logger = logging.getLogger(__name__)


@shared_task(
    acks_late=True,  # safe: highlights_embed is idempotent (see its claim guard)
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=8,
)
def embed_highlights(ids: list[int]) -> dict[str, int]:
    # Imported here: the web process imports this module to enqueue, and never needs
    # onnxruntime itself.
    from books.embedding.encoder import EncoderUnavailable

    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        outcome = pipeline.highlights_embed_turn(ids=ids)
    except EncoderUnavailable as error:
        # Retrying cannot help until someone installs or fixes the model; the highlights
        # stay pending with the reason shown to the reader, and the sweep tries again.
        logger.error("embedding model unavailable: %s", error)
        return {"embedded": 0, "skipped": len(ids)}
    if outcome.left_ids:
        # The turn's time ran out: what it took and left, pending again, goes to one more
        # turn now rather than waiting for the sweep. Sent after the release has committed
        # (highlights_embed), and behind an upload queued meanwhile (exogram.queues).
        enqueue_embedding(outcome.left_ids)
    if outcome.embedded_ids:
        pipeline.readers_embeddings_changed(reader_ids=outcome.readers)
        # New vectors bring new connections (written with them, committed by now).
        library_background_bump(reader_ids=outcome.readers)
        library_maps_refresh_when_embedded(reader_ids=outcome.readers)
    # The turn's wall and CPU seconds, for an operator who wonders whether embedding is
    # slow: a wall time far above the CPU time is other work sharing the cores, not the
    # turn (docs/operations.md, 2026-12-06).
    logger.info(
        "embedding turn: %d embedded in %.1f s (%.1f CPU s in this process)%s",
        outcome.embedded,
        time.perf_counter() - started,
        time.process_time() - cpu_started,
        f"; its time was up, {len(outcome.left_ids)} left to the next turn"
        if outcome.left_ids
        else "",
    )
    return {"embedded": outcome.embedded, "skipped": outcome.skipped}


# What a reader sees on a highlight whose task could not be sent.
QUEUE_UNREACHABLE = gettext_noop(
    "Embedding is delayed: the task queue cannot be reached. Your highlights are saved; "
    "they are embedded as soon as it is back."
)


def enqueue_embedding(ids: list[int]) -> bool:
    """Split a backlog into tasks so several workers can share it, and record the sending.

    Never raises for a broker that is down: the highlights are saved already, so they are
    marked as waiting for the queue (the reader sees why) and the next sweep sends them.
    Returns whether every task was sent.
    """
    size = pipeline.EMBED_TASK_SIZE
    for start in range(0, len(ids), size):
        chunk = ids[start : start + size]
        try:
            embed_highlights.delay(chunk)
        except Exception:
            logger.exception("could not send %d embedding task(s)", -(-(len(ids) - start) // size))
            pipeline.highlights_mark_unqueued(ids=ids[start:], reason=QUEUE_UNREACHABLE)
            return False
        pipeline.highlights_mark_enqueued(ids=chunk)
    return True


@receiver(events.highlights_to_embed)
def _embed_announced(*, ids: list[int], **kwargs: object) -> bool:
    return enqueue_embedding(ids)


@shared_task
def sweep_pending_embeddings() -> int:
    """Re-enqueue highlights left behind: stale claims of a killed worker, lost messages,
    and, after a model change (a worker starts with it), every vector of the old model.

    Highlights whose task was sent less than QUEUED_LEASE ago are left alone: it is still
    queued, and sending another only makes the queue longer.
    """
    from books.embedding.encoder import EncoderUnavailable, get_encoders

    released = pipeline.claims_of_dead_workers_release()
    if released:
        logger.info("released %d highlight(s) claimed by a worker that is gone", released)
    try:
        switched = pipeline.embeddings_switch_model(model_id=get_encoders().model_id)
    except EncoderUnavailable:
        switched = 0
    if switched:
        logger.info("model change: %d highlight(s) to re-embed", switched)
        # The old model's connections are gone, in every library.
        library_version_bump(reader_ids=_readers_with_highlights())
    ids = pipeline.pending_highlight_ids(queued_before=None if switched else pipeline.QUEUED_LEASE)
    enqueue_embedding(ids)
    if ids:
        logger.info("sweep re-enqueued %d highlight(s) for embedding", len(ids))
    return len(ids)


def _readers_with_highlights() -> list[int]:
    from books.models import Highlight

    return list(Highlight.objects.values_list("reader_id", flat=True).distinct())


@shared_task(
    acks_late=True,  # safe: import_run starts only an import that is still queued
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=3,
)
def run_import(import_id: int) -> str:
    from books.importing.background import import_run

    the_import = import_run(import_id=import_id)
    return the_import.status if the_import else "gone"


@receiver(events.import_queued)
def _run_announced_import(*, import_id: int, **kwargs: object) -> None:
    run_import.delay(import_id)  # a broker that is down raises: import_send says so


@shared_task
def sweep_pending_imports() -> int:
    """Re-send imports whose message was lost (broker down at upload) or whose worker died."""
    from books.importing.background import import_send, imports_to_resend
    from books.models import Import

    ids = imports_to_resend()
    for the_import in Import.objects.filter(pk__in=ids):
        import_send(the_import=the_import)
    return len(ids)


@shared_task(
    acks_late=True,  # safe: connections_rejudge only rewrites verdicts of stale pairs
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=8,
)
def rejudge_connections(reader_id: int | None = None) -> int:
    """Re-judge, a batch at a time, the stored pairs another version of the pair judge
    judged (a new version ships with new weights), then send itself again while any are
    left; the progress is the count of stale pairs, logged and shown by
    `manage.py rejudge_connections --status`. Returns the stale pairs left."""
    from books.connections.services import connections_rejudge

    left = connections_rejudge(reader_id=reader_id)
    if left:
        logger.info("pair judge: %d stored pair(s) left to re-judge", left)
        rejudge_connections.delay(reader_id)
    return left


@worker_ready.connect
def _sweep_on_start(**kwargs: object) -> None:
    sweep_pending_imports.delay()
    sweep_pending_embeddings.delay()
    rejudge_connections.delay()


@shared_task(
    acks_late=True,  # safe: a layout recomputes the whole map from the current vectors
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=4,
)
def refresh_library_map(reader_id: int) -> int:
    from accounts.models import User
    from books.library_map.services import (
        library_map_refresh,
        library_map_refresh_again_if_behind,
    )

    reader = User.objects.filter(pk=reader_id).first()
    if reader is None:  # deleted since the layout was queued
        return 0
    placed = len(library_map_refresh(reader=reader).points.get("code", []))
    library_map_refresh_again_if_behind(reader=reader)
    return placed


@receiver(events.library_map_behind)
def _lay_out_announced_map(*, reader_id: int, **kwargs: object) -> None:
    # celery-types does not know DjangoTask, the app's task class, which adds this.
    refresh_library_map.delay_on_commit(reader_id)  # type: ignore[attr-defined]


@shared_task(
    acks_late=True,  # safe: deleted_purge removes only what is still deleted and due
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=4,
)
def purge_deleted() -> dict[str, int]:
    """The beat's daily purge: highlights deleted more than EXOGRAM_DELETED_DAYS ago (and
    books left with none) removed for good."""
    from books.purging import deleted_purge_everyone

    removed = deleted_purge_everyone(now=timezone.now())
    if removed.total:
        logger.info(
            "purged %d deleted highlight(s), %d note(s) and %d book(s)",
            removed.highlights,
            removed.notes,
            removed.books,
        )
    return {"highlights": removed.highlights, "notes": removed.notes, "books": removed.books}
