"""A count and its words are one message, so each language makes them agree: "1 libro",
"2 subrayados coinciden", never a noun with an English "s" tacked on or a participle left
singular ("27 libros compartido": the walk of 2026-12-06). A citation's "p." and "loc."
are the reader's language's abbreviations ("pág.", "pos.")."""

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.models import Highlight, Tag
from tests.books.library import book_of, highlight_in


def _text(client: Client, url: str) -> str:
    """The page's words as a reader reads them: tags gone, spaces folded."""
    page = client.get(url).content.decode()
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _in(reader: User, language: str) -> None:
    reader.language = language
    reader.save(update_fields=["language"])


@pytest.mark.django_db
class CountedWordsTests:
    @pytest.mark.parametrize(
        ("language", "one", "two"),
        [
            (
                "en",
                "1 book 1 highlight 0 ready 1 still to go",
                "2 books 2 highlights 0 ready 2 still to go",
            ),
            (
                "es",
                "1 libro 1 subrayado 0 listos 1 por preparar",
                "2 libros 2 subrayados 0 listos 2 por preparar",
            ),
        ],
    )
    def test_the_home_pages_counts_agree_with_their_numbers(
        self, alice: User, alice_client: Client, language: str, one: str, two: str
    ) -> None:
        _in(alice, language)
        highlight_in(book_of(alice, "Walden"), "Simplify, simplify.", location=10)
        assert one in _text(alice_client, reverse("home"))
        highlight_in(book_of(alice, "Ficciones"), "El jardín de senderos.", location=20)
        assert two in _text(alice_client, reverse("home"))

    @pytest.mark.parametrize(
        ("language", "said"),
        [
            (
                "en",
                [
                    "Thoreau · 1 highlight",  # the library's list
                    "Ficciones 2 highlights",  # the book's page
                    "1 of 2 highlights match ·",  # the book's page, filtered
                    "1 favourite, by book.",
                    "memory” 1 highlight",  # a tag's page
                ],
            ),
            (
                "es",
                [
                    "Thoreau · 1 subrayado",
                    "Ficciones 2 subrayados",
                    "1 de 2 subrayados coinciden ·",
                    "1 favorito, por libro.",
                    "memory» 1 subrayado",  # quoted the Spanish way
                ],
            ),
        ],
    )
    def test_the_library_says_each_count_in_its_own_form(
        self, alice: User, alice_client: Client, language: str, said: list[str]
    ) -> None:
        _in(alice, language)
        walden = book_of(alice, "Walden", "Thoreau")
        ficciones = book_of(alice, "Ficciones")
        walden_one = highlight_in(walden, "Simplify, simplify.", location=10)
        highlight_in(ficciones, "El jardín de senderos que se bifurcan.", location=20)
        highlight_in(ficciones, "El libro de arena.", location=30, favourite=True)
        walden_one.tags.add(Tag.objects.create(reader=alice, name="memory"))
        texts = " ".join(
            _text(alice_client, url)
            for url in (
                reverse("library"),
                ficciones.get_absolute_url(),
                f"{ficciones.get_absolute_url()}?favourite=1",
                f"{reverse('library')}?favourite=1",
                reverse("tag", args=["memory"]),
            )
        )
        for phrase in said:
            assert phrase in texts


@pytest.mark.django_db
class CitationTests:
    @pytest.mark.parametrize(
        ("language", "by_page", "by_location"),
        [("en", ", p. 136", ", loc. 1378"), ("es", ", pág. 136", ", pos. 1378")],
    )
    def test_it_abbreviates_page_and_location_in_the_readers_language(
        self, alice: User, alice_client: Client, language: str, by_page: str, by_location: str
    ) -> None:
        _in(alice, language)
        book = book_of(alice, "Lean Enterprise", "Jez Humble")
        on_location = highlight_in(book, "Actions that fit the strategy.", location=1378)
        on_page = highlight_in(book, "Small batches.", location=1400)
        Highlight.objects.filter(pk=on_page.pk).update(page="136")
        for highlight, ending in ((on_location, by_location), (on_page, by_page)):
            content = alice_client.get(highlight.get_absolute_url()).content.decode()
            (citation,) = re.findall(r'data-citation="([^"]*)"', content)
            assert html.unescape(citation).endswith(f"Lean Enterprise{ending}")
