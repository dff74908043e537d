import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from books.text import (
    TAG_MAX_LENGTH,
    author_sort_key,
    collapse_spacing,
    dotted,
    fold,
    fold_keeping_kana_marks,
    fold_spacing,
    fold_spacing_and_bom,
    literal,
    literal_pattern,
    tag_name,
    title_initial,
    title_sort_key,
)

# `Full` in fullwidth letters, as a Japanese title writes it.
WIDE_FULL = "\uff26\uff55\uff4c\uff4c"
FOLDS = (fold, fold_keeping_kana_marks, collapse_spacing, fold_spacing, fold_spacing_and_bom)


class FoldTableTests:
    """What each fold ignores, side by side: a text, then each fold's result in FOLDS's order."""

    @pytest.mark.parametrize(
        ("text", "folded"),
        [
            (
                "Liquidación",
                ("liquidacion", "liquidacion", "Liquidación", "liquidación", "liquidación"),
            ),
            ("Straße", ("strasse", "strasse", "Straße", "strasse", "strasse")),
            ("サンデル", ("サンテル", "サンデル", "サンデル", "サンデル", "サンデル")),
            (WIDE_FULL, ("full", "full", WIDE_FULL, WIDE_FULL.casefold(), WIDE_FULL.casefold())),
            (
                "  To THINK\r\n is\tto  forget ",
                (
                    "  to think\r\n is\tto  forget ",
                    "  to think\r\n is\tto  forget ",
                    "To THINK is to forget",
                    "to think is to forget",
                    "to think is to forget",
                ),
            ),
            (
                "\ufeffThe Kindle",
                (
                    "\ufeffthe kindle",
                    "\ufeffthe kindle",
                    "\ufeffThe Kindle",
                    "\ufeffthe kindle",
                    "the kindle",
                ),
            ),
        ],
    )
    def test_it_folds_each_text_as_the_table_says(self, text: str, folded: tuple[str, ...]) -> None:
        assert tuple(each(text) for each in FOLDS) == folded

    @given(st.text())
    def test_it_gives_the_note_comparison_its_old_fold(self, text: str) -> None:
        # books.importing.services compared notes with this before the folds were one.
        assert fold_spacing(text) == re.sub(r"\s+", " ", text).strip().casefold()

    @given(st.text())
    def test_it_gives_the_merging_its_old_fold(self, text: str) -> None:
        # books.importing.merging (and evaluation.candidates) folded with this.
        assert fold_spacing_and_bom(text) == " ".join(text.replace("\ufeff", "").split()).casefold()


class LiteralTests:
    @pytest.mark.parametrize(
        ("token", "name"),
        [
            ("c++", "c++"), ("C#", "C#"), ("f#,", "f#"), ("(.NET)", ".NET"),
            ("notepad++", "notepad++"), ("A+", "A+"), ("c++.", "c++"),
            ("end.", ""), ("don't", ""), ("#tag", ""), ("-word", ""), ("c", ""),
            ("wait...what", ""),
            # Dots inside a word: PostgreSQL's parser keeps them, one word.
            ("node.js.", ""), ("e.g.", ""), ("J.K.", ""), ("U.S.", ""), ("3.14", ""),
            ("vol.2", ""), ("example.com", ""),
        ],
    )  # fmt: skip
    def test_it_reads_a_name_written_with_symbols_and_no_word(self, token: str, name: str) -> None:
        assert literal(token) == name

    @pytest.mark.parametrize(
        ("token", "word"),
        [
            ("node.js.", "node.js"), ("e.g.", "e.g"), ("(J.K.)", "J.K"), ("3.14", "3.14"),
            ("vol.2,", "vol.2"), ("c++", ""), (".net", ""), ("end.", ""), ("wait...what", ""),
        ],
    )  # fmt: skip
    def test_it_reads_words_joined_by_dots_as_one(self, token: str, word: str) -> None:
        assert dotted(token) == word

    def test_its_pattern_finds_the_name_standing_whole(self) -> None:
        def finds(name: str, text: str) -> bool:
            return re.search(literal_pattern(name), text) is not None

        assert finds("c++", "in c++, templates")
        assert not finds("c++", "abc++ and c+")
        assert finds(".net", "the .net way")
        assert not finds(".net", "asp.net, the net")
        assert finds("c++", "c++17 and c++11")
        assert finds("c#", "c#10")
        assert not finds("c#", "c#x")


