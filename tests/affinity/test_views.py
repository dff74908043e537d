"""The sharing, kindred readers and reader profile pages."""

import re
import uuid
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.template.loader import render_to_string
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation

from accounts.models import User
from affinity.models import ReaderCentroid, SharingProfile
from affinity.services import centroid_refresh
from books.models import Highlight
from tests.affinity.library import (
    book,
    direction,
    highlights,
    library,
    near,
    reader,
    share,
    unit,
)
from tests.conftest import PASSWORD

Capture = Callable[..., Any]
AssertQueries = Callable[..., Any]


def _client(who: User) -> Client:
    client = Client()
    client.force_login(who)
    return client


@pytest.fixture
def circle(alice: User, bob: User) -> dict[str, Any]:
    """alice, bob and carol share and read alike; dave reads alike but does not share;
    bob keeps a diary to himself."""
    rng = np.random.default_rng(40)
    centre, idea = direction(rng), direction(rng)
    carol, dave = reader("carol"), reader("dave")
    for who in (alice, bob, carol, dave):
        library(who, centre, rng)
    highlights(book(alice, "Ficciones", "Borges"), near(idea, 0.1, rng, 1))
    highlights(
        book(bob, "El Aleph", "Borges"), near(idea, 0.1, rng, 1), texts=["Bob's Aleph passage"]
    )
    diary = book(bob, "Bob's Diary")
    highlights(diary, near(idea, 0.01, rng, 1), texts=["A secret from the diary"])
    share(alice, "Alice L.")
    share(bob, "Bob B.", excluded=[diary])
    share(carol, "Carol C.")
    for who in (alice, bob, carol, dave):
        centroid_refresh(reader=who)
    return {"carol": carol, "dave": dave, "diary": diary}


@pytest.mark.django_db
class SharingSettingsPageTests:
    def test_it_sends_an_anonymous_visitor_to_log_in(self, client: Client) -> None:
        response = client.get(reverse("sharing_settings"))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))

    def test_it_shows_sharing_off_by_default(self, alice_client: Client) -> None:
        response = alice_client.get(reverse("sharing_settings"))
        assert response.status_code == 200
        assert response.context["form"].initial["discoverable"] is False
        assert b"Off by default" in response.content

    def test_it_turns_sharing_on_with_a_message(self, alice: User, alice_client: Client) -> None:
        shelf = book(alice, "Private Matters")
        response = alice_client.post(
            reverse("sharing_settings"),
            {"discoverable": "on", "display_name": "  Alice   L. ", "excluded_books": [shelf.pk]},
            follow=True,
        )
        assert response.redirect_chain[-1][0] == reverse("kindred")
        profile = SharingProfile.objects.get(reader=alice)
        assert (profile.discoverable, profile.display_name) == (True, "Alice L.")
        assert list(profile.excluded_books.all()) == [shelf]
        # In quotes: a name that ends with a full stop ("Alice L.") is not followed by another.
        assert "You share your reading as “Alice L.”." in response.content.decode()

    def test_it_needs_a_display_name_to_share(self, alice: User, alice_client: Client) -> None:
        response = alice_client.post(reverse("sharing_settings"), {"discoverable": "on"})
        assert response.status_code == 200
        assert "Choose a display name" in response.content.decode()
        assert not SharingProfile.objects.filter(reader=alice, discoverable=True).exists()

    def test_it_refuses_a_name_another_reader_shares_under(
        self, alice_client: Client, bob: User
    ) -> None:
        share(bob, "Bookworm")
        response = alice_client.post(
            reverse("sharing_settings"), {"discoverable": "on", "display_name": "bookworm"}
        )
        assert "Another reader shares under this name already." in response.content.decode()

    def test_it_refuses_to_exclude_another_readers_book(
        self, alice: User, alice_client: Client, bob: User
    ) -> None:
        bobs = book(bob, "Bob's Book")
        response = alice_client.post(
            reverse("sharing_settings"),
            {"discoverable": "on", "display_name": "Alice", "excluded_books": [bobs.pk]},
        )
        assert response.status_code == 200
        assert "One of those is not one of your books." in response.content.decode()
        assert not SharingProfile.objects.filter(reader=alice, discoverable=True).exists()

    def test_it_says_so_when_sharing_is_turned_off(self, alice: User, alice_client: Client) -> None:
        share(alice, "Alice")
        response = alice_client.post(reverse("sharing_settings"), {"display_name": "Alice"})
        assert response.status_code == 302
        assert not SharingProfile.objects.get(reader=alice).discoverable
        page = alice_client.get(response["Location"]).content.decode()
        assert "Sharing is off" in page


