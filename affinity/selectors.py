"""Kindred readers: the nearest sharing readers by centroid, and what bridges two libraries.

Everything here reads only what sharing readers share: a reader appears only while their
profile is discoverable, and a book they excluded never shows (nor counts) anywhere.

Nearest centroids: compared by their positions in the model's reading space (32 numbers;
the raw centroids while there is none, see affinity.models.ReadingSpace), by an exact scan
up to EXACT_SCAN_MAX sharing readers and an iterative HNSW scan above (the trade-off of
books.connections.neighbours, whose module comment has the measurements).

Bridges: the K highlights of each side closest to the other side's centroid, then every
pair between the two small sets. The cost is one scan of each library, never the product
of the two (20,000 by 20,000 would be 400 million distances).
"""

from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count

from accounts.models import User
from affinity.models import ReaderCentroid, SharingProfile
from affinity.services import (
    MIN_HIGHLIGHTS,
    discoverable_sql,
    shared_highlights,
    shared_vector_sql,
)
from books.connections.neighbours import iterative_scan
from books.models import Book, Highlight

# Above this many comparable sharing readers, the iterative HNSW scan wins.
EXACT_SCAN_MAX = 2000
HNSW_EF_SEARCH = 100
# Highlights of each side taken toward the other side's centroid; K by K pairs are scored.
BRIDGE_CANDIDATES = 32
BRIDGES_SHOWN = 5
# A pair further apart than this explains nothing; fewer bridges are shown rather than it.
BRIDGE_MAX_DISTANCE = 0.65
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
class Bridge:
    """One highlight of yours and one of theirs, from different books, close in meaning."""

    mine: Highlight
    theirs: Highlight
    distance: float

    @property
    def similarity(self) -> float:
        return 1.0 - self.distance


@dataclass(frozen=True)
class KindredReader:
    profile: SharingProfile
    distance: float
    bridges: list[Bridge]
    books_in_common: list[str]
    more_books_in_common: int = 0

    @property
    def similarity(self) -> float:
        return max(0.0, 1.0 - self.distance)

    @property
    def percent(self) -> int:
        return round(100 * self.similarity)


# --- nearest centroids -------------------------------------------------------------------------

# Comparable: same model, with enough highlights, placed in the same version of its
# reading space (or, version 0, in none yet). `{column}` is the one compared: `position`,
# or the raw `vector` while there is no reading space.
_CANDIDATE = """
    c.embedding_model = %(model)s AND c.space_version = %(version)s
    AND c.{column} IS NOT NULL AND c.highlight_count >= %(min)s
    AND c.reader_id <> %(reader)s
    AND EXISTS (SELECT 1 FROM affinity_sharingprofile p
                WHERE p.reader_id = c.reader_id AND p.discoverable)
"""


def sharing_readers_count() -> int:
    """Readers who share: an upper bound of the candidates, counted on the partial index."""
    return SharingProfile.objects.filter(discoverable=True).count()


def _compared(centroid: ReaderCentroid) -> tuple[str, Any]:
    """The column compared and this centroid's value of it."""
    if centroid.space_version > 0 and centroid.position is not None:
        return "position", centroid.position
    return "vector", centroid.vector


def nearest_readers(
    centroid: ReaderCentroid, *, limit: int, strategy: str = "auto"
) -> list[tuple[int, float]]:
    """(reader id, cosine distance) of the sharing readers nearest to a centroid, closest
    first; only centroids of the same model, with enough highlights, never the reader."""
    column, value = _compared(centroid)
    if value is None:
        return []
    if column == "vector":
        # No reading space yet: a handful of readers, and no index on raw vectors.
        strategy = "exact"
    elif strategy == "auto":
        strategy = "hnsw" if sharing_readers_count() > EXACT_SCAN_MAX else "exact"
    candidate = _CANDIDATE.format(column=column)
    params: dict[str, Any] = {
        "model": centroid.embedding_model,
        "version": centroid.space_version,
        "min": MIN_HIGHLIGHTS,
        "reader": centroid.reader_id,
        "value": _vector_param(value),
        "limit": limit,
    }
    if strategy == "exact":
        # MATERIALIZED: the candidates carry no index, so the ORDER BY is an exact sort.
        sql = f"""
            WITH candidates AS MATERIALIZED (
                SELECT c.reader_id, c.{column} AS compared
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
                SELECT c.reader_id, c.position <=> %(value)s::vector AS distance
                FROM affinity_readercentroid c WHERE {candidate}
                ORDER BY c.position <=> %(value)s::vector LIMIT %(limit)s
            )
            SELECT reader_id, distance FROM ranked ORDER BY distance, reader_id
        """
        with iterative_scan(max(HNSW_EF_SEARCH, limit)) as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    else:
        raise ValueError(f"unknown strategy {strategy!r}")
    return [(int(reader_id), float(distance)) for reader_id, distance in rows]


# --- bridges -----------------------------------------------------------------------------------


