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
    ef_search: int = HNSW_EF_SEARCH,
) -> list[Neighbour]:
    """The reader's highlights closest to `vector`, closest first.

    `passages_only` leaves the reader's words out (books.vocabulary): connections never
    reach a word. `languages` keeps only highlights in those (books.language). `strategy`
    is "exact", "hnsw" or "auto" (by library size; pass `size` when it is already known, to
    save a count per call). `ef_search`: the HNSW scan's candidates per step.
    """
    if strategy == "auto":
        if size is None:
            size = library_size(reader_id=reader_id, model_id=model_id)
        strategy = "exact" if size <= EXACT_SCAN_MAX else "hnsw"
    conditions = [
        "reader_id = %(reader)s",
        "deleted_at IS NULL",
        "embedding_status = 'done'",
        "embedding_model = %(model)s",
    ]
    params: dict[str, Any] = {
        "reader": reader_id,
        "model": model_id,
        "vector": "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]",
        "limit": limit,
        "max_distance": 2.0 if max_distance is None else max_distance,
    }
    if exclude_book_id is not None:
        conditions.append("book_id <> %(book)s")
        params["book"] = exclude_book_id
    if passages_only:
        conditions.append("NOT is_word")
    if languages is not None:
        conditions.append("language = ANY(%(languages)s)")
        params["languages"] = list(languages)
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
                SELECT id, embedding <=> %(vector)s::vector AS distance
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
                SELECT id, embedding <=> %(vector)s::vector AS distance
                FROM books_highlight WHERE {where}
                ORDER BY embedding <=> %(vector)s::vector LIMIT %(limit)s
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
