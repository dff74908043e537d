"""The meaning half on real PostgreSQL + pgvector, with the real model's query vectors."""

from uuid import uuid4

import numpy as np
import numpy.typing as npt
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from books.connections.neighbours import EXACT_SCAN_MAX
from books.embedding.encoder import get_encoder
from books.models import Book, Highlight
from books.search.meaning import FILTERED_EXACT_SCAN_MAX
from books.search.search import search

Vector = npt.NDArray[np.float64]


def _unit(vector: Vector) -> Vector:
    unit: Vector = vector / np.linalg.norm(vector)
    return unit


def _embedded(reader: User, book: Book, text: str, vector: Vector, model_id: str) -> Highlight:
    return Highlight(
        reader=reader, book=book, text=text, dedupe_key=uuid4().hex,
        embedding=vector.tolist(), embedding_model=model_id,
        embedding_status=Highlight.EmbeddingStatus.DONE,
    )  # fmt: skip


@pytest.mark.django_db
class FilteredMeaningTests:
    def test_it_sorts_a_filtered_library_past_the_unfiltered_cut_exactly(self, alice: User) -> None:
        """A book larger than the unfiltered exact scan's reach is still sorted exactly: a
        filtered HNSW scan walks past every other book's rows to find its own."""
        encoder = get_encoder()
        query = "the lighthouse keeper counted the ships every night"
        wanted = _unit(np.asarray(encoder.encode_one(query), dtype=np.float64))
        size = EXACT_SCAN_MAX + 500
        assert size <= FILTERED_EXACT_SCAN_MAX
        book = Book.objects.create(reader=alice, title="Harbour logs", key="harbour logs")
        other = Book.objects.create(reader=alice, title="Other", key="other")
        rng = np.random.default_rng(3)
        # Five rows near the query at growing distances; the rest anywhere on the sphere.
        near = [_unit(wanted + step / 40 * _unit(rng.normal(size=384))) for step in range(1, 6)]
        far = [_unit(v) for v in rng.normal(size=(size - len(near), 384))]
        rows = [
            _embedded(alice, book, f"Log entry {n}", vector, encoder.model_id)
            for n, vector in enumerate([*near, *far])
        ]
        # The same near rows in another book: the filter keeps them out.
        rows += [
            _embedded(alice, other, f"Elsewhere {n}", vector, encoder.model_id)
            for n, vector in enumerate(near)
        ]
        Highlight.objects.bulk_create(rows)
        with CaptureQueriesContext(connection) as queries:
            found = search(alice, query, mode="meaning", book=book)
        assert [r.highlight.text for r in found.results] == [f"Log entry {n}" for n in range(5)]
        assert not any("hnsw" in q["sql"] for q in queries.captured_queries)
