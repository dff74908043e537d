"""The picture of a library: every embedded highlight as a point in 2-D.

A principal-component projection of the 384-d vectors, computed with numpy on the server
(no JS library, no t-SNE): the two directions along which the reader's highlights differ
most. Clusters of different colours are where connections live.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Max

from accounts.models import User
from books.models import Highlight, LibraryMap

# More points than this make the SVG heavy for a phone; a fixed sample keeps it stable.
MAX_POINTS = 4000
WIDTH, HEIGHT, MARGIN = 1000, 640, 20
# Hues spread by the golden angle, so neighbouring books get distant colours.
GOLDEN_ANGLE = 137.508


@dataclass(frozen=True)
class MapPoint:
    code: str
    x: float
    y: float
    book: int
    text: str


def book_colour(index: int) -> str:
    return f"hsl({(index * GOLDEN_ANGLE) % 360:.0f}, 60%, 42%)"


def _signature(reader: User) -> str:
    embedded = (
        Highlight.objects.alive()
        .passages()
        .filter(reader=reader, embedding_status=Highlight.EmbeddingStatus.DONE)
    )
    stats = embedded.aggregate(last=Max("updated"))
    return f"{embedded.count()}|{stats['last']}"


def project(vectors: np.ndarray) -> np.ndarray:
    """The first two principal components of `vectors`, scaled into the picture."""
    centred = vectors - vectors.mean(axis=0)
    if len(vectors) < 3:
        coords = np.zeros((len(vectors), 2))
    else:
        # Eigenvectors of the 384 x 384 covariance: cheap however many highlights there are.
        _, eigenvectors = np.linalg.eigh(np.cov(centred, rowvar=False))
        coords = centred @ eigenvectors[:, [-1, -2]]
    low, high = coords.min(axis=0), coords.max(axis=0)
    span = np.where(high - low > 0, high - low, 1.0)
    unit = (coords - low) / span
    size = np.array([WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN])
    scaled: np.ndarray = MARGIN + unit * size
    return scaled


def library_map(reader: User) -> LibraryMap:
    """The reader's map, recomputed only when their embedded highlights changed."""
    signature = _signature(reader)
    cached = LibraryMap.objects.filter(reader=reader).first()
    if cached is not None and cached.signature == signature:
        return cached
    # Words (books.vocabulary) are left out: single words pull the picture apart into
    # clusters of look-ups that say nothing about what the reader reads.
    rows = list(
        Highlight.objects.alive()
        .passages()
        .filter(reader=reader, embedding_status=Highlight.EmbeddingStatus.DONE)
        .order_by("pk")
        .values_list("code", "text", "note", "book_id", "book__title", "embedding")
    )
    if len(rows) > MAX_POINTS:
        keep = np.random.default_rng(reader.pk).choice(len(rows), MAX_POINTS, replace=False)
        rows = [rows[i] for i in sorted(keep)]
    book_index: dict[int, int] = {}
    books: list[dict[str, Any]] = []
    for _, _, _, book_id, title, _ in rows:
        if book_id not in book_index:
            book_index[book_id] = len(books)
            books.append({"title": title, "colour": book_colour(len(books)), "count": 0})
        books[book_index[book_id]]["count"] += 1
    vectors = np.asarray([row[5] for row in rows], dtype=np.float32).reshape(-1, 384)
    coords = project(vectors) if rows else np.zeros((0, 2))
    points = [
        {
            "code": str(code),
            "x": round(float(xy[0]), 1),
            "y": round(float(xy[1]), 1),
            "book": book_index[book_id],
            "text": (text or note)[:240],
        }
        for (code, text, note, book_id, _, _), xy in zip(rows, coords, strict=True)
    ]
    the_map, _ = LibraryMap.objects.update_or_create(
        reader=reader, defaults={"signature": signature, "points": points, "books": books}
    )
    return the_map
