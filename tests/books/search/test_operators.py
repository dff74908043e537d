"""The query's operators in English and in Spanish, and `tag:`, on real PostgreSQL."""

from uuid import uuid4

import pytest

from accounts.models import User
from books.importing.clippings import normalize_author
from books.models import Book, Highlight, Tag
from books.search.query import meaning_text, parse_query
from books.search.search import search


def _book(reader: User, title: str, authors: str = "") -> Book:
    return Book.objects.create(
        reader=reader, title=title, authors=authors, authors_normalized=normalize_author(authors),
        key=f"{title}|{authors}".casefold(),
    )  # fmt: skip


def _highlight(reader: User, book: Book, text: str, *tags: Tag) -> Highlight:
    highlight = Highlight(reader=reader, book=book, text=text, dedupe_key=uuid4().hex)
    highlight.refresh_search_text()
    highlight.save()
    highlight.tags.add(*tags)
    return highlight


class SpanishPrefixesTests:
    def test_the_spanish_prefixes_are_the_english_ones(self) -> None:
        spanish = parse_query('memoria autor:borges libro:"El jardín" Título:ficciones')
        english = parse_query('memoria author:borges book:"El jardín" title:ficciones')
        assert spanish.authors == english.authors == ("borges",)
        assert spanish.books == english.books == ("el jardin", "ficciones")
        assert spanish.units == english.units == (("memoria", ("memoria",)),)

    def test_tag_and_etiqueta_are_filters_not_words(self) -> None:
        parsed = parse_query('liderazgo tag:Equipos etiqueta:"Para releer"')
        assert parsed.tags == ("equipos", "para releer")
        assert parsed.units == (("liderazgo", ("liderazgo",)),)

    def test_a_word_before_a_colon_that_is_no_prefix_is_searched_as_words(self) -> None:
        parsed = parse_query("nota:importante jardín")
        assert parsed.words == frozenset({"nota", "importante", "jardin"})
        assert (parsed.authors, parsed.books, parsed.tags) == ((), (), ())

    def test_a_prefix_inside_a_quoted_phrase_is_the_phrase_s_text(self) -> None:
        for query, words in [
            ('"see tag:foo"', ("see", "tag", "foo")),
            ('"the author:borges line"', ("the", "author", "borges", "line")),
            ('"el libro:Ficciones"', ("el", "libro", "ficciones")),
        ]:
            parsed = parse_query(query)
            assert parsed.units == ((f'"{" ".join(words)}"', words),), query
            assert (parsed.authors, parsed.books, parsed.tags) == ((), (), ()), query
            assert meaning_text(query) == query
        excluded = parse_query('memoria -"see tag:foo" tag:bar')
        assert excluded.exclusions == ('-"see tag foo"',)
        assert excluded.tags == ("bar",)
        assert meaning_text('memoria -"see tag:foo" tag:bar') == "memoria"

    def test_the_model_reads_no_prefix(self) -> None:
        assert meaning_text('el jardín libro:"Ficciones" autor:borges') == "el jardín"
        assert meaning_text("liderazgo etiqueta:equipos TAG:x") == "liderazgo"
        assert meaning_text("nota:importante") == "nota:importante"


class SpanishOrTests:
    def test_a_capital_o_between_two_terms_is_or(self) -> None:
        assert parse_query("palacio O río").clauses == parse_query("palacio or río").clauses
        assert parse_query("palacio O río").clauses == ((0, 1),)
        assert parse_query('"la casa" O río').clauses == ((0, 1),)

    def test_a_capital_o_is_or_in_a_query_that_reads_as_spanish(self) -> None:
        assert parse_query("amor O muerte").clauses == ((0, 1),)
        spanish, joined = (
            parse_query("la memoria O el olvido"),
            parse_query("la memoria or el olvido"),
        )
        assert spanish.clauses == joined.clauses == ((0,), (1, 2), (3,))
        # Or when the terms on both sides are Spanish, in a query that reads as English.
        assert parse_query("the river canción O río").clauses == ((0,), (1,), (2, 3))
        # Spanish alone ends a noun in "-dad" or "-tad": on one side, the other not English.
        assert parse_query("felicidad O soledad").clauses == ((0, 1),)
        assert parse_query("libertad O muerte").clauses == ((0, 1),)
        assert parse_query("the price of liberty O death").clauses == tuple((i,) for i in range(6))
        for query in ["Libertad O muerte", "hermandad O amistad", "Ciudad O campo", "mitad O todo",
                      "Felicidad O Soledad", "Libertad O Igualdad"]:  # fmt: skip
            assert parse_query(query).clauses == ((0, 1),), query

    def test_a_place_or_a_dad_is_no_spanish_noun(self) -> None:
        # English ends only "dad" and its compounds in "-dad", and a place's name beside
        # another name is no Spanish noun.
        for query in [
            "Trinidad O Tobago",
            "Karlstad O Oslo",
            "Baghdad O Cairo",
            "stepdad O stepmom",
            "grandad O grandma",
            "my granddad O his",
        ]:
            parsed = parse_query(query)
            assert "o" in [text for text, _ in parsed.units], query
            assert all(len(clause) == 1 for clause in parsed.clauses), query

    def test_a_capital_o_in_english_is_a_word(self) -> None:
        for query, words in [
            ("type O blood", ["type", "o", "blood"]),
            ("blood type O negative", ["blood", "type", "o", "negative"]),
            ("Vitamin O", ["vitamin", "o"]),
            ("O Brother", ["o", "brother"]),
        ]:
            parsed = parse_query(query)
            assert [text for text, _ in parsed.units] == words, query
            assert parsed.clauses == tuple((i,) for i in range(len(words))), query

    def test_a_lower_case_o_is_a_word(self) -> None:
        parsed = parse_query("ser o no ser")
        assert [text for text, _ in parsed.units] == ["ser", "o", "no"]
        assert parsed.clauses == ((0,), (1,), (2,))

    def test_an_o_in_a_query_typed_in_capitals_or_at_either_end_is_a_word(self) -> None:
        assert parse_query("SER O NO SER").clauses == ((0,), (1,), (2,))
        assert [text for text, _ in parse_query("O río").units] == ["o", "rio"]
        assert [text for text, _ in parse_query("río O").units] == ["rio", "o"]
        # Inside quotes, or a prefix's value, it is the text's.
        assert parse_query('"palacio O río"').units[0][1] == ("palacio", "o", "rio")
        assert parse_query('palacio libro:"a O b" río').books == ("a o b",)
        # Folding made two terms of one ("¨" is a space once folded): no term is taken for O.
        assert parse_query("palacio O río a¨b").clauses == ((0,), (1,), (2,), (3,), (4,))