def _shelf(who: User, count: int) -> list[Any]:
    return [book(who, f"Almanac, vol. {i:03d}") for i in range(count)]


@pytest.mark.django_db
class SharingManyBooksTests:
    """A whole Kindle is hundreds of books: the one Save sat after 295 checkboxes."""

    def test_its_save_comes_before_a_long_list_which_folds(
        self, alice: User, alice_client: Client
    ) -> None:
        shelf = _shelf(alice, 40)
        share(alice, "Alice", excluded=shelf[:2])
        page = alice_client.get(reverse("sharing_settings")).content.decode()
        save = page.index('<button type="submit">Save</button>')
        assert save < page.index('name="excluded_books"')
        assert page.count('<button type="submit">Save</button>') == 1
        assert '<details class="card kept-books">' in page  # folded
        assert "Books to keep to yourself" in page
        assert "2 of 40 books kept" in page
        # Folded, the kept books are still ticked: a Save sends them as they were.
        assert page.count("checked") == 3  # the sharing switch and the two books

    def test_a_short_list_is_open(self, alice: User, alice_client: Client) -> None:
        _shelf(alice, 3)
        page = alice_client.get(reverse("sharing_settings")).content.decode()
        assert '<details class="card kept-books" open>' in page
        assert "0 of 3 books kept" in page

    def test_it_keeps_every_book_to_yourself_at_once(
        self, alice: User, alice_client: Client, bob: User
    ) -> None:
        shelf = _shelf(alice, 30)
        bobs = book(bob, "Bob's Book")
        response = alice_client.post(
            reverse("sharing_settings"),
            {"discoverable": "on", "display_name": "Alice", "keep": "all"},
            follow=True,
        )
        assert response.redirect_chain == [(reverse("sharing_settings"), 302)]
        profile = SharingProfile.objects.get(reader=alice)
        assert (profile.discoverable, profile.display_name) == (True, "Alice")
        assert set(profile.excluded_books.all()) == set(shelf)
        assert bobs not in profile.excluded_books.all()
        page = response.content.decode()
        assert "All your books are kept to yourself now." in page
        assert "30 of 30 books kept" in page

    def test_it_keeps_none_to_yourself_at_once(self, alice: User, alice_client: Client) -> None:
        shelf = _shelf(alice, 30)
        share(alice, "Alice", excluded=shelf[:5])
        response = alice_client.post(
            reverse("sharing_settings"),
            # The boxes ticked on the page do not count: "none" is none.
            {"discoverable": "on", "display_name": "Alice", "keep": "none",
             "excluded_books": [b.pk for b in shelf[:5]]},
            follow=True,
        )  # fmt: skip
        profile = SharingProfile.objects.get(reader=alice)
        assert profile.discoverable
        assert not profile.excluded_books.exists()
        assert "No book is kept to yourself now." in response.content.decode()

    def test_an_unknown_keep_is_a_plain_save(self, alice: User, alice_client: Client) -> None:
        shelf = _shelf(alice, 3)
        response = alice_client.post(
            reverse("sharing_settings"),
            {"discoverable": "on", "display_name": "Alice", "keep": "bogus",
             "excluded_books": [shelf[0].pk]},
            follow=True,
        )  # fmt: skip
        profile = SharingProfile.objects.get(reader=alice)
        assert list(profile.excluded_books.all()) == [shelf[0]]
        page = response.content.decode()
        assert "No book is kept to yourself now." not in page
        assert "All your books are kept to yourself now." not in page

    def test_keeping_all_needs_the_page_to_be_valid(
        self, alice: User, alice_client: Client
    ) -> None:
        _shelf(alice, 3)
        response = alice_client.post(
            reverse("sharing_settings"), {"discoverable": "on", "keep": "all"}
        )
        assert response.status_code == 200
        assert "Choose a display name" in response.content.decode()
        assert not SharingProfile.objects.filter(reader=alice, excluded_books__isnull=False)

    def test_it_says_so_in_spanish(self, alice: User, alice_client: Client) -> None:
        _shelf(alice, 20)
        alice.language = "es"
        alice.save(update_fields=["language"])
        page = alice_client.get(reverse("sharing_settings")).content.decode()
        assert "te guardas 0 de 20 libros" in page
        assert "Guárdatelos todos para ti" in page
        assert "No te guardes ninguno" in page
        response = alice_client.post(
            reverse("sharing_settings"), {"display_name": "Alice", "keep": "all"}, follow=True
        )
        assert "Ahora te guardas todos tus libros para ti." in response.content.decode()


