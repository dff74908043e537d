"""review 0003: a French word's schedules, kept under each article it was looked up with
("l'esprit", "d'esprit"), become the one word's ("esprit"), losing no showing; a name and an
English book's word keep theirs."""

from datetime import timedelta
from importlib import import_module

import pytest
from django.apps import apps

from accounts.models import User
from books.models import Book
from review.models import WordCard, WordState
from tests.books.library import book_of, highlight_in
from tests.review.test_services import TODAY
from tests.review.vocabulary import word_in

elided_words_one_key = import_module(
    "review.migrations.0003_elided_words_one_key"
).elided_words_one_key


def _passages(book: Book, texts: list[str]) -> None:
    for n, text in enumerate(texts):
        passage = highlight_in(book, text, location=10 * (n + 1))
        passage.refresh_language()
        passage.save()


FRENCH = [
    "Il avait beaucoup d'esprit, mais il ne savait pas quoi en faire.",
    "On a toujours l'esprit de l'escalier quand il est trop tard pour parler.",
]
ENGLISH = [
    "She had never seen Paris in the rain, and the city was not what she expected.",
    "They walked to the river because the streets were too loud for them.",
]


def _state(reader: User, word: str, *, due: int, interval: int, reviews: int) -> None:
    WordState.objects.create(
        reader=reader,
        word=word,
        due=TODAY + timedelta(days=due),
        interval_days=interval,
        ease=2.0 + interval / 100,
        reviews=reviews,
        last_reviewed_on=TODAY - timedelta(days=reviews),
    )


def _states(reader: User) -> dict[str, tuple[int, int, float, int, int]]:
    return {
        s.word: (
            (s.due - TODAY).days,
            s.interval_days,
            s.ease,
            s.reviews,
            (TODAY - s.last_reviewed_on).days if s.last_reviewed_on else -1,
        )
        for s in WordState.objects.filter(reader=reader)
    }


@pytest.mark.django_db
class ElidedWordsMigrationTests:
    def test_the_schedules_of_one_word_become_one_due_soonest(self, alice: User, bob: User) -> None:
        french = book_of(alice, "Maximes", "La Rochefoucauld")
        _passages(french, FRENCH)
        d_esprit = word_in(french, "d'esprit", location=11)
        l_esprit = word_in(french, "l\u2019esprit", location=21)
        word_in(french, "l'assimilant", location=31)
        english = book_of(alice, "Camping", "Scout, A.")
        _passages(english, ENGLISH)
        word_in(english, "s'mores", location=11)
        # Known (due in four months) as "l'esprit", not known (again soon) as "d'esprit".
        _state(alice, "l'esprit", due=120, interval=56, reviews=3)
        _state(alice, "d'esprit", due=2, interval=0, reviews=1)
        _state(alice, "l'assimilant", due=14, interval=14, reviews=1)
        _state(alice, "s'mores", due=30, interval=30, reviews=2)
        # Today's deck dealt both; an earlier day's card too.
        WordCard.objects.create(
            reader=alice, day=TODAY, position=0, word="l'esprit", highlight=l_esprit
        )
        WordCard.objects.create(
            reader=alice, day=TODAY, position=1, word="d'esprit", highlight=d_esprit
        )
        WordCard.objects.create(
            reader=alice,
            day=TODAY - timedelta(days=7),
            position=0,
            word="d'esprit",
            highlight=d_esprit,
        )
        # Another reader's word of the same letters (a book of no passages, no language):
        # theirs alone.
        word_in(book_of(bob, "Notes", ""), "d'esprit", location=5)
        _state(bob, "d'esprit", due=9, interval=14, reviews=1)

        elided_words_one_key(apps, None)

        assert _states(alice) == {
            "esprit": (2, 0, 2.0, 3, 1),
            "assimilant": (14, 14, 2.14, 1, 1),
            "s'mores": (30, 30, 2.3, 2, 2),
        }
        assert _states(bob) == {"esprit": (9, 14, 2.14, 1, 1)}
        # Today's second card of the word goes (the deck deals another in its place).
        cards = WordCard.objects.filter(reader=alice).order_by("day", "position")
        assert [(card.day, card.word) for card in cards] == [
            (TODAY - timedelta(days=7), "esprit"),
            (TODAY, "esprit"),
        ]

        elided_words_one_key(apps, None)  # a second run changes nothing
        assert set(_states(alice)) == {"esprit", "assimilant", "s'mores"}
        assert _states(alice)["esprit"] == (2, 0, 2.0, 3, 1)

    def test_a_word_kept_as_written_elsewhere_keeps_its_schedule_too(self, alice: User) -> None:
        french = book_of(alice, "Maximes", "La Rochefoucauld")
        _passages(french, FRENCH)
        english = book_of(alice, "Phrases", "Someone")
        _passages(english, ENGLISH)
        word_in(french, "l'esprit", location=11)
        word_in(english, "l'esprit", location=11)
        _state(alice, "l'esprit", due=20, interval=20, reviews=2)
        _state(alice, "esprit", due=40, interval=40, reviews=1)

        elided_words_one_key(apps, None)

        # The schedule due soonest, the most answers, the latest day answered.
        assert _states(alice) == {
            "l'esprit": (20, 20, 2.2, 2, 2),
            "esprit": (20, 20, 2.2, 2, 1),
        }
