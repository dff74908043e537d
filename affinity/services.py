"""Reader centroids: the hook the embedding pipeline calls when a reader's vectors change."""

import numpy as np
from django.db.models import Avg, Count

from accounts.models import User
from affinity.models import ReaderCentroid
from books.models import Highlight

# Seconds to wait before a queued refresh runs, so the batches of one import coalesce.
REFRESH_DELAY = 10


def centroids_mark_stale(*, reader_ids: set[int]) -> None:
    """Queue one centroid refresh per reader, unless one is queued already."""
    from affinity.tasks import refresh_centroid

    for reader_id in reader_ids:
        centroid, _ = ReaderCentroid.objects.get_or_create(reader_id=reader_id)
        # Only the call that flips the flag enqueues; concurrent batches find it set.
        flipped = ReaderCentroid.objects.filter(pk=centroid.pk, refresh_queued=False).update(
            refresh_queued=True
        )
        if flipped:
            refresh_centroid.apply_async((reader_id,), countdown=REFRESH_DELAY)


def centroid_refresh(*, reader: User) -> ReaderCentroid:
    """Recompute a reader's centroid in SQL (Avg over vectors) and L2-normalize it."""
    ReaderCentroid.objects.filter(reader=reader).update(refresh_queued=False)
    centroid, _ = ReaderCentroid.objects.get_or_create(reader=reader)
    # Only the model most of the reader's highlights use: vectors of two models don't mix.
    latest = (
        Highlight.objects.alive()
        .filter(reader=reader, embedding_status=Highlight.EmbeddingStatus.DONE)
        .values("embedding_model")
        .annotate(n=Count("id"))
        .order_by("-n")
        .first()
    )
    if latest is None:
        centroid.vector, centroid.highlight_count, centroid.embedding_model = None, 0, ""
    else:
        mean = (
            Highlight.objects.alive()
            .embedded_with(latest["embedding_model"])
            .filter(reader=reader)
            .aggregate(mean=Avg("embedding"))["mean"]
        )
        vector = np.asarray(mean, dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        centroid.vector = vector / norm if norm > 0 else None
        centroid.highlight_count = latest["n"]
        centroid.embedding_model = latest["embedding_model"]
    centroid.save(update_fields=["vector", "highlight_count", "embedding_model", "updated"])
    return centroid
