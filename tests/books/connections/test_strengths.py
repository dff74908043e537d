"""Connections in two strengths, words never connected, other authors first, the nearest
passages when nothing connects: on real pgvector with vectors at known distances."""

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.connections.neighbours import nearest_highlights
from books.connections.selectors import (
    Strength,
    connections_for,
    fresh_connections,
    highlight_connections,
    library_connections,
)
from books.connections.services import (
    Cuts,
    highlights_connect,
    related_threshold,
    thresholds,
)
from books.models import Book, Connection, Highlight

MODEL = "test-model@00000000"
RNG = np.random.default_rng(15)
SAME_IDEA, RELATED = 0.2, 0.5


def at_distance(base: np.ndarray, distance: float) -> list[float]:
    """A unit vector whose cosine distance to `base` (a unit vector) is `distance`."""
    other = RNG.normal(size=384)
    other -= (other @ base) * base
    other /= np.linalg.norm(other)
    cos = 1.0 - distance
    vector = cos * base + np.sqrt(max(0.0, 1 - cos * cos)) * other
    return vector.astype(np.float32).tolist()


def unit(vector: np.ndarray) -> np.ndarray:
    result: np.ndarray = vector / np.linalg.norm(vector)
    return result


def _book(reader: User, title: str, authors: str = "") -> Book:
    return Book.objects.create(
        reader=reader, title=title, authors=authors, authors_normalized=authors.casefold(),
        key=f"{title}|{authors}".casefold(),
    )  # fmt: skip


def _highlight(
    reader: User, book: Book, text: str, vector: list[float], *, is_word: bool = False
) -> Highlight:
    return Highlight.objects.create(
        reader=reader, book=book, text=text, dedupe_key=f"{book.pk}:{text}", is_word=is_word,
        embedding=vector, embedding_model=MODEL, embedding_status=Highlight.EmbeddingStatus.DONE,
    )  # fmt: skip


@pytest.fixture
def tiers(settings: object) -> None:
    settings.EXOGRAM_CONNECTION_THRESHOLD = SAME_IDEA  # type: ignore[attr-defined]
    settings.EXOGRAM_RELATED_THRESHOLD = RELATED  # type: ignore[attr-defined]


@pytest.fixture
def base() -> np.ndarray:
    return unit(RNG.normal(size=384))


@pytest.fixture
def library(alice: User, base: np.ndarray, tiers: None) -> dict[str, Highlight]:
    """Envy in Greene; the same idea in Kierkegaard; a related one in Spinoza and in another
    of Greene's books; something else in a gardening book; and 'envy', a looked-up word."""
    greene = _book(alice, "The End of the Affair", "Greene, Graham")
    greene2 = _book(alice, "The Power and the Glory", "Greene, Graham")
    kierkegaard = _book(alice, "Journals", "Kierkegaard, Søren")
    spinoza = _book(alice, "Ethics", "Spinoza, Baruch")
    garden = _book(alice, "Gardening", "Somebody Else")
    rows = {
        "envy": _highlight(alice, greene, "Envy is the ulcer of the soul.", base.tolist()),
        "concealed": _highlight(
            alice, kierkegaard, "Envy is concealed admiration.", at_distance(base, 0.1)
        ),
        "sadness": _highlight(
            alice, spinoza, "Envy is sadness at another's good.", at_distance(base, 0.35)
        ),
        "greene": _highlight(
            alice, greene2, "He envied the peace of the others.", at_distance(base, 0.3)
        ),
        "roses": _highlight(alice, garden, "Prune the roses in March.", at_distance(base, 0.9)),
        "word": _highlight(alice, kierkegaard, "envy", at_distance(base, 0.05), is_word=True),
    }
    highlights_connect(ids=[h.pk for h in rows.values()])
    return rows


@pytest.mark.django_db
class ThresholdTests:
    def test_the_related_threshold_comes_from_the_setting(self, tiers: None) -> None:
        assert thresholds().within == Cuts(SAME_IDEA, RELATED)

    def test_the_related_threshold_is_never_tighter_than_the_same_idea(
        self, settings: object
    ) -> None:
        settings.EXOGRAM_CONNECTION_THRESHOLD = 0.4  # type: ignore[attr-defined]
        settings.EXOGRAM_RELATED_THRESHOLD = 0.3  # type: ignore[attr-defined]
        assert related_threshold() == 0.4

    def test_the_related_threshold_defaults_to_the_models(self, settings: object) -> None:
        from books.embedding.encoder import E5_RELATED_THRESHOLD

        settings.EXOGRAM_CONNECTION_THRESHOLD = None  # type: ignore[attr-defined]
        settings.EXOGRAM_RELATED_THRESHOLD = None  # type: ignore[attr-defined]
        assert related_threshold() == E5_RELATED_THRESHOLD


