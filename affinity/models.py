import uuid

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.urls import reverse
from pgvector.django import HnswIndex, VectorField

from books.models import EMBEDDING_DIMENSIONS


class SharingProfile(models.Model):
    """What a reader shows other sharing readers. Sharing is off until the reader turns it on."""

    reader = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sharing"
    )
    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    discoverable = models.BooleanField(default=False)
    display_name = models.CharField(max_length=60, blank=True)
    # Never counted in the centroid, never shown to anyone else (bridges, books in common,
    # top books).
    excluded_books = models.ManyToManyField("books.Book", blank=True, related_name="+")
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(discoverable=False) | ~models.Q(display_name=""),
                name="sharing_discoverable_has_display_name",
            ),
            # Two sharing readers called "Ana" and "ana" could not be told apart.
            models.UniqueConstraint(
                Lower("display_name"),
                condition=models.Q(discoverable=True),
                name="sharing_unique_display_name",
            ),
        ]
        indexes = [
            # The kindred query's semi-join and the count that picks its strategy.
            models.Index(
                fields=["reader"],
                name="sharing_discoverable_reader",
                condition=models.Q(discoverable=True),
            ),
        ]

    def __str__(self) -> str:
        state = "sharing" if self.discoverable else "not sharing"
        return f"{self.display_name or self.reader_id} ({state})"

    def get_absolute_url(self) -> str:
        return reverse("reader_profile", args=[self.code])


class ReaderCentroid(models.Model):
    """Where a reader's reading sits: the weighted, L2-normalized mean of their highlight
    vectors, over the books they share (excluded books never count)."""

    reader = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="centroid"
    )
    # Compared as it is, by cosine, with other readers' centroids of the same model
    # (affinity.reading says why no reading space any more).
    vector = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    highlight_count = models.PositiveIntegerField(default=0)
    # Centroids of two models are never compared: their spaces differ.
    embedding_model = models.CharField(max_length=100, blank=True)
    # Debounce: set when a refresh is queued, cleared when it starts, so a burst of
    # embedding batches queues one refresh rather than one per batch. A time rather than
    # a flag, so that a refresh lost with a dead worker does not block all later ones.
    refresh_queued_at = models.DateTimeField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # Kindred readers among many sharing readers: nearest centroids by cosine
            # distance. The opclass must match CosineDistance (<=>).
            HnswIndex(
                name="centroid_vector_hnsw",
                fields=["vector"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return f"centroid of {self.reader} ({self.highlight_count} highlights)"


class PassageEcho(models.Model):
    """A highlight and a near-identical one (the same passage), possibly another reader's.

    A famous passage highlighted by half the readers would pull every centroid the same
    way and make everyone look alike, so a centroid weighs each highlight down by how many
    sharing readers hold an echo of it. Pairs are stored, not counts: who counts as a
    holder (alive, shared, same model) is decided when counting, so deletes, exclusions
    and sharing switched off need no recount. Every probed highlight echoes itself, which
    also marks it as probed.
    """

    # The unique constraint's index serves lookups by highlight.
    highlight = models.ForeignKey(
        "books.Highlight", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    echo = models.ForeignKey("books.Highlight", on_delete=models.CASCADE, related_name="+")
    # Vectors of another model make another pair; a model change probes again.
    embedding_model = models.CharField(max_length=100)
    distance = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["highlight", "echo"], name="passage_echo_unique_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.highlight_id} ~ {self.echo_id} ({self.distance:.3f})"
