"""The book page (search, sort, filters, count, per-item actions), favourites and the
library's author and title order."""

from datetime import datetime

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.models import Book, Highlight, Tag
from books.services import highlight_delete, highlight_tag
from tests.books.library import book_of, highlight_in, listed_books

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def ficciones(alice: User) -> Book:
    book = book_of(alice, "Ficciones", "Borges, Jorge Luis")
    first = highlight_in(book, "To think is to forget differences.", location=412)
    highlight_in(book, "He remembered every leaf of every tree.", location=380, favourite=True)
    noted = highlight_in(book, "Funes had trouble sleeping.", location=100)
    noted.note = "Insomnia as memory."
    noted.refresh_search_text()
    noted.save()
    Highlight.objects.filter(pk=first.pk).update(added_at=timezone.make_aware(datetime(2025, 5, 1)))
    highlight_tag(highlight=first, name="memory")
    return book


def _texts(response: object) -> list[str]:
    return [h.text for h in response.context["page"].object_list]  # type: ignore[attr-defined]


@pytest.mark.django_db
class BookPageTests:
    def test_it_counts_the_highlights_in_the_header(
        self, ficciones: Book, alice_client: Client
    ) -> None:
        highlight_delete(highlight=Highlight.objects.get(location_start=100))
        content = alice_client.get(ficciones.get_absolute_url()).content.decode()
        assert '<span class="highlight-count">2 highlights</span>' in content

    def test_it_searches_within_the_book_accent_blind(
        self, ficciones: Book, alice: User, alice_client: Client
    ) -> None:
        other = book_of(alice, "Walden")
        highlight_in(other, "Every leaf of every tree, too.", location=1)
        response = alice_client.get(ficciones.get_absolute_url(), {"q": "LEAF"})
        assert _texts(response) == ["He remembered every leaf of every tree."]
        assert "1 of 3 highlights match" in response.content.decode()
        notes = alice_client.get(ficciones.get_absolute_url(), {"q": "insomnia"})
        assert _texts(notes) == ["Funes had trouble sleeping."]
        highlight_in(ficciones, "La memoria es una liquidación.", location=500)
        accents = alice_client.get(ficciones.get_absolute_url(), {"q": "Liquidacion memoria"})
        assert _texts(accents) == ["La memoria es una liquidación."]

    def test_it_sorts_by_location_date_and_favourites(
        self, ficciones: Book, alice_client: Client
    ) -> None:
        url = ficciones.get_absolute_url()
        assert [h.location_start for h in alice_client.get(url).context["page"]] == [100, 380, 412]
        added = alice_client.get(url, {"sort": "added"}).context["page"]
        assert added[0].location_start == 412
        favourites = alice_client.get(url, {"sort": "favourites"}).context["page"]
        assert favourites[0].location_start == 380
        nonsense = alice_client.get(url, {"sort": "nonsense"})
        assert nonsense.context["sort"] == "location"

    def test_it_filters_favourites_notes_and_tags(
        self, ficciones: Book, alice_client: Client
    ) -> None:
        url = ficciones.get_absolute_url()
        assert _texts(alice_client.get(url, {"favourite": "1"})) == [
            "He remembered every leaf of every tree."
        ]
        assert _texts(alice_client.get(url, {"notes": "1"})) == ["Funes had trouble sleeping."]
        assert _texts(alice_client.get(url, {"tag": "memory"})) == [
            "To think is to forget differences."
        ]
        empty = alice_client.get(url, {"tag": "memory", "favourite": "1"})
        assert "No highlight of this book matches all of these filters." in empty.content.decode()

    def test_a_short_highlight_with_a_note_is_read_with_its_note_not_as_a_word(
        self, ficciones: Book, alice_client: Client
    ) -> None:
        noted = highlight_in(ficciones, "The girl laughed delightedly", location=200)
        plain = highlight_in(ficciones, "delightedly", location=210)
        Highlight.objects.filter(pk__in=[noted.pk, plain.pk]).update(is_word=True)
        Highlight.objects.filter(pk=noted.pk).update(note="girl, RUN")
        url = ficciones.get_absolute_url()
        page = alice_client.get(url)
        assert "The girl laughed delightedly" in _texts(page)
        assert "girl, RUN" in page.content.decode()
        chips = [w.text for _, _, shown, _ in page.context["word_groups"] for w in shown]
        assert chips == ["delightedly"]
        with_a_note = _texts(alice_client.get(url, {"notes": "1"}))
        assert with_a_note == ["Funes had trouble sleeping.", "The girl laughed delightedly"]

    @pytest.mark.parametrize(
        ("filters", "said"),
        [
            ({"favourite": "1"}, "No favourites in this book yet."),
            ({"notes": "1"}, "No highlight of this book has a note yet."),
            ({"tag": "stoic"}, "No highlight of this book is tagged “stoic”."),
            ({"q": "zebra"}, "Nothing in this book matches “zebra”."),
        ],
    )
    def test_an_empty_filter_says_what_there_is_none_of(
        self, alice: User, alice_client: Client, filters: dict[str, str], said: str
    ) -> None:
        book = book_of(alice, "Walden")
        highlight_in(book, "Simplify, simplify.", location=1)
        content = alice_client.get(book.get_absolute_url(), filters).content.decode()
        assert said in content
        assert f'<a href="{book.get_absolute_url()}">Show all</a>' in content

    def test_each_item_links_by_its_own_words_and_offers_actions(
        self, ficciones: Book, alice_client: Client
    ) -> None:
        content = alice_client.get(ficciones.get_absolute_url()).content.decode()
        first = Highlight.objects.get(location_start=412)
        assert (
            f'<a class="quote-link" href="{first.get_absolute_url()}">'
            "To think is to forget differences.</a>"
        ) in content
        assert ">open<" not in content
        assert content.count('class="secondary copy-citation"') == 3
        assert content.count(">Tag</summary>") == 3
        assert f'id="favourite-{first.code}"' in content
        assert "<script>" not in content
        assert " onclick=" not in content

    def test_it_paginates_a_long_book_keeping_the_filters(
        self, alice: User, alice_client: Client
    ) -> None:
        book = book_of(alice, "A Long Book")
        for i in range(120):
            highlight_in(book, f"Passage {i} of a long book.", location=i + 1, favourite=i % 2 == 0)
        response = alice_client.get(book.get_absolute_url(), {"favourite": "1"})
        page = response.context["page"]
        assert (page.paginator.count, page.paginator.num_pages, len(page)) == (60, 2, 50)
        assert 'href="?favourite=1&amp;page=2"' in response.content.decode()
        second = alice_client.get(book.get_absolute_url(), {"favourite": "1", "page": "2"})
        assert len(second.context["page"]) == 10

    def test_it_tags_an_item_in_place(self, ficciones: Book, alice_client: Client) -> None:
        item = Highlight.objects.get(location_start=100)
        url = reverse("highlight_tag_add", args=[item.code])
        response = alice_client.post(url, {"name": "Sleep", "compact": "1"}, **HTMX)
        content = response.content.decode()
        assert f'id="tags-{item.code}"' in content
        assert 'id="highlight-tags"' not in content
        assert [t.name for t in item.tags.all()] == ["sleep"]

    def test_in_spanish_the_tag_filter_is_a_noun_and_tagging_a_verb(
        self, ficciones: Book, alice_client: Client
    ) -> None:
        # One msgid "Tag" for both: the filter read "Etiquetar" (to tag) beside "Cualquiera".
        page = alice_client.get(
            ficciones.get_absolute_url(), headers={"Accept-Language": "es"}
        ).content.decode()
        assert '<label for="book-tag">Etiqueta</label>' in page
        assert '<option value="">Cualquiera</option>' in page
        assert "<summary>Etiquetar</summary>" in page

    def test_it_favourites_an_item_in_place(self, ficciones: Book, alice_client: Client) -> None:
        item = Highlight.objects.get(location_start=100)
        url = reverse("highlight_favourite", args=[item.code])
        response = alice_client.post(url, {"compact": "1"}, **HTMX)
        assert f'id="favourite-{item.code}"' in response.content.decode()
        assert "★ Favourite" in response.content.decode()
        item.refresh_from_db()
        assert item.favourite

    def test_bob_gets_a_404(self, ficciones: Book, bob_client: Client) -> None:
        response = bob_client.get(ficciones.get_absolute_url(), {"favourite": "1", "q": "leaf"})
        assert response.status_code == 404

    def test_anonymous_readers_are_sent_to_login(self, ficciones: Book, client: Client) -> None:
        response = client.get(ficciones.get_absolute_url(), {"q": "leaf"})
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class FavouritesTests:
    def test_it_lists_the_favourites_across_books(
        self, ficciones: Book, alice: User, alice_client: Client
    ) -> None:
        highlight_in(book_of(alice, "Walden"), "Simplify, simplify.", location=5, favourite=True)
        gone = highlight_in(book_of(alice, "Walden"), "A deleted one.", location=6, favourite=True)
        highlight_delete(highlight=gone)
        response = alice_client.get(reverse("library"), {"favourite": "1"})
        assert _texts(response) == [
            "He remembered every leaf of every tree.",
            "Simplify, simplify.",
        ]
        assert "2 favourites" in response.content.decode()

    def test_it_has_an_empty_state(self, alice_client: Client) -> None:
        content = alice_client.get(reverse("library"), {"favourite": "1"}).content.decode()
        assert "No favourites yet." in content

    def test_the_nav_links_to_it(self, alice_client: Client) -> None:
        content = alice_client.get(reverse("home")).content.decode()
        assert 'href="/library/?favourite=1"' in content

    def test_bob_sees_only_his_own(self, ficciones: Book, bob_client: Client) -> None:
        response = bob_client.get(reverse("library"), {"favourite": "1"})
        assert _texts(response) == []

    def test_anonymous_readers_are_sent_to_login(self, client: Client) -> None:
        response = client.get(reverse("library"), {"favourite": "1"})
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class LibraryOrderTests:
    def test_it_groups_authors_however_they_were_written(
        self, alice: User, alice_client: Client
    ) -> None:
        for title, authors in [
            ("The 48 Laws of Power", "Greene, Robert"),
            ("Mastery", "Robert Greene"),
            ("Ficciones", "Borges, Jorge Luis"),
            ("Untitled notes", ""),
        ]:
            book = Book.objects.create(
                reader=alice,
                title=title,
                authors=authors,
                authors_normalized=" ".join(reversed(authors.split(", "))).casefold(),
                key=title,
            )
            highlight_in(book, f"A line of {title}.", location=1)
        response = alice_client.get(reverse("library"), {"sort": "author"})
        titles = [title for title, _ in listed_books(response.content)]
        assert titles == ["Ficciones", "The 48 Laws of Power", "Mastery", "Untitled notes"]
        content = response.content.decode()
        assert content.count('class="author-group"') == 3
        assert "Greene, Robert</h2>" in content
        main = content[content.index("<main") :]
        assert "style=" not in main  # the site is moving to a strict CSP

    def test_it_sorts_titles_without_their_article(self, alice: User, alice_client: Client) -> None:
        for title in ["The Zebra", "Apples", "La Manzana", "Der Baum", "El Cielo"]:
            highlight_in(book_of(alice, title), f"A line of {title}.", location=1)
        titles = [title for title, _ in listed_books(alice_client.get(reverse("library")).content)]
        assert titles == ["Apples", "Der Baum", "El Cielo", "La Manzana", "The Zebra"]

    def test_it_lists_no_book_with_nothing_left_to_show(
        self, alice: User, alice_client: Client
    ) -> None:
        gone = highlight_in(book_of(alice, "Walden"), "Simplify, simplify.", location=5)
        highlight_delete(highlight=gone)
        highlight_in(book_of(alice, "Ficciones"), "To think is to forget.", location=1)
        titles = [title for title, _ in listed_books(alice_client.get(reverse("library")).content)]
        assert titles == ["Ficciones"]


@pytest.mark.django_db
class HighlightPageHeadingTests:
    def test_it_has_an_h1_naming_the_book(self, ficciones: Book, alice_client: Client) -> None:
        highlight = Highlight.objects.get(location_start=412)
        content = alice_client.get(highlight.get_absolute_url()).content.decode()
        assert "<h1" in content
        assert "Highlight from <a" in content
        assert "<script>" not in content

    def test_tag_pages_keep_the_tag(self, ficciones: Book, alice: User) -> None:
        assert Tag.objects.filter(reader=alice, name="memory").exists()
