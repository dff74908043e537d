"""How fast search answers in one reader's library of 1,000, 20,000 and 100,000 highlights.

Run it with `DEBUG=1 python -m bench.bench_search` (about 5 minutes on the 2-core machine).
Everything happens in a throw-away database (`bench.db.bench_database`), dropped at the end.

The libraries (three readers in one table, 121,000 rows) are made at run time from the
evaluation folder (EXOGRAM_EVAL_DIR, default ../shared/data/eval beside the checkout; none of
it is copied into the repository): STS-B sentences (English and Spanish) and quotable's quotes.

- **Vectors, real for the seeds, synthetic-but-consistent for the rest**: SEEDS texts are
  embedded by the real model. Highlight i of a library starts with seed i mod SEEDS; the first
  SEEDS highlights are the seed alone with its own vector, the others add one or two further
  sentences and get the seed's vector plus Gaussian noise (cosine ~0.9 to the seed), so a
  highlight's vector sits where its leading sentence's meaning is. The same for the theme
  model's vectors, when the model has it beside it: search reads its nearest too.
- **Queries**, drawn from the same texts, four kinds in turn: single words of four letters or
  more (half as likely as they are frequent, half drawn evenly), two- or three-word runs from
  a highlight, whole sentences from STS-B's other half (paraphrases of seeds, and sentences in
  no highlight; the slow case for the keyword half), and an author's name with a word ("what
  did Author 3 say about harbour"), which ranks the named books and then the whole library.
- **Measured**: `books.search.search()` end to end as the page calls it (page 1, 20 results,
  hydrated), with the query-vector cache cleared before each call, so the query's embedding is
  in every meaning and hybrid figure. p50/p95 ms per mode and size, and the encoder alone.
  The wall clock: on a machine shared with other work it also counts their turns, so the
  load average is printed with the figures (an encoder call for a short query takes ~7 ms
  on the idle 2-core machine; the `embed query` column shows what it took during the run).
"""

from __future__ import annotations

import csv
import json
import os
import random
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.db import bench_database, setup_django
from bench.paths import EVAL_DIR

DATABASE = "exogram_bench_search"
SIZES = (1_000, 20_000, 100_000)
SEEDS = 3_000
# Noise per dimension for the synthetic vectors: cosine to the seed's vector ~0.9.
NOISE = 0.025
BOOKS_PER_LIBRARY = 60
QUERIES = 120
WARMUP = 15
MODES = (("keyword", "keyword"), ("meaning", "meaning"), ("hybrid", "auto"))
TARGET_HYBRID_P95_MS = 50.0
SEED = 6

Matrix = npt.NDArray[np.float32]
_WORD = re.compile(r"[^\W\d_]{4,}")


@dataclass(frozen=True)
class Corpus:
    seeds: list[str]  # embedded for real
    others: list[str]  # further sentences, in no seed
    probes: list[str]  # whole-sentence queries: STS-B partners of seeds, and unseen ones


def read_corpus(rng: random.Random) -> Corpus:
    stsb = EVAL_DIR / "stsb"
    pairs: list[tuple[str, str]] = []
    for name in ("stsb-en-train.csv", "stsb-es-train.csv", "stsb-en-dev.csv"):
        path = stsb / name
        if not path.is_file():
            raise SystemExit(f"{path} is missing; set EXOGRAM_EVAL_DIR to the evaluation folder")
        with path.open(newline="", encoding="utf-8") as file:
            pairs += [(row[0].strip(), row[1].strip()) for row in csv.reader(file) if len(row) == 3]
    quotes_path = EVAL_DIR / "quotable" / "quotes.json"
    quotes = [q["content"].strip() for q in json.loads(quotes_path.read_text(encoding="utf-8"))]
    rng.shuffle(pairs)
    seen: set[str] = set()
    seeds: list[str] = []
    probes: list[str] = []
    others: list[str] = []
    for first, second in pairs:
        if first in seen or second in seen:
            continue
        seen |= {first, second}
        if len(seeds) < SEEDS:
            seeds.append(first)
            probes.append(second)  # its partner: a sentence that is not in the library
        else:
            others += [first, second]
    others += quotes
    rng.shuffle(others)
    return Corpus(seeds, others, probes)


