"""Kindred readers: the nearest sharing readers by centroid, and what bridges two libraries.

Everything here reads only what sharing readers share: a reader appears only while their
profile is discoverable, and a book they excluded never shows (nor counts) anywhere.

Nearest centroids: compared as they are, by cosine (affinity.reading says why), by an
exact scan up to EXACT_SCAN_MAX sharing readers and an iterative HNSW scan above (the
trade-off of books.connections.neighbours, whose module comment has the measurements).

Bridges, the pairs of highlights that explain a kindred reader: affinity.bridges.
"""

import bisect
import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import Count, Q
from django.utils.translation import gettext

from accounts.models import User
from affinity.bridges import Bridge, bridges_between
from affinity.models import ReaderCentroid, SharingProfile
from affinity.services import (
    MIN_HIGHLIGHTS,
    discoverable_sql,
    shared_highlights,
)
from books.connections.neighbours import iterative_scan
from books.models import Book

# Above this many comparable sharing readers, the iterative HNSW scan wins.
EXACT_SCAN_MAX = 2000
HNSW_EF_SEARCH = 100
BOOKS_IN_COMMON_SHOWN = 8


def _vector_param(vector: Any) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


@dataclass(frozen=True)
class Standing:
    """Whether a reader can have kindred readers yet, and if not, why."""

    profile: SharingProfile
    centroid: ReaderCentroid | None

    @property
    def sharing(self) -> bool:
        return self.profile.discoverable

    @property
    def highlights(self) -> int:
        return self.centroid.highlight_count if self.centroid else 0

    @property
    def ready(self) -> bool:
        return (
            self.sharing
            and self.centroid is not None
            and self.centroid.vector is not None
            and self.highlights >= MIN_HIGHLIGHTS
        )

    @property
    def missing(self) -> int:
        return max(0, MIN_HIGHLIGHTS - self.highlights)


def standing_for(reader: User) -> Standing:
    profile = SharingProfile.objects.filter(reader=reader).first()
    if profile is None:
        profile = SharingProfile(reader=reader)
    return Standing(profile, ReaderCentroid.objects.filter(reader=reader).first())


@dataclass(frozen=True)
class KindredReader:
    profile: SharingProfile
    distance: float
    bridges: list[Bridge]
    # Every title both read, in the library's order: the first few are named inline, the
    # rest behind a disclosure ("and 20 more" once left the reader no way to see them).
    books_in_common: list[str]
    # Passages both highlighted word for word, in the books both read and share.
    passages_in_common: int = 0
    # The share of pairs of sharing readers less alike than these two (closeness_of), or
    # None with too few readers to tell.
    closer_than: int | None = None

    @property
    def closeness(self) -> str:
        return closeness_said(self.closer_than)

    @property
    def books_in_common_shown(self) -> list[str]:
        return self.books_in_common[:BOOKS_IN_COMMON_SHOWN]

    @property
    def more_books_in_common(self) -> list[str]:
        return self.books_in_common[BOOKS_IN_COMMON_SHOWN:]

    @property
    def similarity(self) -> float:
        return max(0.0, 1.0 - self.distance)

    @property
    def percent(self) -> int:
        return round(100 * self.similarity)


# --- nearest centroids -------------------------------------------------------------------------

# Comparable: same model, with enough highlights, sharing, not the reader.
_CANDIDATE = """
    c.embedding_model = %(model)s AND c.vector IS NOT NULL AND c.highlight_count >= %(min)s
    AND c.reader_id <> %(reader)s
    AND EXISTS (SELECT 1 FROM affinity_sharingprofile p
                WHERE p.reader_id = c.reader_id AND p.discoverable)
"""


def sharing_readers_count() -> int:
    """Readers who share: an upper bound of the candidates, counted on the partial index."""
    return SharingProfile.objects.filter(discoverable=True).count()


def other_sharing_readers(reader_id: int) -> int:
    """Readers other than this one who share, comparable yet or not (a reader whose
    centroid is still being worked out is among them, never among the kindred)."""
    return SharingProfile.objects.filter(discoverable=True).exclude(reader_id=reader_id).count()


