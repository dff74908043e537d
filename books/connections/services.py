"""Writing connections: the neighbours of freshly embedded highlights, and forgetting them.

A connection is kept when it is one of the best few neighbours of either side, under the
cut of the pair's two languages (Thresholds), and graded at read time: under the *same
idea* cut it is the same idea, else related (see selectors.Strength). Across languages a
neighbour must also be mutual and clear (ACROSS_MARGIN). The reader's words
(Highlight.is_word) never connect, from either side.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Q

from books.connections.neighbours import Neighbour
from books.language import ENGLISH, SPANISH, UNKNOWN
from books.library_cache import library_version_bump
from books.models import Connection, Highlight

# Neighbours kept per highlight within its language, the closest under the pair's cut.
# Pairs found from either side are stored, so a highlight can end up with more. The page
# shows the best three of each strength; at 20, the bilingual evaluation library held
# 34,207 connections for 4,103 passages, most of them one saying's twentieth-best echo.
CONNECTIONS_PER_HIGHLIGHT = 3
# Within a language, a neighbour counts only when it is this much closer than the two
# sides' typical neighbours (the mean distance of their TYPICAL_NEIGHBOURS nearest in other
# books): e5 packs some regions densely (Spanish sayings, quotes on wisdom), where a plain
# cut connects everything to everything. Read on `evaluate_library` (samples of 30 pairs,
# each judged for a shared idea): no margin (cuts 0.085 / 0.065), 675 pairs, 17 of 30;
# 0.01 (cuts 0.095 / 0.075), 732 pairs, 16 of 29; 0.015, 377 pairs within languages, 24
# and 17 of 30 in two samples; 0.02, 245 pairs, 17 of 20 and 18 of 30. The cuts matter
# less than the margin; past 0.015 the margin mostly costs coverage. On a real reader's
# library (5,491 passages from six Kindle files, related cut 0.115) the margin bought no
# precision that reading could see and cost most of the coverage: 0.015 with a cut of
# 0.09, 41 connections (0.7 % of passages); 0.005 with 0.105, 7.2 %; 0.003 with 0.115,
# 22.8 %; none, 23.4 %. A small margin still keeps a uniformly dense region apart.
RELATIVE_MARGIN = 0.003
TYPICAL_NEIGHBOURS = 10
# A neighbour across languages counts only when each side is the other's nearest in its
# language, by this much over the runner-up: the margin rule of bitext mining. Without it,
# on `evaluate_library`, 2,548 English-Spanish pairs under the cut, four in ten sharing an
# idea; with it, 51 pairs, seven in twelve, and the exact translations keep connecting.
ACROSS_MARGIN = 0.01
# The languages a pair can be across (books.language); "unknown" is across none.
KNOWN_LANGUAGES = (ENGLISH, SPANISH)


@dataclass(frozen=True)
class Thresholds:
    """The cuts of the current model, as cosine distances: same idea < related, for two
    English (or undetected) highlights; shifted for two Spanish ones and across languages
    (see books.embedding.encoder: e5's distances depend on the languages)."""

    same_idea: float
    related: float
    spanish_shift: float = 0.0
    across_shift: float = 0.0

    def shift(self, first: str, second: str) -> float:
        if first != second and first in KNOWN_LANGUAGES and second in KNOWN_LANGUAGES:
            return self.across_shift
        if first == second == SPANISH:
            return self.spanish_shift
        return 0.0

    def graded(self, distance: float, first: str, second: str) -> float:
        """The distance as if the pair were two English highlights: what the cuts grade."""
        return distance - self.shift(first, second)

    @property
    def loosest(self) -> float:
        """The related cut of the loosest language pair: nothing farther ever connects."""
        return self.related + max(0.0, self.spanish_shift, self.across_shift)


def across(first: str, second: str) -> bool:
    return first != second and first in KNOWN_LANGUAGES and second in KNOWN_LANGUAGES


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
    """The model's cuts; the environment's overrides move the base, the shifts stay."""
    from books.embedding.encoder import get_encoder

    encoder = get_encoder()
    return Thresholds(
        same_idea=connection_threshold(),
        related=related_threshold(),
        spanish_shift=encoder.spanish_shift,
        across_shift=encoder.across_shift,
    )


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


@dataclass(frozen=True)
class _Passage:
    pk: int
    reader_id: int
    book_id: int
    vector: Sequence[float]
    model_id: str
    language: str


def highlights_connect(*, ids: list[int]) -> int:
    """Find and store the connections of freshly embedded highlights. Returns pairs added.

    Idempotent: pairs are stored once (lower id first, unique), so running it twice adds
    nothing the second time.
    """
    from books.connections.neighbours import library_size

    cuts = thresholds()
    passages = [
        _Passage(*row)
        for row in Highlight.objects.alive()
        .passages()
        .filter(pk__in=ids, embedding_status=Highlight.EmbeddingStatus.DONE)
        .values_list("pk", "reader_id", "book_id", "embedding", "embedding_model", "language")
    ]
    sizes: dict[tuple[int, str], int] = {}
    # Each passage's typical neighbour distance, computed once a call.
    typical: dict[int, float | None] = {}
    pairs: dict[tuple[int, int], Connection] = {}
    for passage in passages:
        size_key = (passage.reader_id, passage.model_id)
        if size_key not in sizes:
            sizes[size_key] = library_size(reader_id=passage.reader_id, model_id=passage.model_id)
        found = _within_language(passage, cuts, size=sizes[size_key], typical=typical)
        found += _across_languages(passage, cuts, size=sizes[size_key])
        for other_id, distance in found:
            a, b = sorted((passage.pk, other_id))
            pairs[(a, b)] = Connection(
                reader_id=passage.reader_id,
                highlight_a_id=a,
                highlight_b_id=b,
                distance=distance,
                embedding_model=passage.model_id,
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


def _within_language(
    passage: _Passage, cuts: Thresholds, *, size: int, typical: dict[int, float | None]
) -> list[tuple[int, float]]:
    """The best few of the passage's nearest in its own language (or undetected): under
    the pair's cut, and clearly closer than both sides' typical neighbours (RELATIVE_MARGIN),
    ranked by how much closer."""
    own = _typical_neighbours(passage, size=size)
    typical[passage.pk] = _typical(own, cuts)
    if typical[passage.pk] is None:
        return []
    candidates = [n for n in own if n.distance < cuts.related + max(0.0, cuts.spanish_shift)]
    rows = {
        row[0]: _Passage(*row)
        for row in Highlight.objects.filter(
            pk__in=[n.highlight_id for n in candidates]
        ).values_list("pk", "reader_id", "book_id", "embedding", "embedding_model", "language")
    }
    ranked = []
    for neighbour in candidates:
        other = rows.get(neighbour.highlight_id)
        if other is None or across(passage.language, other.language):
            continue
        if cuts.graded(neighbour.distance, passage.language, other.language) >= cuts.related:
            continue
        if other.pk not in typical:
            typical[other.pk] = _typical(_typical_neighbours(other, size=size), cuts)
        theirs = typical[other.pk]
        if theirs is None:
            continue
        lead = (typical[passage.pk] + theirs) / 2 - neighbour.distance  # type: ignore[operator]
        if lead > RELATIVE_MARGIN:
            ranked.append((-lead, other.pk, neighbour.distance))
    ranked.sort()
    return [(pk, distance) for _, pk, distance in ranked[:CONNECTIONS_PER_HIGHLIGHT]]


def _typical_neighbours(passage: _Passage, *, size: int) -> list[Neighbour]:
    """The passage's TYPICAL_NEIGHBOURS nearest in other books, in its own language or
    undetected (all languages for an undetected one)."""
    from books.connections.neighbours import nearest_highlights

    languages = None if passage.language == UNKNOWN else [passage.language, UNKNOWN]
    return nearest_highlights(
        reader_id=passage.reader_id,
        vector=passage.vector,
        model_id=passage.model_id,
        limit=TYPICAL_NEIGHBOURS,
        exclude_book_id=passage.book_id,
        passages_only=True,
        languages=languages,
        size=size,
    )


def _typical(neighbours: list[Neighbour], cuts: Thresholds) -> float | None:
    """How far a passage's neighbours typically sit: the mean of its TYPICAL_NEIGHBOURS
    nearest, those a small library lacks counted as unrelated (at the loosest cut). Without
    that, in a library of two books the only neighbour is its own typical one, and two
    passages saying the same thing never connected. None when it has none at all (a
    library of one book)."""
    if not neighbours:
        return None
    missing = max(0, TYPICAL_NEIGHBOURS - len(neighbours))
    return (sum(n.distance for n in neighbours) + missing * cuts.loosest) / (
        len(neighbours) + missing
    )


def _across_languages(passage: _Passage, cuts: Thresholds, *, size: int) -> list[tuple[int, float]]:
    """The passage's nearest in another language, when the two are each other's nearest
    by ACROSS_MARGIN over the runner-up and within the cut across languages."""

    if passage.language not in KNOWN_LANGUAGES:
        return []
    cut = cuts.related + cuts.across_shift
    others = [language for language in KNOWN_LANGUAGES if language != passage.language]
    found = []
    for language in others:
        best = _clear_nearest(passage, language, cut=cut, size=size)
        if best is None:
            continue
        other_id, distance = best
        other = (
            Highlight.objects.filter(pk=other_id)
            .values_list("pk", "reader_id", "book_id", "embedding", "embedding_model", "language")
            .first()
        )
        if other is None:
            continue
        back = _clear_nearest(_Passage(*other), passage.language, cut=cut, size=size)
        if back is not None and back[0] == passage.pk:
            found.append((other_id, distance))
    return found


def _clear_nearest(
    passage: _Passage, language: str, *, cut: float, size: int
) -> tuple[int, float] | None:
    """The passage's nearest in `language` (other books), if under `cut` and closer than
    the runner-up by ACROSS_MARGIN."""
    from books.connections.neighbours import nearest_highlights

    nearest = nearest_highlights(
        reader_id=passage.reader_id,
        vector=passage.vector,
        model_id=passage.model_id,
        limit=2,
        max_distance=cut + ACROSS_MARGIN,
        exclude_book_id=passage.book_id,
        passages_only=True,
        languages=[language],
        size=size,
    )
    if not nearest or nearest[0].distance >= cut:
        return None
    if len(nearest) > 1 and nearest[1].distance < nearest[0].distance + ACROSS_MARGIN:
        return None
    return nearest[0].highlight_id, nearest[0].distance


def connections_rebuild(*, reader_id: int | None = None, batch: int = 500) -> int:
    """Forget and find again every connection of a reader (of every reader: None) under the
    current rule: what an upgrade of the rule, or of the cuts, runs once. Returns pairs
    stored."""
    passages = (
        Highlight.objects.alive().passages().filter(embedding_status=Highlight.EmbeddingStatus.DONE)
    )
    connections = Connection.objects.all()
    if reader_id is not None:
        passages = passages.filter(reader_id=reader_id)
        connections = connections.filter(reader_id=reader_id)
    ids = list(passages.order_by("pk").values_list("pk", flat=True))
    readers = set(connections.values_list("reader_id", flat=True).distinct())
    connections.delete()
    stored = 0
    for start in range(0, len(ids), batch):
        stored += highlights_connect(ids=ids[start : start + batch])
    # The cached connection pages of these readers are stale all at once, not in 30 s.
    readers |= set(passages.values_list("reader_id", flat=True).distinct())
    library_version_bump(reader_ids=readers)
    return stored


def connections_forget(*, ids: list[int]) -> None:
    """Drop the stored connections of highlights whose vector changed or went away."""
    Connection.objects.filter(Q(highlight_a_id__in=ids) | Q(highlight_b_id__in=ids)).delete()
