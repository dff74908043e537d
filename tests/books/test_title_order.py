"""Lists of books by title sort a title's numbers by value ("Vol. 2" before "Vol. 10"),
in the database (Book.title_sort), so that pages of highlights by book page correctly."""

import re
from importlib import import_module

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.choices import book_choices
from books.exporting.library import books_to_export
from books.importing.services import clippings_import
from books.library_cache import LibraryCache
from books.models import Book, Tag
from books.services import highlight_tag
from tests.books.kindle import Entry, clippings_file
from tests.books.library import book_of, highlight_in, listed_books

# As a reader's Kindle names them, in the order a shelf would hold them.
SHELF = ["2 Days", "10 Days", "Vol. 1", "Vol. 2", "Vol. 10"]


def _imported(reader: User, titles: list[str]) -> None:
    entries = [
        Entry(title, f"A sentence of its own from {title}.", location=f"{10 * i}-{10 * i + 1}")
        for i, title in enumerate(titles, start=1)
    ]
    clippings_import(reader=reader, data=clippings_file(*entries), file_name="c.txt")


def _two_volumes(reader: User, *, each: int) -> list[Book]:
    """Vol. 10 made first (its pk, its text and its title all say it comes first)."""
    books = [book_of(reader, "Vol. 10"), book_of(reader, "Vol. 2")]
    for book in books:
        for n in range(each):
            highlight_in(book, f"{book.title}, passage {n}.", location=10 * n + 1, favourite=True)
    return books


@pytest.mark.django_db
class NaturalTitleOrderTests:
    def test_it_lists_the_library_by_each_titles_numbers_value(
        self, alice: User, alice_client: Client
    ) -> None:
        _imported(alice, sorted(SHELF, reverse=True))
        response = alice_client.get(reverse("library"))
        assert [title for title, _count in listed_books(response.content)] == SHELF

    def test_it_pages_the_favourites_by_book_in_that_order(
        self, alice: User, alice_client: Client
    ) -> None:
        _two_volumes(alice, each=30)
        pages = [
            alice_client.get(reverse("library"), {"favourite": "1", "page": n}).context["page"]
            for n in (1, 2)
        ]
        titles = [h.book.title for page in pages for h in page.object_list]
        assert titles == ["Vol. 2"] * 30 + ["Vol. 10"] * 30

    def test_it_pages_a_tags_highlights_by_book_in_that_order(
        self, alice: User, alice_client: Client
    ) -> None:
        for book in _two_volumes(alice, each=30):
            for highlight in book.highlights.all():
                highlight_tag(highlight=highlight, name="stoic")
        tag = Tag.objects.get(reader=alice, name="stoic")
        pages = [
            alice_client.get(reverse("tag", args=[tag.name]), {"page": n}).context["page"]
            for n in (1, 2)
        ]
        titles = [h.book.title for page in pages for h in page.object_list]
        assert titles == ["Vol. 2"] * 30 + ["Vol. 10"] * 30

    def test_it_exports_the_books_in_that_order(self, alice: User) -> None:
        _imported(alice, sorted(SHELF, reverse=True))
        assert [export.book.title for export in books_to_export(alice)] == SHELF

    def test_it_offers_the_search_pages_books_in_that_order(self, alice: User) -> None:
        _imported(alice, sorted(SHELF, reverse=True))
        options = book_choices(alice, LibraryCache(alice.pk), selected=None)
        offered = [title for title in SHELF if title in options]
        assert sorted(offered, key=options.index) == SHELF


@pytest.mark.django_db
class TitleSortKeptTests:
    """The stored key follows the title on each way a book is written."""

    def test_it_follows_a_title_saved_by_name(self, alice: User) -> None:
        book = book_of(alice, "Vol. 10")
        book.title = "Vol. 3"
        book.save(update_fields=["title"])
        book.refresh_from_db()
        assert book.title_sort == "vol. 000000000003"

    def test_it_follows_titles_written_in_bulk(self, alice: User) -> None:
        [made] = Book.objects.bulk_create([Book(reader=alice, title="The 9 Lives", key="nine")])
        assert Book.objects.get(pk=made.pk).title_sort == "000000000009 lives"
        made.title = "Book 12"
        Book.objects.bulk_update([made], ["title"])
        made.refresh_from_db()
        assert made.title_sort == "book 000000000012"

    def test_the_migration_writes_the_key_of_the_books_already_kept(self, alice: User) -> None:
        book_of(alice, "The Vol. 7")
        Book.objects.update(title_sort="")
        import_module("books.migrations.0028_book_title_sort").fill_title_sort(apps, None)
        assert list(Book.objects.values_list("title_sort", flat=True)) == ["vol. 000000000007"]


# Titles with articles, in the order the library files them (the article skipped).
ARTICLED = ["Antifragile", "La casa verde", "El hombre en busca de sentido", "Indistractable"]


@pytest.mark.django_db
class ArticlesOrderEveryListTests:
    """Every list of the reader's books files "El hombre…" under H, as the library does."""

    @pytest.fixture(autouse=True)
    def _shelf(self, alice: User) -> None:
        _imported(alice, sorted(ARTICLED, reverse=True))

    def test_the_library_tiles_show_the_letter_the_order_files_each_under(
        self, alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("library")).content.decode()
        tiles = re.findall(r'<span class="cover[^"]*" aria-hidden="true">(.*?)</span>', page)
        assert tiles == ["A", "C", "H", "I"]

    def test_the_sharing_page_lists_the_books_in_that_order(self, alice_client: Client) -> None:
        page = alice_client.get(reverse("sharing_settings")).content.decode()
        assert _in_page_order(page, ARTICLED) == ARTICLED

    @pytest.mark.parametrize("url", ["connections", "search"])
    def test_the_book_filters_offer_the_books_in_that_order(
        self, alice_client: Client, url: str
    ) -> None:
        page = alice_client.get(reverse(url)).content.decode()
        assert _in_page_order(page, ARTICLED) == ARTICLED


# Titles a Kindle keeps in quotes, filed as their tiles say: under S and W, after 1984.
QUOTED = [
    "1984",
    "Antifragile",
    '"Surely You\'re Joking, Mr. Feynman!"',
    "'What Do You Care What Other People Think?'",
]


@pytest.mark.django_db
class QuotedTitlesTests:
    def test_the_library_files_a_quoted_title_under_its_first_letter(
        self, alice: User, alice_client: Client
    ) -> None:
        _imported(alice, list(reversed(QUOTED)))
        page = alice_client.get(reverse("library")).content.decode()
        tiles = re.findall(r'<span class="cover[^"]*" aria-hidden="true">(.*?)</span>', page)
        assert tiles == ["1", "A", "S", "W"]
        assert [title for title, _count in listed_books(page.encode())] == QUOTED

    def test_the_migration_refiles_the_books_already_kept(self, alice: User) -> None:
        book_of(alice, QUOTED[2])
        Book.objects.update(title_sort='"surely')
        import_module("books.migrations.0037_title_sort_from_first_letter").refile(apps, None)
        assert list(Book.objects.values_list("title_sort", flat=True)) == [
            "surely you're joking, mr. feynman!\""
        ]


def _in_page_order(page: str, titles: list[str]) -> list[str]:
    assert all(title in page for title in titles), titles
    return sorted(titles, key=page.index)
