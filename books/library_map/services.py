"""The picture of a library: every embedded passage a point, placed so that neighbours in
meaning stay neighbours (books.library_map.projection), in regions named by their words
(books.library_map.labels), coloured by book.

Laying out a large library takes seconds, so it runs in a Celery task: when a reader's
embedding finishes (every import ends there), and when the map is asked for and the
library changed since the last one; the page shows the last map (or says it is being laid
out) until the new one lands. The stored map is what the browser draws: integer
positions, a book per point, the point's code for tap-to-read, and the named regions.
"""

import hashlib
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np
from django.db.models import Count, Max, Q
from django.utils import timezone

from accounts.models import User
from books.events import announce, library_map_behind
from books.library_map import stop_words
from books.models import Highlight, LibraryMap

# How maps are laid out; a new one lays every stored map out again when it is next asked for.
# 2: by the theme model's vectors, across languages.
LAYOUT_VERSION = 2
# Positions are stored as integers in [0, SCALE]: 20,000 points fit in ~250 KB of JSON.
SCALE = 10_000
# A library this small is laid out within the request (well under a second); larger ones
# in the background, while the page shows the last map or "drawing".
SYNC_MAX_POINTS = 300
# A refresh asked for less than this long ago is still under way (or its worker died:
# then the next visit asks again).
REFRESH_PATIENCE = timedelta(minutes=5)
# Hues spread by the golden angle, with three lightness steps, so that 40 books still get
# colours a reader can tell apart and neighbouring books never share one.
GOLDEN_ANGLE = 137.508
_LIGHTNESS = (42, 30, 56)