def _unit(matrix: npt.NDArray[Any]) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: Matrix = (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


@dataclass
class Library:
    size: int
    reader_id: int
    texts: list[str]


def make_texts(corpus: Corpus, size: int, rng: random.Random) -> tuple[list[str], list[int]]:
    """Each highlight's text and the seed it starts with."""
    texts, seeds = [], []
    for i in range(size):
        seed = i % len(corpus.seeds)
        extra = [] if i < len(corpus.seeds) else rng.sample(corpus.others, rng.randint(1, 2))
        texts.append(" ".join([corpus.seeds[seed], *extra]))
        seeds.append(seed)
    return texts, seeds


def _noisy(seed_vectors: Matrix, seeds: list[int], seeded: int, rng: random.Random) -> Matrix:
    """Each highlight's vector: its seed's, plus noise past the first `seeded` (cosine ~0.9
    to the seed whatever the dimensions)."""
    size, dimensions = len(seeds), seed_vectors.shape[1]
    scale = NOISE * np.sqrt(384 / dimensions)
    noise = np.random.default_rng(rng.randrange(2**32)).normal(scale=scale, size=(size, dimensions))
    vectors = seed_vectors[seeds] + noise.astype(np.float32)
    vectors[: min(size, seeded)] = seed_vectors[seeds[:seeded]]
    return _unit(vectors)


def load_library(
    size: int,
    corpus: Corpus,
    seed_vectors: Matrix,
    model_id: str,
    rng: random.Random,
    theme_vectors: Matrix | None = None,
) -> Library:
    """One reader's library, COPYed in: every column the ORM does not compute here comes from
    a template row made by the ORM, so the load follows the model whatever columns it grows."""
    from django.db import connection, transaction
    from pgvector.psycopg.vector import register_vector_info
    from psycopg.types import TypeInfo

    from accounts.models import User
    from books.importing.clippings import normalize_author
    from books.models import Book, Highlight, search_text_of

    reader = User.objects.create_user(f"bench-search-{size}")
    # authors_normalized as an import writes it: search recognises a name among the words
    # by it (books.search.names), and without it no "name" query named a book.
    books = [
        Book.objects.create(
            reader=reader,
            title=f"Bench book {n}",
            authors=f"Author {n % 17}",
            authors_normalized=normalize_author(f"Author {n % 17}"),
            key=f"{n}",
        )
        for n in range(BOOKS_PER_LIBRARY)
    ]
    template = Highlight.objects.create(
        reader=reader, book=books[0], text="template", dedupe_key="bench-template"
    )
    texts, seeds = make_texts(corpus, size, rng)
    vectors = _noisy(seed_vectors, seeds, len(corpus.seeds), rng)
    themes = None if theme_vectors is None else _noisy(theme_vectors, seeds, len(corpus.seeds), rng)
    now = datetime.now(UTC)
    columns = [str(f.column) for f in Highlight._meta.concrete_fields if not f.primary_key]
    computed = {
        "book_id": "s.book_id",
        "code": "gen_random_uuid()",
        "text": "s.text",
        "search_text": "s.search_text",
        "added_at": "s.added_at",
        "dedupe_key": "'bench-' || s.n",
        "embedding": "s.embedding",
        "theme_embedding": "s.theme_embedding",
        "embedding_model": "%(model)s",
        "embedding_status": "%(done)s",
        "source_import_id": "NULL",
    }
    select = ", ".join(computed.get(column, f"t.{column}") for column in columns)
    with transaction.atomic(), connection.cursor() as wrapper:
        wrapper.execute(
            "CREATE TEMPORARY TABLE bench_staging (n bigint PRIMARY KEY, book_id bigint, "
            "text text, search_text text, added_at timestamptz, embedding vector(384), "
            "theme_embedding vector(512)) ON COMMIT DROP"
        )
        cursor = wrapper.cursor
        register_vector_info(cursor, TypeInfo.fetch(connection.connection, "vector"))
        with cursor.copy(
            "COPY bench_staging (n, book_id, text, search_text, added_at, embedding, "
            "theme_embedding) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int8", "int8", "text", "text", "timestamptz", "vector", "vector"])
            for n in range(size):
                book = books[n % BOOKS_PER_LIBRARY]
                searchable = search_text_of(texts[n], "")
                added = now - timedelta(days=rng.uniform(0, 730))
                theme = None if themes is None else themes[n]
                copy.write_row((n, book.pk, texts[n], searchable, added, vectors[n], theme))
        wrapper.execute(
            f"INSERT INTO books_highlight ({', '.join(columns)}) SELECT {select} "
            "FROM bench_staging s CROSS JOIN books_highlight t WHERE t.id = %(template)s "
            "ORDER BY s.n",
            {"model": model_id, "done": Highlight.EmbeddingStatus.DONE, "template": template.pk},
        )
    template.delete()
    return Library(size, reader.pk, texts)


