"""The reader's words: marked at import and whenever the text changes, listed per book and
across books, left out of the map, still found by keyword; the migration's backfill."""

from importlib import import_module

import numpy as np
import pytest
from django.apps import apps
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.library_map.services import library_map_refresh
from books.models import Book, Connection, Highlight
from books.selectors import WordPages, word_rows
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


# A real library's standalone notes (Polish: "here", "the end here", and a keyboard test).
SHORT_NOTES = [
    Entry(BORGES, "tutaj", kind="Note", location="900"),
    Entry(SACKS, "tutaj", kind="Note", location="1900"),
    Entry(SACKS, "tu koniec", kind="Note", location="1950"),
]
TWIN_PASSAGES = [
    Entry(BORGES, "To think is to forget differences, to generalize, to abstract.", location="412"),
    Entry(
        SACKS, "To think is to forget the differences, to generalise and abstract.", location="1520"
    ),
]


@pytest.mark.django_db
class ShortNotesTests:
    def test_a_note_of_a_few_words_is_too_short_to_carry_an_idea(self, alice: User) -> None:
        _import(
            alice,
            *SHORT_NOTES,
            Entry(BORGES, "Borges wrote this twice, in two stories.", kind="Note", location="950"),
        )
        notes = dict(Highlight.objects.filter(kind="note").values_list("text", "is_word"))
        assert notes == {
            "tutaj": True,
            "tu koniec": True,
            "Borges wrote this twice, in two stories.": False,
        }

    def test_short_notes_never_connect_and_passages_still_do(self, alice: User) -> None:
        _import(alice, *SHORT_NOTES, *TWIN_PASSAGES)
        highlights_embed(ids=list(Highlight.objects.values_list("pk", flat=True)))
        pairs = {
            frozenset((c.highlight_a.text, c.highlight_b.text))
            for c in Connection.objects.select_related("highlight_a", "highlight_b")
        }
        assert pairs == {frozenset(entry.text for entry in TWIN_PASSAGES)}

    def test_short_notes_are_not_listed_as_words(self, alice: User, alice_client: Client) -> None:
        _import(alice, *SHORT_NOTES, *WORDS_LIBRARY)
        response = alice_client.get(reverse("words"))
        texts = [w.highlight.text for w in response.context["page"].object_list]
        assert texts == ["ineffable", "sine qua non", "reminiscence"]

    def test_the_note_page_says_why_it_has_no_connections(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *SHORT_NOTES)
        note = Highlight.objects.filter(text="tu koniec").get()
        content = alice_client.get(note.get_absolute_url()).content.decode()
        assert "too short to connect" in content
        assert "one of your" not in content

    def test_short_notes_stay_findable_by_keyword(self, alice: User, alice_client: Client) -> None:
        _import(alice, *SHORT_NOTES)
        response = alice_client.get(reverse("search"), {"q": "koniec", "mode": "keyword"})
        assert [r.highlight.text for r in response.context["found"].results] == ["tu koniec"]