def nearest_readers(
    centroid: ReaderCentroid, *, limit: int, strategy: str = "auto"
) -> list[tuple[int, float]]:
    """(reader id, cosine distance) of the sharing readers nearest to a centroid, closest
    first; only centroids of the same model, with enough highlights, never the reader."""
    if centroid.vector is None:
        return []
    if strategy == "auto":
        strategy = "hnsw" if sharing_readers_count() > EXACT_SCAN_MAX else "exact"
    candidate = _CANDIDATE
    params: dict[str, Any] = {
        "model": centroid.embedding_model,
        "min": MIN_HIGHLIGHTS,
        "reader": centroid.reader_id,
        "value": _vector_param(centroid.vector),
        "limit": limit,
    }
    if strategy == "exact":
        # MATERIALIZED: the candidates carry no index, so the ORDER BY is an exact sort.
        sql = f"""
            WITH candidates AS MATERIALIZED (
                SELECT c.reader_id, c.vector AS compared
                FROM affinity_readercentroid c WHERE {candidate}
            )
            SELECT reader_id, compared <=> %(value)s::vector AS distance FROM candidates
            ORDER BY distance, reader_id LIMIT %(limit)s
        """
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    elif strategy == "hnsw":
        # Relaxed order returns nearly sorted rows; the outer ORDER BY puts them right.
        sql = f"""
            WITH ranked AS MATERIALIZED (
                SELECT c.reader_id, c.vector <=> %(value)s::vector AS distance
                FROM affinity_readercentroid c WHERE {candidate}
                ORDER BY c.vector <=> %(value)s::vector LIMIT %(limit)s
            )
            SELECT reader_id, distance FROM ranked ORDER BY distance, reader_id
        """
        with iterative_scan(max(HNSW_EF_SEARCH, limit)) as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    else:
        raise ValueError(f"unknown strategy {strategy!r}")
    return [(int(reader_id), float(distance)) for reader_id, distance in rows]


# --- books in common ---------------------------------------------------------------------------


def _shared_book(alias: str) -> str:
    """SQL: the book `alias` has an alive highlight and its reader did not exclude it."""
    return f"""
        EXISTS (SELECT 1 FROM books_highlight h
                WHERE h.book_id = {alias}.id AND h.deleted_at IS NULL AND h.kind = 'highlight')
        AND NOT EXISTS (
            SELECT 1 FROM affinity_sharingprofile p
            JOIN affinity_sharingprofile_excluded_books x ON x.sharingprofile_id = p.id
            WHERE p.reader_id = {alias}.reader_id AND x.book_id = {alias}.id)
    """


def books_in_common(reader_id: int, other_ids: list[int]) -> dict[int, list[str]]:
    """Titles (as the reader has them) of the books both read, per other reader; only
    books each side shares and still has highlights in."""
    if not other_ids:
        return {}
    sql = f"""
        SELECT t.reader_id, m.title FROM books_book m
        JOIN books_book t ON t.key = m.key AND t.reader_id = ANY(%(others)s)
        WHERE m.reader_id = %(reader)s AND {_shared_book("m")} AND {_shared_book("t")}
          AND {discoverable_sql("t")}
        ORDER BY t.reader_id, m.title_sort, m.id
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"reader": reader_id, "others": other_ids})
        rows = cursor.fetchall()
    common: dict[int, list[str]] = {}
    for reader_id, title in rows:
        common.setdefault(reader_id, []).append(title)
    return common


def passages_in_common(reader_id: int, other_ids: list[int]) -> dict[int, int]:
    """How many passages the reader highlighted word for word as each other reader did, in
    the books both read and share: two readers of one book who marked the same lines are
    kindred in the plainest way, which bridges (pairs from different books) never show."""
    if not other_ids:
        return {}
    sql = f"""
        SELECT t.reader_id, count(DISTINCT m.id) FROM books_book mb
        JOIN books_book tb ON tb.key = mb.key AND tb.reader_id = ANY(%(others)s)
        JOIN books_highlight m ON m.book_id = mb.id
        JOIN books_highlight t ON t.book_id = tb.id AND t.text = m.text
        WHERE mb.reader_id = %(reader)s AND {_shared_book("mb")} AND {_shared_book("tb")}
          AND {discoverable_sql("tb")}
          AND m.deleted_at IS NULL AND t.deleted_at IS NULL
          AND m.kind = 'highlight' AND t.kind = 'highlight'
          AND NOT m.is_word AND NOT t.is_word AND m.text <> ''
        GROUP BY t.reader_id
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"reader": reader_id, "others": other_ids})
        return {int(reader_id): int(count) for reader_id, count in cursor.fetchall()}


# --- the list and the profile -----------------------------------------------------------------


def kindred_readers(standing: Standing, *, limit: int = 10) -> list[KindredReader]:
    """The sharing readers nearest to a ready reader, each with bridges and books in common.

    A fixed number of queries whatever `limit` is.
    """
    centroid = standing.centroid
    if not standing.ready or centroid is None:
        return []
    nearest = nearest_readers(centroid, limit=limit)
    if not nearest:
        return []
    ids = [reader_id for reader_id, _ in nearest]
    profiles = {
        p.reader_id: p for p in SharingProfile.objects.filter(reader_id__in=ids, discoverable=True)
    }
    centroids = list(ReaderCentroid.objects.filter(reader_id__in=list(profiles)))
    bridges = bridges_between(centroid, centroids)
    common = books_in_common(standing.profile.reader_id, list(profiles))
    same_passages = passages_in_common(standing.profile.reader_id, list(profiles))
    found = []
    for reader_id, distance in nearest:
        if reader_id not in profiles:  # stopped sharing since the first query
            continue
        titles = common.get(reader_id, [])
        found.append(
            KindredReader(
                profile=profiles[reader_id],
                distance=distance,
                bridges=bridges.get(reader_id, []),
                books_in_common=titles,
                passages_in_common=same_passages.get(reader_id, 0),
            )
        )
    return found


