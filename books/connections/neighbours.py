"""Nearest highlights in one reader's library by cosine distance, without silent recall loss.

HNSW answers "nearest in the whole table"; a reader's library is a filter on top of it.
Measured on pgvector 0.8.5 (100k rows): plain HNSW with the reader filter returned only
half of the true top 10 for a 1.3k-highlight reader (the index hands back ef_search
candidates, the filter throws most away); an exact scan of the reader's rows is cheapest
for small libraries but grows linearly; an iterative relaxed HNSW scan keeps recall for
large libraries as long as the distance cut sits *outside* it (inside, the scan runs on to
its tuple limit when too few rows pass). So: exact up to EXACT_SCAN_MAX highlights,
iterative HNSW above, distance cut outside. `python -m bench.bench_connections` measures
both side by side (158.5k rows, libraries of 1k to 100k).
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper

from books.statements import execute_with_settings

# Above this many embedded highlights in a library, the iterative HNSW scan wins: the exact
# scan costs ~2.6 µs of CPU a highlight (p95 9 ms at 2.5k, 15 ms at 5k on 2 cores), and
# the HNSW scan 5-10 ms whatever the size.
EXACT_SCAN_MAX = 2000
# Candidates the iterative scan keeps per step; higher trades speed for recall. With the
# index built at ef_construction=128 (migration 0005), measured from 1k to 100k highlights:
# 64 gave recall@10 0.983-0.995 from run to run, 80 gave 0.996-1.000 and 100 0.995-1.000,
# both at a p95 of 4 ms. At ef_construction=64 even 100 fell to 0.94 at 100k.
HNSW_EF_SEARCH = 80


def iterative_scan_settings(ef_search: int) -> dict[str, str | int]:
    """HNSW scans that go on past ef_search candidates until the LIMIT is met (relaxed
    order: the caller sorts the rows again)."""
    return {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": int(ef_search)}


@contextmanager
def iterative_scan(ef_search: int) -> Iterator[CursorWrapper]:
    """A cursor, in a transaction, whose HNSW scans are iterative (iterative_scan_settings):
    for a query the ORM runs. One statement of one's own runs in one round trip instead
    with books.statements.execute_with_settings."""
    with transaction.atomic(), connection.cursor() as cursor:
        for name, value in iterative_scan_settings(ef_search).items():
            cursor.execute(f"SET LOCAL {name} = {value}")
        yield cursor


# The vectors a neighbour can be sought by: the model's, the English model's, the theme
# model's.
VECTOR_COLUMNS = ("embedding", "english_embedding", "theme_embedding")


@dataclass(frozen=True)
class Neighbour:
    highlight_id: int
    distance: float


def library_size(*, reader_id: int, model_id: str) -> int:
    """The reader's embedded highlights, counted only up to EXACT_SCAN_MAX + 1: all that the
    choice of strategy needs. A full count reads every row (0.25 s at 100k highlights)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM (SELECT 1 FROM books_highlight WHERE reader_id = %s "
            "AND deleted_at IS NULL AND embedding_status = 'done' AND embedding_model = %s "
            "LIMIT %s) AS library",
            [reader_id, model_id, EXACT_SCAN_MAX + 1],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def nearest_highlights(
    *,
    reader_id: int,
    vector: Sequence[float],
    model_id: str,
    limit: int,
    max_distance: float | None = None,
    exclude_book_id: int | None = None,
    exclude_ids: Sequence[int] = (),
    passages_only: bool = False,
    languages: Sequence[str] | None = None,
    strategy: str = "auto",
    size: int | None = None,
    column: str = "embedding",
    ef_search: int = HNSW_EF_SEARCH,
) -> list[Neighbour]:
    """The reader's highlights closest to `vector`, closest first.

    `passages_only` leaves the reader's words out (books.vocabulary): connections never
    reach a word. `languages` keeps only highlights in those (books.language). `column` is
    the vectors compared (VECTOR_COLUMNS: the model's, the English model's, which only English
    passages have, or the theme model's). `strategy` is "exact", "hnsw" or "auto" (by library
    size; pass `size` when it is already known, to save a count per call). `ef_search`: the
    HNSW scan's candidates per step.
    """
    if column not in VECTOR_COLUMNS:
        raise ValueError(f"unknown vector column {column!r}")
    if strategy == "auto":
        if size is None:
            size = library_size(reader_id=reader_id, model_id=model_id)
        strategy = "exact" if size <= EXACT_SCAN_MAX else "hnsw"
    conditions, params = _library_conditions(
        column, languages=languages, passages_only=passages_only
    )
    params |= {
        "reader": reader_id,
        "model": model_id,
        "vector": "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]",
        "limit": limit,
        "max_distance": 2.0 if max_distance is None else max_distance,
    }
    if exclude_book_id is not None:
        conditions.append("book_id <> %(book)s")
        params["book"] = exclude_book_id
    if exclude_ids:
        conditions.append("NOT (id = ANY(%(exclude)s))")
        params["exclude"] = list(exclude_ids)
    where = " AND ".join(conditions)
    if strategy == "exact":
        # MATERIALIZED: the CTE's rows carry no index, so the ORDER BY is an exact sort
        # of the reader's rows (found through the reader btree), never a filtered HNSW.
        # The distance is computed inside it, so it holds 16 bytes a row, not the 1.5 kB
        # vector (a 20k library spilled 30 MB to disk that way, and took twice as long).
        sql = f"""
            WITH library AS MATERIALIZED (
                SELECT id, {column} <=> %(vector)s::vector AS distance
                FROM books_highlight WHERE {where}
            ), ranked AS (
                SELECT id, distance FROM library ORDER BY distance LIMIT %(limit)s
            )
            SELECT id, distance FROM ranked WHERE distance < %(max_distance)s
            ORDER BY distance
        """
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    elif strategy == "hnsw":
        # The distance cut stays outside the materialized scan (see the module comment).
        # `+ 0`: PostgreSQL 17+ takes the CTE's ORDER BY as the order of its rows and drops
        # the outer sort, but a relaxed scan returns them only roughly in order.
        sql = f"""
            WITH ranked AS MATERIALIZED (
                SELECT id, {column} <=> %(vector)s::vector AS distance
                FROM books_highlight WHERE {where}
                ORDER BY {column} <=> %(vector)s::vector LIMIT %(limit)s
            )
            SELECT id, distance FROM ranked WHERE distance < %(max_distance)s
            ORDER BY distance + 0
        """
        with connection.cursor() as cursor:
            execute_with_settings(cursor, iterative_scan_settings(ef_search), sql, params)
            rows = cursor.fetchall()
    else:
        raise ValueError(f"unknown strategy {strategy!r}")
    return [Neighbour(highlight_id=row[0], distance=float(row[1])) for row in rows]


# A space (a reader's passages with one kind of vector) is read whole and compared in numpy
# when that is cheaper than asking the HNSW index once a passage: reading costs ~12 µs a row
# (binary COPY), the index ~1.3-1.7 ms a query (a LATERAL statement for all of them).
# Measured on the real library's 6,004 English passages, under load: 256 queries took 165 ms
# read whole against 334 ms by the index, 16 queries 82 ms against 28. So read whole up to
# IN_MEMORY_ROWS_PER_QUERY rows a query, and never past IN_MEMORY_MAX rows (30 MB of
# vectors in a worker process kept under 450 MB).
IN_MEMORY_ROWS_PER_QUERY = 125
IN_MEMORY_MAX = 20_000


@dataclass(frozen=True)
class Query:
    """A passage whose neighbours are wanted: its id and book (left out of its answers)."""

    highlight_id: int
    book_id: int


def _library_conditions(
    column: str, *, languages: Sequence[str] | None, passages_only: bool, alias: str = ""
) -> tuple[list[str], dict[str, Any]]:
    """SQL conditions for the reader's (%(reader)s) highlights embedded by the model
    (%(model)s) with a vector in `column`: passages only, or in `languages`, if asked."""
    h = f"{alias}." if alias else ""
    conditions = [
        f"{h}reader_id = %(reader)s",
        f"{h}deleted_at IS NULL",
        f"{h}embedding_status = 'done'",
        f"{h}embedding_model = %(model)s",
        f"{h}{column} IS NOT NULL",
    ]
    params: dict[str, Any] = {}
    if passages_only:
        conditions.append(f"NOT {h}is_word")
    if languages is not None:
        conditions.append(f"{h}language = ANY(%(languages)s)")
        params["languages"] = list(languages)
    return conditions, params


# One row of `COPY (SELECT id, book_id, <vector>) TO STDOUT (FORMAT BINARY)`: a field count,
# then each field's length and bytes, big-endian; pgvector sends a vector as its dimension,
# an unused int16 and the floats. Read with one numpy view, not a Python object per number.
_SPACE_ROW = [
    ("fields", ">i2"), ("id_size", ">i4"), ("id", ">i8"), ("book_size", ">i4"),
    ("book", ">i8"), ("vector_size", ">i4"), ("dimensions", ">i2"), ("unused", ">i2"),
]  # fmt: skip
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00"


def _read_space(column: str, where: str, params: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(ids, book ids, vectors) of the passages of a space, in three numpy arrays."""
    import numpy as np

    sql = f"COPY (SELECT h.id, h.book_id, h.{column} FROM books_highlight h WHERE {where}) "
    data = bytearray()
    connection.ensure_connection()
    raw = connection.connection
    assert isinstance(raw, psycopg.Connection)
    with (
        psycopg.ClientCursor(raw) as cursor,
        cursor.copy(sql + "TO STDOUT (FORMAT BINARY)", params) as copy,
    ):
        for chunk in copy:
            data += chunk
    if not data.startswith(_COPY_HEADER):
        raise ValueError("unexpected COPY output")
    extension = int.from_bytes(data[15:19], "big")
    body = memoryview(data)[19 + extension : len(data) - 2]  # the header, the trailer
    if not body:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros((0, 0), dtype=np.float32)
    dimensions = int.from_bytes(body[30:32], "big")  # after the fields above it
    row = np.dtype([*_SPACE_ROW, ("vector", ">f4", (dimensions,))])
    rows = np.frombuffer(body, dtype=row)
    if (rows["fields"] != 3).any() or (rows["vector_size"] != 4 + 4 * dimensions).any():
        raise ValueError("unexpected COPY rows")
    ids, books = rows["id"].astype(np.int64), rows["book"].astype(np.int64)
    return ids, books, rows["vector"].astype(np.float32)


def nearest_each(
    *,
    reader_id: int,
    model_id: str,
    queries: Sequence[Query],
    column: str = "embedding",
    languages: Sequence[str] | None = None,
    limit: int,
) -> dict[int, list[Neighbour]]:
    """For each query passage, its `limit` nearest passages of the reader's other books in
    the vectors of `column` (VECTOR_COLUMNS), closest first. The queries' own vectors are
    read from their rows. Words never answer.

    One round trip for all the queries: the whole space when that is cheaper (compared in
    numpy, IN_MEMORY_ROWS_PER_QUERY), else one LATERAL statement over the HNSW index (an
    iterative scan, so the reader's and the book's filters do not cost recall; see the
    module comment).
    """
    if column not in VECTOR_COLUMNS:
        raise ValueError(f"unknown vector column {column!r}")
    if not queries:
        return {}
    conditions, params = _library_conditions(
        column, languages=languages, passages_only=True, alias="h"
    )
    where = " AND ".join(conditions)
    params |= {"reader": reader_id, "model": model_id, "limit": limit}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM books_highlight h WHERE {where} "
            "LIMIT %(size)s) AS space",
            params | {"size": IN_MEMORY_MAX + 1},
        )
        row = cursor.fetchone()
        size = int(row[0]) if row else 0
    if size == 0:
        return {q.highlight_id: [] for q in queries}
    if size <= min(IN_MEMORY_MAX, IN_MEMORY_ROWS_PER_QUERY * len(queries)):
        return _nearest_in_memory(queries, column, where, params, limit)
    return _nearest_by_index(queries, column, where, params, limit)


def _nearest_in_memory(
    queries: Sequence[Query], column: str, where: str, params: dict[str, Any], limit: int
) -> dict[int, list[Neighbour]]:
    import numpy as np

    ids, books, space = _read_space(column, where, params)
    row_of = {int(pk): i for i, pk in enumerate(ids)}
    asking = [q.highlight_id for q in queries]
    own = {pk: space[row_of[pk]] for pk in asking if pk in row_of}
    # A query outside the space (a passage asking for its nearest in another language).
    outside = [pk for pk in asking if pk not in own]
    if outside:
        found_ids, _, vectors = _read_space(
            column, f"h.id = ANY(%(ids)s) AND h.{column} IS NOT NULL", {"ids": outside}
        )
        own |= {int(pk): vector for pk, vector in zip(found_ids, vectors, strict=True)}
    rows = ids
    found: dict[int, list[Neighbour]] = {}
    asked = [q for q in queries if q.highlight_id in own]
    for q in queries:
        found[q.highlight_id] = []
    # In blocks of queries, so that a distance matrix never holds more than ~64 MB.
    block = max(1, (16 << 20) // max(1, len(rows)))
    for start in range(0, len(asked), block):
        part = asked[start : start + block]
        vectors = np.vstack([own[q.highlight_id] for q in part]).astype(np.float32)
        distances = 1.0 - vectors @ space.T
        own_book = books[None, :] == np.array([q.book_id for q in part])[:, None]
        distances[own_book] = np.inf
        k = min(limit, len(rows))
        nearest = np.argpartition(distances, k - 1, axis=1)[:, :k]
        for row, q in enumerate(part):
            picked = nearest[row][np.argsort(distances[row, nearest[row]], kind="stable")]
            found[q.highlight_id] = [
                Neighbour(highlight_id=int(ids[i]), distance=float(distances[row, i]))
                for i in picked
                if np.isfinite(distances[row, i])
            ]
    return found


def _nearest_by_index(
    queries: Sequence[Query], column: str, where: str, params: dict[str, Any], limit: int
) -> dict[int, list[Neighbour]]:
    # The distance cut is the caller's, outside; `+ 0` as in nearest_highlights: the relaxed
    # scan returns rows only roughly in order.
    sql = f"""
        SELECT q.id, n.id, n.distance FROM books_highlight q CROSS JOIN LATERAL (
            SELECT h.id, h.{column} <=> q.{column} AS distance
            FROM books_highlight h
            WHERE {where} AND h.book_id <> q.book_id
            ORDER BY h.{column} <=> q.{column} LIMIT %(limit)s
        ) AS n
        WHERE q.id = ANY(%(ids)s) AND q.{column} IS NOT NULL
        ORDER BY q.id, n.distance + 0
    """
    found: dict[int, list[Neighbour]] = {q.highlight_id: [] for q in queries}
    with connection.cursor() as cursor:
        settings = iterative_scan_settings(HNSW_EF_SEARCH)
        execute_with_settings(
            cursor, settings, sql, params | {"ids": [q.highlight_id for q in queries]}
        )
        for query_id, neighbour_id, distance in cursor.fetchall():
            found[query_id].append(Neighbour(highlight_id=neighbour_id, distance=float(distance)))
    return found
