import numpy as np
import pytest
from django.db import connection
from pgvector.django import CosineDistance

from accounts.models import User
from books.models import Book, Highlight


def _random_unit_vectors(n: int, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.django_db
class DatabaseTests:
    def test_it_runs_on_postgresql_with_pgvector(self) -> None:
        assert connection.vendor == "postgresql"
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
        assert row is not None
        major, minor = (int(part) for part in row[0].split(".")[:2])
        assert (major, minor) >= (0, 8)

    def test_it_has_the_hnsw_index_with_the_cosine_opclass(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'highlight_embedding_hnsw'"
            )
            row = cursor.fetchone()
        assert row is not None
        definition = row[0]
        assert "USING hnsw" in definition
        assert "vector_cosine_ops" in definition
        assert "m='16'" in definition
        assert "ef_construction='128'" in definition

    @pytest.mark.slow  # 3,000 vectors written into the HNSW index
    def test_it_uses_the_hnsw_index_for_a_cosine_distance_query(self, alice: User) -> None:
        book = Book.objects.create(reader=alice, title="Ficciones", key="ficciones")
        vectors = _random_unit_vectors(3000)
        Highlight.objects.bulk_create(
            Highlight(
                reader=alice,
                book=book,
                text=f"highlight {i}",
                dedupe_key=f"k{i}",
                embedding=vector.tolist(),
                embedding_status=Highlight.EmbeddingStatus.DONE,
            )
            for i, vector in enumerate(vectors)
        )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE books_highlight")
        query = (
            Highlight.objects.annotate(distance=CosineDistance("embedding", vectors[0].tolist()))
            .order_by("distance")
            .values("pk")[:10]
        )
        plan = query.explain()
        assert "highlight_embedding_hnsw" in plan
        # and it finds the row itself first
        assert Highlight.objects.get(pk=query[0]["pk"]).text == "highlight 0"