@pytest.mark.django_db
class KindredPageTests:
    def test_it_sends_an_anonymous_visitor_to_log_in(self, client: Client) -> None:
        response = client.get(reverse("kindred"))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))

    def test_it_sends_a_reader_who_does_not_share_to_the_sharing_page(
        self, alice_client: Client
    ) -> None:
        response = alice_client.get(reverse("kindred"), follow=True)
        assert response.redirect_chain == [(reverse("sharing_settings"), 302)]
        assert "Turn sharing on first" in response.content.decode()

    def test_it_says_why_a_small_library_has_no_kindred_readers(
        self, alice: User, alice_client: Client
    ) -> None:
        rng = np.random.default_rng(41)
        library(alice, direction(rng), rng, count=12)
        share(alice, "Alice")
        centroid_refresh(reader=alice)
        content = alice_client.get(reverse("kindred")).content.decode()
        assert "at least 20 embedded highlights" in content
        assert "You have 12 so far: 8 more to go." in content

    def test_it_counts_embedded_highlights_before_the_centroid_is_refreshed(
        self, alice: User, alice_client: Client
    ) -> None:
        # The vectors landed; the background refresh of the centroid has not run yet.
        rng = np.random.default_rng(43)
        share(alice, "Alice")
        library(alice, direction(rng), rng, count=12)
        content = alice_client.get(reverse("kindred")).content.decode()
        assert "You have 12 so far: 8 more to go." in content
        assert ReaderCentroid.objects.get(reader=alice).highlight_count == 0

    def test_it_works_out_a_lagging_place_when_the_page_is_opened(
        self, alice: User, bob: User, alice_client: Client
    ) -> None:
        """Two readers turned sharing on before their highlights were embedded; the
        refreshes queued when the vectors landed waited behind another reader's embedding,
        and the page said "Reload this page in a minute" for eight minutes."""
        rng = np.random.default_rng(43)
        centre = direction(rng)
        share(alice, "Alice")
        share(bob, "Bob")
        library(alice, centre, rng, count=24)
        library(bob, centre, rng, count=24)
        # alice's own place is worked out as she opens the page; bob's refresh still waits.
        response = alice_client.get(reverse("kindred"))
        assert ReaderCentroid.objects.get(reader=alice).highlight_count == 24
        content = response.content.decode()
        assert "being worked out now" not in content
        assert "No other reader shares their reading yet." not in content
        assert "1 other reader shares their reading, but where it sits is not worked out" in (
            content
        )
        # As bob opens his page, his place is worked out too: each finds the other.
        bobs = _client(bob).get(reverse("kindred"))
        assert [k.profile.display_name for k in bobs.context["kindred"]] == ["Alice"]
        again = alice_client.get(reverse("kindred"))
        assert [k.profile.display_name for k in again.context["kindred"]] == ["Bob"]

    def test_it_places_a_pair_among_every_pair_of_sharing_readers(
        self, alice: User, alice_client: Client
    ) -> None:
        """Every centroid points nearly the same way (cosines above 0.9, as e5's do): the
        page says how a pair ranks among all pairs, never a cosine as "99% alike"."""
        rng = np.random.default_rng(44)
        common = direction(rng)
        mine = unit(common + 0.3 * direction(rng))
        library(alice, mine, rng, noise=0.2)
        share(alice, "Alice")
        centroid_refresh(reader=alice)
        twin = reader("twin")
        library(twin, mine, rng, noise=0.2)
        share(twin, "Twin")
        centroid_refresh(reader=twin)
        for i in range(5):
            other = reader(f"other{i}")
            library(other, unit(common + 0.3 * direction(rng)), rng, noise=0.2)
            share(other, f"Other {i}")
            centroid_refresh(reader=other)
        vectors = np.asarray([c.vector for c in ReaderCentroid.objects.all()], dtype=np.float64)
        assert (vectors @ vectors.T).min() > 0.85  # every pair "85% alike" or more
        response = alice_client.get(reverse("kindred"))
        found = {k.profile.display_name: k.closer_than for k in response.context["kindred"]}
        # 7 readers, 21 pairs: alice and her twin are the closest of them all.
        assert found["Twin"] == round(100 * 20 / 21)
        assert min(found.values()) < 50
        content = response.content.decode()
        assert "Closer than 95% of pairs of readers here" in content
        assert "% alike" not in content

    def test_it_lists_sharing_readers_with_what_bridges_them(
        self, alice_client: Client, circle: dict[str, Any]
    ) -> None:
        response = alice_client.get(reverse("kindred"))
        content = response.content.decode()
        names = [k.profile.display_name for k in response.context["kindred"]]
        assert sorted(names) == ["Bob B.", "Carol C."]
        assert "Bob&#x27;s Aleph passage" in content
        # Three sharing readers make three pairs: too few to place a pair among them.
        assert "too few readers share yet to say how close" in content
        assert "% alike" not in content
        # Judged as a connection would be: the Aleph pair (cosine 0.99, one names a number,
        # the other none) is shown with its strength; the pairs around the centre, which
        # the judge does not call related, are not shown at all (nor a cosine as "% alike").
        assert content.count('class="strength strength-') == 1
        assert content.count('class="pair-sides') == 1
        # never the reader who does not share, never an excluded book
        assert "dave" not in content.casefold()
        assert "A secret from the diary" not in content
        assert "Bob&#x27;s Diary" not in content

    def test_it_names_every_book_in_common_the_rest_behind_a_disclosure(
        self, alice: User, bob: User, alice_client: Client, circle: dict[str, Any]
    ) -> None:
        rng = np.random.default_rng(43)
        titles = [f"Shelf {letter}" for letter in "ABCDEFGHIJ"]  # the library's order
        for who in (alice, bob):
            for title in titles:
                highlights(book(who, title), near(direction(rng), 0.1, rng, 1))
        content = alice_client.get(reverse("kindred")).content.decode()
        inline, _, disclosed = content.partition('<details class="books-in-common meta">')
        assert "Books you both read: Shelf A, Shelf B" in inline
        assert "Shelf H" in inline
        assert "Shelf I" not in inline
        assert "<summary>and 2 more</summary>" in disclosed
        assert "<li>Shelf I</li><li>Shelf J</li>" in disclosed

    def test_it_says_how_many_passages_both_highlighted_word_for_word(
        self, alice: User, bob: User, alice_client: Client, circle: dict[str, Any]
    ) -> None:
        rng = np.random.default_rng(44)
        line = ["The sea is the same everywhere."]
        for who in (alice, bob):
            highlights(
                book(who, "The Sea", "Banville"), near(direction(rng), 0.1, rng, 1), texts=line
            )
        content = alice_client.get(reverse("kindred")).content.decode()
        assert "You both highlighted 1 passage word for word." in content
        # Bob's diary, kept from sharing, holds nothing in common whatever its text.
        highlights(circle["diary"], near(direction(rng), 0.1, rng, 1), texts=line)
        highlights(book(alice, "Bob's Diary"), near(direction(rng), 0.1, rng, 1), texts=line)
        content = alice_client.get(reverse("kindred")).content.decode()
        assert "You both highlighted 1 passage word for word." in content

    def test_it_runs_as_many_queries_for_five_readers_as_for_two(
        self,
        alice: User,
        alice_client: Client,
        circle: dict[str, Any],
        django_assert_num_queries: AssertQueries,
    ) -> None:
        with CaptureQueriesContext(connection) as few:
            response = alice_client.get(reverse("kindred"))
        assert len(response.context["kindred"]) == 2
        rng = np.random.default_rng(42)
        centre = np.asarray(ReaderCentroid.objects.get(reader=alice).vector)
        for i in range(3):
            more = reader(f"more{i}")
            library(more, centre, rng)
            share(more, f"More {i}")
            centroid_refresh(reader=more)
        # session, user, profile, centroid, the count that chooses the scan, nearest,
        # profiles, centroids, bridges, their texts for the pair judge, their highlights,
        # books in common, passages in common, every sharing reader's centroid (the spread
        # a pair is placed in)
        with django_assert_num_queries(14):
            response = alice_client.get(reverse("kindred"))
        assert len(response.context["kindred"]) == 5
        assert len(few) == 14


