"""The words deck's pure rules: a word's key, the day's choice, the word in its sentence."""

from datetime import date, timedelta

from hypothesis import given
from hypothesis import strategies as st

from books.vocabulary import word_as_written, word_key
from review.words import (
    ChosenWord,
    Passage,
    WordEntry,
    word_context,
    word_marked,
    words_choose,
)

TODAY = date(2026, 3, 2)


def _entry(pk: int, key: str, *, favourite: bool = False, has_note: bool = False) -> WordEntry:
    return WordEntry(highlight_id=pk, key=key, favourite=favourite, has_note=has_note)


def _marked(parts: object) -> list[str]:
    assert isinstance(parts, list)
    return [part.text for part in parts if part.marked]


class WordKeyTests:
    def test_it_drops_the_punctuation_a_selection_catches(self) -> None:
        assert word_as_written("“Ostensibly,”") == "Ostensibly"
        assert word_as_written(" 10,000  items.") == "10,000 items"
        assert word_as_written("—?") == "—?"  # nothing but punctuation: kept as it is
        assert word_as_written("«saudade»;") == "saudade"

    def test_it_keeps_the_marks_a_word_ends_with(self) -> None:
        # A vowel sign or an Arabic vowel is part of the word, not punctuation at its edge.
        for word in ["नमस्ते", "राजा", "ที่", "مُحَمَّدٌ"]:
            assert word_as_written(word) == word
            assert word_as_written(f"“{word},”") == word

    def test_it_drops_the_invisible_marks_a_selection_catches(self) -> None:
        # A direction mark, a zero-width space, a soft hyphen beside the punctuation.
        assert word_as_written("\u200f«سلام»\u200f") == "سلام"
        assert word_as_written("ostensibly,\u200b") == "ostensibly"
        assert word_as_written("\u200e“ostensibly”") == "ostensibly"
        assert word_as_written("largess,\u00ad") == "largess"
        assert word_key("10,000 items") == "items"
        assert word_key("“Ostensibly,”") == word_key("ostensibly") == "ostensibly"

    def test_it_folds_accents_and_case(self) -> None:
        assert word_key("Fagueira.") == word_key("fagueira")
        assert word_key("Dialéctica") == word_key("dialectica")

    def test_it_keeps_a_short_phrase_and_a_cjk_word(self) -> None:
        assert word_key("groves of  trees,") == "groves of trees"
        assert word_key("孙权") == "孙权"

    def test_it_has_no_key_for_a_highlight_without_a_letter(self) -> None:
        assert word_key("[20].") == word_key("6.") == ""

    def test_a_word_with_an_elided_article_is_the_word_its_card_shows(self) -> None:
        # "l'esprit" and "d'esprit" both show as "esprit": one word, one key.
        for text in ["l'esprit", "d\u2019esprit", "\u201cL'esprit,\u201d", "esprit"]:
            assert word_key(text, language="fr") == "esprit"
            assert word_as_written(text, language="fr").casefold() == "esprit"
        assert word_key("dell'anima", language="it") == word_key("anima", language="it")

    def test_a_name_or_a_language_that_elides_nothing_keeps_its_apostrophe(self) -> None:
        assert word_key("d'Artagnan", language="fr") == "d'artagnan"
        assert word_key("s'mores", language="en") == "s'mores"
        assert word_key("l'esprit de l'escalier", language="fr") == "l'esprit de l'escalier"


