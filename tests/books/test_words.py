"""The reader's words: marked at import and whenever the text changes, listed per book and
across books, left out of the map, still found by keyword; the migration's backfill."""

from importlib import import_module

import numpy as np
import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.importing.services import clippings_import
from books.library_map.services import library_map_refresh
from books.models import Book, Connection, Highlight
from tests.books.kindle import BORGES, SACKS, Entry, clippings_file

WORDS_LIBRARY = [
    Entry(BORGES, "To think is to forget differences, to generalize, to abstract.", location="412"),
    Entry(BORGES, "ineffable", location="500"),
    Entry(BORGES, "sine qua non", location="520"),
    Entry(SACKS, "We have each of us a life-story, an inner narrative.", location="1520-1522"),
    Entry(SACKS, "reminiscence", location="1600"),
]


def _import(reader: User, *entries: Entry) -> None:
    clippings_import(reader=reader, data=clippings_file(*entries), file_name="c.txt")


@pytest.mark.django_db
class ImportMarksWordsTests:
    def test_it_marks_words_at_import(self, alice: User) -> None:
        _import(alice, *WORDS_LIBRARY)
        words = set(Highlight.objects.filter(is_word=True).values_list("text", flat=True))
        assert words == {"ineffable", "sine qua non", "reminiscence"}
        assert Highlight.objects.passages().count() == 2

    def test_an_extended_word_becomes_a_passage(self, alice: User) -> None:
        _import(alice, Entry(BORGES, "ineffable", location="500"))
        assert Highlight.objects.get().is_word
        # The reader extends the selection on the Kindle: a newer, longer version.
        longer = "The ineffable core of the Aleph is what no words can give back."
        _import(alice, Entry(BORGES, longer, location="500-501", added="Tuesday, 4 March 2025"))
        highlight = Highlight.objects.get()
        assert highlight.text == longer
        assert not highlight.is_word

    def test_the_import_is_idempotent_for_words(self, alice: User) -> None:
        _import(alice, *WORDS_LIBRARY)
        _import(alice, *WORDS_LIBRARY)
        assert Highlight.objects.filter(is_word=True).count() == 3


@pytest.mark.django_db
class WordsPageTests:
    def test_it_lists_the_readers_words_across_books(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *WORDS_LIBRARY)
        response = alice_client.get(reverse("words"))
        texts = [h.text for h in response.context["page"].object_list]
        assert texts == ["ineffable", "sine qua non", "reminiscence"]
        content = response.content.decode()
        assert "Ficciones" in content
        assert "The Man Who Mistook His Wife for a Hat" in content
        assert "To think is to forget" not in content

    def test_it_paginates(self, alice: User, alice_client: Client) -> None:
        _import(
            alice, *[Entry(BORGES, f"word{i:03d}x", location=str(100 + 5 * i)) for i in range(105)]
        )
        first = alice_client.get(reverse("words")).context["page"]
        assert len(first.object_list) == 100
        assert first.has_next()
        second = alice_client.get(reverse("words"), {"page": 2}).context["page"]
        assert len(second.object_list) == 5

    def test_it_has_an_empty_state(self, alice_client: Client) -> None:
        assert b"No words yet" in alice_client.get(reverse("words")).content

    def test_it_shows_nothing_of_another_reader(self, alice: User, bob_client: Client) -> None:
        _import(alice, *WORDS_LIBRARY)
        assert list(bob_client.get(reverse("words")).context["page"].object_list) == []

    def test_it_asks_anonymous_visitors_to_log_in(self, client: Client) -> None:
        response = client.get(reverse("words"))
        assert response.status_code == 302
        assert "/login/" in response["Location"]


@pytest.mark.django_db
class BookWordsTests:
    def test_a_book_lists_its_own_words(self, alice: User, alice_client: Client) -> None:
        _import(alice, *WORDS_LIBRARY)
        borges = Book.objects.get(title="Ficciones")
        response = alice_client.get(reverse("book_words", args=[borges.code]))
        assert [h.text for h in response.context["page"].object_list] == [
            "ineffable",
            "sine qua non",
        ]

    def test_the_book_page_shows_words_apart_from_passages(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *WORDS_LIBRARY)
        borges = Book.objects.get(title="Ficciones")
        response = alice_client.get(borges.get_absolute_url())
        assert [h.text for h in response.context["page"].object_list] == [
            "To think is to forget differences, to generalize, to abstract."
        ]
        assert [w.text for w in response.context["words"]] == ["ineffable", "sine qua non"]
        assert b"Words" in response.content

    def test_it_is_404_for_another_reader(self, alice: User, bob_client: Client) -> None:
        _import(alice, *WORDS_LIBRARY)
        borges = Book.objects.get(title="Ficciones")
        assert bob_client.get(reverse("book_words", args=[borges.code])).status_code == 404

    def test_it_asks_anonymous_visitors_to_log_in(self, alice: User, client: Client) -> None:
        _import(alice, *WORDS_LIBRARY)
        borges = Book.objects.get(title="Ficciones")
        response = client.get(reverse("book_words", args=[borges.code]))
        assert response.status_code == 302
        assert "/login/" in response["Location"]

    def test_words_stay_findable_by_keyword(self, alice: User, alice_client: Client) -> None:
        _import(alice, *WORDS_LIBRARY)
        response = alice_client.get(reverse("search"), {"q": "ineffable", "mode": "keyword"})
        assert b"ineffable" in response.content


@pytest.mark.django_db
class MapTests:
    def test_the_map_leaves_words_out(self, alice: User) -> None:
        _import(alice, *WORDS_LIBRARY)
        rng = np.random.default_rng(3)
        for highlight in Highlight.objects.all():
            vector = rng.normal(size=384)
            highlight.embedding = (vector / np.linalg.norm(vector)).tolist()
            highlight.embedding_status = Highlight.EmbeddingStatus.DONE
            highlight.embedding_model = "test"
            highlight.save()
        codes = set(library_map_refresh(reader=alice).points["code"])
        passages = Highlight.objects.passages().values_list("code", flat=True)
        assert codes == {str(code) for code in passages}


@pytest.mark.django_db
class BackfillTests:
    def test_the_migration_marks_words_and_drops_their_connections(self, alice: User) -> None:
        _import(alice, *WORDS_LIBRARY)
        Highlight.objects.update(is_word=False)
        passage = Highlight.objects.get(location_start=412)
        word = Highlight.objects.get(text="ineffable")
        other = Highlight.objects.get(location_start=1520)
        for first, second in ((passage, other), (word, other)):
            a, b = sorted((first.pk, second.pk))
            Connection.objects.create(
                reader=alice, highlight_a_id=a, highlight_b_id=b, distance=0.2,
                embedding_model="test",
            )  # fmt: skip
        migration = import_module("books.migrations.0006_highlight_is_word")
        migration.mark_words(apps, None)
        assert set(Highlight.objects.filter(is_word=True).values_list("text", flat=True)) == {
            "ineffable",
            "sine qua non",
            "reminiscence",
        }
        assert Connection.objects.count() == 1