@pytest.mark.django_db
class ReaderProfilePageTests:
    def _url(self, who: User) -> str:
        return SharingProfile.objects.get(reader=who).get_absolute_url()

    def test_it_sends_an_anonymous_visitor_to_log_in(
        self, client: Client, bob: User, circle: dict[str, Any]
    ) -> None:
        response = client.get(self._url(bob))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))

    def test_it_shows_name_counts_and_top_books_only(
        self,
        alice_client: Client,
        bob: User,
        circle: dict[str, Any],
        django_assert_num_queries: AssertQueries,
    ) -> None:
        # session, user, viewer's profile and centroid, their profile, counts, top
        # books, the books, the distance
        url = self._url(bob)
        with django_assert_num_queries(10):  # and the spread of sharing readers
            response = alice_client.get(url)
        content = response.content.decode()
        assert "Bob B." in content
        assert ">25<" in content  # 24 + El Aleph; the diary is not counted
        assert "El Aleph" in content
        assert "alike to you" not in content  # a cosine near 1 for any two libraries
        for private in ("Bob&#x27;s Diary", "A secret from the diary", ">bob<", "Bob's Aleph"):
            assert private not in content

    def test_it_counts_looked_up_words_apart_from_highlights(
        self, alice_client: Client, bob: User, circle: dict[str, Any]
    ) -> None:
        aleph = bob.books.get(title="El Aleph")
        rng = np.random.default_rng(44)
        [word] = highlights(aleph, near(direction(rng), 0.1, rng, 1), texts=["zahir"])
        Highlight.objects.filter(pk=word.pk).update(is_word=True)
        content = alice_client.get(self._url(bob)).content.decode()
        assert '<span class="number">25</span><span class="label">highlights</span>' in content
        assert '<span class="number">1</span><span class="label">looked-up word</span>' in content

    def test_it_is_404_for_a_reader_who_does_not_share(
        self, alice_client: Client, circle: dict[str, Any]
    ) -> None:
        dave = SharingProfile.objects.create(reader=circle["dave"])
        assert alice_client.get(dave.get_absolute_url()).status_code == 404
        unknown = reverse("reader_profile", args=[uuid.uuid4()])
        assert alice_client.get(unknown).status_code == 404

    def test_it_is_hidden_from_a_reader_who_does_not_share(
        self, bob: User, circle: dict[str, Any]
    ) -> None:
        client = Client()
        client.login(username="dave", password=PASSWORD)
        response = client.get(self._url(bob))
        assert response.status_code == 302
        assert response["Location"] == reverse("sharing_settings")

    def test_it_disappears_when_its_reader_stops_sharing(
        self, alice_client: Client, bob: User, bob_client: Client, circle: dict[str, Any]
    ) -> None:
        url = self._url(bob)
        assert alice_client.get(url).status_code == 200
        bob_client.post(reverse("sharing_settings"), {"display_name": "Bob B."})
        assert alice_client.get(url).status_code == 404
        names = [
            k.profile.display_name for k in alice_client.get(reverse("kindred")).context["kindred"]
        ]
        assert names == ["Carol C."]

    def test_it_shows_a_reader_their_own_profile_as_others_see_it(
        self, alice: User, alice_client: Client, circle: dict[str, Any]
    ) -> None:
        content = alice_client.get(self._url(alice)).content.decode()
        assert "This is how other sharing readers see you." in content
        assert Highlight.objects.filter(reader=alice).count() == 25


