"""The meaning side: the query's vector (cached per process), the nearest highlights, and
the floor that keeps only close matches.

The query's vector comes from the same encoder as the highlights'; the nearest highlights
by cosine distance through books.connections.neighbours (exact for small libraries,
iterative HNSW for large ones, so the reader filter never silently loses recall), cut at a
relevance floor (per model) so that the count is of close matches, not of the top 100.

Beside e5, the theme model (books.embedding.theme) when the model's profile has it: e5 puts a
same-language passage on another topic nearer than a passage on the query's theme in another
language ("miedo al fracaso" found only Spanish passages), the theme model much less so. Its
nearest within its own floor are merged into the meaning half by reciprocal rank
(`with_theme`), each result keeping e5's distance, so a percentage means one thing.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from django.db import connection
from django.db.models import QuerySet
from pgvector.django import CosineDistance

from accounts.models import User
from books.connections.neighbours import (
    EXACT_SCAN_MAX,
    Neighbour,
    iterative_scan,
    nearest_highlights,
)
from books.embedding.profiles import (
    DEFAULT_SEARCH_MARGIN,
    DEFAULT_SEARCH_MAX_DISTANCE,
    THEME_SEARCH_MARGIN,
    THEME_SEARCH_MAX_DISTANCE,
    THEME_SEARCH_WEIGHT,
    ModelProfile,
    profile_for_model_id,
)
from books.models import Highlight
from books.search.fusion import DEPTH, RRF_K
from books.text import WORD, fold

if TYPE_CHECKING:
    from books.embedding.encoder import Encoder, Encoders

# A meaning result farther than this (cosine distance) shares nothing with the query worth
# showing, and a close match is at most MEANING_MARGIN behind the best one, unless the
# model's profile says otherwise (books.embedding.profiles; docs/models.md says why).
MEANING_MAX_DISTANCE = DEFAULT_SEARCH_MAX_DISTANCE
MEANING_MARGIN = DEFAULT_SEARCH_MARGIN
QUERY_CACHE_SIZE = 256
# The HNSW scan's candidates per step when a search reads its DEPTH (100) nearest: at
# books.connections.neighbours' 80 a first step can never yield 100, and the iterative scan
# always took a second one (a third past other readers' rows and the reader's words).
# Measured in bench_search's library of 100,000 among 121,000 (four rounds of 120 fresh
# query vectors, PostgreSQL CPU per scan, load average 5-6 on the 2 shared cores): 80
# took 9.0-10.3 ms, 120 6.9-8.0, 160 8.2-10.7.
SEARCH_EF_SEARCH = 120
# A library narrowed by a filter (a book, an author, dates, the books a query names) is
# sorted exactly up to this many highlights, past books.connections.neighbours'
# EXACT_SCAN_MAX: a filtered HNSW scan walks on past every row the filter leaves out, so
# it costs more the smaller the share it keeps. Measured in bench_search's library of
# 100,000 (PostgreSQL CPU per query, median, whole books as the filter, load average 8-9
# on the 2 shared cores), exact against iterative HNSW: 1,667 highlights 3.1 / 3.1 ms,
# 6,668 24 / 81, 13,336 45 / 71, 25,005 113 / 46, 50,010 120 / 27.
FILTERED_EXACT_SCAN_MAX = 10_000
# The theme half reads this many nearest first, not DEPTH: its floor keeps few of them (a
# median of 1 and at most 34 of 1,639 evaluate_search queries, at most 31 of 130 on the
# realistic library), and its scan cost by its depth (realistic library, EXPLAIN: 5.4 ms for
# DEPTH at ef_search 120, 2.2 for 50 at 60). Only when its floor keeps all of them are DEPTH
# read, so what it finds is what DEPTH would find (docs/evaluation.md, 2026-12-06, "the
# theme half's cost").
THEME_FIRST_DEPTH = 50
THEME_FIRST_EF_SEARCH = 60
# A query whose every word (of FRAGMENT_MIN_LETTERS letters or more, in Latin letters) the
# model reads as letters, not words, has no meaning half: e5 puts such a vector within its
# floor of short passages. A word reads as letters when the model cuts it into pieces of
# FRAGMENT_LETTERS letters or fewer, on average ("xyzzyqwrtplk" is eight pieces; measured on
# the evaluation library: docs/evaluation.md, 2026-12-06, "A query that means nothing,
# again"), and, when it is shorter than FRAGMENT_LONG_FROM letters, its pieces are rare ones
# as well: fewer than FRAGMENT_LOG_PROB per letter in the model's vocabulary (e5's Unigram
# scores). Two pieces say nothing of a short word: "swan", "luto", "envy" are two, as are
# "hjkl" and "qwer"; but "▁s"+"wan" is common text (-4.5 a letter) and "▁hj"+"kl" is not
# (-6.4). Measured on 186 real words of en/es/de/pt/fr and 53 keyboard mashes
# (docs/evaluation.md, 2026-12-07, "Short words read as letters").
FRAGMENT_LETTERS = 2.0
FRAGMENT_MIN_LETTERS = 4
FRAGMENT_LONG_FROM = 7
FRAGMENT_LOG_PROB = -5.7
_LATIN_WORD = re.compile(r"[a-z]+")


_query_vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
_query_vectors_lock = threading.Lock()


def query_vector(encoder: Encoder, text: str) -> list[float]:
    """The query's vector; a repeated query (the next page, a changed filter) is not re-run.

    Keyed by model id, so a model change never serves a vector of the old model. Per
    process and only a speed-up: two processes computing the same vector agree anyway.
    """
    key = (encoder.vectors_id, text)
    with _query_vectors_lock:
        vector = _query_vectors.get(key)
        if vector is not None:
            _query_vectors.move_to_end(key)
            return vector
    vector = [float(x) for x in encoder.encode_one(text)]
    with _query_vectors_lock:
        _query_vectors[key] = vector
        while len(_query_vectors) > QUERY_CACHE_SIZE:
            _query_vectors.popitem(last=False)
    return vector


def theme_query_vector(encoders: Encoders, text: str) -> list[float] | None:
    """The query's theme vector (cached like `query_vector`); None when the model has no
    theme model beside it or its wheel is missing: e5 alone then, as before."""
    from books.embedding.encoder import EncoderUnavailable
    from books.embedding.theme import THEME_MODEL_ID

    if not encoders.with_theme:
        return None
    key = (THEME_MODEL_ID, text)
    with _query_vectors_lock:
        vector = _query_vectors.get(key)
        if vector is not None:
            _query_vectors.move_to_end(key)
            return vector
    try:
        vector = [float(x) for x in encoders.encode_theme([text])[0]]
    except EncoderUnavailable:
        return None
    with _query_vectors_lock:
        _query_vectors[key] = vector
        while len(_query_vectors) > QUERY_CACHE_SIZE:
            _query_vectors.popitem(last=False)
    return vector


def in_reading_case(encoder: Encoder, text: str) -> str:
    """The text with each word typed in capitals ("LÍDER", "MEMORY") in lower case where the
    model cuts the lower-case form into fewer pieces: its vocabulary is cased, and a word in
    capitals is rare in what it read, so "LÍDER" is three pieces to e5 ("líder" one) and
    reads as letters. An acronym it knows whole ("NASA", "UNESCO") is left as typed."""

    def lowered(match: re.Match[str]) -> str:
        word = match.group(0)
        if len(word) < 2 or not word.isupper():
            return word
        lower = word.lower()
        return lower if encoder.pieces(lower) < encoder.pieces(word) else word

    return WORD.sub(lowered, text)


def reads_as_fragments(encoder: Encoder, text: str) -> bool:
    """Whether the model reads every word of `text` as letters, not words (FRAGMENT_LETTERS,
    FRAGMENT_LOG_PROB). Words in other scripts (Chinese, Russian) are never counted as
    fragments."""
    words = [word for word in WORD.findall(text) if len(word) >= FRAGMENT_MIN_LETTERS]
    if not words:
        return False
    return all(_reads_as_letters(encoder, word) for word in words)


def _reads_as_letters(encoder: Encoder, word: str) -> bool:
    if not _LATIN_WORD.fullmatch(fold(word)):
        return False
    if len(word) / max(1, encoder.pieces(word)) > FRAGMENT_LETTERS:
        return False
    if len(word) >= FRAGMENT_LONG_FROM:
        return True
    log_likelihood = encoder.log_likelihood(word)
    # A tokenizer without scores (a model folder's): its pieces alone, as before.
    return log_likelihood is None or log_likelihood / len(word) < FRAGMENT_LOG_PROB


def clear_query_cache() -> None:
    with _query_vectors_lock:
        _query_vectors.clear()


def _rows_up_to(highlights: QuerySet[Highlight], cap: int) -> int:
    """How many rows, counted no further than `cap`: enough to choose a strategy."""
    sql, params = highlights.values("id").query.sql_with_params()
    return _count_up_to(sql, params, cap)


def _reader_rows_up_to(reader_id: int, cap: int, book_ids: Collection[int] | None = None) -> int:
    """The reader's rows (in `book_ids`, if given), deleted ones too, counted no further than
    `cap` from the (reader, book) index alone: an upper bound of those a search ranks.
    Written out, not compiled by the ORM, which cost more than the count (0.4 ms to 0.15)."""
    sql = f"SELECT 1 FROM {Highlight._meta.db_table} WHERE reader_id = %s"
    params: list[Any] = [reader_id]
    if book_ids is not None:
        sql += " AND book_id = ANY(%s)"
        params.append(sorted(book_ids))
    return _count_up_to(sql, params, cap)


def _count_up_to(sql: str, params: Sequence[Any], cap: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM ({sql} LIMIT %s) AS capped", [*params, cap])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def _nearest_filtered(
    library: QuerySet[Highlight],
    vector: Sequence[float],
    *,
    limit: int,
    bound: int | None = None,
    column: str = "embedding",
    ef_search: int = SEARCH_EF_SEARCH,
) -> list[Neighbour]:
    """The two strategies of books.connections.neighbours, for a library narrowed by filters.

    `bound`, when given, is no fewer than the rows of `library`, counted up to the cut-off.
    `column`: the vectors compared (e5's, or the theme model's)."""
    if bound is None:
        bound = _rows_up_to(library, FILTERED_EXACT_SCAN_MAX + 1)
    if bound <= FILTERED_EXACT_SCAN_MAX:
        # MATERIALIZED, as in books.connections.neighbours: an exact sort of the filtered rows,
        # never a filtered HNSW walk that runs out of tuples before it finds a small book's
        # rows. The distance is computed inside, so the CTE holds 16 bytes a row, not the
        # vector: with the vectors, 6,668 rows spilled 5 MB to disk and took twice as long.
        sql, params = (
            library.annotate(distance=CosineDistance(column, vector))
            .values_list("id", "distance")
            .query.sql_with_params()
        )
        with connection.cursor() as cursor:
            cursor.execute(
                f"WITH library AS MATERIALIZED ({sql}) "
                "SELECT id, distance FROM library ORDER BY distance LIMIT %s",
                [*params, limit],
            )
            rows = cursor.fetchall()
    else:
        nearest = library.annotate(distance=CosineDistance(column, vector)).order_by("distance")
        with iterative_scan(ef_search):
            rows = list(nearest.values_list("id", "distance")[:limit])
        rows.sort(key=lambda row: row[1])  # relaxed order: nearly sorted, now exactly
    return [Neighbour(highlight_id=int(pk), distance=float(d)) for pk, d in rows]


def nearest_meaning(
    reader: User,
    library: QuerySet[Highlight],
    filtered: bool,
    vector: Sequence[float],
    model_id: str,
    exclude_ids: Sequence[int],
    *,
    absolute_floor: bool = True,
    book_ids: Collection[int] | None = None,
    size: int | None = None,
) -> list[Neighbour]:
    """The library's close matches to `vector`. `book_ids`: the books a filtered library
    lies within, if it is known (the books a query names). `size`: `library_bound`'s count,
    when the caller has it (the theme half reads the same library)."""
    if size is None:
        size = library_bound(reader, library, filtered, model_id, book_ids)
    if filtered:
        found = _nearest_filtered(_passages(library, model_id), vector, limit=DEPTH, bound=size)
    else:
        found = nearest_highlights(
            reader_id=reader.pk,
            vector=vector,
            model_id=model_id,
            limit=DEPTH,
            exclude_ids=exclude_ids,
            size=size,
            passages_only=True,
            ef_search=SEARCH_EF_SEARCH,
        )
    return meaning_floor(found, model_id, absolute=absolute_floor)


def nearest_theme(
    reader: User,
    library: QuerySet[Highlight],
    filtered: bool,
    vector: Sequence[float],
    model_id: str,
    exclude_ids: Sequence[int],
    *,
    book_ids: Collection[int] | None = None,
    size: int | None = None,
) -> list[Neighbour]:
    """The library's close matches to the query's theme vector: nearer than the theme
    model's floor and not far behind its best (books.embedding.profiles says why).

    Its THEME_FIRST_DEPTH nearest first; DEPTH only when the floor keeps every one of them
    (the close matches of the first are the DEPTH nearest's, but for that case)."""
    if size is None:
        size = library_bound(reader, library, filtered, model_id, book_ids)

    def nearest(depth: int, ef_search: int) -> list[Neighbour]:
        if filtered:
            themed = _passages(library, model_id).filter(theme_embedding__isnull=False)
            return _nearest_filtered(
                themed,
                vector,
                limit=depth,
                bound=size,
                column="theme_embedding",
                ef_search=ef_search,
            )
        return nearest_highlights(
            reader_id=reader.pk,
            vector=vector,
            model_id=model_id,
            limit=depth,
            exclude_ids=exclude_ids,
            size=size,
            passages_only=True,
            column="theme_embedding",
            ef_search=ef_search,
        )

    found = nearest(THEME_FIRST_DEPTH, THEME_FIRST_EF_SEARCH)
    close = _theme_floor(found)
    if len(close) == THEME_FIRST_DEPTH:
        close = _theme_floor(nearest(DEPTH, SEARCH_EF_SEARCH))
    return close


def _theme_floor(found: Sequence[Neighbour]) -> list[Neighbour]:
    if not found:
        return []
    best = min(n.distance for n in found)
    return [
        n
        for n in found
        if n.distance < THEME_SEARCH_MAX_DISTANCE and n.distance <= best + THEME_SEARCH_MARGIN
    ]


def library_bound(
    reader: User,
    library: QuerySet[Highlight],
    filtered: bool,
    model_id: str,
    book_ids: Collection[int] | None = None,
) -> int:
    """No fewer than the passages either half ranks, counted only as far as the choice of
    strategy needs: once a query, for e5's half and the theme's (which ranks fewer)."""
    if not filtered:
        # The reader's rows counted up to the strategy's boundary from the reader index
        # alone: an upper bound of the embedded ones that needs no row read, where
        # books.connections.neighbours.library_size reads each row for its status and model.
        return _reader_rows_up_to(reader.pk, EXACT_SCAN_MAX + 1)
    if book_ids is not None:
        # Counted from the (reader, book) index alone when the books are known: each row
        # read to count costs as much as its distance (a named author's 6,668 highlights
        # among 100,000: 6 ms of PostgreSQL CPU to count them row by row, 0.5 ms by index).
        return _reader_rows_up_to(reader.pk, FILTERED_EXACT_SCAN_MAX + 1, book_ids)
    return _rows_up_to(_passages(library, model_id), FILTERED_EXACT_SCAN_MAX + 1)


def _passages(library: QuerySet[Highlight], model_id: str) -> QuerySet[Highlight]:
    """The library's passages with the model's vectors. Meaning ranks passages only: a
    looked-up word (books.vocabulary) sits near anything on its topic and says nothing;
    words stay findable by keyword."""
    return library.filter(is_word=False).filter(
        embedding_status=Highlight.EmbeddingStatus.DONE, embedding_model=model_id
    )


def with_theme(
    meaning: Sequence[Neighbour], theme: Sequence[Neighbour], vector: Sequence[float]
) -> list[Neighbour]:
    """e5's close matches and the theme model's, in one ranking: reciprocal rank fusion of
    the two (the theme's weighted THEME_SEARCH_WEIGHT), each with e5's distance to the query
    (read for those e5 did not find), so the page's percentage is e5's for every result."""
    if not theme:
        return list(meaning)
    distances = {n.highlight_id: n.distance for n in meaning}
    scores: dict[int, float] = {}
    for rank, neighbour in enumerate(meaning, start=1):
        scores[neighbour.highlight_id] = 1 / (RRF_K + rank)
    for rank, neighbour in enumerate(theme, start=1):
        pk = neighbour.highlight_id
        scores[pk] = scores.get(pk, 0.0) + THEME_SEARCH_WEIGHT / (RRF_K + rank)
    missing = [pk for pk in scores if pk not in distances]
    if missing:
        distances |= {
            int(pk): float(d)
            for pk, d in Highlight.objects.filter(pk__in=missing)
            .annotate(distance=CosineDistance("embedding", vector))
            .values_list("pk", "distance")
        }
    order = sorted(scores, key=lambda pk: (-scores[pk], distances[pk], pk))
    return [Neighbour(highlight_id=pk, distance=distances[pk]) for pk in order]


def meaning_floor(
    found: Sequence[Neighbour], model_id: str, *, absolute: bool = True
) -> list[Neighbour]:
    """The close matches: nearer than the model's floor, and not far behind the best one.

    A library of 100,000 always has 100 nearest highlights; the count shown is of those
    that are close (its profile's `search_max_distance` and `search_margin`). Without the
    `absolute` floor (the books a reader named), the best is kept however far it is."""
    floor = _meaning_max_distance(model_id)
    if not absolute:
        floor = math.inf
    profile = profile_for_model_id(model_id)
    margin = profile.search_margin if profile is not None else MEANING_MARGIN
    if not found:
        return []
    best = min(n.distance for n in found)
    return [n for n in found if n.distance < floor and n.distance <= best + margin]


def _meaning_max_distance(model_id: str) -> float:
    """The model's own floor (its profile's search_max_distance; a model folder's names
    its own) when it is the active one."""
    from books.embedding.encoder import EncoderUnavailable, get_encoders

    try:
        encoders = get_encoders()
    except EncoderUnavailable:
        return MEANING_MAX_DISTANCE
    if encoders.model_id != model_id:
        return MEANING_MAX_DISTANCE
    return encoders.main.spec.profile.search_max_distance


def close_distance(model_id: str) -> float | None:
    """How near a result found by meaning alone must be to show among the close ones, not
    as loosely related: the active model's profile's `search_close_distance` (a model
    folder's comes with its name's profile), or the built-in profile of `model_id`'s."""
    profile = _profile_of(model_id)
    return profile.search_close_distance if profile is not None else None


def in_books_distance(model_id: str) -> float | None:
    """How near a passage of the books the reader chose must be to be shown when nothing
    was found within the floor, by meaning or by words: the active model's profile's
    `search_in_books_distance`, or the built-in profile of `model_id`'s; None: none is."""
    profile = _profile_of(model_id)
    return profile.search_in_books_distance if profile is not None else None


def _profile_of(model_id: str) -> ModelProfile | None:
    """The profile of the model that made `model_id`'s vectors: the active model's when it
    is that one (a model folder's comes with its name's profile), else the built-in one."""
    from books.embedding.encoder import EncoderUnavailable, get_encoders

    try:
        encoders = get_encoders()
    except EncoderUnavailable:
        encoders = None
    if encoders is not None and encoders.model_id == model_id:
        return encoders.main.spec.profile
    return profile_for_model_id(model_id)
