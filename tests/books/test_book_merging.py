"""The book page's "Merge with another book…": choose, confirm, merge."""

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.translation import override

from accounts.models import User
from affinity.models import SharingProfile
from books.importing.services import clippings_import
from books.models import Book, Highlight
from tests.books.kindle import Entry, clippings_file

SHORT = "The San Francisco Fallacy (Siegel, Jonathan)"
LONG = "The San Francisco Fallacy: The Ten Fallacies That San Francisco Makes (Jonathan Siegel)"
SHARED = "A city that forbids building forbids its own future."


@pytest.fixture
def books(alice: User) -> tuple[Book, Book]:
    entries = [
        Entry(SHORT, SHARED, location="100-101"),
        Entry(SHORT, "Rent is what the permit office charges, passed on.", location="200-202"),
        Entry(LONG, SHARED, location="100-101"),
        Entry(LONG, "Every fallacy is a kindness to someone already housed.", location="300-302"),
        # Many other books: the suggestions name the likely one first.
        *[Entry(f"Book number {n} (Someone Else {n})", f"Line {n} of it.") for n in range(12)],
    ]
    clippings_import(reader=alice, data=clippings_file(*entries), file_name="c.txt")
    short = Book.objects.get(reader=alice, title="The San Francisco Fallacy")
    return short, Book.objects.get(reader=alice, title__startswith="The San Francisco Fallacy:")


def _post(client: Client, book: Book, other: Book, keep: Book):  # type: ignore[no-untyped-def]
    data = {"other": str(other.code), "keep": str(keep.code)}
    return client.post(reverse("book_merge", args=[book.code]), data, follow=True)


@pytest.mark.django_db
class BookMergeViewTests:
    def test_the_book_page_offers_it(self, books: tuple[Book, Book], alice_client: Client) -> None:
        short, _long = books
        page = alice_client.get(short.get_absolute_url()).content.decode()
        assert reverse("book_merge_choose", args=[short.code]) in page
        assert "Merge with another book…" in page

    def test_it_lists_the_likely_book_first_and_every_other_book(
        self, books: tuple[Book, Book], alice_client: Client
    ) -> None:
        short, long = books
        page = alice_client.get(reverse("book_merge_choose", args=[short.code])).content.decode()
        confirm = reverse("book_merge_confirm", args=[short.code, long.code])
        likely, _, everything = page.partition("All your other books")
        assert confirm in likely
        assert "Book number 3" not in likely
        assert "Book number 3" in everything
        assert reverse("book_merge_confirm", args=[short.code, short.code]) not in page

    def test_it_says_what_the_merge_does_before_it_does(
        self, books: tuple[Book, Book], alice_client: Client
    ) -> None:
        short, long = books
        url = reverse("book_merge_confirm", args=[short.code, long.code])
        page = alice_client.get(url).content.decode()
        assert "1 passage both books hold, word for word or in two versions" in page
        assert f'value="{short.code}" checked' in page
        assert f'value="{long.code}"' in page
        assert Book.objects.filter(pk=long.pk).exists()

    def test_the_confirmation_says_the_merge_is_permanent_before_the_button(
        self, books: tuple[Book, Book], alice_client: Client
    ) -> None:
        short, long = books
        url = reverse("book_merge_confirm", args=[short.code, long.code])
        for language, said in (
            ("en", "A merge is permanent: it cannot be undone"),
            ("es", "Unir dos libros es definitivo: no se puede deshacer"),
        ):
            page = alice_client.get(url, headers={"Accept-Language": language}).content.decode()
            before_button = page.split('<button type="submit">')[0]
            assert said in before_button, language

    def test_it_merges_into_the_book_whose_title_the_reader_keeps(
        self, alice: User, books: tuple[Book, Book], alice_client: Client
    ) -> None:
        short, long = books

        response = _post(alice_client, short, long, keep=long)

        assert response.redirect_chain[-1][0] == long.get_absolute_url()
        assert not Book.objects.filter(pk=short.pk).exists()
        assert long.highlights.alive().count() == 3
        page = response.content.decode()
        assert "is now part of" in page
        assert "”, no longer a book of its own." in page  # no title ends the sentence
        assert "2 highlights moved." in page
        assert "1 passage both books held, word for word or in two versions, is now one" in page

    def test_a_second_post_of_the_same_merge_changes_nothing(
        self, alice: User, books: tuple[Book, Book], alice_client: Client
    ) -> None:
        short, long = books
        _post(alice_client, long, short, keep=short)
        before = sorted(Highlight.objects.filter(reader=alice).values_list("pk", "book_id"))

        response = _post(alice_client, long, short, keep=short)

        assert response.redirect_chain[-1][0] == short.get_absolute_url()
        assert "These two books are already one." in response.content.decode()
        assert sorted(Highlight.objects.filter(reader=alice).values_list("pk", "book_id")) == before

    def test_a_post_without_the_other_book_sends_the_reader_back_to_choose(
        self, books: tuple[Book, Book], alice_client: Client
    ) -> None:
        short, _long = books
        url = reverse("book_merge", args=[short.code])
        response = alice_client.post(url, {"keep": str(short.code)})
        assert response["Location"] == reverse("book_merge_choose", args=[short.code])
        assert Book.objects.filter(pk=short.pk).exists()

    def test_it_says_when_the_kept_book_will_be_kept_out_of_sharing(
        self, alice: User, books: tuple[Book, Book], alice_client: Client
    ) -> None:
        short, long = books
        url = reverse("book_merge_confirm", args=[short.code, long.code])
        said = "so the book you keep is too, and what you share is updated at once"
        assert said not in alice_client.get(url).content.decode()
        SharingProfile.objects.create(reader=alice).excluded_books.add(long)

        assert said in alice_client.get(url).content.decode()
        page = alice_client.get(url, headers={"accept-language": "es"}).content.decode()
        assert "así que el libro que conservas también lo estará" in page

    def test_a_page_shown_before_a_book_was_merged_elsewhere_merges_nothing(
        self, alice: User, books: tuple[Book, Book], alice_client: Client
    ) -> None:
        # The confirm page for the two copies is open; meanwhile, in another tab, the long
        # one becomes part of "Book number 1". The old page's POST must not merge that book.
        short, long = books
        third = Book.objects.get(reader=alice, title="Book number 1")
        _post(alice_client, third, long, keep=third)
        data = {"other": str(long.code), "keep": str(short.code)}

        response = alice_client.post(reverse("book_merge", args=[short.code]), data)

        assert response["Location"] == reverse("book_merge_confirm", args=[short.code, third.code])
        assert Book.objects.filter(pk=third.pk).exists()
        assert Book.objects.filter(pk=short.pk).exists()
        page = alice_client.get(response["Location"]).content.decode()
        assert "One of these books was merged into another since the page was shown." in page

    def test_it_speaks_spanish(self, books: tuple[Book, Book], alice_client: Client) -> None:
        short, long = books
        with override("es"):
            url = reverse("book_merge_confirm", args=[short.code, long.code])
        page = alice_client.get(url, headers={"accept-language": "es"}).content.decode()
        assert "Unir dos libros en uno" in page
        assert "Unir los dos libros" in page
        assert "Conservar el título y el autor de" in page


