"""Writing connections: the neighbours of freshly embedded highlights, and forgetting them.

Connections are kept up to the model's *related* threshold (a shared theme) and graded at
read time: under the *same idea* threshold they are the same idea (see selectors.Strength).
The reader's words (Highlight.is_word) never connect, from either side.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Q

from books.models import Connection, Highlight

# Neighbours kept per highlight when it is embedded, within the related threshold. Pairs
# found from either side are stored, so a highlight can end up with more.
CONNECTIONS_PER_HIGHLIGHT = 20


@dataclass(frozen=True)
class Thresholds:
    """The two cuts of the current model, as cosine distances: same idea < related."""

    same_idea: float
    related: float


def connection_threshold() -> float:
    """The cosine distance below which two highlights connect: the setting, else the model's."""
    from books.embedding.encoder import get_encoder

    override: float | None = settings.EXOGRAM_CONNECTION_THRESHOLD
    return override if override is not None else get_encoder().threshold


def related_threshold() -> float:
    """The cosine distance below which two highlights are related: the setting, else the
    model's; never tighter than the same-idea threshold."""
    from books.embedding.encoder import get_encoder

    override: float | None = settings.EXOGRAM_RELATED_THRESHOLD
    related = override if override is not None else get_encoder().related_threshold
    return max(related, connection_threshold())


def thresholds() -> Thresholds:
    return Thresholds(same_idea=connection_threshold(), related=related_threshold())


def thresholds_for_display() -> Thresholds | None:
    """Both thresholds, or None when the model cannot load."""
    from books.embedding.encoder import EncoderUnavailable

    try:
        return thresholds()
    except EncoderUnavailable:
        return None


def connection_threshold_for_display() -> float | None:
    """The threshold for pages to show, or None when the model cannot load."""
    from books.embedding.encoder import EncoderUnavailable

    try:
        return connection_threshold()
    except EncoderUnavailable:
        return None


def highlights_connect(*, ids: list[int]) -> int:
    """Find and store the connections of freshly embedded highlights. Returns pairs added.

    Idempotent: pairs are stored once (lower id first, unique), so running it twice adds
    nothing the second time.
    """
    from books.connections.neighbours import library_size, nearest_highlights

    threshold = related_threshold()
    highlights = list(
        Highlight.objects.alive()
        .passages()
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
            passages_only=True,
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