class WordsChooseTests:
    def test_it_shows_a_word_looked_up_twice_once_from_its_defined_highlight(self) -> None:
        entries = [_entry(1, "allay"), _entry(2, "allay", has_note=True), _entry(3, "iota")]
        chosen = words_choose(entries=entries, due={}, today=TODAY, count=10)
        assert sorted(chosen, key=lambda c: c.key) == [
            ChosenWord(key="allay", highlight_id=2),
            ChosenWord(key="iota", highlight_id=3),
        ]

    def test_it_leaves_out_words_due_later_and_words_already_on_the_deck(self) -> None:
        entries = [_entry(1, "allay"), _entry(2, "iota"), _entry(3, "pyre")]
        due = {"allay": TODAY + timedelta(days=3)}
        chosen = words_choose(entries=entries, due=due, today=TODAY, count=10, taken={"iota"})
        assert [c.key for c in chosen] == ["pyre"]

    def test_it_gives_half_the_day_to_new_words_and_the_most_overdue_first(self) -> None:
        entries = [_entry(i, f"old{i}") for i in range(6)] + [
            _entry(10 + i, f"new{i}") for i in range(6)
        ]
        due = {f"old{i}": TODAY - timedelta(days=i) for i in range(6)}
        chosen = [c.key for c in words_choose(entries=entries, due=due, today=TODAY, count=4)]
        assert chosen[:2] == ["old5", "old4"]
        assert all(key.startswith("new") for key in chosen[2:])

    def test_it_puts_favourite_words_first_among_the_new(self) -> None:
        entries = [_entry(i, f"word{i}") for i in range(20)] + [_entry(99, "iota", favourite=True)]
        chosen = words_choose(entries=entries, due={}, today=TODAY, count=3)
        assert chosen[0].key == "iota"

    def test_it_shuffles_the_new_words_differently_each_day(self) -> None:
        entries = [_entry(i, f"word{i}") for i in range(40)]
        days = [
            [c.key for c in words_choose(entries=entries, due={}, today=day, count=5)]
            for day in (TODAY, TODAY + timedelta(days=1))
        ]
        assert days[0] != days[1]
        assert days[0] == [
            c.key for c in words_choose(entries=entries, due={}, today=TODAY, count=5)
        ]

    @given(
        words=st.lists(
            st.tuples(
                st.sampled_from(["allay", "iota", "pyre", "fagueira", "ostensibly", "孙权", ""]),
                st.booleans(),
                st.one_of(st.none(), st.integers(min_value=-30, max_value=30)),
            ),
            max_size=25,
        ),
        count=st.integers(min_value=1, max_value=12),
    )
    def test_it_shows_each_eligible_word_at_most_once_and_as_many_as_it_can(
        self, words: list[tuple[str, bool, int | None]], count: int
    ) -> None:
        entries = [_entry(i, key, favourite=fav) for i, (key, fav, _) in enumerate(words)]
        due = {key: TODAY + timedelta(days=d) for key, _, d in words if d is not None and key}
        chosen = words_choose(entries=entries, due=due, today=TODAY, count=count)
        keys = [c.key for c in chosen]
        eligible = {e.key for e in entries if e.key and (e.key not in due or due[e.key] <= TODAY)}
        assert len(keys) == len(set(keys)) == min(count, len(eligible))
        assert set(keys) <= eligible
        by_id = {e.highlight_id: e.key for e in entries}
        assert all(by_id[c.highlight_id] == c.key for c in chosen)
        new = sum(1 for key in keys if key not in due)
        never_shown = sum(1 for key in eligible if key not in due)
        assert new >= min(never_shown, (count + 1) // 2)


class WordMarkedTests:
    def test_it_marks_the_word_whatever_its_case_and_accents(self) -> None:
        parts = word_marked("Nothing could allay her fears. Allay!", "allay")
        assert _marked(parts) == ["allay", "Allay"]
        assert "".join(p.text for p in parts or []) == "Nothing could allay her fears. Allay!"
        assert _marked(word_marked("La dialéctica de Hegel", word_key("dialectica"))) == [
            "dialéctica"
        ]

    def test_it_marks_a_word_whose_folding_is_longer(self) -> None:
        assert _marked(word_marked("Die Straße ist lang.", word_key("Strasse"))) == ["Straße"]
        assert _marked(word_marked("a ﬁne day", "fine")) == ["ﬁne"]

    def test_it_marks_whole_words_only(self) -> None:
        assert word_marked("An iotacism is not an iota.", "iota") is not None
        assert _marked(word_marked("An iotacism is not an iota.", "iota")) == ["iota"]
        assert word_marked("Art is a start.", "star") is None

    def test_it_marks_a_phrase_across_a_line_break(self) -> None:
        assert _marked(word_marked("under the groves of\ntrees we sat", "groves of trees")) == [
            "groves of\ntrees"
        ]

    def test_it_keeps_a_decomposed_accent_inside_the_mark(self) -> None:
        decomposed = "un cafe\u0301 solo"
        assert _marked(word_marked(decomposed, "cafe")) == ["cafe\u0301"]

    def test_it_marks_a_cjk_word_inside_a_sentence(self) -> None:
        assert _marked(word_marked("孙权不欲多问", "孙权")) == ["孙权"]

    @given(
        before=st.text(max_size=40),
        after=st.text(max_size=40),
        word=st.sampled_from(["allay", "Ostensibly", "dialéctica", "STRASSE", "groves of trees"]),
    )
    def test_it_gives_back_the_whole_passage_with_the_word_marked(
        self, before: str, after: str, word: str
    ) -> None:
        """Whatever surrounds it (accents, ligatures, other scripts): the parts are the
        passage itself, and every mark is the word."""
        passage = f"{before} {word} {after}"
        key = word_key(word)
        parts = word_marked(passage, key)
        assert parts is not None
        assert "".join(part.text for part in parts) == passage
        assert all(word_key(text) == key for text in _marked(parts))


class WordContextTests:
    def test_it_takes_the_nearest_passage_that_holds_the_word(self) -> None:
        passages = [
            Passage("Nothing could allay the fears of the town.", 120, 122, ""),
            Passage("She tried to allay his doubts, in vain.", 100, 101, ""),
            Passage("A passage on something else entirely.", 123, 123, ""),
        ]
        parts = word_context(key="allay", location=121, page="", passages=passages)
        assert parts is not None
        assert "".join(p.text for p in parts).startswith("Nothing could")

    def test_it_ignores_passages_too_far_away_or_without_the_word(self) -> None:
        passages = [
            Passage("Nothing could allay the fears of the town.", 130, 131, ""),
            Passage("A passage on something else entirely.", 120, 121, ""),
        ]
        assert word_context(key="allay", location=121, page="", passages=passages) is None

    def test_it_uses_the_page_when_a_book_has_no_locations(self) -> None:
        passages = [Passage("Nothing could allay the fears.", None, None, "12")]
        assert word_context(key="allay", location=None, page="12", passages=passages)
        assert word_context(key="allay", location=None, page="13", passages=passages) is None