@pytest.mark.django_db
class WordsPageTests:
    def test_it_lists_the_readers_words_across_books(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *WORDS_LIBRARY)
        response = alice_client.get(reverse("words"))
        texts = [w.highlight.text for w in response.context["page"].object_list]
        assert texts == ["ineffable", "sine qua non", "reminiscence"]
        content = response.content.decode()
        assert "Ficciones" in content
        assert "The Man Who Mistook His Wife for a Hat" in content
        assert "To think is to forget" not in content

    def test_it_shows_each_word_as_the_deck_does_without_the_selections_punctuation(
        self, alice: User, alice_client: Client
    ) -> None:
        caught = ["largess,", "panacea;", "shambles.", "“allay”"]
        _import(
            alice, *[Entry(BORGES, text, location=str(600 + i)) for i, text in enumerate(caught)]
        )
        listed = alice_client.get(reverse("words")).content.decode()
        book_page = alice_client.get(Book.objects.get(title="Ficciones").get_absolute_url())
        for text, clean in zip(caught, ["largess", "panacea", "shambles", "allay"], strict=True):
            highlight = Highlight.objects.get(text=text)
            link = f'<a href="{highlight.get_absolute_url()}">{clean}</a>'
            assert link in listed
            assert link in book_page.content.decode()
            # The deck's word is the same.
            assert highlight.word_as_written == clean

    def test_it_shows_headings_and_pieces_of_sentences_as_highlighted(
        self, alice: User, alice_client: Client
    ) -> None:
        # Only a word looked up loses what the selection caught: a heading's or a fragment's
        # punctuation is part of what the reader highlighted.
        kept = ["What Is to Be Done?", "C++"]
        _import(alice, *[Entry(BORGES, text, location=str(700 + i)) for i, text in enumerate(kept)])
        listed = alice_client.get(reverse("words")).content.decode()
        book_page = alice_client.get(Book.objects.get(title="Ficciones").get_absolute_url())
        for text in kept:
            highlight = Highlight.objects.get(text=text)
            assert highlight.word_kind != "look-up"
            link = f'<a href="{highlight.get_absolute_url()}">{text}</a>'
            assert link in listed
            assert link in book_page.content.decode()

    def test_it_shows_a_french_word_without_its_elided_article(
        self, alice: User, alice_client: Client
    ) -> None:
        french = "Les vaisseaux du coeur (Groult, Benoîte)"
        _import(
            alice,
            Entry(french, "Je n'ai jamais su ce que je voulais vraiment dire.", location="100"),
            Entry(french, "l'assimilant", location="1180"),
            Entry(french, "d\u2019expliquer", location="3700"),
            Entry(
                BORGES,
                "To think is to forget differences, to generalize, to abstract.",
                location="412",
            ),
            Entry(BORGES, "s'mores", location="600"),
        )
        listed = alice_client.get(reverse("words")).content.decode()
        book_page = alice_client.get(
            Book.objects.get(title="Les vaisseaux du coeur").get_absolute_url()
        )
        for text, shown in [("l'assimilant", "assimilant"), ("d\u2019expliquer", "expliquer")]:
            highlight = Highlight.objects.get(text=text)
            link = f'<a href="{highlight.get_absolute_url()}">{shown}</a>'
            assert link in listed
            assert link in book_page.content.decode()
        # English elides no article: the English book's word is as the reader selected it.
        mores = Highlight.objects.get(text="s'mores")
        assert f'<a href="{mores.get_absolute_url()}">s&#x27;mores</a>' in listed

    def test_it_lists_a_french_word_with_two_articles_once(
        self, alice: User, alice_client: Client
    ) -> None:
        # "d'esprit" and "l'esprit" both show as "esprit": one word, listed once, as in the
        # deck; an English book's "s'mores" is no "mores", nor "d'Artagnan" "artagnan".
        french = "Maximes (La Rochefoucauld)"
        _import(
            alice,
            Entry(
                french,
                "Il avait beaucoup d'esprit, mais il ne savait quoi en faire.",
                location="90",
            ),
            Entry(french, "d'esprit", location="100"),
            Entry(french, "l\u2019esprit", location="200"),
            Entry(french, "d'Artagnan", location="300"),
            Entry(french, "Artagnan", location="310"),
            Entry(BORGES, "To think is to forget differences, to generalize.", location="412"),
            Entry(BORGES, "s'mores", location="600"),
            Entry(BORGES, "mores", location="610"),
        )
        page = alice_client.get(reverse("words")).context["page"]
        rows = [[h.text for h in w.highlights] for w in page.object_list]
        assert sorted(rows) == sorted(
            [["d'esprit", "l\u2019esprit"], ["d'Artagnan"], ["Artagnan"], ["s'mores"], ["mores"]]
        )
        book_page = alice_client.get(Book.objects.get(title="Maximes").get_absolute_url())
        listed = [
            [w.text for w in words]
            for kind, _, words, _ in book_page.context["word_groups"]
            if kind == "look-up"
        ]
        assert listed == [["d'esprit"]]

    def test_it_paginates(self, alice: User, alice_client: Client) -> None:
        _import(
            alice, *[Entry(BORGES, f"word{i:03d}x", location=str(100 + 5 * i)) for i in range(105)]
        )
        first = alice_client.get(reverse("words")).context["page"]
        assert len(first.object_list) == 100
        assert first.has_next()
        second = alice_client.get(reverse("words"), {"page": 2}).context["page"]
        assert len(second.object_list) == 5

    def test_it_lists_a_word_looked_up_in_several_books_once(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(
            alice,
            *WORDS_LIBRARY,
            Entry(BORGES, "Ineffable,", location="640"),  # capitalised: a fragment, apart
            Entry(SACKS, "ineffable.", location="1700"),
            Entry(BORGES, "“ineffable”", location="700"),
            Entry(SACKS, "Why Incentives Fail", location="1710"),
            Entry(SACKS, "Why Incentives Fail", location="1900"),  # a heading: a place each
        )
        response = alice_client.get(reverse("words"))
        rows = [
            (w.highlight.text, [(h.book.title[:9], h.location_start) for h in w.highlights])
            for w in response.context["page"].object_list
        ]
        assert rows == [
            ("ineffable", [("Ficciones", 500), ("Ficciones", 700), ("The Man W", 1700)]),
            ("sine qua non", [("Ficciones", 520)]),
            ("Ineffable,", [("Ficciones", 640)]),
            ("reminiscence", [("The Man W", 1600)]),
            ("Why Incentives Fail", [("The Man W", 1710)]),
            ("Why Incentives Fail", [("The Man W", 1900)]),
        ]
        assert response.context["page"].paginator.count == 6
        content = response.content.decode()
        assert "looked up 3 times · in the deck" in content
        # Each place links to its highlight, and the row names both books.
        for highlight in Highlight.objects.filter(text__in=["ineffable.", "“ineffable”"]):
            assert f'href="{highlight.get_absolute_url()}"' in content
        spanish = alice_client.get(reverse("words"), headers={"Accept-Language": "es"})
        assert "buscada 3 veces · en el mazo" in spanish.content.decode()

    def test_it_paginates_words_not_highlights(self, alice: User, alice_client: Client) -> None:
        looked_up = [f"word{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(100)]
        entries = [
            Entry(BORGES, word, location=str(100 + 5 * i)) for i, word in enumerate(looked_up)
        ]
        again = [
            Entry(SACKS, word, location=str(2000 + i)) for i, word in enumerate(looked_up[:20])
        ]
        _import(alice, *entries, *again)
        page = alice_client.get(reverse("words")).context["page"]
        assert page.paginator.count == 100
        assert not page.has_next()
        assert {w.times for w in page.object_list} == {1, 2}

    def test_it_runs_as_many_queries_for_many_words_as_for_a_few(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *WORDS_LIBRARY, Entry(SACKS, "ineffable", location="1650"))
        with CaptureQueriesContext(connection) as few:
            alice_client.get(reverse("words"))
        _import(
            alice,
            *[Entry(SACKS, "ineffable", location=str(3000 + 10 * i)) for i in range(29)],
            *[Entry(BORGES, f"Part {i}", location=str(4000 + 10 * i)) for i in range(30)],
        )
        with CaptureQueriesContext(connection) as many:
            page = alice_client.get(reverse("words")).context["page"]
        assert [w.times for w in page.object_list][:1] == [31]
        # session, user, the words' rows, their books' languages (for the words met more than
        # once), the page's highlights with their books, and those books' languages
        assert len(many) == len(few) == 6

    def test_a_row_purged_between_the_two_reads_is_left_out_of_its_page(self, alice: User) -> None:
        _import(alice, *WORDS_LIBRARY)
        pages = WordPages(word_rows(alice))
        Highlight.objects.filter(reader=alice, text="sine qua non").delete()
        assert len(pages) == 3  # the rows were read before
        assert [w.highlight.text for w in pages[0:3]] == ["ineffable", "reminiscence"]
        assert [w.highlight.text for w in pages] == ["ineffable", "reminiscence"]
        assert pages[0].highlight.text == "ineffable"
        with pytest.raises(LookupError, match="row 1 were purged"):
            pages[1]

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
        assert [w.highlight.text for w in response.context["page"].object_list] == [
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
        groups = [
            (kind, [w.text for w in shown], count)
            for kind, _, shown, count in response.context["word_groups"]
        ]
        assert groups == [("look-up", ["ineffable"], 1), ("fragment", ["sine qua non"], 1)]
        assert b"Words you looked up" in response.content
        assert b"Fragments" in response.content
        spanish = alice_client.get(borges.get_absolute_url(), headers={"Accept-Language": "es"})
        assert "Palabras que buscaste" in spanish.content.decode()
        assert "Fragmentos" in spanish.content.decode()

    def test_the_book_page_shows_a_word_looked_up_twice_once(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(
            alice,
            *WORDS_LIBRARY,
            Entry(BORGES, "ineffable,", location="640"),
            Entry(BORGES, "“ineffable”", location="700"),
        )
        borges = Book.objects.get(title="Ficciones")
        response = alice_client.get(borges.get_absolute_url())
        groups = [
            (kind, [w.text for w in shown], count)
            for kind, _, shown, count in response.context["word_groups"]
        ]
        assert groups == [("look-up", ["ineffable"], 1), ("fragment", ["sine qua non"], 1)]
        # The book's words page too: one row, with the three places it was met.
        response = alice_client.get(reverse("book_words", args=[borges.code]))
        rows = [
            (w.highlight.text, [h.location_start for h in w.highlights])
            for w in response.context["page"].object_list
        ]
        assert rows == [("ineffable", [500, 640, 700]), ("sine qua non", [520])]
        assert "looked up 3 times · in the deck" in response.content.decode()

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

    def test_the_migration_marks_short_notes_and_drops_their_connections(self, alice: User) -> None:
        _import(alice, *SHORT_NOTES, *TWIN_PASSAGES)
        Highlight.objects.update(is_word=False)
        first, second = Highlight.objects.filter(text="tutaj")
        passages = Highlight.objects.filter(kind="highlight").order_by("pk")
        for one, other in ((first, second), tuple(passages)):
            a, b = sorted((one.pk, other.pk))
            Connection.objects.create(
                reader=alice, highlight_a_id=a, highlight_b_id=b, distance=0.02,
                embedding_model="test",
            )  # fmt: skip
        migration = import_module("books.migrations.0016_short_notes_and_clipping_limits")
        migration.mark_short_notes(apps, None)
        assert set(Highlight.objects.filter(is_word=True).values_list("text", flat=True)) == {
            "tutaj",
            "tu koniec",
        }
        assert Connection.objects.count() == 1

    def test_the_migration_makes_short_sentences_passages_to_embed_again(self, alice: User) -> None:
        _import(
            alice,
            Entry(BORGES, "ineffable", location="500"),
            Entry(BORGES, "our struggles determine our successes.", location="510"),
        )
        Highlight.objects.update(is_word=True, embedding_status="done", embedding_model="test")
        migration = import_module("books.migrations.0021_short_sentences_are_passages")
        migration.sentences_become_passages(apps, None)
        rows = set(Highlight.objects.values_list("text", "is_word", "embedding_status"))
        assert rows == {
            ("ineffable", True, "done"),
            ("our struggles determine our successes.", False, "pending"),
        }

    def test_the_migration_cuts_a_placeholder_off_stored_texts(self, alice: User) -> None:
        _import(alice, *TWIN_PASSAGES)
        first, second = Highlight.objects.order_by("pk")
        placeholder = "<You have reached the clipping limit for this item>"
        first.text = f"We tend {placeholder}"
        first.refresh_search_text()
        first.embedding = [1.0] + [0.0] * 383
        first.embedding_status = Highlight.EmbeddingStatus.DONE
        first.embedding_model = "test"
        first.save()
        Connection.objects.create(
            reader=alice, highlight_a_id=first.pk, highlight_b_id=second.pk, distance=0.02,
            embedding_model="test",
        )  # fmt: skip
        migration = import_module("books.migrations.0016_short_notes_and_clipping_limits")
        migration.cut_clipping_limits(apps, None)
        first.refresh_from_db()
        assert (first.text, first.is_word) == ("We tend", True)
        assert first.search_text == "we tend"
        assert (first.embedding, first.embedding_status) == (None, "pending")
        assert Connection.objects.count() == 0
        second.refresh_from_db()
        assert second.text == TWIN_PASSAGES[1].text