def bridges_between(
    centroid: ReaderCentroid, others: list[ReaderCentroid], *, shown: int = BRIDGES_SHOWN
) -> dict[int, list[Bridge]]:
    """The closest pairs (one of the reader's, one of each other reader's, from different
    books) among the K highlights of each side nearest the other side's centroid.

    One statement for all the other readers plus one to load the highlights, whatever
    their number.
    """
    others = [o for o in others if o.vector is not None]
    if centroid.vector is None or not others:
        return {}
    # Only ids and distances are ranked and sorted; the vectors of the few candidates
    # are read again for the pairs (carrying 20,000 vectors through a sort spills to disk).
    sql = f"""
        WITH others AS MATERIALIZED (
            SELECT c.reader_id, c.vector FROM affinity_readercentroid c
            WHERE c.reader_id = ANY(%(others)s) AND c.embedding_model = %(model)s
              AND c.vector IS NOT NULL AND {discoverable_sql("c")}
        ), mine_ranked AS (
            -- one pass over the reader's rows, each measured against every other centroid
            SELECT o.reader_id, h.id, row_number() OVER (
                       PARTITION BY o.reader_id ORDER BY h.embedding <=> o.vector, h.id
                   ) AS rank
            FROM books_highlight h CROSS JOIN others o
            WHERE h.reader_id = %(reader)s AND {shared_vector_sql("h")}
        ), theirs_ranked AS (
            SELECT h.reader_id, h.id, row_number() OVER (
                       PARTITION BY h.reader_id ORDER BY h.embedding <=> %(vector)s::vector, h.id
                   ) AS rank
            FROM books_highlight h
            WHERE h.reader_id IN (SELECT reader_id FROM others) AND {shared_vector_sql("h")}
        ), my_side AS MATERIALIZED (
            SELECT r.reader_id, h.id, b.key, h.embedding FROM mine_ranked r
            JOIN books_highlight h ON h.id = r.id JOIN books_book b ON b.id = h.book_id
            WHERE r.rank <= %(k)s
        ), their_side AS MATERIALIZED (
            SELECT r.reader_id, h.id, b.key, h.embedding FROM theirs_ranked r
            JOIN books_highlight h ON h.id = r.id JOIN books_book b ON b.id = h.book_id
            WHERE r.rank <= %(k)s
        ), pairs AS (
            SELECT m.reader_id, m.id AS mine, t.id AS theirs,
                   m.embedding <=> t.embedding AS distance
            FROM my_side m JOIN their_side t ON t.reader_id = m.reader_id AND t.key <> m.key
        ), ranked AS (
            SELECT *, row_number() OVER (
                PARTITION BY reader_id ORDER BY distance, mine, theirs) AS rank
            FROM pairs WHERE distance < %(max_distance)s
        )
        SELECT reader_id, mine, theirs, distance FROM ranked
        WHERE rank <= %(kept)s ORDER BY reader_id, rank
    """
    params: dict[str, Any] = {
        "reader": centroid.reader_id,
        "model": centroid.embedding_model,
        "vector": _vector_param(centroid.vector),
        "others": [o.reader_id for o in others],
        "k": BRIDGE_CANDIDATES,
        "max_distance": BRIDGE_MAX_DISTANCE,
        # Enough ranked pairs that `shown` of them use distinct highlights on both sides.
        "kept": shown * 6,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    chosen: dict[int, list[tuple[int, int, float]]] = {}
    used: dict[int, set[int]] = {}
    for reader_id, mine, theirs, distance in rows:
        picked = chosen.setdefault(reader_id, [])
        seen = used.setdefault(reader_id, set())
        # One highlight in one bridge only: five bridges from one passage explain little.
        if len(picked) < shown and mine not in seen and theirs not in seen:
            picked.append((mine, theirs, float(distance)))
            seen |= {mine, theirs}
    ids = {pk for picked in chosen.values() for mine, theirs, _ in picked for pk in (mine, theirs)}
    highlights = Highlight.objects.select_related("book").in_bulk(list(ids))
    return {
        reader_id: [Bridge(highlights[m], highlights[t], d) for m, t, d in picked]
        for reader_id, picked in chosen.items()
    }


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
        ORDER BY t.reader_id, m.title
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"reader": reader_id, "others": other_ids})
        rows = cursor.fetchall()
    common: dict[int, list[str]] = {}
    for reader_id, title in rows:
        common.setdefault(reader_id, []).append(title)
    return common


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
                books_in_common=titles[:BOOKS_IN_COMMON_SHOWN],
                more_books_in_common=max(0, len(titles) - BOOKS_IN_COMMON_SHOWN),
            )
        )
    return found


def distance_between(standing: Standing, other: SharingProfile) -> float | None:
    """Cosine distance between a ready reader's centroid and another sharing reader's, or
    None when they cannot be compared (too few highlights, another model or space)."""
    mine = standing.centroid
    if not standing.ready or mine is None:
        return None
    column, value = _compared(mine)
    sql = f"""
        SELECT c.{column} <=> %(value)s::vector FROM affinity_readercentroid c
        WHERE c.reader_id = %(other)s AND {_CANDIDATE.format(column=column)}
    """
    params: dict[str, Any] = {
        "value": _vector_param(value),
        "other": other.reader_id,
        "version": mine.space_version,
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
    highlights: int
    top_books: list[TopBook]


def public_profile(profile: SharingProfile) -> PublicProfile:
    """What other sharing readers may see: display name, counts and top books, all of the
    shared books only."""
    highlights = shared_highlights(profile.reader_id)
    totals = highlights.aggregate(n=Count("id"), books=Count("book", distinct=True))
    counts = list(
        highlights.values_list("book_id")
        .annotate(n=Count("id"))
        .order_by("-n", "book_id")
        .values_list("book_id", "n")[:TOP_BOOKS]
    )
    books = Book.objects.in_bulk([book_id for book_id, _ in counts])
    top = [TopBook(books[book_id], n) for book_id, n in counts]
    return PublicProfile(profile, totals["books"], totals["n"], top)