class TagNameTests:
    def test_it_folds_spacing_and_case(self) -> None:
        assert tag_name("  Bien-Être \n Año ") == "bien-être año"

    def test_it_cuts_after_folding_as_a_fold_can_lengthen_a_name(self) -> None:
        # 64 characters, 68 once each "ß" folds to "ss".
        assert tag_name("a" * 60 + "ßßßß") == "a" * 60 + "ssss"

    def test_a_cut_leaves_no_space_at_the_end(self) -> None:
        assert tag_name("a" * 63 + " b") == "a" * 63

    @given(st.text())
    def test_it_fits_the_column(self, name: str) -> None:
        assert len(tag_name(name)) <= TAG_MAX_LENGTH


class TitleSortKeyTests:
    @pytest.mark.parametrize(
        ("title", "key"),
        [
            ("The Name of the Rose", "name of the rose"),
            ("A Death in the Family", "death in the family"),
            ("An Essay", "essay"),
            ("El túnel", "tunel"),
            ("La casa de los espíritus", "casa de los espiritus"),
            ("Los detectives salvajes", "detectives salvajes"),
            ("Las batallas en el desierto", "batallas en el desierto"),
            ("Der Zauberberg", "zauberberg"),
            ("Die Verwandlung", "verwandlung"),
            ("Das Parfum", "parfum"),
            ("Le Petit Prince", "petit prince"),
            ("Les Misérables", "miserables"),
            ("L'Étranger", "etranger"),
            ("I, Robot", "i, robot"),
            ("The", "the"),
            ("Ficciones", "ficciones"),
        ],
    )
    def test_it_ignores_a_leading_article(self, title: str, key: str) -> None:
        assert title_sort_key(title) == key

    @pytest.mark.parametrize(
        ("title", "key"),
        [
            ('"Surely You\'re Joking, Mr. Feynman!"', "surely you're joking, mr. feynman!\""),
            (
                "'What Do You Care What Other People Think?'",
                "what do you care what other people think?'",
            ),
            ("¿Quién se ha llevado mi queso?", "quien se ha llevado mi queso?"),
            ("“The Name of the Rose”", "name of the rose”"),
            ("...", "..."),
        ],
    )
    def test_it_files_a_title_under_its_first_letter_not_its_quotes(
        self, title: str, key: str
    ) -> None:
        # As the library's tile shows it (title_initial): "Surely…" under S, not before
        # every title that starts with a letter or a digit.
        assert title_sort_key(title) == key

    def test_it_sorts_numbers_by_value(self) -> None:
        titles = ["Vol. 10", "10 Days", "Vol. 2", "2 Days", "Vol. 02 bis", "1984", "Vol. 1"]
        assert sorted(titles, key=title_sort_key) == [
            "2 Days",
            "10 Days",
            "1984",
            "Vol. 1",
            "Vol. 2",
            "Vol. 02 bis",
            "Vol. 10",
        ]


class TitleInitialTests:
    @pytest.mark.parametrize(
        ("title", "initial"),
        [
            ("El hombre en busca de sentido", "H"),
            ("The Name of the Rose", "N"),
            ("L'Étranger", "E"),
            ("Épica", "E"),
            ("ñandú", "N"),
            ('"Surely You\'re Joking, Mr. Feynman!"', "S"),
            ("10 Days", "1"),
            ("中島岳志", "中"),
            ("...", "."),
        ],
    )
    def test_it_is_the_first_letter_the_title_sorts_by(self, title: str, initial: str) -> None:
        assert title_initial(title) == initial


class AuthorSortKeyTests:
    def test_it_sorts_by_family_name(self) -> None:
        assert author_sort_key("robert greene") == "greene robert"
        assert author_sort_key("jorge luis borges") == "borges jorge luis"

    def test_it_uses_the_first_of_several_authors(self) -> None:
        assert author_sort_key("ann druyan; carl sagan") == "druyan ann"

    def test_it_takes_an_empty_author(self) -> None:
        assert author_sort_key("") == ""
