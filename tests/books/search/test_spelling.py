"""Did you mean: a query that found nothing, written again with the reader's own words."""

from uuid import uuid4

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.models import Book, Highlight, Tag
from books.search.search import search
from books.search.spelling import (
    SUGGESTED_UP_TO,
    Lexicon,
    library_words,
    library_words_by_language,
    slips,
    suggestion,
    suggestion_for,
)
from tests.books.search.sayings import sayings_of


def _highlight(reader: User, text: str, note: str = "") -> Highlight:
    book, _ = Book.objects.get_or_create(reader=reader, title="Essays", key="essays")
    highlight = Highlight(reader=reader, book=book, text=text, note=note, dedupe_key=uuid4().hex)
    highlight.refresh_search_text()
    highlight.refresh_language()
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

    def test_a_tag_is_corrected_among_the_readers_tags_or_not_at_all(self, alice: User) -> None:
        # "equipe" is a word of the library one slip from "equipos": no tag is a word.
        _highlight(alice, "L'équipe gagne ensemble, équipe unie.")
        assert suggestion(alice.pk, "tag:equipos") == ""
        assert suggestion(alice.pk, "liderazgo etiqueta:equipos") == ""
        Tag.objects.create(reader=alice, name="Equipo")
        Tag.objects.create(reader=alice, name="para releer")
        assert suggestion(alice.pk, "tag:equipos") == "tag:Equipo"
        assert suggestion(alice.pk, 'etiqueta:"para relee"') == 'etiqueta:"para releer"'
        assert suggestion(alice.pk, "tag:equipo") == ""  # theirs: left alone
        assert suggestion(alice.pk, "tag:zzzzzz") == ""  # nothing near: nothing offered

    def test_a_prefix_inside_a_quoted_phrase_is_corrected_as_words(self, alice: User) -> None:
        _highlight(alice, "Happiness is a habit of memory.")
        Tag.objects.create(reader=alice, name="Equipo")
        assert suggestion(alice.pk, '"happines tag:equipos"') == '"happiness tag:equipos"'

    def test_a_book_or_author_is_corrected_among_the_readers_books(self, alice: User) -> None:
        _highlight(alice, "Happiness is a habit, said the gardener.")
        book = Book.objects.create(
            reader=alice, title="El jardín de senderos", authors="Jorge Luis Borges", key="j"
        )
        assert book.pk
        assert suggestion(alice.pk, "author:borgs happines") == "author:borges happiness"
        assert suggestion(alice.pk, "libro:jardn") == "libro:jardín"
        assert suggestion(alice.pk, "autor:borges") == ""
        # A title's word is never offered for an author, nor the library's words for either.
        assert suggestion(alice.pk, "autor:jardn") == ""
        assert suggestion(alice.pk, "book:gardenr") == ""

    def test_it_corrects_a_word_with_a_word_of_the_querys_language(self, alice: User) -> None:
        # "memorya" is one slip from "memory" and from "memoria", which is more common here.
        _highlight(alice, "The memory of the river is long.")
        for _ in range(3):
            _highlight(alice, "La memoria de la ciudad es larga y la memoria del río también.")
        assert library_words_by_language(alice.pk)["en"]["memory"] == 1
        assert "memory" not in library_words_by_language(alice.pk)["es"]
        assert suggestion(alice.pk, "the memorya of the river") == "the memory of the river"
        assert suggestion(alice.pk, "la memorya del río") == "la memoria del río"
        # No common word says the language: the reader's own words in the query do.
        assert suggestion(alice.pk, "river memorya") == "river memory"
        assert suggestion(alice.pk, "ciudad memorya") == "ciudad memoria"
        # Nothing tells: the reader's most common word a slip away, as before.
        assert suggestion(alice.pk, "memorya") == "memoria"
        # A word of the reader's in another language is theirs, never a slip.
        assert suggestion(alice.pk, "the ciudad") == ""

    def test_a_word_of_unknown_language_is_offered_in_any(self, alice: User) -> None:
        _highlight(alice, "The river is long.")
        _highlight(alice, "Serendipity")  # a looked-up word: its language is unknown
        assert suggestion(alice.pk, "the serendipty") == "the serendipity"
        assert suggestion(alice.pk, "la serendipty") == "la serendipity"

    def test_a_word_another_language_has_is_not_offered_in_a_query_of_one(
        self, alice: User
    ) -> None:
        # Looked up (language unknown), and in an English highlight: an English word.
        _highlight(alice, "paralyze")
        _highlight(alice, "Life's challenges are not supposed to paralyze you.")
        _highlight(alice, "El miedo es libre, pero no nos deja vivir.")
        assert suggestion(alice.pk, "el miedo nos paraliza") == ""
        assert suggestion(alice.pk, "the fear would paralyse you") == (
            "the fear would paralyze you"
        )

    def test_a_word_alone_is_offered_no_word_of_the_other_language_its_form_says(
        self, alice: User
    ) -> None:
        _highlight(alice, "Life's challenges are not supposed to paralyze you.")
        for text in (
            "La rutina nos esclaviza y la prisa nos agobia.",
            "Quien se organiza bien, realiza más y utiliza menos.",
            "El hábito autoriza lo que la razón no analiza.",
        ):
            _highlight(alice, text)
        # "paraliza" reads as Spanish: a Spanish verb's ending, as the reader's "-iza" words.
        assert suggestion(alice.pk, "paraliza") == ""
        # "paralize" reads as either (Spanish "paraliz-e", English "paral-ize"): a slip.
        assert suggestion(alice.pk, "paralize") == "paralyze"
        assert suggestion(alice.pk, "paralyse") == "paralyze"

    def test_the_readers_words_say_which_endings_are_of_a_language(self, alice: User) -> None:
        # The Spanish stemmer reads an infinitive's "-er" in the slip "befoer", the English
        # one no ending; but none of the reader's Spanish words ends in "oer": its form says
        # nothing, and the English word is offered.
        _highlight(alice, "We read the letter before the winter was over.")
        _highlight(alice, "Leer es vivir dos veces.")
        assert suggestion(alice.pk, "befoer") == "before"

    def test_a_name_written_with_symbols_is_left_as_typed(self, alice: User) -> None:
        # The search looked for "memorya.js" whole (books.text.literal): no slip of "memory".
        _highlight(alice, "The memory of the river is long.")
        assert suggestion(alice.pk, "memorya") == "memory"
        assert suggestion(alice.pk, "memorya.js") == ""
        assert suggestion(alice.pk, "the memorya of memorya.js") == "the memory of memorya.js"

    def test_it_never_offers_a_form_of_the_word_itself(self, alice: User) -> None:
        # "fracasar" and "fracasan" are one Spanish verb: its words found it by that stem.
        _highlight(alice, "Los que renuncian son más numerosos que los que fracasan.")
        assert search(alice, "fracasar", mode="keyword").total == 1
        assert suggestion(alice.pk, "el miedo a fracasar") == ""
        assert suggestion(alice.pk, "fracasar") == ""  # "fracasan" is a Spanish word
        # A slip is still one: "fracazan" is no form of the verb.
        assert suggestion(alice.pk, "los que fracazan") == "los que fracasan"
        # A quoted phrase is searched as written: there the form is a slip to correct.
        assert search(alice, '"que los que fracasar"', mode="keyword").total == 0
        assert suggestion(alice.pk, '"que los que fracasar"') == '"que los que fracasan"'