KINDS = ("word", "words", "sentence", "name")


def make_queries(
    library: Library, corpus: Corpus, rng: random.Random, count: int
) -> list[tuple[str, str]]:
    """(query, kind) pairs, the four kinds in turn."""
    vocabulary = Counter(w.casefold() for t in library.texts for w in _WORD.findall(t))
    words, weights = zip(*vocabulary.items(), strict=True)
    queries = []
    for n in range(count):
        kind = KINDS[n % len(KINDS)]
        if kind == "word":
            # Half the words as likely as they are frequent ("that", "mujer"), half drawn
            # evenly from the vocabulary, where rare words are the many ("esponjoso").
            if n % 2:
                queries.append((rng.choices(words, weights=weights)[0], kind))
            else:
                queries.append((rng.choice(words), kind))
        elif kind == "words":
            tokens = rng.choice(library.texts).split()
            width = min(len(tokens), rng.randint(2, 3))
            start = rng.randrange(len(tokens) - width + 1)
            queries.append((" ".join(tokens[start : start + width]).strip(".,;:!?\"'"), kind))
        elif kind == "sentence":
            queries.append((rng.choice(corpus.probes), kind))
        else:
            # An author of the library and a word: the named books' highlights come first.
            author = f"Author {rng.randrange(17)}"
            queries.append((f"what did {author} say about {rng.choice(words)}", kind))
    return queries


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    array = np.array(values)
    return {
        "p50_ms": round(float(np.percentile(array, 50)), 1),
        "p95_ms": round(float(np.percentile(array, 95)), 1),
    }


def measure(library: Library, queries: Sequence[tuple[str, str]]) -> dict[str, Any]:
    from accounts.models import User
    from books.embedding.encoder import get_encoder
    from books.search.search import clear_query_cache, search

    reader = User.objects.get(pk=library.reader_id)
    encoder = get_encoder()
    row: dict[str, Any] = {"size": library.size, "queries": len(queries)}
    timings: dict[tuple[str, str], list[float]] = {
        (name, kind): [] for name, _ in MODES for kind in KINDS
    }
    counts: dict[str, list[int]] = {name: [] for name, _ in MODES}
    used: dict[str, Counter[str]] = {name: Counter() for name, _ in MODES}
    for number, (query, kind) in enumerate([*queries[:WARMUP], *queries]):
        for name, mode in MODES:
            clear_query_cache()  # the query's embedding belongs in the figure
            started = time.perf_counter()
            found = search(reader, query, mode=mode)
            elapsed = 1000 * (time.perf_counter() - started)
            if number >= WARMUP:
                timings[name, kind].append(elapsed)
                counts[name].append(found.total)
                how = found.mode_used + (f"/{found.keyword_pass}" if found.keyword_pass else "")
                how += "/named" if found.named_first else ""
                used[name][how] += 1
    encoding = []
    for query, _ in queries:
        started = time.perf_counter()
        encoder.encode_one(query)
        encoding.append(1000 * (time.perf_counter() - started))
    for name, _ in MODES:
        every = [t for kind in KINDS for t in timings[name, kind]]
        row[name] = {
            **_percentiles(every),
            "by_kind": {kind: _percentiles(timings[name, kind]) for kind in KINDS},
            "mean_results": round(statistics.mean(counts[name]), 1),
            "runs": dict(used[name]),
        }
    row["query_embedding"] = _percentiles(encoding)
    return row


