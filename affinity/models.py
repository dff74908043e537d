from django.conf import settings
from django.db import models
from pgvector.django import VectorField

from books.models import EMBEDDING_DIMENSIONS


class ReaderCentroid(models.Model):
    """The normalized mean of a reader's highlight vectors: where their reading sits."""

    reader = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="centroid"
    )
    vector = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    highlight_count = models.PositiveIntegerField(default=0)
    # Centroids of two models are never compared: their spaces differ.
    embedding_model = models.CharField(max_length=100, blank=True)
    # Debounce: set when a refresh is queued, cleared when it starts, so a burst of
    # embedding batches queues one refresh rather than one per batch.
    refresh_queued = models.BooleanField(default=False)
    updated = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"centroid of {self.reader} ({self.highlight_count} highlights)"
