"""Book and author identity as tables: each row a variant seen in real Kindle files (the
shared corpus, FORMAT.md) or reported by a reader, written here by hand."""

# Real title lines and names: their curly quotes, dashes and full-width forms are the point.
# ruff: noqa: RUF001

import pytest
from hypothesis import given
from hypothesis import strategies as st

from books.importing.identity import (
    author_blocks,
    book_key,
    normalize_author,
    normalize_title,
    oriented_title_author,
    same_author,
    same_author_or_family_name,
    split_authors,
    turned_by_its_own_words,
)

# Two title lines of one book: the key must agree.
SAME_BOOK = [
    # straight and curly apostrophes, from two devices
    (
        ("It Doesn't Have to Be Crazy at Work", "Jason Fried;David Heinemeier Hansson"),
        ("It Doesn’t Have to Be Crazy at Work", "David Heinemeier Hansson;Jason Fried"),
    ),
    # a subtitle the store wrote twice, and curly quotes (obruchez-k2md-old)
    (
        (
            '"Surely You\'re Joking, Mr. Feynman!": Adventures of a Curious Character: '
            "Adventures of a Curious Character",
            "Richard P. Feynman and Ralph Leighton",
        ),
        (
            "“Surely You’re Joking, Mr. Feynman!”: Adventures of a Curious Character",
            "Richard P Feynman & Ralph Leighton",
        ),
    ),
    # edition suffixes, in several languages
    (
        ("La vorágine (Spanish Edition)", "Rivera, José Eustasio"),
        ("La Vorágine", "José Eustasio Rivera"),
    ),
    (
        ("Elon Musk (edición en español) (Spanish Edition)", "Isaacson, Walter"),
        ("Elon Musk", "Walter Isaacson"),
    ),
    (
        ("Crime and Punishment (AmazonClassics Edition)", "Dostoyevsky, Fyodor"),
        ("Crime and Punishment", "Fyodor Dostoyevsky"),
    ),
    (
        ("Sobre a brevidade da vida – Edição Bilíngue", "Sêneca"),
        ("Sobre a brevidade da vida", "Seneca"),
    ),
    (
        ("A arte de ter razão (Vozes de Bolso)", "Schopenhauer, Arthur"),
        ("A Arte de Ter Razão", "Arthur Schopenhauer"),
    ),
    (
        ("MongoDB权威指南(第2版) (图灵程序设计丛书)", "霍多罗夫 (Kristina Chodorow)"),
        ("MongoDB权威指南(第2版)", "霍多罗夫"),
    ),
    (
        ("Me, Myself, and Us (9781586489687)", "Little, Brian R."),
        ("Me, Myself, and Us", "Brian R. Little"),
    ),
    # dashes, spacing and case
    (("The 4-Hour Workweek", "Ferriss, Timothy"), ("The 4 – Hour  Workweek", "Timothy Ferriss")),
    (("How Not to Die", "Michael Greger"), ("HOW NOT TO DIE", "Michael Greger, M.D., FACLM")),
    # a downloaded file's name beside the book's title, in one reader's file
    (
        ("Oreilly.Developing.Backbone.js.Applications.Apr.2012", "Addy Osmani"),
        ("Developing Backbone.js Applications", "Addy Osmani"),
    ),
    (("Tide_Tables_2nd_Edition_epub", "Ines Marlow"), ("Tide Tables", "Ines Marlow")),
    # a family name first with no comma
    (("Stupeur et tremblements", "Nothomb Amélie"), ("Stupeur et tremblements", "Amélie Nothomb")),
]

# Two title lines of two books: the key must tell them apart.
OTHER_BOOKS = [
    (
        ("Apex (The Nexus Trilogy Book 3)", "Naam, Ramez"),
        ("Apex (The Nexus Trilogy Book 2)", "Naam, Ramez"),
    ),
    (("Best American Essays (2015)", "Various"), ("Best American Essays (2016)", "Various")),
    (("How Not to Die", "Michael Greger"), ("How Not to Diet", "Michael Greger")),
    (("p39-chen", "alexrabeloferreira.com@gmail.com"), ("p39-chen", "arf92@live.com")),
    # a file's name keeps what is not a publisher, a date or a format
    (("Manning.Dune.Messiah.2019", "Frank Herbert"), ("Dune", "Frank Herbert")),
    (("original_res_1075_2011", "Ana Ferreira"), ("original_res_1075_2012", "Ana Ferreira")),
    (
        ("Голодные игры - 01 - Рассвет Жатвы", "Сьюзен Коллинз"),
        ("Голодные игры - 03 - Сойка-пересмешница", "Сьюзен Коллинз"),
    ),
]