@pytest.mark.django_db
class StrengthTests:
    def test_it_grades_connections_by_distance(self, library: dict[str, Highlight]) -> None:
        found = {c.highlight.text: c for c in connections_for(library["envy"])}
        assert found["Envy is concealed admiration."].strength == Strength.SAME_IDEA
        assert found["Envy is sadness at another's good."].strength == Strength.RELATED
        assert found["He envied the peace of the others."].strength == Strength.RELATED
        assert "Prune the roses in March." not in found

    def test_it_stores_connections_up_to_the_related_threshold(
        self, library: dict[str, Highlight]
    ) -> None:
        distances = list(Connection.objects.values_list("distance", flat=True))
        assert distances
        assert max(distances) < RELATED
        assert any(d >= SAME_IDEA for d in distances)

    def test_it_puts_other_authors_first(self, library: dict[str, Highlight]) -> None:
        found = connections_for(library["envy"])
        assert [c.same_author for c in found] == [False, False, True]
        assert found[-1].highlight.text == "He envied the peace of the others."

    def test_the_page_shows_the_best_of_each_strength_by_other_authors(
        self, library: dict[str, Highlight]
    ) -> None:
        shown = highlight_connections(library["envy"])
        assert [c.highlight.text for c in shown.same_idea] == ["Envy is concealed admiration."]
        assert [c.highlight.text for c in shown.related] == ["Envy is sadness at another's good."]
        assert [c.highlight.text for c in shown.same_author] == [
            "He envied the peace of the others."
        ]
        assert shown.nearest == []

    def test_a_tighter_related_setting_hides_the_looser_pairs(
        self, library: dict[str, Highlight], settings: object
    ) -> None:
        settings.EXOGRAM_RELATED_THRESHOLD = 0.32  # type: ignore[attr-defined]
        texts = {c.highlight.text for c in connections_for(library["envy"])}
        assert texts == {"Envy is concealed admiration.", "He envied the peace of the others."}


@pytest.mark.django_db
class WordsNeverConnectTests:
    def test_a_word_has_no_connection(self, library: dict[str, Highlight]) -> None:
        word = library["word"]
        assert not Connection.objects.filter(highlight_a=word).exists()
        assert not Connection.objects.filter(highlight_b=word).exists()
        assert connections_for(library["envy"], limit=10)[0].highlight != word

    def test_the_neighbour_query_leaves_words_out(self, library: dict[str, Highlight]) -> None:
        envy = library["envy"]
        kwargs = {"reader_id": envy.reader_id, "vector": list(envy.embedding), "model_id": MODEL}
        every = nearest_highlights(limit=10, **kwargs)  # type: ignore[arg-type]
        passages = nearest_highlights(limit=10, passages_only=True, **kwargs)  # type: ignore[arg-type]
        assert library["word"].pk in {n.highlight_id for n in every}
        assert library["word"].pk not in {n.highlight_id for n in passages}

    def test_an_old_connection_of_a_word_is_not_read(self, library: dict[str, Highlight]) -> None:
        envy, word = library["envy"], library["word"]
        a, b = sorted((envy.pk, word.pk))
        Connection.objects.create(
            reader=envy.reader, highlight_a_id=a, highlight_b_id=b, distance=0.05,
            embedding_model=MODEL,
        )  # fmt: skip
        assert word.pk not in {c.highlight.pk for c in connections_for(envy)}
        assert all(
            word.pk not in (p.highlight_a_id, p.highlight_b_id)
            for p in library_connections(envy.reader)
        )