def distance_between(standing: Standing, other: SharingProfile) -> float | None:
    """Cosine distance between a ready reader's centroid and another sharing reader's, or
    None when they cannot be compared (too few highlights, another model)."""
    mine = standing.centroid
    if not standing.ready or mine is None:
        return None
    sql = f"""
        SELECT c.vector <=> %(value)s::vector FROM affinity_readercentroid c
        WHERE c.reader_id = %(other)s AND {_CANDIDATE}
    """
    params: dict[str, Any] = {
        "value": _vector_param(mine.vector),
        "other": other.reader_id,
        "model": mine.embedding_model,
        "min": MIN_HIGHLIGHTS,
        "reader": mine.reader_id,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return float(row[0]) if row else None


TOP_BOOKS = 8


@dataclass(frozen=True)
class TopBook:
    book: Book
    highlights: int


@dataclass(frozen=True)
class PublicProfile:
    profile: SharingProfile
    books: int
    # Passages and looked-up words apart, as the reader's map and words page count them.
    highlights: int
    words: int
    top_books: list[TopBook]


def public_profile(profile: SharingProfile) -> PublicProfile:
    """What other sharing readers may see: display name, counts and top books, all of the
    shared books only."""
    highlights = shared_highlights(profile.reader_id)
    totals = highlights.aggregate(
        n=Count("id", filter=Q(is_word=False)),
        words=Count("id", filter=Q(is_word=True)),
        books=Count("book", distinct=True),
    )
    counts = list(
        highlights.values_list("book_id")
        .annotate(n=Count("id"))
        .order_by("-n", "book_id")
        .values_list("book_id", "n")[:TOP_BOOKS]
    )
    books = Book.objects.in_bulk([book_id for book_id, _ in counts])
    top = [TopBook(books[book_id], n) for book_id, n in counts]
    return PublicProfile(profile, totals["books"], totals["n"], totals["words"], top)


# --- how alike, in a figure that separates readers --------------------------------------------

# The cosine of two centroids says little by itself: every large library's mean vector
# points the same way under e5 (on the libraries built here, any two of five readers' ranged
# 0.908 to 0.998, a Spanish-only library against an English one 0.91, two unrelated English
# libraries 0.99), so "99% alike" was shown for very different libraries. A pair is placed
# instead among the pairs of all sharing readers: "closer than 70% of pairs".
SPREAD_READERS = 400
# Fewer pairs than this (five readers make ten) and a share of them means nothing.
SPREAD_MIN_PAIRS = 10
# The pair itself is in the spread; its cosine there (float32 vectors, numpy) and the
# database's differ in the last digits.
SAME_COSINE = 1e-5


def similarity_spread(model: str) -> list[float]:
    """The cosine of every pair of comparable sharing readers' centroids, sorted (at most
    SPREAD_READERS readers, the same ones every time: the lowest ids)."""
    sharing = SharingProfile.objects.filter(discoverable=True).values("reader_id")
    vectors = list(
        ReaderCentroid.objects.filter(
            embedding_model=model,
            vector__isnull=False,
            highlight_count__gte=MIN_HIGHLIGHTS,
            reader_id__in=sharing,
        )
        .order_by("reader_id")
        .values_list("vector", flat=True)[:SPREAD_READERS]
    )
    if len(vectors) < 2:
        return []
    matrix = np.asarray(vectors, dtype=np.float64)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    cosines = (matrix @ matrix.T)[np.triu_indices(len(matrix), k=1)]
    return sorted(float(c) for c in cosines)


def closeness_of(similarity: float, spread: list[float]) -> int | None:
    """The share (0-100) of pairs in `spread` less alike than `similarity`."""
    if len(spread) < SPREAD_MIN_PAIRS:
        return None
    return round(100 * bisect.bisect_left(spread, similarity - SAME_COSINE) / len(spread))


def closeness_said(closer_than: int | None) -> str:
    """How alike a kindred reader is, in the reader's language: the words of the Kindred
    readers page, which `manage.py kindred` prints too."""
    if closer_than is None:
        return gettext("Among the nearest to you; too few readers share yet to say how close.")
    return gettext("Closer than %(share)s%% of pairs of readers here") % {"share": closer_than}


def with_closeness(found: list[KindredReader], standing: Standing) -> list[KindredReader]:
    if not found or standing.centroid is None:
        return found
    spread = similarity_spread(standing.centroid.embedding_model)
    return [
        dataclasses.replace(kindred, closer_than=closeness_of(kindred.similarity, spread))
        for kindred in found
    ]