class BookKeyTests:
    @pytest.mark.parametrize(("one", "other"), SAME_BOOK)
    def test_it_gives_one_key_to_the_variants_of_a_book(
        self, one: tuple[str, str], other: tuple[str, str]
    ) -> None:
        assert book_key(*one) == book_key(*other)

    @pytest.mark.parametrize(("one", "other"), OTHER_BOOKS)
    def test_it_tells_two_books_apart(self, one: tuple[str, str], other: tuple[str, str]) -> None:
        assert book_key(*one) != book_key(*other)

    def test_it_keeps_a_title_of_punctuation_only(self) -> None:
        assert normalize_title("...") == "..."
        assert normalize_title("  The\ufeff Quiet   Engine ") == "the quiet engine"

    def test_it_keeps_the_voicing_marks_of_kana(self) -> None:
        assert normalize_title("ハードル") != normalize_title("ハートル")


# (as written, normalized) for author fields of the shared corpus and of readers' files.
AUTHORS = [
    ("Michael Greger", "michael greger"),
    ("Michael Greger, M.D., FACLM", "michael greger"),
    ("Greger, Michael", "michael greger"),
    ("Smart Ph.D., Bradford D.", "bradford smart"),
    ("Martin Luther King, Jr.", "martin luther king"),
    ("Andrew Cohen and Professor Brian Cox", "andrew cohen; brian cox"),
    ("Dr. Seuss", "seuss"),
    ("Richard P Feynman", "richard feynman"),
    ("Richard P. Feynman and Ralph Leighton", "ralph leighton; richard feynman"),
    ("Rowling, J.K.", "j rowling"),
    ("J. K. Rowling", "j rowling"),
    ("Peter H. Diamandis;Steven Kotler", "peter diamandis; steven kotler"),
    ("Nir Eyal;", "nir eyal"),
    ("Seneca,", "seneca"),
    ("Sêneca", "seneca"),
    ("Berkun  Scott", "berkun scott"),
    ("Beauvoir de,Simone", "simone beauvoir de"),
    ("Jez Humble, Joanne Molesky, and Barry O'Reilly", "barry oreilly; jez humble; joanne molesky"),
    ("Fernando Trujillo Sanz and César García Muñoz", "cesar garcia munoz; fernando trujillo sanz"),
    ("Fernando Trujillo Sanz y César García Muñoz", "cesar garcia munoz; fernando trujillo sanz"),
    ("José Ortega y Gasset", "jose ortega gasset"),
    ("Max Frisch und Uwe Johnson", "max frisch; uwe johnson"),
    ("Álex Rovira Celma;Fernando Trías de Bes", "alex rovira celma; fernando trias de bes"),
    ("Сандерсон, Брендон", "брендон сандерсон"),
    ("Брендон Сандерсон", "брендон сандерсон"),
    ("中島\u3000岳志", "中島岳志"),
    ("中島岳志", "中島岳志"),
    ("マイケル サンデル", "マイケルサンデル"),
    ("マイケル・サンデル", "マイケルサンデル"),
    ("[美]约翰·威廉斯", "约翰威廉斯"),
    ("(美) 厄尼斯特·米勒尔· 海明威", "厄尼斯特米勒尔海明威"),
    ("泽卡斯（Zakas. Nicholas C.）", "泽卡斯"),
    ("ＭＡＧＥＳ．;Ｃｈｉｙｏ ｓｔ．ｉｎｃ", "chiyo st inc; mages"),
    ("", ""),
]

# Words of normalized names: initials, given and family names, in any order.
NAME_WORDS = st.sampled_from(["j", "joanne", "k", "rowling", "richard", "r", "feynman"])
# and as the connections read them: transliterated, `-ski` for `-sky`, a number for a name.
LOOSE_NAME_WORDS = st.sampled_from(
    [
        *("f", "fyodor", "федор", "dostoyevsky", "dostoyevski", "достоевскии", "s", "с"),
        *("king", "кинг", "stephen", "стивен", "0417", "ray", "рэи", "bradbury", "брэдбери"),
    ]
)

