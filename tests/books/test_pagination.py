"""The pages of the readers' lists (exogram.paging): a page number below 1 is the first page."""

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.models import Book
from tests.books.library import book_of, highlight_in


@pytest.fixture
def long_book(alice: User) -> Book:
    """120 favourite highlights: three pages of 50 on the book page and on the favourites."""
    book = book_of(alice, "A Long Book", "Writer, A")
    for i in range(120):
        highlight_in(book, f"Passage {i} of a long book.", location=i + 1, favourite=True)
    return book


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