def _timed(label: str, action: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    result = action()
    print(f"  {label}: {time.perf_counter() - started:.1f} s", flush=True)
    return result


def run(*, sizes: Sequence[int] = SIZES, queries: int = QUERIES) -> dict[str, Any]:
    setup_django()
    from books.embedding.encoder import get_encoder, get_encoders

    rng = random.Random(SEED)
    started = time.perf_counter()
    encoder = get_encoder()
    corpus = read_corpus(rng)
    seed_vectors: Matrix = _timed(
        f"embed {len(corpus.seeds)} seed texts", lambda: encoder.encode(corpus.seeds)
    )
    encoders = get_encoders()
    theme_vectors: Matrix | None = None
    if encoders.with_theme:
        theme_vectors = _timed(
            f"theme vectors of {len(corpus.seeds)} seed texts",
            lambda: encoders.encode_theme(corpus.seeds),
        )
    with bench_database(DATABASE) as database:
        from django.db import connection

        print(f"bench_search: database {database}", flush=True)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'books_highlight' "
                "AND (indexdef LIKE '%%USING hnsw%%' OR indexdef LIKE '%%USING gin%%')"
            )
            hnsw = cursor.fetchall()
            # One graph build over all rows beats growing it row by row (minutes, not an hour);
            # the same for the keyword index (three tsvectors a row).
            for name, _ in hnsw:
                cursor.execute(f'DROP INDEX "{name}"')
        libraries = [
            _timed(
                f"load {size} highlights",
                partial(
                    load_library,
                    size,
                    corpus,
                    seed_vectors,
                    encoders.model_id,
                    rng,
                    theme_vectors=theme_vectors,
                ),
            )
            for size in sizes
        ]
        with connection.cursor() as cursor:
            began = time.perf_counter()
            cursor.execute("SET maintenance_work_mem = '1GB'")
            for _, definition in hnsw:
                cursor.execute(definition)
            cursor.execute("RESET maintenance_work_mem")
            cursor.execute("VACUUM ANALYZE books_highlight")
            print(f"  HNSW + GIN build, VACUUM ANALYZE: {time.perf_counter() - began:.1f} s")
        rows = []
        for library in libraries:
            asked = make_queries(library, corpus, rng, queries)
            rows.append(_timed(f"queries at {library.size}", partial(measure, library, asked)))
    largest = max(rows, key=lambda row: row["size"])
    report: dict[str, Any] = {
        "rows_in_table": sum(sizes),
        "seeds_embedded": len(corpus.seeds),
        "model": get_encoders().model_id,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "libraries": rows,
        "aim": {"hybrid_p95_ms_at_largest": TARGET_HYBRID_P95_MS},
        "meets_aim": largest["hybrid"]["p95_ms"] <= TARGET_HYBRID_P95_MS,
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    _print_table(report)
    print(json.dumps(report))
    return report


def _print_table(report: dict[str, Any]) -> None:
    print()
    print(
        f"{report['rows_in_table']} highlights in the table, {report['seeds_embedded']} real "
        f"seed vectors; load average {report['load_average']}"
    )
    print("p50 / p95 ms, wall clock")
    print(f"{'library':>9}  " + "  ".join(f"{name:>15}" for name, _ in MODES) + "  embed query")
    for row in report["libraries"]:
        cells = [f"{row[name]['p50_ms']:.1f} / {row[name]['p95_ms']:.1f}" for name, _ in MODES]
        embed = row["query_embedding"]
        print(
            f"{row['size']:>9}  "
            + "  ".join(f"{c:>15}" for c in cells)
            + f"  {embed['p50_ms']:.1f} / {embed['p95_ms']:.1f}"
        )
    print("hybrid by query kind, p50 / p95 ms:")
    for row in report["libraries"]:
        kinds = row["hybrid"]["by_kind"]
        cells = [
            f"{kind} {kinds[kind]['p50_ms']:.1f} / {kinds[kind]['p95_ms']:.1f}" for kind in KINDS
        ]
        print(f"{row['size']:>9}  " + "   ".join(cells))
    print(f"aim: hybrid p95 <= {TARGET_HYBRID_P95_MS} ms at the largest: {report['meets_aim']}")


if __name__ == "__main__":
    run()