# Author fields that name one person (among co-authors, with initials, in either order).
SAME_AUTHOR = [
    ("Michael Greger", "Michael Greger, M.D., FACLM"),
    ("Richard P Feynman", "Richard P. Feynman and Ralph Leighton"),
    ("Richard Phillips Feynman;Edward Hutchings;Ralph Leighton", "Richard P. Feynman"),
    ("Rowling, J.K.", "Joanne Rowling"),
    ("Nothomb Amélie", "Amélie Nothomb"),
    ("Seneca", "Sêneca"),
    ("マイケル サンデル", "マイケル・サンデル"),
    ("Сергей Васильевич Лукьяненко", "Сергей Лукьяненко"),
]
# A family name alone beside a whole name: one author for the connections, which tell a
# pair of one author's books from two authors'; never one book or one author made of two.
FAMILY_NAME_ALONE = [
    ("Krishnamurti", "Jiddu Krishnamurti"),  # Apple Books beside KOReader
    ("Krishnamurti", "J. Krishnamurti"),
    ("Brontë", "Emily Brontë; Anne Brontë"),
]
# One person written otherwise: one author for the connections too, never one book.
WRITTEN_OTHERWISE = [
    ("Dostoyevski", "Fyodor Dostoyevsky"),  # a Kobo's `-ski` beside a Kindle's `-sky`
    ("Fyodor Dostoyevski", "Dostoyevsky, Fyodor"),
    ("Достоевский", "Fyodor Dostoyevsky"),  # Cyrillic beside Latin letters
    ("Федор Михайлович Достоевский", "Dostoyevsky, Fyodor"),
    ("Стивен Кинг", "Stephen King"),
    ("С. Кинг", "Stephen King"),
    ("Нил Гейман", "Neil Gaiman"),
    ("Рэй Дуглас Брэдбери", "Ray Bradbury"),
    ("Михаил Булгаков", "Mikhail Bulgakov"),
    ("Лев Толстой", "Lev Tolstoy"),
    # a number where the given name was, in a Kindle's file
    ("0417 Владимирович Набоков", "Владимир Владимирович Набоков"),
]
OTHER_AUTHORS = [
    ("Michael", "Michael Greger"),  # a given name alone is no one's
    ("Стивен Кинг", "Sam Kang"),  # their family names sound alike, not their given names
    ("Роберт Брэдбери", "Ray Bradbury"),
    ("Jan Polanski", "Roman Polansky"),
    ("Kowalska", "Jan Kowalski"),
    ("Антон Павлович Чехов", "Александр Павлович Чехов"),  # brothers: one father's name
    ("1984", "George 1984"),  # a number is no one's family name
    ("Krishnamurti", "Krishnamurti Smith"),
    ("Michael Greger", "Michael Pollan"),
    ("Malcolm Gladwell", "Mark Gladwell"),
    ("Sam Harris", "Robert Harris"),
    ("", ""),
    ("Unknown", ""),
]


class AuthorTests:
    @pytest.mark.parametrize(("written", "normalized"), AUTHORS)
    def test_it_normalizes_the_author_field(self, written: str, normalized: str) -> None:
        assert normalize_author(written) == normalized

    @pytest.mark.parametrize(("one", "other"), SAME_AUTHOR)
    def test_it_finds_one_author_in_two_fields(self, one: str, other: str) -> None:
        assert same_author(normalize_author(one), normalize_author(other))

    @pytest.mark.parametrize(("one", "other"), OTHER_AUTHORS)
    def test_it_tells_two_authors_apart(self, one: str, other: str) -> None:
        assert not same_author(normalize_author(one), normalize_author(other))
        assert not same_author_or_family_name(normalize_author(one), normalize_author(other))

    @pytest.mark.parametrize(("one", "other"), FAMILY_NAME_ALONE)
    def test_a_family_name_alone_is_one_author_for_the_connections_only(
        self, one: str, other: str
    ) -> None:
        a, b = normalize_author(one), normalize_author(other)
        assert same_author_or_family_name(a, b)
        assert author_blocks(a) & author_blocks(b)
        assert not same_author(a, b)  # which books and authors are one stays strict

    @pytest.mark.parametrize(("one", "other"), WRITTEN_OTHERWISE)
    def test_one_person_written_otherwise_is_one_author_for_the_connections_only(
        self, one: str, other: str
    ) -> None:
        a, b = normalize_author(one), normalize_author(other)
        assert same_author_or_family_name(a, b)
        assert author_blocks(a) & author_blocks(b)
        assert not same_author(a, b)

    @pytest.mark.parametrize(("one", "other"), SAME_AUTHOR)
    def test_one_author_shares_a_block(self, one: str, other: str) -> None:
        # same_author_book_pairs compares books within a block only.
        assert author_blocks(normalize_author(one)) & author_blocks(normalize_author(other))

    @given(
        st.lists(st.lists(NAME_WORDS, min_size=1, max_size=3), min_size=1, max_size=2),
        st.lists(st.lists(NAME_WORDS, min_size=1, max_size=3), min_size=1, max_size=2),
    )
    def test_no_two_fields_of_one_author_are_in_different_blocks(
        self, one: list[list[str]], other: list[list[str]]
    ) -> None:
        a, b = ("; ".join(" ".join(name) for name in field) for field in (one, other))
        if same_author(a, b):
            assert author_blocks(a) & author_blocks(b)

    @given(
        st.lists(st.lists(LOOSE_NAME_WORDS, min_size=1, max_size=3), min_size=1, max_size=2),
        st.lists(st.lists(LOOSE_NAME_WORDS, min_size=1, max_size=3), min_size=1, max_size=2),
    )
    def test_no_two_fields_of_one_author_for_the_connections_are_in_different_blocks(
        self, one: list[list[str]], other: list[list[str]]
    ) -> None:
        a, b = ("; ".join(" ".join(name) for name in field) for field in (one, other))
        if same_author_or_family_name(a, b):
            assert author_blocks(a) & author_blocks(b)

    def test_it_splits_co_authors_only_between_full_names(self) -> None:
        assert split_authors("José Ortega y Gasset") == ["José Ortega y Gasset"]
        assert split_authors("Gabriel García Márquez y Mario Vargas Llosa") == [
            "Gabriel García Márquez",
            "Mario Vargas Llosa",
        ]
        assert split_authors("Marrow, Idris") == ["Marrow, Idris"]
        assert split_authors("Michael Greger, M.D., FACLM") == ["Michael Greger, M.D., FACLM"]


