"""Thin Celery tasks: each takes ids and calls one service."""

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.db import InterfaceError, OperationalError

from books.embedding import pipeline

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

    try:
        outcome = pipeline.highlights_embed(ids=ids)
    except EncoderUnavailable as error:
        # Retrying cannot help until someone installs or fixes the model; the highlights
        # stay pending with the reason shown to the reader, and the sweep tries again.
        logger.error("embedding model unavailable: %s", error)
        return {"embedded": 0, "skipped": len(ids)}
    if outcome.embedded_ids:
        pipeline.readers_embeddings_changed(reader_ids=outcome.readers)
    return {"embedded": outcome.embedded, "skipped": outcome.skipped}


def enqueue_embedding(ids: list[int]) -> None:
    """Split a backlog into tasks so several workers can share it."""
    size = pipeline.EMBED_TASK_SIZE
    for start in range(0, len(ids), size):
        embed_highlights.delay(ids[start : start + size])


@shared_task
def sweep_pending_embeddings() -> int:
    """Re-enqueue highlights left behind: stale claims of a killed worker, lost messages,
    and, after a model change (a worker starts with it), every vector of the old model."""
    from books.embedding.encoder import EncoderUnavailable, get_encoder

    try:
        switched = pipeline.embeddings_switch_model(model_id=get_encoder().model_id)
    except EncoderUnavailable:
        switched = 0
    if switched:
        logger.info("model change: %d highlight(s) to re-embed", switched)
    ids = pipeline.pending_highlight_ids(older_than=None if switched else pipeline.STALE_CLAIM)
    enqueue_embedding(ids)
    if ids:
        logger.info("sweep re-enqueued %d highlight(s) for embedding", len(ids))
    return len(ids)


@worker_ready.connect
def _sweep_on_start(**kwargs: object) -> None:
    sweep_pending_embeddings.delay()
