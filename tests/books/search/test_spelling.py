"""Did you mean: a query that found nothing, written again with the reader's own words."""

from uuid import uuid4

import pytest
from django.utils import timezone

from accounts.models import User
from books.models import Book, Highlight
from books.search.spelling import Lexicon, library_words, slips, suggestion


def _highlight(reader: User, text: str, note: str = "") -> Highlight:
    book, _ = Book.objects.get_or_create(reader=reader, title="Essays", key="essays")
    highlight = Highlight(reader=reader, book=book, text=text, note=note, dedupe_key=uuid4().hex)
    highlight.refresh_search_text()
    highlight.save()
    return highlight


class SlipsTests:
    @pytest.mark.parametrize(
        ("a", "b", "expected"),
        [
            ("happiness", "happiness", 0),
            ("happines", "happiness", 1),  # a letter left out
            ("memmory", "memory", 1),  # one added
            ("felicidab", "felicidad", 1),  # one changed
            ("recieve", "receive", 1),  # two neighbours swapped
            ("soledd", "soledad", 1),
            ("hapines", "happiness", 2),
            ("river", "memory", 5),
        ],
    )
    def test_each_slip_counts_one(self, a: str, b: str, expected: int) -> None:
        assert slips(a, b) == expected == slips(b, a)


class LexiconTests:
    LEXICON = Lexicon.of(
        {"happiness": 40, "happily": 3, "memory": 12, "memoria": 9, "the": 900, "cat": 5,
         "car": 2, "receive": 2, "soledad": 4, "deceive": 1}
    )  # fmt: skip

    def test_it_offers_the_readers_word_a_slip_away(self) -> None:
        assert self.LEXICON.closest("happines") == "happiness"
        assert self.LEXICON.closest("memmory") == "memory"
        assert self.LEXICON.closest("recieve") == "receive"
        assert self.LEXICON.closest("soledd") == "soledad"

    def test_a_long_word_may_be_two_slips_away_a_short_one_only_one(self) -> None:
        assert self.LEXICON.closest("hapines") == "happiness"
        assert self.LEXICON.closest("memry") == "memory"
        assert self.LEXICON.closest("mmry") is None

    def test_the_nearer_word_wins_then_the_more_common(self) -> None:
        both = Lexicon.of({"memory": 2, "memoria": 50})
        assert both.closest("memorya") == "memoria"  # one slip from both: the more common
        assert both.closest("memorj") == "memory"  # one slip from memory, two from memoria

    def test_it_leaves_alone_the_readers_own_words_short_words_and_nonsense(self) -> None:
        assert self.LEXICON.closest("memory") is None
        assert self.LEXICON.closest("cst") is None  # too short to guess
        assert self.LEXICON.closest("xyzzyqwrtplk") is None
        assert self.LEXICON.closest("2024") is None


@pytest.mark.django_db
class SuggestionTests:
    def test_it_reads_the_readers_live_words_and_notes_only(self, alice: User, bob: User) -> None:
        _highlight(alice, "Happiness is a habit.", note="Serenidad")
        gone = _highlight(alice, "Gone tomorrow.")
        gone.deleted_at = timezone.now()
        gone.save()
        _highlight(bob, "Cartography of memory.")
        words = library_words(alice.pk)
        assert {"happiness", "habit", "serenidad"} <= words.keys()
        assert "gone" not in words
        assert "cartography" not in words
        # Another reader's words are never offered.
        assert suggestion(alice.pk, "cartografy") == ""
        assert suggestion(bob.pk, "cartografy") == "cartography"

    def test_it_rewrites_the_slips_and_keeps_the_rest_as_typed(self, alice: User) -> None:
        _highlight(alice, "Happiness is a habit of memory.")
        assert suggestion(alice.pk, "the Happines of memmory") == "the Happiness of memory"
        # Filters and exclusions name what the reader knows: kept as typed.
        assert suggestion(alice.pk, "author:borgs happines -memmory") == (
            "author:borgs happiness -memmory"
        )
        assert suggestion(alice.pk, "happiness") == ""
        assert suggestion(alice.pk, "zebra") == ""
