"""The batch neighbour query gives the same answer whether it reads the space whole or asks
the HNSW index."""

import numpy as np
import pytest
from django.db import connection as db

from accounts.models import User
from books.connections import neighbours
from books.connections.neighbours import Query, nearest_each, nearest_highlights
from books.models import Book, Highlight
from tests.theme_vectors import theme_of

MODEL = "test-model@00000000"
RNG = np.random.default_rng(42)


def _unit(vector: np.ndarray) -> list[float]:
    return (vector / np.linalg.norm(vector)).astype(np.float32).tolist()


def _near(base: np.ndarray, noise: float) -> list[float]:
    return _unit(base + RNG.normal(scale=noise, size=384))


def _book(reader: User, title: str) -> Book:
    return Book.objects.create(reader=reader, title=title, key=title.casefold())


@pytest.mark.django_db
class StrategyTests:
    @pytest.mark.slow  # 1,800 vectors written into the HNSW index
    def test_the_hnsw_strategy_agrees_with_an_exact_scan(self, alice: User, bob: User) -> None:
        centres = RNG.normal(size=(30, 384))
        for reader in (alice, bob):
            books = [_book(reader, f"Book {i}") for i in range(10)]
            Highlight.objects.bulk_create(
                Highlight(
                    reader=reader, book=books[i % 10], text=f"h{i}", dedupe_key=f"{i}",
                    embedding=_near(centres[i % 30], 0.6), embedding_model=MODEL,
                    embedding_status=Highlight.EmbeddingStatus.DONE,
                )
                for i in range(900)
            )  # fmt: skip
        with db.cursor() as cursor:
            cursor.execute("ANALYZE books_highlight")
        recalls = []
        for q in range(20):
            vector = _near(centres[q], 0.6)
            kwargs = {"reader_id": alice.pk, "vector": vector, "model_id": MODEL, "limit": 10}
            exact = nearest_highlights(strategy="exact", **kwargs)  # type: ignore[arg-type]
            hnsw = nearest_highlights(strategy="hnsw", **kwargs)  # type: ignore[arg-type]
            assert len(exact) == 10
            assert [n.distance for n in hnsw] == sorted(n.distance for n in hnsw)
            owners = set(
                Highlight.objects.filter(pk__in=[n.highlight_id for n in hnsw]).values_list(
                    "reader_id", flat=True
                )
            )
            assert owners == {alice.pk}
            recalls.append(
                len({n.highlight_id for n in exact} & {n.highlight_id for n in hnsw}) / 10
            )
        assert sum(recalls) / len(recalls) >= 0.95


@pytest.mark.django_db
class NearestEachTests:
    @pytest.mark.parametrize("column", ["embedding", "theme_embedding"])
    def test_reading_the_space_whole_and_asking_the_index_agree(
        self, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch, column: str
    ) -> None:
        rng = np.random.default_rng(7)
        centres = rng.normal(size=(6, 384))
        rows = []
        for reader in (alice, bob):
            books = [
                Book.objects.create(reader=reader, title=f"B{i}", key=f"b{i}") for i in range(8)
            ]
            for n in range(120):
                vector = centres[n % 6] + 0.6 * rng.normal(size=384)
                vector /= np.linalg.norm(vector)
                rows.append(
                    Highlight.objects.create(
                        reader=reader, book=books[n % 8], text=f"Passage {n}.",
                        dedupe_key=f"{reader.pk}-{n}", is_word=n % 17 == 0,
                        embedding=vector.tolist(), theme_embedding=theme_of(vector),
                        embedding_model="test-model@0",
                        embedding_status=Highlight.EmbeddingStatus.DONE,
                    )
                )  # fmt: skip
        mine = [h for h in rows if h.reader_id == alice.pk and not h.is_word][:40]
        queries = [Query(h.pk, h.book_id) for h in mine]

        def ask() -> dict[int, list[tuple[int, float]]]:
            found = nearest_each(
                reader_id=alice.pk, model_id="test-model@0", queries=queries, limit=10,
                column=column,
            )  # fmt: skip
            return {q: [(n.highlight_id, n.distance) for n in ns] for q, ns in found.items()}

        in_memory = ask()
        monkeypatch.setattr(neighbours, "IN_MEMORY_MAX", 0)
        by_index = ask()
        assert by_index.keys() == in_memory.keys()
        # The index is approximate (pgvector's HNSW graph is built with random levels, so a
        # rare run misses a neighbour): the same neighbours nearly always, in the same order,
        # at the same distances (float32 in numpy, float64 in pgvector).
        recalls = []
        for query_id, found in by_index.items():
            expected = dict(in_memory[query_id])
            recalls.append(len(expected.keys() & dict(found).keys()) / len(expected))
            for pk, distance in found:
                if pk in expected:
                    assert distance == pytest.approx(expected[pk], abs=1e-5)
            assert [d for _, d in found] == sorted(d for _, d in found)
        assert sum(recalls) / len(recalls) >= 0.97
        assert sum(r == 1.0 for r in recalls) >= 0.9 * len(recalls)
        words = {h.pk for h in rows if h.is_word}
        books = {h.pk: h.book_id for h in rows}
        for query in queries:
            found = [pk for pk, _ in in_memory[query.highlight_id]]
            assert len(found) == 10
            assert all(books[pk] != query.book_id for pk in found)  # other books only
            assert not set(found) & words  # never a word
            assert all(h.reader_id == alice.pk for h in rows if h.pk in found)
