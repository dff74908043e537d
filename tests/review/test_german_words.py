"""German writes every noun with a capital: a German reader's looked-up "Mädchen" is a word
for the deck, shown as highlighted, and one word with "mädchen" (the walk of 2026-12-06 saw
"mädchen", "menschen", "groschen" in the deck: its library's generator had lowered them).
Elsewhere a capitalised single word is a name or a sentence's first word: not a look-up."""

import pytest

from accounts.models import User
from books.models import Book, Highlight
from books.vocabulary import WordKind, word_kind
from evaluation.kindle_books import LibraryBook, Passage, add_lookups
from review.selectors import word_cards_shown, words_exist
from review.services import word_queue
from tests.books.library import book_of, highlight_in
from tests.review.test_services import TODAY
from tests.review.vocabulary import word_in

GERMAN = [
    "Das Mädchen ging mit den Menschen in die Stadt, und sie waren nicht froh.",
    "Er hatte keinen Groschen mehr, aber er war noch nicht am Ende.",
]
FRENCH = [
    "Il avait beaucoup d'esprit, mais il ne savait pas quoi en faire.",
    "On a toujours l'esprit de l'escalier quand il est trop tard pour parler.",
]
ENGLISH = [
    "She had never seen Paris in the rain, and the city was not what she expected.",
    "They walked to the river because the streets were too loud for them.",
]


def _passages(book: Book, texts: list[str]) -> None:
    for n, text in enumerate(texts):
        passage = highlight_in(book, text, location=10 * (n + 1))
        passage.refresh_language()
        passage.save()


class WordKindTests:
    def test_a_capitalised_word_of_a_german_book_is_looked_up(self) -> None:
        assert word_kind("Mädchen,", language="de") == WordKind.LOOK_UP
        assert word_kind("Menschen", language="de") == WordKind.LOOK_UP

    def test_elsewhere_a_capitalised_word_is_a_name_or_a_first_word(self) -> None:
        assert word_kind("Paris", language="en") == WordKind.FRAGMENT
        assert word_kind("Mädchen") == WordKind.FRAGMENT
        assert word_kind("ostensibly", language="en") == WordKind.LOOK_UP


@pytest.mark.django_db
class GermanDeckTests:
    def test_the_deck_shows_a_german_noun_as_highlighted_and_once(self, alice: User) -> None:
        book = book_of(alice, "Gedanken und Einfälle", "Paul, Jean")
        _passages(book, GERMAN)
        first = word_in(book, "Mädchen,", location=11)
        word_in(book_of(alice, "Zitate", "Büchmann"), "mädchen", location=5)
        word_in(book, "Groschen", location=21)

        cards = word_queue(reader=alice, today=TODAY)

        assert sorted(card.word for card in cards) == ["groschen", "madchen"]
        shown = {item.word for item in word_cards_shown(reader=alice, cards=cards)}
        assert shown == {"Mädchen", "Groschen"}
        assert next(c for c in cards if c.word == "madchen").highlight_id == first.pk
        assert words_exist(alice)

    def test_an_english_book_keeps_its_names_out_of_the_deck(self, alice: User) -> None:
        book = book_of(alice, "Rain", "Someone")
        _passages(book, ENGLISH)
        word_in(book, "Paris", location=11)
        looked_up = word_in(book, "loud", location=21)
        assert [c.highlight_id for c in word_queue(reader=alice, today=TODAY)] == [looked_up.pk]

    def test_the_book_page_lists_a_german_noun_as_looked_up(
        self, alice: User, alice_client: object
    ) -> None:
        book = book_of(alice, "Gedanken und Einfälle", "Paul, Jean")
        _passages(book, GERMAN)
        word_in(book, "Menschen", location=11)
        page = alice_client.get(f"/books/{book.code}/words/").content.decode()  # type: ignore[attr-defined]
        assert "looked up · in the deck" in page
        assert Highlight.objects.get(text="Menschen").is_word


class GeneratedLookUpTests:
    def test_a_german_books_looked_up_nouns_keep_their_capital(self) -> None:
        passages = [Passage(text, "Paul, Jean", "de", "") for text in GERMAN * 5]
        book = LibraryBook("Gedanken", "Paul, Jean", "de", list(passages))
        add_lookups([book], share=0.5, seed=3)
        words = [e for e in book.entries if isinstance(e, str) and " " not in e]
        assert words
        assert any(word[0].isupper() for word in words)
        every_word = " ".join(GERMAN).split()
        assert all(any(word in w for w in every_word) for word in words)


@pytest.mark.django_db
class ElidedWordsTests:
    def test_the_deck_shows_an_english_books_word_with_its_apostrophe(self, alice: User) -> None:
        # The words list told the word its book's language, the deck did not: an English
        # book's "s'mores" was "mores" on the card and in the e-mail.
        book = book_of(alice, "Camping", "Scout, A.")
        _passages(book, ENGLISH)
        word_in(book, "s'mores", location=11)
        cards = word_queue(reader=alice, today=TODAY)
        assert [item.word for item in word_cards_shown(reader=alice, cards=cards)] == ["s'mores"]

    def test_a_french_word_with_two_articles_is_one_card(self, alice: User) -> None:
        # "d'esprit" and "l'esprit" both showed as "esprit": two cards of one word.
        book = book_of(alice, "Maximes", "La Rochefoucauld")
        _passages(book, FRENCH)
        first = word_in(book, "d'esprit", location=11)
        word_in(book, "l\u2019esprit", location=21)
        word_in(book, "Esprit", location=25)  # capitalised: a sentence's first word, apart
        cards = word_queue(reader=alice, today=TODAY)
        assert [(card.word, card.highlight_id) for card in cards] == [("esprit", first.pk)]
        assert [item.word for item in word_cards_shown(reader=alice, cards=cards)] == ["esprit"]

    def test_a_name_and_an_english_word_keep_their_apostrophe_apart(self, alice: User) -> None:
        french = book_of(alice, "Les Trois Mousquetaires", "Dumas, Alexandre")
        _passages(french, FRENCH)
        english = book_of(alice, "Camping", "Scout, A.")
        _passages(english, ENGLISH)
        word_in(english, "s'mores", location=11)
        word_in(english, "mores", location=21)
        word_in(french, "mores", location=31)
        cards = word_queue(reader=alice, today=TODAY)
        assert sorted(card.word for card in cards) == ["mores", "s'mores"]
