"""The pager the readers' lists share (templates/_pagination.html, exogram.paging): the
first and the last page a click away, and a page number below 1 read as the first page."""

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.models import Book
from tests.books.library import book_of, highlight_in

SPANISH = {"Accept-Language": "es"}
PAGER = re.compile(r'<nav class="pagination"[^>]*>(.*?)</nav>', re.S)
LINK = re.compile(r'<a href="([^"]*)"[^>]*>(.*?)</a>', re.S)


@pytest.fixture
def long_book(alice: User) -> Book:
    """120 favourite highlights: three pages of 50 on the book page and on the favourites."""
    book = book_of(alice, "A Long Book", "Writer, A")
    for i in range(120):
        highlight_in(book, f"Passage {i} of a long book.", location=i + 1, favourite=True)
    return book


def _pager_links(content: str) -> list[tuple[str, str]]:
    """The pager's links, as a reader reads them (what is hidden from a screen reader
    aside) and where each leads."""
    (pager,) = PAGER.findall(content)
    shown = re.sub(r'<span aria-hidden="true">[^<]*</span>', "", pager)
    return [
        (" ".join(re.sub(r"<[^>]+>", "", text).split()), html.unescape(href))
        for href, text in LINK.findall(shown)
    ]


@pytest.mark.django_db
class FirstAndLastTests:
    def test_a_middle_page_links_to_the_first_and_the_last_keeping_the_filters(
        self, long_book: Book, alice_client: Client
    ) -> None:
        response = alice_client.get(long_book.get_absolute_url(), {"sort": "date", "page": "2"})
        content = response.content.decode()
        assert _pager_links(content) == [
            ("First", "?sort=date&page=1"),
            ("← Previous", "?sort=date&page=1"),
            ("Next →", "?sort=date&page=3"),
            ("Last", "?sort=date&page=3"),
        ]
        assert '<span class="muted" aria-current="page">Page 2 of 3</span>' in content
        # The arrows are drawn, not read out.
        assert '<span aria-hidden="true">«</span> First</a>' in content
        assert 'Last <span aria-hidden="true">»</span></a>' in content

    def test_the_first_page_has_no_first_and_the_last_no_last(
        self, long_book: Book, alice_client: Client
    ) -> None:
        first = alice_client.get(long_book.get_absolute_url()).content.decode()
        assert _pager_links(first) == [("Next →", "?page=2"), ("Last", "?page=3")]
        last = alice_client.get(long_book.get_absolute_url(), {"page": "3"}).content.decode()
        assert _pager_links(last) == [("First", "?page=1"), ("← Previous", "?page=2")]

    def test_it_reads_in_spanish(self, long_book: Book, alice_client: Client) -> None:
        response = alice_client.get(long_book.get_absolute_url(), {"page": "2"}, headers=SPANISH)
        assert [text for text, _ in _pager_links(response.content.decode())] == [
            "Primera", "← Anterior", "Siguiente →", "Última",
        ]  # fmt: skip

    def test_a_list_of_one_page_has_no_pager(self, alice: User, alice_client: Client) -> None:
        short = book_of(alice, "A Short Book")
        highlight_in(short, "Only one passage.", location=1)
        content = alice_client.get(short.get_absolute_url()).content.decode()
        assert 'class="pagination"' not in content


def _favourites(client: Client, number: str) -> int:
    page = client.get(reverse("library"), {"favourite": "1", "page": number}).context["page"]
    return int(page.number)


def _book_page(client: Client, book: Book, number: str) -> int:
    return int(client.get(book.get_absolute_url(), {"page": number}).context["page"].number)


@pytest.mark.django_db
class PageNumberTests:
    @pytest.mark.parametrize("number", ["0", "-1", "-00", "abc", "", "1.5"])
    def test_a_page_below_the_first_or_no_whole_number_is_the_first(
        self, number: str, long_book: Book, alice_client: Client
    ) -> None:
        assert _book_page(alice_client, long_book, number) == 1
        assert _favourites(alice_client, number) == 1

    @pytest.mark.parametrize("number", ["4", "99999999999999999999"])
    def test_a_page_past_the_last_is_the_last(
        self, number: str, long_book: Book, alice_client: Client
    ) -> None:
        assert _book_page(alice_client, long_book, number) == 3
        assert _favourites(alice_client, number) == 3

    def test_a_page_in_range_is_itself(self, long_book: Book, alice_client: Client) -> None:
        assert _book_page(alice_client, long_book, "2") == 2
        assert _favourites(alice_client, "02") == 2