@pytest.mark.django_db
class BridgeClampTests:
    def test_a_long_bridge_passage_is_clamped_with_a_way_to_read_it_all(
        self, alice: User, bob: User
    ) -> None:
        long_mine = " ".join(f"mine{i}" for i in range(600))
        long_theirs = " ".join(f"theirs{i}" for i in range(600))
        mine = Highlight(reader=alice, book=book(alice, "The Way of Zen"), text=long_mine)
        theirs = Highlight(reader=bob, book=book(bob, "Zen Mind"), text=long_theirs)
        bridge = SimpleNamespace(mine=mine, theirs=theirs, strength="related")
        relation = SimpleNamespace(
            bridges=[bridge],
            profile=SimpleNamespace(display_name="Bob"),
            passages_in_common=0,
            books_in_common=[],
        )
        html = render_to_string("affinity/_explanation.html", {"relation": relation})
        # Mine: the first 80 words, and a link to the whole on my highlight's page.
        assert "mine79" in html
        assert "mine80" not in html
        assert f'href="{mine.get_absolute_url()}" class="read-all">Read all</a>' in html
        # Theirs: the first 80 words in view, the rest behind a disclosure.
        shown, folded = html.split('<details class="read-all-theirs">')
        assert "theirs79" in shown
        assert "theirs80" not in shown
        assert "theirs599" in folded