@pytest.mark.django_db
class BookMergeOwnershipTests:
    def test_it_is_404_for_another_readers_books(
        self, bob: User, books: tuple[Book, Book], bob_client: Client
    ) -> None:
        short, long = books
        clippings_import(
            reader=bob, data=clippings_file(Entry("Bob's Book (Bob)", "Mine.")), file_name="b"
        )
        his = Book.objects.get(reader=bob)
        urls = [
            reverse("book_merge_choose", args=[short.code]),
            reverse("book_merge_confirm", args=[short.code, long.code]),
            reverse("book_merge_confirm", args=[his.code, long.code]),
        ]
        for url in urls:
            assert bob_client.get(url).status_code == 404, url
        for book, other, keep in ((short, long, long), (his, short, his), (his, short, short)):
            data = {"other": str(other.code), "keep": str(keep.code)}
            response = bob_client.post(reverse("book_merge", args=[book.code]), data)
            assert response.status_code == 404
        assert Book.objects.filter(pk__in=[short.pk, long.pk, his.pk]).count() == 3

    def test_anonymous_is_sent_to_login(self, books: tuple[Book, Book], client: Client) -> None:
        short, long = books
        for url in (
            reverse("book_merge_choose", args=[short.code]),
            reverse("book_merge_confirm", args=[short.code, long.code]),
        ):
            assert client.get(url)["Location"].startswith("/login/")
        data = {"other": str(long.code), "keep": str(long.code)}
        response = client.post(reverse("book_merge", args=[short.code]), data)
        assert response["Location"].startswith("/login/")
        assert Book.objects.filter(pk=short.pk).exists()

    def test_the_merge_needs_the_csrf_token(self, alice: User, books: tuple[Book, Book]) -> None:
        short, long = books
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        data = {"other": str(long.code), "keep": str(long.code)}
        assert client.post(reverse("book_merge", args=[short.code]), data).status_code == 403
        assert Book.objects.filter(pk=short.pk).exists()

    def test_the_merged_away_books_old_link_leads_to_the_kept_book(
        self, books: tuple[Book, Book], alice_client: Client, bob_client: Client
    ) -> None:
        short, long = books
        _post(alice_client, short, long, keep=long)

        response = alice_client.get(short.get_absolute_url())

        assert response["Location"] == long.get_absolute_url()
        assert bob_client.get(short.get_absolute_url()).status_code == 404