@pytest.mark.django_db
class SuggestionForTests:
    def test_it_offers_a_correction_only_when_few_were_found(self, alice: User) -> None:
        for number in range(SUGGESTED_UP_TO):
            _highlight(alice, f"Memory is a story, number {number}.")
        found = search(alice, "memory storry", mode="keyword")
        assert (found.keyword_pass, found.total) == ("any", SUGGESTED_UP_TO)
        assert suggestion_for(alice.pk, found) == "memory story"
        # One more highlight with the reader's word: it is found enough, and no slip offered.
        _highlight(alice, "Memory is a story, once more.")
        more = search(alice, "memory storry", mode="keyword")
        assert (more.keyword_pass, more.total) == ("any", SUGGESTED_UP_TO + 1)
        assert suggestion_for(alice.pk, more) == ""
        # Found nothing at all: offered as before.
        assert suggestion_for(alice.pk, search(alice, "storry", mode="keyword")) == "story"


@pytest.mark.django_db
class DefaultModeSuggestionTests:
    """Words and meaning: the meaning half finds something close to almost any query, and
    the count of close matches says nothing of a slip in the words."""

    def test_it_offers_a_slip_whatever_the_meaning_half_found(self, alice: User) -> None:
        sayings_of(alice)
        for query, meant in [
            ("happines", "happiness"),
            ("happines in life", "happiness in life"),
            ("what is happines", "what is happiness"),
        ]:
            found = search(alice, query)
            # More found than a search by words alone may find and still be corrected.
            assert (found.mode_used, found.total > SUGGESTED_UP_TO) == ("hybrid", True), query
            assert suggestion_for(alice.pk, found) == meant
            assert found.words_found <= SUGGESTED_UP_TO

    def test_it_never_corrects_a_word_of_the_library_in_any_language(self, alice: User) -> None:
        sayings_of(alice)
        # The same search offers the slip...
        assert suggestion_for(alice.pk, search(alice, "happines")) == "happiness"
        # ...and leaves alone the reader's own words, rare ones and other languages' too,
        # even where the words found less than the meaning did ("freudig" and
        # "Freundschaft" are in no highlight together; "dicha" is one slip from "dich"
        # and "nagel" from "nigel").
        for query in [
            "happiness",
            "felicidad",
            "glücklich",
            "freudig",
            "freudig Freundschaft",
            "la dicha",
            "dicha amistad",
            "bonheur",
            "felicidade",
        ]:
            found = search(alice, query)
            assert found.total, query
            assert suggestion_for(alice.pk, found) == "", query

    def test_it_never_corrects_a_name_of_the_readers_books(self, alice: User) -> None:
        # "Nigel" is in no highlight, but Nigel Warburton wrote one of the books, and the
        # German "Nagel" is a slip away.
        sayings_of(alice)
        for mode in ["auto", "keyword"]:
            found = search(alice, "Nigel Warburton happines", mode=mode)
            assert suggestion_for(alice.pk, found) == "Nigel Warburton happiness", mode


