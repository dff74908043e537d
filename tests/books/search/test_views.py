"""The search page and /search.json: ownership, marking, empty states, a fixed query count."""

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote
from uuid import uuid4

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.clippings import normalize_author
from books.models import Book, Highlight, Tag
from books.search.query import parse_query
from books.search.search import NOTICE_MODEL_UNAVAILABLE
from books.search.spelling import SUGGESTED_UP_TO
from books.search.views import mark_words
from exogram.reader_slots import reader_slot_release, reader_slot_take, searches_at_once
from tests.books.search.sayings import sayings_of


def _book(reader: User, title: str, authors: str = "") -> Book:
    return Book.objects.create(
        reader=reader, title=title, authors=authors, authors_normalized=normalize_author(authors),
        key=f"{title}|{authors}".casefold(),
    )  # fmt: skip


def _highlight(reader: User, book: Book, text: str, note: str = "") -> Highlight:
    highlight = Highlight(reader=reader, book=book, text=text, note=note, dedupe_key=uuid4().hex)
    highlight.refresh_search_text()
    highlight.save()
    return highlight


@pytest.fixture
def shelf(alice: User) -> dict[str, Highlight]:
    ficciones = _book(alice, "Ficciones", "Borges, Jorge Luis")
    sacks = _book(alice, "The Man Who Mistook His Wife for a Hat", "Sacks, Oliver")
    return {
        "funes": _highlight(alice, ficciones, "Funes recordaba la memoria <b>entera</b>."),
        "sacks": _highlight(alice, sacks, "Memory is our life-story.", note="MEMORIA, again"),
    }


