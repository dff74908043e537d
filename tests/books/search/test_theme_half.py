"""What the theme half of search by meaning reads: its first nearest, more only when its floor
keeps them all, and the library counted once for both halves (real PostgreSQL + pgvector)."""

from uuid import uuid4

import numpy as np
import numpy.typing as npt
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from books.embedding.encoder import get_encoders
from books.models import EMBEDDING_DIMENSIONS, THEME_DIMENSIONS, Book, Highlight
from books.search.fusion import DEPTH
from books.search.meaning import THEME_FIRST_DEPTH, nearest_theme
from books.search.search import search

Vector = npt.NDArray[np.float64]
COUNT_SQL = "SELECT count(*) FROM (SELECT 1 FROM books_highlight WHERE reader_id"


def _unit(vector: Vector) -> Vector:
    unit: Vector = vector / np.linalg.norm(vector)
    return unit


def _themed_library(reader: User, close: int, far: int = 60) -> Vector:
    """`close` passages whose theme vectors sit near one theme (all within its floor), `far`
    anywhere on the sphere; e5 vectors anywhere. Returns the theme."""
    rng = np.random.default_rng(7)
    theme = _unit(rng.normal(size=THEME_DIMENSIONS))
    book = Book.objects.create(reader=reader, title="Themes", key="themes")
    themes = [_unit(theme + 0.15 * _unit(rng.normal(size=THEME_DIMENSIONS))) for _ in range(close)]
    themes += [_unit(v) for v in rng.normal(size=(far, THEME_DIMENSIONS))]
    model_id = get_encoders().model_id
    Highlight.objects.bulk_create(
        Highlight(
            reader=reader,
            book=book,
            text=f"Passage {n}",
            dedupe_key=uuid4().hex,
            embedding=_unit(rng.normal(size=EMBEDDING_DIMENSIONS)).tolist(),
            theme_embedding=vector.tolist(),
            embedding_model=model_id,
            embedding_status=Highlight.EmbeddingStatus.DONE,
        )
        for n, vector in enumerate(themes)
    )
    return theme


def _theme_statements(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if "theme_embedding <=>" in q["sql"]]


@pytest.mark.django_db
class ThemeDepthTests:
    def test_it_reads_the_first_nearest_only_when_few_are_close(self, alice: User) -> None:
        theme = _themed_library(alice, close=5)
        library = Highlight.objects.filter(reader=alice)
        with CaptureQueriesContext(connection) as queries:
            found = nearest_theme(alice, library, False, list(theme), get_encoders().model_id, ())
        assert len(found) == 5
        [statement] = _theme_statements(queries)
        assert f"LIMIT {THEME_FIRST_DEPTH}" in statement

    def test_it_reads_deeper_when_the_floor_keeps_every_one(self, alice: User) -> None:
        close = THEME_FIRST_DEPTH + 20
        assert close < DEPTH
        theme = _themed_library(alice, close=close)
        library = Highlight.objects.filter(reader=alice)
        with CaptureQueriesContext(connection) as queries:
            found = nearest_theme(alice, library, False, list(theme), get_encoders().model_id, ())
        # Every close one, as a read of DEPTH finds them: the first read kept all it had.
        assert len(found) == close
        assert [n.distance for n in found] == sorted(n.distance for n in found)
        first, deeper = _theme_statements(queries)
        assert f"LIMIT {THEME_FIRST_DEPTH}" in first
        assert f"LIMIT {DEPTH}" in deeper


@pytest.mark.django_db
class LibraryCountedOnceTests:
    def test_a_search_by_meaning_counts_the_library_once_for_both_halves(self, alice: User) -> None:
        _themed_library(alice, close=5)
        assert get_encoders().with_theme
        for mode in ("meaning", "auto"):
            with CaptureQueriesContext(connection) as queries:
                search(alice, "a passage on a theme", mode=mode)
            counts = [q["sql"] for q in queries.captured_queries if COUNT_SQL in q["sql"]]
            assert len(counts) == 1, mode
            assert len(_theme_statements(queries)) == 1, mode