@pytest.mark.django_db
class NearestFallbackTests:
    def test_a_highlight_with_no_connection_shows_its_nearest_passages(
        self, library: dict[str, Highlight]
    ) -> None:
        shown = highlight_connections(library["roses"])
        assert not shown.any
        assert shown.nearest
        assert all(c.highlight.book_id != library["roses"].book_id for c in shown.nearest)
        assert library["word"].pk not in {c.highlight.pk for c in shown.nearest}
        assert [c.distance for c in shown.nearest] == sorted(c.distance for c in shown.nearest)

    def test_a_word_has_no_nearest_passages(self, library: dict[str, Highlight]) -> None:
        assert highlight_connections(library["word"]).nearest == []


@pytest.mark.django_db
class FeedOrderingTests:
    def test_the_feed_and_the_page_lead_with_pairs_across_authors(
        self, library: dict[str, Highlight], alice: User
    ) -> None:
        pairs = list(library_connections(alice))
        flags = [p.same_author for p in pairs]  # type: ignore[attr-defined]
        assert flags == sorted(flags)
        assert flags[-1] is True
        assert flags[0] is False
        fresh = fresh_connections(alice, limit=3)
        assert not any(p.same_author for p in fresh)  # type: ignore[attr-defined]

    def test_the_page_filters_by_strength(
        self, library: dict[str, Highlight], alice_client: Client
    ) -> None:
        same = alice_client.get(reverse("connections"), {"strength": "same"}).context["page"]
        assert same.object_list
        assert all(p.distance < SAME_IDEA for p in same.object_list)
        related = alice_client.get(reverse("connections"), {"strength": "related"})
        assert all(p.distance >= SAME_IDEA for p in related.context["page"].object_list)


@pytest.mark.django_db
class WordingTests:
    def test_the_highlight_page_says_same_idea_and_related(
        self, library: dict[str, Highlight], alice_client: Client
    ) -> None:
        content = alice_client.get(library["envy"].get_absolute_url()).content.decode()
        assert "Same idea" in content
        assert "Related" in content
        assert "Envy is concealed admiration." in content
        assert "He envied the peace of the others." not in content  # behind the toggle
        assert "Show 1 from Greene, Graham\u2019s other books" in content
        for wrong in ("cosine", "% alike", "100 %", "100%"):
            assert wrong not in content
        assert "<script>" not in content

    def test_the_toggle_shows_the_same_author(
        self, library: dict[str, Highlight], alice_client: Client
    ) -> None:
        url = library["envy"].get_absolute_url() + "?same_author=1"
        content = alice_client.get(url).content.decode()
        assert "He envied the peace of the others." in content
        assert "Hide the same author\u2019s passages" in content

    def test_a_page_with_no_connection_is_not_a_dead_end(
        self, library: dict[str, Highlight], alice_client: Client
    ) -> None:
        content = alice_client.get(library["roses"].get_absolute_url()).content.decode()
        assert "Nearest in your library" in content
        assert "cosine" not in content

    def test_a_words_page_says_it_is_a_word(
        self, library: dict[str, Highlight], alice_client: Client
    ) -> None:
        content = alice_client.get(library["word"].get_absolute_url()).content.decode()
        assert "one of your" in content
        assert "not connected" in content

    def test_the_home_feed_and_connections_page_use_the_words(
        self, library: dict[str, Highlight], alice_client: Client
    ) -> None:
        for name in ("home", "connections"):
            content = alice_client.get(reverse(name)).content.decode()
            assert "Same idea" in content
            assert "% alike" not in content
            assert "cosine" not in content


@pytest.mark.django_db
class PaginationTests:
    def test_the_next_page_keeps_the_filters(
        self, alice: User, alice_client: Client, base: np.ndarray, tiers: None
    ) -> None:
        # 30 ideas, each said twice in two books: 30 same-idea pairs, more than a page. Each
        # pair stands out from its typical neighbours (the other ideas, far away), so the
        # relative rule keeps it.
        books = [_book(alice, f"Book {i}", f"Author {i}") for i in range(60)]
        rows = []
        for idea in range(30):
            centre = unit(RNG.normal(size=384))
            for side in range(2):
                vector = at_distance(centre, 0.01 * side)
                rows.append(_highlight(alice, books[2 * idea + side], f"Idea {idea}", vector))
        highlights_connect(ids=[h.pk for h in rows])
        response = alice_client.get(reverse("connections"), {"strength": "same"})
        assert response.context["page"].has_next()
        assert b'href="?strength=same&amp;page=2"' in response.content