@pytest.mark.django_db
class RealWordSuggestionTests:
    """A word the library lacks is as often a word of another language or a rarer one as a
    slip ("luto", "peur"): offered another word only where nothing says it is a word."""

    def test_it_keeps_the_first_letter(self, alice: User) -> None:
        _highlight(alice, "El auto se quedó sin gasolina en la carretera.")
        assert suggestion(alice.pk, "luto") == ""  # Spanish for mourning, no slip for "auto"
        assert suggestion(alice.pk, "autp") == "auto"

    def test_it_leaves_alone_a_word_the_model_keeps_whole(self, alice: User) -> None:
        _highlight(alice, "Pour the water slowly over the coffee.")
        assert suggestion(alice.pk, "peur") == ""  # French for fear: one piece to e5
        assert suggestion(alice.pk, "pourr") == "pour"

    def test_it_offers_none_for_a_word_the_model_found_close_matches_of(self, alice: User) -> None:
        sayings_of(alice)
        added = [
            _highlight(alice, text).pk
            for text in ["Pour the water slowly over the coffee.", "Fear is the mind-killer."]
        ]
        highlights_embed(ids=added)
        found = search(alice, "peur")
        assert found.meaning_close >= 1
        assert suggestion_for(alice.pk, found) == ""
        # A few words with a slip are still corrected, however close the rest found.
        found = search(alice, "happines in life")
        assert found.meaning_close >= 1
        assert suggestion_for(alice.pk, found) == "happiness in life"


@pytest.mark.django_db
class WordsOnlySuggestionTests:
    """A search by words alone never loads the model for did-you-mean: in a cold web
    process (EXOGRAM_WARM_WEB=0) that is a second and 100 MB in the request."""

    def test_a_words_only_search_in_a_cold_process_loads_no_model(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from books.embedding import encoder

        _highlight(alice, "Memory is a story we tell ourselves.")
        _highlight(alice, "Pour the water slowly over the coffee.")
        # A process that has loaded no model yet: the module's own caches, emptied here.
        monkeypatch.setattr(encoder, "_encoders", {})
        monkeypatch.setattr(encoder, "_encoder_sets", {})
        page = alice_client.get(reverse("search"), {"q": "memory storry", "mode": "keyword"})
        assert page.context["suggested"] == "memory story"
        assert encoder._encoders == {}
        assert encoder._encoder_sets == {}
        # Without the model, "peur" is no word it keeps whole: offered the reader's "pour".
        page = alice_client.get(reverse("search"), {"q": "peur", "mode": "keyword"})
        assert page.context["suggested"] == "pour"
        assert encoder._encoders == {}

    def test_a_loaded_model_still_keeps_a_word_whole(self, alice: User) -> None:
        from books.embedding.encoder import get_encoders

        get_encoders()  # loaded, as in a warm web process
        _highlight(alice, "Pour the water slowly over the coffee.")
        found = search(alice, "peur", mode="keyword")
        assert suggestion_for(alice.pk, found) == ""
        assert suggestion_for(alice.pk, search(alice, "pourr", mode="keyword")) == "pour"