KUNDERA = ["milan kundera"]


class OrientationTests:
    def test_it_turns_a_dashed_line_round_when_the_library_knows_the_author(self) -> None:
        assert oriented_title_author("Milan Kundera", "La Fête de l'insignifiance", KUNDERA) == (
            "La Fête de l'insignifiance",
            "Milan Kundera",
        )

    def test_it_reads_a_long_dashed_line_with_no_author_by_the_library(self) -> None:
        title = "Milan Kundera - Risibles amours et autres histoires du temps"
        assert oriented_title_author(title, "", KUNDERA) == (
            "Risibles amours et autres histoires du temps",
            "Milan Kundera",
        )

    def test_a_family_name_alone_in_a_title_line_is_no_known_author(self) -> None:
        # "Darwin - The Man and His Legacy" is a book about him, not one of his.
        line = "Darwin - The Man and His Legacy"
        assert oriented_title_author(line, "", ["charles darwin"]) == (line, "")

    def test_it_leaves_a_line_alone_when_nothing_says_otherwise(self) -> None:
        assert oriented_title_author("Tidewater Almanac", "P Quillon Harte", KUNDERA) == (
            "Tidewater Almanac",
            "P Quillon Harte",
        )
        assert oriented_title_author("Milan Kundera", "La Fête", []) == ("Milan Kundera", "La Fête")

    @pytest.mark.parametrize(
        ("title", "author", "turned"),
        [
            # Shapes seen in real files: a possessive is a title's, an initial or a
            # suffix a name's.
            ("Ira Vance", "Ada's Lantern", ("Ada's Lantern", "Ira Vance")),
            ("Ira Vance", "Ada\u2019s Lantern", ("Ada\u2019s Lantern", "Ira Vance")),
            ("Hal J. Moreno III - TideMeter", "", ("TideMeter", "Hal J. Moreno III")),
            ("K Lisbet Orm - Harbours of the North", "", ("Harbours of the North", "K Lisbet Orm")),
            # Nothing marks the left side as a name, or the right could be one.
            ("Microsoft Word - deathanddying", "", None),
            ("A Fine Balance - Mistral", "", None),
            ("Plan B - Ostrowski", "", None),
            ("Tidewater Almanac - P Quillon Harte", "", None),
            ("J. Edgar", "Clint Eastwood", None),
            # An author given in parentheses turns only for a possessive.
            ("J. K. Rowling", "Pottermore", None),
            ("Ender's Game", "Orson Scott Card", None),
        ],
    )
    def test_a_dashed_line_says_by_its_own_words_which_side_is_the_author(
        self, title: str, author: str, turned: tuple[str, str] | None
    ) -> None:
        assert turned_by_its_own_words(title, author) == turned

    def test_it_never_turns_a_book_about_an_author_written_by_another(self) -> None:
        # A biography titled with a name the reader also has books by.
        assert oriented_title_author("Steve Jobs", "Walter Isaacson", ["steve jobs"]) == (
            "Steve Jobs",
            "Walter Isaacson",
        )
