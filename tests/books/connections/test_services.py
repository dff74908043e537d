"""Connections on real pgvector with vectors built to known distances (no model needed)."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection as db
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.connections.neighbours import nearest_highlights
from books.connections.selectors import connected_books, connections_for, library_connections
from books.connections.services import connections_forget, highlights_connect
from books.library_cache import library_version_bump
from books.models import Book, Connection, Highlight

MODEL = "test-model@00000000"
RNG = np.random.default_rng(42)


def _unit(vector: np.ndarray) -> list[float]:
    return (vector / np.linalg.norm(vector)).astype(np.float32).tolist()


def _near(base: np.ndarray, noise: float) -> list[float]:
    return _unit(base + RNG.normal(scale=noise, size=384))


def _book(reader: User, title: str, authors: str = "") -> Book:
    return Book.objects.create(
        reader=reader, title=title, authors=authors, authors_normalized=authors.casefold(),
        key=f"{title}|{authors}".casefold(),
    )  # fmt: skip


def _highlight(reader: User, book: Book, text: str, vector: list[float]) -> Highlight:
    return Highlight.objects.create(
        reader=reader, book=book, text=text, dedupe_key=f"{book.pk}:{text}",
        embedding=vector, embedding_model=MODEL,
        embedding_status=Highlight.EmbeddingStatus.DONE,
    )  # fmt: skip


@pytest.fixture
def memory() -> np.ndarray:
    return RNG.normal(size=384)


@pytest.fixture
def library(alice: User, memory: np.ndarray, settings: object) -> dict[str, Highlight]:
    settings.EXOGRAM_CONNECTION_THRESHOLD = 0.45  # type: ignore[attr-defined]
    settings.EXOGRAM_RELATED_THRESHOLD = 0.45  # type: ignore[attr-defined]
    ficciones = _book(alice, "Ficciones", "Borges, Jorge Luis")
    aleph = _book(alice, "El Aleph", "Borges, Jorge Luis")
    sacks = _book(alice, "The Man Who Mistook His Wife for a Hat", "Sacks, Oliver")
    gardening = _book(alice, "Gardening", "Somebody Else")
    rows = {
        "funes": _highlight(alice, ficciones, "Funes remembered everything.", _near(memory, 0.02)),
        "funes2": _highlight(alice, ficciones, "Same book, same idea.", _near(memory, 0.02)),
        "aleph": _highlight(alice, aleph, "The Aleph holds all places.", _near(memory, 0.03)),
        "sacks": _highlight(alice, sacks, "Memory is our life-story.", _near(memory, 0.04)),
        "roses": _highlight(alice, gardening, "Prune roses in March.", _unit(RNG.normal(size=384))),
    }
    highlights_connect(ids=[h.pk for h in rows.values()])
    return rows


@pytest.mark.django_db
class HighlightsConnectTests:
    def test_it_connects_other_books_only_other_authors_first(
        self, library: dict[str, Highlight]
    ) -> None:
        found = connections_for(library["funes"])
        texts = [c.highlight.text for c in found]
        # Sacks before Borges's own El Aleph, however close the Aleph is.
        assert texts == ["Memory is our life-story.", "The Aleph holds all places."]
        assert [c.same_author for c in found] == [False, True]
        assert all(0 <= c.distance < 0.45 for c in found)

    def test_it_never_connects_unrelated_highlights(self, library: dict[str, Highlight]) -> None:
        assert connections_for(library["roses"]) == []

    def test_it_stores_each_pair_once_and_is_idempotent(
        self, library: dict[str, Highlight]
    ) -> None:
        pairs = list(Connection.objects.values_list("highlight_a_id", "highlight_b_id"))
        assert len(pairs) == len(set(pairs))
        assert all(a < b for a, b in pairs)
        # funes, funes2 each connect to aleph and sacks; aleph connects to sacks
        assert len(pairs) == 5
        assert highlights_connect(ids=[h.pk for h in library.values()]) == 0
        assert Connection.objects.count() == 5

    def test_it_can_leave_out_the_same_author(self, library: dict[str, Highlight]) -> None:
        found = connections_for(library["funes"], other_authors_only=True)
        assert [c.highlight.text for c in found] == ["Memory is our life-story."]

    def test_it_never_crosses_readers(
        self, library: dict[str, Highlight], bob: User, memory: np.ndarray
    ) -> None:
        bobs = _highlight(bob, _book(bob, "Bob's book"), "Bob on memory.", _near(memory, 0.01))
        assert highlights_connect(ids=[bobs.pk]) == 0
        assert all(c.highlight.reader_id != bob.pk for c in connections_for(library["funes"]))
        assert not Connection.objects.filter(reader=bob).exists()

    def test_it_hides_a_deleted_highlight_at_once(self, library: dict[str, Highlight]) -> None:
        library["aleph"].deleted_at = timezone.now()
        library["aleph"].save(update_fields=["deleted_at"])
        texts = [c.highlight.text for c in connections_for(library["funes"])]
        assert texts == ["Memory is our life-story."]
        assert all(
            library["aleph"].pk not in (p.highlight_a_id, p.highlight_b_id)
            for p in library_connections(library["funes"].reader)
        )

    def test_it_forgets_and_recomputes_after_a_new_vector(
        self, library: dict[str, Highlight]
    ) -> None:
        sacks = library["sacks"]
        connections_forget(ids=[sacks.pk])
        assert connections_for(sacks) == []
        Highlight.objects.filter(pk=sacks.pk).update(embedding=_unit(RNG.normal(size=384)))
        highlights_connect(ids=[sacks.pk])
        assert connections_for(sacks) == []  # its new vector is about something else

    def test_it_ranks_the_books_a_book_connects_to(self, library: dict[str, Highlight]) -> None:
        ranked = connected_books(library["funes"].book)
        assert [(c.book.title, c.connections) for c in ranked] == [
            ("El Aleph", 2),
            ("The Man Who Mistook His Wife for a Hat", 2),
        ] or [(c.book.title, c.connections) for c in ranked] == [
            ("The Man Who Mistook His Wife for a Hat", 2),
            ("El Aleph", 2),
        ]


@pytest.mark.django_db
class StrategyTests:
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

    def test_the_exact_scan_respects_the_filters(self, library: dict[str, Highlight]) -> None:
        funes = library["funes"]
        found = nearest_highlights(
            reader_id=funes.reader_id, vector=list(funes.embedding), model_id=MODEL,
            limit=10, max_distance=0.45, exclude_book_id=funes.book_id, strategy="exact",
        )  # fmt: skip
        assert {n.highlight_id for n in found} == {library["aleph"].pk, library["sacks"].pk}


@pytest.mark.django_db
class HighlightPageTests:
    def test_it_shows_connections_with_their_books(
        self, library: dict[str, Highlight], alice_client: Client
    ) -> None:
        response = alice_client.get(library["funes"].get_absolute_url())
        content = response.content.decode()
        assert "Memory is our life-story." in content
        assert "The Man Who Mistook His Wife for a Hat" in content
        assert "Same idea" in content
        assert "% alike" not in content
        assert "Same book, same idea." not in content

    def test_it_keeps_the_same_author_behind_a_toggle(
        self, library: dict[str, Highlight], alice_client: Client
    ) -> None:
        url = library["funes"].get_absolute_url()
        assert "The Aleph holds all places." not in alice_client.get(url).content.decode()
        shown = alice_client.get(url + "?same_author=1").content.decode()
        assert "The Aleph holds all places." in shown

    def test_it_shows_the_nearest_passages_when_nothing_connects(
        self, library: dict[str, Highlight], alice_client: Client
    ) -> None:
        content = alice_client.get(library["roses"].get_absolute_url()).content.decode()
        assert "Nearest in your library" in content
        assert "Memory is our life-story." in content

    def test_it_is_404_for_another_reader(
        self, library: dict[str, Highlight], bob_client: Client
    ) -> None:
        assert bob_client.get(library["funes"].get_absolute_url()).status_code == 404


@pytest.mark.django_db
class LibraryConnectionsPageTests:
    def test_it_lists_each_pair_once_strongest_first(
        self, library: dict[str, Highlight], alice_client: Client
    ) -> None:
        response = alice_client.get(reverse("connections"))
        pairs = list(response.context["page"].object_list)
        assert len(pairs) == 5
        # Across authors first (the three pairs with Sacks), then Borges with Borges.
        assert [p.same_author for p in pairs] == [False, False, False, True, True]
        assert [p.distance for p in pairs[:3]] == sorted(p.distance for p in pairs[:3])
        assert [p.distance for p in pairs[3:]] == sorted(p.distance for p in pairs[3:])

    def test_it_filters_by_book(self, library: dict[str, Highlight], alice_client: Client) -> None:
        sacks = library["sacks"].book
        pairs = alice_client.get(reverse("connections"), {"book": str(sacks.code)}).context["page"]
        assert len(pairs.object_list) == 3
        assert all(sacks.pk in (p.highlight_a.book_id, p.highlight_b.book_id) for p in pairs)

    def test_its_queries_do_not_grow_with_the_page(
        self, library: dict[str, Highlight], alice_client: Client, memory: np.ndarray
    ) -> None:
        alice_client.get(reverse("connections"))  # the library's versions are made
        library_version_bump(reader_ids=[library["funes"].reader_id])
        with CaptureQueriesContext(db) as few:
            alice_client.get(reverse("connections"))
        more = _book(library["funes"].reader, "More on memory")
        added = [
            _highlight(library["funes"].reader, more, f"memory {i}", _near(memory, 0.03))
            for i in range(6)
        ]
        highlights_connect(ids=[h.pk for h in added])
        # Shown at once as the reader's own change (an import); the worker's connections
        # would show within BACKGROUND_LAG (tests/books/test_library_cache.py).
        library_version_bump(reader_ids=[more.reader_id])
        with CaptureQueriesContext(db) as many:
            response = alice_client.get(reverse("connections"))
        assert len(response.context["page"].object_list) > 5
        assert len(many) == len(few)

    def test_it_shows_nothing_of_another_reader(
        self, library: dict[str, Highlight], bob_client: Client
    ) -> None:
        response = bob_client.get(reverse("connections"))
        assert list(response.context["page"].object_list) == []
        assert b"No connections yet" in response.content

    def test_bob_cannot_filter_by_alices_book(
        self, library: dict[str, Highlight], bob_client: Client
    ) -> None:
        code = str(library["funes"].book.code)
        assert bob_client.get(reverse("connections"), {"book": code}).status_code == 404


@pytest.mark.django_db
class ConnectionsCommandTests:
    def test_it_prints_json(self, library: dict[str, Highlight]) -> None:
        out = StringIO()
        call_command("connections", str(library["sacks"].code), "--user", "alice", "--json",
                     stdout=out)  # fmt: skip
        rows = json.loads(out.getvalue())
        assert {r["book"] for r in rows} == {"Ficciones", "El Aleph"}
        assert set(rows[0]) == {
            "code", "book", "author", "text", "distance", "strength", "same_author"
        }  # fmt: skip
        assert {r["strength"] for r in rows} == {"same idea"}
        assert rows == sorted(rows, key=lambda r: r["distance"])