@pytest.mark.django_db
class ProfileCountsTests:
    """Each count on a reader's profile is one phrase, its noun and participle agreeing
    with the number in both languages ("27 libros compartidos", not "libros compartido")."""

    def _cards(self, alice: User, books: int, highlights: int, language: str) -> str:
        request = RequestFactory().get("/")
        request.user = alice
        top = SimpleNamespace(
            book=SimpleNamespace(initial="F", title="Ficciones", authors_display=""),
            highlights=highlights,
        )
        public = SimpleNamespace(
            profile=SimpleNamespace(display_name="Ana"),
            books=books,
            highlights=highlights,
            words=0,
            top_books=[top],
        )
        with translation.override(language):
            html = render_to_string(
                "affinity/profile.html", {"public": public, "is_me": True}, request=request
            )
        return " ".join(re.sub(r"<[^>]+>", " ", html).split())

    @pytest.mark.parametrize(
        ("books", "highlights", "language", "said"),
        [
            (27, 1_234, "es", "27 libros compartidos 1 234 subrayados Libros más subrayados"),
            (
                1,
                1,
                "es",
                "1 libro compartido 1 subrayado Libros más subrayados F Ficciones 1 subrayado",
            ),
            (
                27,
                2,
                "en",
                "27 books shared 2 highlights Most highlighted books F Ficciones 2 highlights",
            ),
            (
                1,
                1,
                "en",
                "1 book shared 1 highlight Most highlighted books F Ficciones 1 highlight",
            ),
        ],
    )
    def test_it_agrees_with_the_number(
        self, alice: User, books: int, highlights: int, language: str, said: str
    ) -> None:
        assert said in self._cards(alice, books, highlights, language)