@pytest.mark.django_db
class SpanishPrefixSearchTests:
    def test_libro_and_autor_filter_as_book_and_author_do(self, alice: User) -> None:
        jardin = _book(alice, "El jardín de senderos que se bifurcan", "Borges, Jorge Luis")
        other = _book(alice, "Rayuela", "Cortázar, Julio")
        wanted = _highlight(alice, jardin, "El jardín era un laberinto de tiempo.")
        _highlight(alice, other, "Un jardín en París.")
        for query in ["libro:jardín", "LIBRO:jardin", "autor:borges", "jardín título:senderos"]:
            found = search(alice, query, mode="keyword")
            assert [r.highlight for r in found.results] == [wanted], query

    def test_a_prefix_that_matches_no_book_is_named_as_typed(self, alice: User) -> None:
        _highlight(alice, _book(alice, "Rayuela", "Cortázar, Julio"), "Un jardín en París.")
        found = search(alice, "jardín libro:tolstói")
        assert found.results == []
        assert found.notice == "No book of yours matches libro:tolstói."


@pytest.mark.django_db
class TagPrefixTests:
    @pytest.fixture
    def shelf(self, alice: User) -> dict[str, Highlight]:
        book = _book(alice, "Notas", "Anónimo")
        lead = Tag.objects.create(reader=alice, name="Liderazgo")
        teams = Tag.objects.create(reader=alice, name="equipos de trabajo")
        return {
            "both": _highlight(alice, book, "Un buen jefe escucha primero.", lead, teams),
            "lead": _highlight(alice, book, "Mandar no es dirigir.", lead),
            "none": _highlight(alice, book, "El liderazgo se aprende escuchando."),
        }

    def test_it_lists_the_highlights_with_the_tag_folding_case_and_accents(
        self, alice: User, shelf: dict[str, Highlight]
    ) -> None:
        for query in ["tag:liderazgo", "etiqueta:LIDERAZGO", "tag:Lídérazgo"]:
            found = search(alice, query)
            assert {r.highlight for r in found.results} == {shelf["both"], shelf["lead"]}, query

    def test_it_filters_a_search_and_every_tag_must_hold(
        self, alice: User, shelf: dict[str, Highlight]
    ) -> None:
        found = search(alice, "escucha tag:liderazgo", mode="keyword")
        assert [r.highlight for r in found.results] == [shelf["both"]]
        both = search(alice, 'tag:liderazgo etiqueta:"Equipos de trabajo"')
        assert [r.highlight for r in both.results] == [shelf["both"]]

    def test_a_tag_the_reader_lacks_says_so(
        self, alice: User, bob: User, shelf: dict[str, Highlight]
    ) -> None:
        Tag.objects.create(reader=bob, name="ventas")
        found = search(alice, "escucha tag:ventas")
        assert found.results == []
        assert found.notice == "You have no tag called tag:ventas."
        # Another reader's tag is never theirs.
        bob_book = _book(bob, "Ventas", "B")
        _highlight(bob, bob_book, "Escucha al cliente.", Tag.objects.get(reader=bob))
        assert search(alice, "tag:ventas").results == []

    def test_the_notice_names_only_the_tags_the_reader_lacks(
        self, alice: User, shelf: dict[str, Highlight]
    ) -> None:
        found = search(alice, "tag:liderazgo tag:ventas")
        assert found.results == []
        assert found.notice == "You have no tag called tag:ventas."
        both = search(alice, 'Etiqueta:Compras tag:LIDERAZGO etiqueta:"Para releer"')
        assert both.notice == 'You have no tag called Etiqueta:Compras etiqueta:"Para releer".'

    def test_a_tag_inside_a_quoted_phrase_is_searched_as_the_phrase(
        self, alice: User, shelf: dict[str, Highlight]
    ) -> None:
        book = _book(alice, "Manual", "Anónimo")
        wanted = _highlight(alice, book, "To see tag:foo, open the menu.")
        _highlight(alice, book, "See the foo tag on the left.")
        found = search(alice, '"see tag:foo"', mode="keyword")
        assert found.notice == ""
        assert [r.highlight for r in found.results] == [wanted]