@pytest.mark.django_db
class SearchPageTests:
    def test_it_redirects_anonymous_readers_to_log_in(self, client: Client) -> None:
        for name in ["search", "search_json"]:
            response = client.get(reverse(name), {"q": "memory"})
            assert response.status_code == 302
            assert response["Location"].startswith(reverse("login"))

    def test_it_only_answers_get(self, alice_client: Client) -> None:
        assert alice_client.post(reverse("search"), {"q": "memory"}).status_code == 405

    def test_it_marks_the_matched_words_and_escapes_the_rest(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = alice_client.get(reverse("search"), {"q": "Memória", "mode": "keyword"})
        content = response.content.decode()
        assert response.status_code == 200
        assert "Funes recordaba la <mark>memoria</mark> &lt;b&gt;entera&lt;/b&gt;." in content
        assert "<mark>MEMORIA</mark>, again" in content
        assert "<b>entera</b>" not in content
        assert shelf["funes"].get_absolute_url() in content
        assert "Connections of this highlight" in content

    def test_it_shows_an_intro_before_any_query(self, alice_client: Client) -> None:
        response = alice_client.get(reverse("search"))
        assert response.context["found"] is None
        assert "Search your highlights by words or by meaning." in response.content.decode()

    def test_its_empty_state_suggests_the_other_mode(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        words = alice_client.get(reverse("search"), {"q": "zebra", "mode": "keyword"})
        assert "Search by meaning instead" in words.content.decode()
        assert "mode=meaning" in words.context["meaning_link"]
        assert "q=zebra" in words.context["meaning_link"]
        meaning = alice_client.get(reverse("search"), {"q": "zebra", "mode": "meaning"})
        assert "Search by words instead" in meaning.content.decode()

    def test_every_search_that_found_nothing_says_to_try_other_words(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        asked = [
            {"q": "xylophone quantum zebra"},  # by words and meaning: both found nothing
            {"q": "qwzxv"},  # read as letters: by words only
            {"q": "zebra", "mode": "keyword"},
            {"q": "zebra", "mode": "meaning"},
        ]
        for params in asked:
            page = alice_client.get(reverse("search"), params).content.decode()
            assert "Nothing found for" in page, params
            assert "Try fewer or other words." in page, params
        # A search by words and meaning has searched by meaning already: not offered again.
        both = alice_client.get(reverse("search"), asked[0]).content.decode()
        assert "Search by meaning instead" not in both

    def test_nothing_found_offers_the_readers_own_word_for_a_slip(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = alice_client.get(reverse("search"), {"q": "memmory", "mode": "keyword"})
        assert response.context["found"].total == 0
        assert response.context["suggested"] == "memory"
        assert "mode=keyword" in response.context["suggested_link"]
        assert "q=memory" in response.context["suggested_link"]
        page = response.content.decode()
        assert "Did you mean" in page
        assert f'href="{response.context["suggested_link"].replace("&", "&amp;")}"' in page
        # Found by every word: no suggestion. Found by some words only: the slip is offered.
        found = alice_client.get(reverse("search"), {"q": "memory", "mode": "keyword"})
        assert found.context["suggested"] == ""
        some = alice_client.get(reverse("search"), {"q": "memory storry", "mode": "keyword"})
        assert some.context["found"].keyword_pass == "any"
        assert some.context["suggested"] == "memory story"
        assert "Did you mean" in some.content.decode()
        as_json = alice_client.get(reverse("search_json"), {"q": "memmory", "mode": "keyword"})
        assert as_json["X-Search-Suggestion"] == "memory"

    def test_a_slip_is_offered_even_when_the_meaning_found_something(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        highlights_embed(ids=[h.pk for h in shelf.values()])
        both = alice_client.get(reverse("search"), {"q": "memmory recollections"})
        assert both.context["found"].mode_used == "hybrid"
        assert both.context["found"].total  # by meaning
        assert both.context["found"].keyword_pass == ""
        assert both.context["suggested"] == "memory recollections"
        # By meaning alone, no words were asked for: a result is an answer.
        meaning = alice_client.get(
            reverse("search"), {"q": "Memory is our lyfe-story.", "mode": "meaning"}
        )
        assert meaning.context["found"].total
        assert meaning.context["suggested"] == ""

    def test_words_and_meaning_offer_the_slip_above_what_the_meaning_found(
        self, alice: User, alice_client: Client
    ) -> None:
        sayings_of(alice)
        asked = {"q": "happines", "mode": "auto", "has_note": "no", "recency": "1"}
        response = alice_client.get(reverse("search"), asked)
        found = response.context["found"]
        # More close matches by meaning than a search by words may find and still offer one.
        assert (found.mode_used, found.total > SUGGESTED_UP_TO) == ("hybrid", True)
        assert response.context["suggested"] == "happiness"
        link = response.context["suggested_link"]
        assert {"q=happiness", "mode=auto", "has_note=no", "recency=1"} <= set(link[1:].split("&"))
        page = response.content.decode()
        offered = page.index(f'Did you mean <a href="{link.replace("&", "&amp;")}">happiness</a>?')
        assert offered < page.index('<ol class="highlight-list"')
        as_json = alice_client.get(reverse("search_json"), asked)
        assert as_json["X-Search-Suggestion"] == "happiness"
        # The reader's own word, in any of their languages: nothing offered.
        for word in ["happiness", "felicidad", "glücklich"]:
            right = alice_client.get(reverse("search"), {**asked, "q": word})
            assert right.context["found"].total, word
            assert right.context["suggested"] == "", word
            assert "Did you mean" not in right.content.decode(), word

    @pytest.mark.parametrize("query", ["!!!", "—"])
    def test_a_query_with_no_letters_or_digits_says_what_searches_need(
        self, alice: User, alice_client: Client, shelf: dict[str, Highlight], query: str
    ) -> None:
        response = alice_client.get(reverse("search"), {"q": query})
        assert response.status_code == 200
        page = response.content.decode()
        assert "Searches need letters or digits." in page
        assert "Type a word or a phrase" not in page
        assert "Nothing found" not in page
        alice.language = "es"
        alice.save(update_fields=["language"])
        spanish = alice_client.get(reverse("search"), {"q": query}).content.decode()
        assert "Las búsquedas necesitan letras o dígitos." in spanish

    def test_an_or_query_found_by_some_terms_says_so_not_every_word(
        self, alice: User, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        for query in ["recuerdo or memoria olvido", "felicidad O soledad memoria"]:
            response = alice_client.get(reverse("search"), {"q": query, "mode": "keyword"})
            found = response.context["found"]
            assert (found.keyword_pass, found.joins_or, found.total) == ("any", True, 2), query
            page = response.content.decode()
            assert "none matching the whole query: these have some of its terms" in page
            assert "none with every word" not in page
        plain = alice_client.get(reverse("search"), {"q": "memoria olvido", "mode": "keyword"})
        assert "none with every word: these have some of them" in plain.content.decode()
        alice.language = "es"
        alice.save(update_fields=["language"])
        spanish = alice_client.get(
            reverse("search"), {"q": "felicidad O soledad memoria", "mode": "keyword"}
        ).content.decode()
        assert "ninguno cumple toda la búsqueda: estos tienen algunos de sus términos" in spanish

    def test_a_long_query_is_shortened_and_the_page_says_so(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        query = "memory " * 100  # 700 characters
        response = alice_client.get(reverse("search"), {"q": query, "mode": "keyword"})
        assert response.status_code == 200
        assert response.context["found"].query == query[:500]
        assert response.context["found"].total == 2  # memory, memoria
        assert "Your search was shortened to its first 500 characters." in (
            response.content.decode()
        )
        as_json = alice_client.get(reverse("search_json"), {"q": query, "mode": "keyword"})
        assert as_json.status_code == 200
        assert unquote(as_json["X-Search-Notice"]) == (
            "Your search was shortened to its first 500 characters."
        )

    def test_an_empty_library_says_so_and_links_to_import(
        self, alice_client: Client, bob: User
    ) -> None:
        _highlight(bob, _book(bob, "Ficciones"), "Memory is a palace.")  # another reader's
        response = alice_client.get(reverse("search"), {"q": "memory"})
        page = response.content.decode()
        assert response.context["found"].library_empty
        assert "Your library has no highlights yet: there is nothing to search." in page
        assert f'href="{reverse("import")}"' in page
        assert "Nothing found" not in page
        assert "Search by meaning instead" not in page
        as_json = alice_client.get(reverse("search_json"), {"q": "memory"})
        assert unquote(as_json["X-Search-Notice"]) == (
            "Your library has no highlights yet: there is nothing to search."
        )

    def test_a_library_with_highlights_finds_nothing_as_before(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = alice_client.get(reverse("search"), {"q": "zebra", "mode": "keyword"})
        assert not response.context["found"].library_empty
        assert "Nothing found for “zebra”." in response.content.decode()

    def test_weak_meaning_results_are_listed_apart_as_loosely_related(
        self, alice: User, alice_client: Client
    ) -> None:
        book = _book(alice, "Essays")
        introduced = _highlight(
            alice, book, "I can never remember the name of someone I have just been introduced to."
        )
        names = _highlight(
            alice, book, "Every night I lose the names of the people I met that day."
        )
        highlights_embed(ids=[introduced.pk, names.pk])
        response = alice_client.get(
            reverse("search"), {"q": "why can't I remember who I met", "mode": "meaning"}
        )
        assert [result.highlight for result, _ in response.context["rows"]] == [introduced]
        assert [result.highlight for result, _ in response.context["loose_rows"]] == [names]
        page = response.content.decode()
        assert page.index("I can never remember") < page.index("Loosely related")
        assert page.index("Loosely related") < page.index("Every night I lose")
        assert "1 close match; 1 loosely related" in page
        assert 'start="2"' in page  # numbered on from the close ones
        alice.language = "es"
        alice.save(update_fields=["language"])
        spanish = alice_client.get(
            reverse("search"), {"q": "why can't I remember who I met", "mode": "meaning"}
        )
        assert "Vagamente relacionados" in spanish.content.decode()

    def test_it_says_when_the_model_is_unavailable(
        self, alice_client: Client, shelf: dict[str, Highlight], settings: object, tmp_path: Path
    ) -> None:
        settings.EXOGRAM_EMBEDDING_MODEL_DIR = tmp_path  # type: ignore[attr-defined]
        response = alice_client.get(reverse("search"), {"q": "life"})
        assert NOTICE_MODEL_UNAVAILABLE in response.content.decode()
        assert [r.highlight for r in response.context["found"].results] == [shelf["sacks"]]

    def test_it_filters_by_the_readers_own_book(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        code = str(shelf["sacks"].book.code)
        response = alice_client.get(reverse("search"), {"q": "memoria", "book": code})
        assert [r.highlight for r in response.context["found"].results] == [shelf["sacks"]]
        assert f'value="{code}" selected' in response.content.decode()

    def test_it_is_404_for_another_readers_book(
        self, bob_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        book = {"q": "memoria", "book": str(shelf["sacks"].book.code)}
        assert bob_client.get(reverse("search"), book).status_code == 404
        assert bob_client.get(reverse("search_json"), book).status_code == 404

    def test_it_never_shows_another_readers_highlights(
        self, bob_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = bob_client.get(reverse("search"), {"q": "memoria", "mode": "keyword"})
        assert response.context["found"].results == []
        assert "Funes" not in response.content.decode()

    def test_it_reports_bad_parameters_without_searching(self, alice_client: Client) -> None:
        response = alice_client.get(
            reverse("search"), {"q": "x", "added_from": "2025-05-02", "added_to": "2025-05-01"}
        )
        assert response.context["found"] is None
        assert "The end of the range is before its start." in response.content.decode()

    def test_htmx_gets_only_the_results(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = alice_client.get(
            reverse("search"), {"q": "memory", "mode": "keyword"}, headers={"HX-Request": "true"}
        )
        content = response.content.decode()
        assert content.lstrip().startswith('<div id="results">')
        assert "<html" not in content
        assert "<mark>Memory</mark> is our life-story." in content

    def test_its_pages_keep_the_query_and_filters(self, alice: User, alice_client: Client) -> None:
        book = _book(alice, "Rivers")
        for number in range(25):
            _highlight(alice, book, f"River number {number}.")
        params = {"q": "river", "mode": "keyword", "author": ""}
        first = alice_client.get(reverse("search"), params)
        assert first.context["found"].total == 25
        assert len(first.context["found"].results) == 20
        assert "q=river" in first.context["next_link"]
        assert "page=2" in first.context["next_link"]
        second = alice_client.get(reverse("search"), {**params, "page": "2"})
        assert len(second.context["found"].results) == 5
        assert 'start="21"' in second.content.decode()
        past_the_end = alice_client.get(reverse("search"), {**params, "page": "9"})
        assert past_the_end.context["found"].page == 2

    @pytest.mark.parametrize("page", ["abc", "0", "-2", "1.5", "²", ""])
    def test_it_shows_the_first_page_for_a_page_it_cannot_read(
        self, alice_client: Client, shelf: dict[str, Highlight], page: str
    ) -> None:
        response = alice_client.get(reverse("search"), {"q": "memory", "page": page})
        assert response.status_code == 200
        assert response.context["found"].page == 1
        assert "Memory</mark> is our life-story." in response.content.decode()

    @pytest.mark.parametrize("page", ["1001", "99999999999999999999999999"])
    def test_it_shows_the_last_page_for_a_page_far_past_it(
        self, alice: User, alice_client: Client, page: str
    ) -> None:
        book = _book(alice, "Rivers")
        for number in range(25):
            _highlight(alice, book, f"River number {number}.")
        response = alice_client.get(reverse("search"), {"q": "river", "page": page})
        assert response.status_code == 200
        assert (response.context["found"].page, len(response.context["found"].results)) == (2, 5)

    def test_it_searches_by_words_and_meaning_for_a_mode_it_does_not_know(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = alice_client.get(reverse("search"), {"q": "memory", "mode": "psychic"})
        assert response.status_code == 200
        assert response.context["found"].mode == "auto"
        assert response.context["found"].results
        assert 'value="auto" checked' in response.content.decode()

    def test_it_quotes_a_phrase_that_found_nothing_once(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        for query in ['"zebra crossing"', "“zebra crossing”"]:
            params = {"q": query, "mode": "keyword"}
            english = alice_client.get(reverse("search"), params).content.decode()
            assert "Nothing found for “zebra crossing”." in english
            spanish = alice_client.get(reverse("search"), params, headers={"Accept-Language": "es"})
            assert "No se ha encontrado nada para «zebra crossing»." in spanish.content.decode()

    @pytest.mark.parametrize("mode", ["keyword", "auto"])
    def test_its_queries_do_not_grow_with_the_results(
        self, alice: User, alice_client: Client, mode: str
    ) -> None:
        books = [_book(alice, f"Rivers {n}", f"Author {n}") for n in range(3)]
        rows = [_highlight(alice, books[n % 3], f"River {n}", note="a note") for n in range(22)]
        highlights_embed(ids=[rows[0].pk, rows[1].pk])

        def count(query: str) -> tuple[int, int]:
            with CaptureQueriesContext(connection) as queries:
                response = alice_client.get(reverse("search"), {"q": query, "mode": mode})
            return len(queries), len(response.context["found"].results)

        count("river 0"), count("river")  # per-process caches (stems, the query vector)
        one = count("river 0")
        many = count("river")
        assert one[1] < many[1] == 20
        assert one[0] == many[0]

    def test_it_explains_its_syntax(self, alice_client: Client) -> None:
        content = alice_client.get(reverse("search")).content.decode()
        assert "How to search" in content
        for syntax in ['"entrance ramp"', "habit -routine", "palace or river", "author:borges"]:
            assert f"<code>{syntax}</code>" in content.replace("&quot;", '"'), syntax
        assert "book:ficciones" in content

    def test_the_spanish_help_shows_operators_that_work(
        self, alice: User, alice_client: Client
    ) -> None:
        alice.language = "es"
        alice.save(update_fields=["language"])
        content = alice_client.get(reverse("search")).content.decode().replace("&quot;", '"')
        start = content.index("Cómo buscar")
        help_text = content[start : content.index("</details>", start)]
        examples = re.findall(r"<dt>(.*?)</dt>", help_text)
        codes = [code for dt in examples for code in re.findall(r"<code>(.*?)</code>", dt)]
        assert "palacio O río" in codes
        assert parse_query("palacio O río").clauses == ((0, 1),)
        for code in ["autor:borges", "libro:ficciones", "etiqueta:liderazgo"]:
            assert code in codes, code
        for code in codes:
            parsed = parse_query(code)
            if ":" in code:
                # Every prefix shown is one: a filter, never the words "autor" or "libro".
                assert parsed.authors or parsed.books or parsed.tags, code
                assert not parsed.units, code
        assert " or " not in " ".join(codes)

    def test_a_query_that_is_a_tags_name_offers_the_tag(
        self, alice: User, bob: User, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        tag = Tag.objects.create(reader=alice, name="Liderazgo")
        shelf["funes"].tags.add(tag)
        Tag.objects.create(reader=bob, name="memoria")  # another reader's: never offered
        response = alice_client.get(reverse("search"), {"q": "LIDERAZGO", "mode": "keyword"})
        page = unquote(response.content.decode())
        assert "You have a tag “Liderazgo”" in page
        assert "q=tag:Liderazgo" in page
        listed = alice_client.get(reverse("search"), {"q": "tag:liderazgo"})
        assert [r.highlight for r in listed.context["found"].results] == [shelf["funes"]]
        for query in ["memoria", "liderazgo memoria", "-liderazgo"]:
            other = alice_client.get(reverse("search"), {"q": query, "mode": "keyword"})
            assert "You have a tag" not in other.content.decode(), query
        alice.language = "es"
        alice.save(update_fields=["language"])
        spanish = alice_client.get(reverse("search"), {"q": "liderazgo", "mode": "keyword"})
        assert "Tienes una etiqueta «Liderazgo»" in spanish.content.decode()

    def test_it_counts_what_it_found(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = alice_client.get(reverse("search"), {"q": "memoria", "mode": "keyword"})
        assert "2 highlights" in response.content.decode()
        assert response.context["found"].count_label == "2 highlights"

    def test_it_says_when_the_model_reads_the_language_poorly(
        self, settings: Any, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        settings.EXOGRAM_EMBEDDING_MODEL = "minilm-l6"  # English only
        highlights_embed(ids=[h.pk for h in shelf.values()])
        spanish = alice_client.get(reverse("search"), {"q": "la memoria entera"})
        content = spanish.content.decode()
        assert "This looks like Spanish" in content
        assert "Results by words work in any language." in content
        assert spanish.context["found"].results[0].highlight == shelf["funes"]
        english = alice_client.get(reverse("search"), {"q": "memory of a life"})
        assert "This looks like" not in english.content.decode()

    def test_a_name_puts_its_books_first_and_says_so(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = alice_client.get(
            reverse("search"), {"q": "what did Sacks say about memoria", "mode": "keyword"}
        )
        content = response.content.decode()
        assert response.context["found"].results[0].highlight == shelf["sacks"]
        assert "Highlights from The Man Who Mistook His Wife for a Hat come first" in content
        link = response.context["unnamed_link"]
        assert "q=what+did+%22Sacks%22+say+about+memoria" in link
        quoted = alice_client.get(reverse("search") + link)
        assert quoted.context["found"].named == ()

    def test_prefixes_never_reach_another_readers_books(
        self, bob_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = bob_client.get(reverse("search"), {"q": "memoria author:sacks"})
        assert response.context["found"].results == []
        assert "No book of yours matches author:sacks." in response.content.decode()
        assert "Memory is our life-story" not in response.content.decode()
        rows = bob_client.get(reverse("search_json"), {"q": "author:borges"})
        assert rows.json() == []
        named = bob_client.get(reverse("search_json"), {"q": "Sacks memoria"})
        assert named.json() == []
        assert "X-Search-Named" not in named


@pytest.mark.django_db
class SearchJsonTests:
    def test_it_returns_a_list_of_results(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = alice_client.get(reverse("search_json"), {"q": "memory", "mode": "keyword"})
        assert response.status_code == 200
        assert response["X-Search-Mode"] == "keyword"
        rows = response.json()
        assert isinstance(rows, list)
        row = rows[0]
        assert row["code"] == str(shelf["sacks"].code)
        assert row["text"] == "Memory is our life-story."
        assert row["note"] == "MEMORIA, again"
        assert row["book"] == "The Man Who Mistook His Wife for a Hat"
        assert row["author"] == "Sacks, Oliver"
        assert row["url"] == shelf["sacks"].get_absolute_url()
        assert row["score"] > 0
        assert {"location", "matched"} <= set(row)

    def test_it_limits_and_validates(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        response = alice_client.get(reverse("search_json"), {"q": "memoria", "limit": "1"})
        assert len(response.json()) == 1
        bad = alice_client.get(reverse("search_json"), {"q": "memoria", "mode": "psychic"})
        assert bad.status_code == 400
        assert "mode" in bad.json()["errors"]

    def test_a_notice_with_the_query_in_quotes_is_percent_encoded(
        self, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        # Curly quotes are not latin-1: without encoding, Django sends the header
        # MIME-encoded (=?utf-8?q?...?=), unlike X-Search-Named and X-Search-Suggestion.
        response = alice_client.get(reverse("search_json"), {"q": "de la"})
        header = response["X-Search-Notice"]
        assert header.isascii()
        assert not header.startswith("=?")
        assert (
            unquote(header) == "Only common words: searched for “de la” as written, by words only."
        )

    def test_it_carries_the_notice_in_a_header(
        self, alice_client: Client, shelf: dict[str, Highlight], settings: object, tmp_path: Path
    ) -> None:
        settings.EXOGRAM_EMBEDDING_MODEL_DIR = tmp_path  # type: ignore[attr-defined]
        response = alice_client.get(reverse("search_json"), {"q": "life"})
        assert unquote(response["X-Search-Notice"]) == NOTICE_MODEL_UNAVAILABLE
        assert response["X-Search-Count"] == "1 highlight"
        assert [row["text"] for row in response.json()] == ["Memory is our life-story."]

    def test_it_counts_in_the_readers_language(
        self, alice: User, alice_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        alice.language = "es"
        alice.save(update_fields=["language"])
        response = alice_client.get(reverse("search_json"), {"q": "memory", "mode": "keyword"})
        assert response["X-Search-Count"] == "2 subrayados"  # memory, memoria
        assert response["X-Search-Total"] == "2"


class MarkWordsTests:
    def test_it_escapes_before_marking(self) -> None:
        marked = mark_words('<script>alert("Ärger")</script> & ärger', frozenset({"arger"}))
        assert marked == (
            "&lt;script&gt;alert(&quot;<mark>Ärger</mark>&quot;)&lt;/script&gt; &amp; "
            "<mark>ärger</mark>"
        )

    def test_it_keeps_a_decomposed_word_whole(self) -> None:
        assert mark_words("A\u0308rger", frozenset({"arger"})) == "<mark>A\u0308rger</mark>"

    def test_it_marks_nothing_without_words(self) -> None:
        assert mark_words("<i>x</i>", frozenset()) == "&lt;i&gt;x&lt;/i&gt;"


@pytest.mark.django_db
class SearchesAtOnceTests:
    def test_it_refuses_a_search_past_the_readers_searches_at_once(
        self, alice: User, alice_client: Client, bob_client: Client, shelf: dict[str, Highlight]
    ) -> None:
        for _ in range(searches_at_once()):  # as many of alice's searches still running
            reader_slot_take(kind="search", reader_id=alice.pk, limit=searches_at_once())
        for url in (reverse("search"), reverse("search_json")):
            refused = alice_client.get(url, {"q": "memory"})
            assert refused.status_code == 429
            assert refused["Retry-After"]
            assert "other searches are still running" in refused.content.decode()
        # Another reader searches as usual.
        assert bob_client.get(reverse("search"), {"q": "memory"}).status_code == 200
        reader_slot_release(kind="search", reader_id=alice.pk)
        assert alice_client.get(reverse("search"), {"q": "memory"}).status_code == 200
        # Each finished search gave its slot back: the same number is free again.
        assert alice_client.get(reverse("search"), {"q": "memory"}).status_code == 200