def book_colour(index: int) -> str:
    hue = (index * GOLDEN_ANGLE) % 360
    lightness = _LIGHTNESS[(index // 12) % len(_LIGHTNESS)]
    return f"hsl({hue:.0f}, 62%, {lightness}%)"


def _placed(reader: User) -> Any:
    # Words (books.vocabulary) are left out: single looked-up words pull the picture apart
    # into clusters of look-ups that say nothing about what the reader reads.
    return (
        Highlight.objects.alive()
        .passages()
        .filter(reader=reader, embedding_status=Highlight.EmbeddingStatus.DONE)
    )


def _signature(reader: User) -> tuple[int, str]:
    """How many highlights the map would place, and a signature of them: a change in
    either (an import, a delete, a new vector), in how maps are laid out or in the stop
    words that name their regions means the stored map is behind."""
    stats = _placed(reader).aggregate(n=Count("id"), last=Max("updated"))
    naming = stop_words.FINGERPRINT
    return stats["n"], f"{LAYOUT_VERSION}|{naming}|{stats['n']}|{stats['last']}"


def _layout_vectors(rows: list[tuple[Any, ...]]) -> Any:
    """The vectors a map is laid out by: the theme model's, when every passage has one.
    e5 keeps each language apart (on a real reader's map the Spanish, English and French
    highlights were three islands): laid out by e5, 26 % of the realistic library's related
    pairs sat within each other's 30 nearest points, 2 % of those across two languages; by
    the theme model, 46 % and 54 % (docs/evaluation.md, 2026-12-06)."""
    if rows and all(row[-1] is not None for row in rows):
        return np.asarray([row[-1] for row in rows], dtype=np.float32)
    return np.asarray([row[6] for row in rows], dtype=np.float32).reshape(-1, 384)


@dataclass(frozen=True)
class MapState:
    """What the map page and its JSON know: the stored map (if any) and whether it is
    behind the library."""

    the_map: LibraryMap | None
    stale: bool

    @property
    def drawing(self) -> bool:
        """No map to show yet: the first one is being laid out."""
        return self.stale and (self.the_map is None or not self.the_map.signature)


def library_map_state(reader: User, *, refresh: bool = True) -> MapState:
    """The reader's stored map; when it is behind the library, a refresh is queued."""
    placed, signature = _signature(reader)
    the_map = LibraryMap.objects.filter(reader=reader).first()
    stale = placed > 0 and (the_map is None or the_map.signature != signature)
    if stale and refresh:
        if placed <= SYNC_MAX_POINTS:
            the_map, stale = library_map_refresh(reader=reader), False
        else:
            library_map_request_refresh(reader=reader)
    return MapState(the_map=the_map if placed else None, stale=stale)


@dataclass(frozen=True)
class MapCounts:
    """What the map page says about the highlights it shows and those it does not."""

    placed: int
    # Embedded passages not on the stored map yet: a newer map is being laid out.
    to_place: int
    # Highlights still waiting for their vector.
    embedding: int
    # Looked-up words (never placed: they pull the picture apart) and highlights with
    # nothing to embed or that could not be embedded.
    words: int
    unplaceable: int
    # Notes of a few words (Highlight.is_word): kept off the map as words are, but not
    # listed among the words.
    short_notes: int = 0
    # Every highlight of the library, as the home page counts them (books.selectors.
    # library_counts): the summary says how many of them the map shows, and why the rest
    # are not on it, so that the two pages' numbers add up.
    highlights: int = 0


def map_counts(reader: User, the_map: LibraryMap | None) -> MapCounts:
    status = Highlight.EmbeddingStatus
    alive = Highlight.objects.alive().filter(reader=reader)
    totals = alive.aggregate(
        passages=Count("id", filter=Q(is_word=False, embedding_status=status.DONE)),
        embedding=Count("id", filter=Q(embedding_status__in=[status.PENDING, status.CLAIMED])),
        # As the Words page lists them (HighlightQuerySet.words), which the summary links to.
        words=Count(
            "id",
            filter=Q(is_word=True, kind=Highlight.Kind.HIGHLIGHT, embedding_status=status.DONE)
            & ~Q(text=""),
        ),
        unplaceable=Count("id", filter=Q(embedding_status=status.FAILED)),
        short_notes=Count(
            "id", filter=Q(is_word=True, kind=Highlight.Kind.NOTE, embedding_status=status.DONE)
        ),
        highlights=Count("id"),
    )
    placed = len(the_map.points.get("code", [])) if the_map and the_map.points else 0
    return MapCounts(
        placed=placed,
        to_place=max(0, totals["passages"] - placed),
        embedding=totals["embedding"],
        words=totals["words"],
        unplaceable=totals["unplaceable"],
        short_notes=totals["short_notes"],
        highlights=totals["highlights"],
    )


def _embedding_pending(reader_id: int) -> bool:
    status = Highlight.EmbeddingStatus
    pending = [status.PENDING, status.CLAIMED]
    return (
        Highlight.objects.alive().filter(reader_id=reader_id, embedding_status__in=pending).exists()
    )


def library_maps_refresh_when_embedded(*, reader_ids: set[int]) -> None:
    """After a batch of vectors: lay out the map of each reader whose embedding is finished,
    so that the first visit after an import finds it drawn. Readers still embedding wait:
    a layout per batch would take the embedding's own CPU."""
    for reader in User.objects.filter(pk__in=reader_ids):
        if not _embedding_pending(reader.pk) and library_map_state(reader, refresh=False).stale:
            library_map_request_refresh(reader=reader)


def library_map_refresh_again_if_behind(*, reader: User) -> bool:
    """Called after a layout: vectors that landed while it ran (the last batch of an
    import) found the layout claimed and queued nothing; lay out again for them."""
    if _embedding_pending(reader.pk) or not library_map_state(reader, refresh=False).stale:
        return False
    library_map_request_refresh(reader=reader)
    return True


def library_map_request_refresh(*, reader: User) -> None:
    now = timezone.now()
    the_map, _ = LibraryMap.objects.get_or_create(
        reader=reader, defaults={"signature": "", "points": {}, "books": []}
    )
    # Only the request that sets the time enqueues: a conditional UPDATE, so two requests
    # racing here cannot both queue a layout.
    claimed = (
        LibraryMap.objects.filter(pk=the_map.pk)
        .exclude(refreshing_since__gt=now - REFRESH_PATIENCE)
        .update(refreshing_since=now)
    )
    if claimed:
        announce(library_map_behind, reader_id=reader.pk)  # laid out after commit


def library_map_refresh(*, reader: User) -> LibraryMap:
    """Lay out the reader's library and store it (the Celery task's one call)."""
    from books.library_map.labels import name_regions, regions
    from books.library_map.projection import layout

    _, signature = _signature(reader)
    rows = list(
        _placed(reader)
        .order_by("book__title_sort", "book_id", "location_start", "pk")
        .values_list(
            "code",
            "text",
            "note",
            "book_id",
            "book__title",
            "book__authors",
            "embedding",
            "theme_embedding",
        )
    )
    book_index: dict[int, int] = {}
    books: list[dict[str, Any]] = []
    for _, _, _, book_id, title, authors, *_ in rows:
        if book_id not in book_index:
            book_index[book_id] = len(books)
            colour = book_colour(len(books))
            books.append({"title": title, "authors": authors, "colour": colour, "count": 0})
        books[book_index[book_id]]["count"] += 1
    positions = (
        layout(_layout_vectors(rows), seed=reader.pk) if rows else np.zeros((0, 2), np.float32)
    )
    low = positions.min(axis=0) if rows else np.zeros(2)
    span = np.maximum(positions.max(axis=0) - low, 1e-9) if rows else np.ones(2)
    # One scale for both axes, so distances mean the same across and down the map.
    unit = (positions - low) / span.max()
    scaled = np.rint(unit * SCALE).astype(int)
    texts = [text or note for _, text, note, *_ in rows]
    assignment = regions(unit.astype(np.float32), seed=reader.pk)
    named = name_regions(texts, unit.astype(np.float32), assignment)
    points = {
        "x": scaled[:, 0].tolist(),
        "y": scaled[:, 1].tolist(),
        "book": [book_index[row[3]] for row in rows],
        "code": [str(row[0]) for row in rows],
    }
    region_list = [
        {"x": round(r.x * SCALE), "y": round(r.y * SCALE), "size": r.size, "label": r.label}
        for r in named
    ]
    the_map, _ = LibraryMap.objects.update_or_create(
        reader=reader,
        defaults={
            "signature": signature,
            "points": points,
            "books": books,
            "regions": region_list,
            "refreshing_since": None,
        },
    )
    return the_map


def map_version(the_map: LibraryMap) -> str:
    """Which layout of the reader's map a page draws: a point is asked for by its index in
    that layout, and a layout drawn since places other highlights at those indexes."""
    return hashlib.sha256(the_map.signature.encode()).hexdigest()[:12]


def map_point(the_map: LibraryMap, index: int) -> str | None:
    """The code of the highlight at a point of the stored map, or None."""
    codes: list[str] = the_map.points.get("code", []) if the_map.points else []
    return codes[index] if 0 <= index < len(codes) else None
