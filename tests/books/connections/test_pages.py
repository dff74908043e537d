"""The pages read the judge's stored verdicts: an honest highlight page, at most three pairs
of two books on the feed and the connections page, and nobody else's pairs."""

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.connections.judge import judge_version
from books.connections.selectors import (
    FRESH_POOL,
    LONG_PASSAGE,
    PER_BOOK_PAIR,
    connections_page,
    fresh_connections,
    library_connections,
)
from books.connections.services import current_judge
from books.models import Book, Connection, Highlight
from books.services import highlight_delete

MODEL = "test-model@00000000"
RNG = np.random.default_rng(5)
STRENGTH = Connection.Strength


def _book(reader: User, title: str, authors: str) -> Book:
    return Book.objects.create(
        reader=reader, title=title, authors=authors, authors_normalized=authors.casefold(),
        key=f"{title}|{authors}".casefold(),
    )  # fmt: skip


def _highlight(reader: User, book: Book, text: str) -> Highlight:
    vector = RNG.normal(size=384)
    return Highlight.objects.create(
        reader=reader, book=book, text=text, dedupe_key=f"{book.pk}:{text}"[:64],
        embedding=(vector / np.linalg.norm(vector)).tolist(), embedding_model=MODEL,
        embedding_status=Highlight.EmbeddingStatus.DONE,
    )  # fmt: skip


def _pair(a: Highlight, b: Highlight, probability: float, strength: int) -> Connection:
    low, high = sorted((a, b), key=lambda h: h.pk)
    return Connection.objects.create(
        reader=a.reader, highlight_a=low, highlight_b=high, distance=0.1,
        probability=probability, same_probability=probability / 2, strength=strength,
        judge_version=judge_version(), embedding_model=MODEL,
    )  # fmt: skip


@pytest.fixture
def anger(alice: User) -> dict[str, Highlight]:
    """A passage on anger whose candidates the judge rated below *related*, and one on
    memory with a related pair."""
    calm = _book(alice, "Calm", "Hanh, Thich Nhat")
    seneca = _book(alice, "On Anger", "Seneca")
    myths = _book(alice, "Myths of Psychology", "Lilienfeld, Scott")
    rows = {
        "anger": _highlight(alice, calm, "Let anger pass like weather; do not feed it."),
        "seneca": _highlight(alice, seneca, "The greatest remedy for anger is delay."),
        "myth": _highlight(alice, myths, "The catharsis hypothesis is a myth."),
        "memory": _highlight(alice, calm, "Memory rebuilds what it keeps."),
        "remember": _highlight(alice, myths, "We rebuild each memory as we recall it."),
    }
    _pair(rows["anger"], rows["seneca"], 0.41, STRENGTH.NEARBY)
    _pair(rows["anger"], rows["myth"], 0.33, STRENGTH.NEARBY)
    _pair(rows["memory"], rows["remember"], 0.83, STRENGTH.RELATED)
    return rows


@pytest.mark.django_db
class HighlightPageTests:
    def test_it_shows_the_judges_best_candidates_with_what_it_thinks(
        self, anger: dict[str, Highlight], alice_client: Client
    ) -> None:
        content = alice_client.get(anger["anger"].get_absolute_url()).content.decode()
        assert "Nearest in your library" in content
        assert "The greatest remedy for anger is delay." in content
        assert "41% likely related" in content
        assert "33% likely related" in content
        # Never "no passage shares this idea" above what the judge rates: it says how
        # likely it thinks each one is.
        assert "shares this idea closely enough" not in content
        assert content.index("41% likely") < content.index("33% likely")
        # And what a connection needs, so a number under it reads as what it is.
        band = round(100 * current_judge().related_band)
        assert f"None is close enough to call a connection (that takes {band}% or more)" in content

    def test_a_candidate_just_under_the_band_never_reads_as_the_band(
        self, alice: User, anger: dict[str, Highlight], alice_client: Client
    ) -> None:
        band = current_judge().related_band
        near = _highlight(alice, _book(alice, "Choices", "Robbins"), "Commit to your decisions.")
        _pair(anger["anger"], near, band - 0.004, STRENGTH.NEARBY)
        content = alice_client.get(anger["anger"].get_absolute_url()).content.decode()
        assert f"{round(100 * band) - 1}% likely related" in content
        assert f"{round(100 * band)}% likely related" not in content

    def test_a_related_pair_is_a_connection_not_a_nearest(
        self, anger: dict[str, Highlight], alice_client: Client
    ) -> None:
        content = alice_client.get(anger["memory"].get_absolute_url()).content.decode()
        assert "<h3>Related</h3>" in content
        assert "We rebuild each memory as we recall it." in content
        assert "Nearest in your library" not in content

    def test_one_saying_in_two_books_is_read_once_and_the_other_book_named(
        self, alice: User, anger: dict[str, Highlight], alice_client: Client
    ) -> None:
        future = _highlight(alice, _book(alice, "Sayings", "Lincoln"), "Take it one day at a time.")
        einstein = _book(alice, "Collected Sayings", "Einstein, Albert")
        again = _book(alice, "Quotations, vol. 2", "Various")
        soon = _highlight(alice, einstein, "I never think of the future. It comes soon enough.")
        copy = _highlight(alice, again, "I never think of the future - it comes soon enough!")
        other = _highlight(alice, again, "The best way to predict the future is to create it.")
        _pair(future, soon, 0.84, STRENGTH.RELATED)
        _pair(future, copy, 0.82, STRENGTH.RELATED)
        _pair(future, other, 0.75, STRENGTH.RELATED)
        content = alice_client.get(future.get_absolute_url()).content.decode()
        assert content.count("I never think of the future") == 1
        assert "The best way to predict the future is to create it." in content
        assert "The same passage also in" in content
        assert f'href="{copy.get_absolute_url()}"' in content
        assert content.index("It comes soon enough.") < content.index("The same passage also in")

    def test_one_saying_in_nearly_the_same_words_is_read_once(
        self, alice: User, alice_client: Client
    ) -> None:
        gift = _highlight(
            alice, _book(alice, "Sayings, vol. 28", "Editor 225"),
            "When the world is so complicated, the simple gift of friendship is within reach.",
        )  # fmt: skip
        eleanor = _book(alice, "Collected Sayings", "Roosevelt, Eleanor")
        first = _highlight(
            alice,
            eleanor,
            "Friendship with oneself is all important, because "
            "without it one cannot be friends with anyone else in the world.",
        )
        again = _highlight(
            alice,
            eleanor,
            "Friendship with oneself is all important because "
            "without it one cannot be friends with anybody else in the world.",
        )
        round_ = _highlight(alice, _book(alice, "Sayings, vol. 7", "Editor 204"),
                            "The world is round so that friendship may encircle it.")  # fmt: skip
        _pair(gift, first, 0.84, STRENGTH.RELATED)
        _pair(gift, again, 0.83, STRENGTH.RELATED)
        _pair(gift, round_, 0.80, STRENGTH.RELATED)
        content = alice_client.get(gift.get_absolute_url()).content.decode()
        assert content.count("Friendship with oneself is all important") == 1
        assert "The world is round so that friendship may encircle it." in content
        assert f'href="{again.get_absolute_url()}"' in content
        assert content.index("with anyone else") < content.index("The same passage also in")

    def test_a_saying_and_its_negation_are_two_passages(
        self, alice: User, alice_client: Client
    ) -> None:
        mine = _highlight(alice, _book(alice, "Essays", "Montaigne"), "We choose our joys.")
        said = "Happiness is a choice that we make every day of our lives."
        denied = "Happiness is not a choice that we make every day of our lives."
        _pair(mine, _highlight(alice, _book(alice, "A", "Author A"), said), 0.84, STRENGTH.RELATED)
        _pair(mine, _highlight(alice, _book(alice, "B", "Author B"), denied), 0.8, STRENGTH.RELATED)
        content = alice_client.get(mine.get_absolute_url()).content.decode()
        assert said in content
        assert denied in content
        assert "The same passage also in" not in content

    def test_a_connection_is_never_folded_under_a_candidate_of_another_list(
        self, alice: User, alice_client: Client
    ) -> None:
        mine = _highlight(alice, _book(alice, "On Anger", "Seneca"), "Anger is brief madness.")
        nearby = "Anger is a brief madness that ruins the one who feels it, and others too."
        kin = "Anger is a brief madness that ruins the one who feels it, and the others too."
        _pair(mine, _highlight(alice, _book(alice, "Sayings", "Editor 1"), nearby), 0.3,
              STRENGTH.NEARBY)  # fmt: skip
        _pair(mine, _highlight(alice, _book(alice, "Letters", "Seneca"), kin), 0.8,
              STRENGTH.RELATED)  # fmt: skip
        found = alice_client.get(mine.get_absolute_url()).context["connections"]
        assert [c.highlight.text for c in found.same_author] == [kin]
        assert [c.highlight.text for c in found.nearest] == [nearby]
        assert not found.nearest[0].copies

    def test_with_no_judged_candidate_it_says_the_nearest_are_unweighed(
        self, alice: User, anger: dict[str, Highlight], alice_client: Client
    ) -> None:
        alone = _highlight(alice, _book(alice, "Gardening", "Lloyd"), "Prune roses in March.")
        content = alice_client.get(alone.get_absolute_url()).content.decode()
        assert "Exogram has not yet weighed how related they are" in content
        assert "likely related" not in content

    def test_alone_in_the_library_it_says_so_without_yet(
        self, alice: User, alice_client: Client
    ) -> None:
        # "Yet" promised a connection with nothing left to embed that could bring one.
        alone = _highlight(alice, _book(alice, "Gardening", "Lloyd"), "Prune roses in March.")
        content = " ".join(alice_client.get(alone.get_absolute_url()).content.decode().split())
        assert (
            "A connection joins passages from two different books, and your library has no "
            "other book with passages to compare it with." in content
        )
        assert "connects to this one yet" not in content
        assert "your other books" not in content

    def test_while_other_books_wait_it_says_yet_and_how_many(
        self, alice: User, alice_client: Client
    ) -> None:
        alone = _highlight(alice, _book(alice, "Gardening", "Lloyd"), "Prune roses in March.")
        waiting = _highlight(alice, _book(alice, "Anger", "Seneca"), "The remedy is delay.")
        Highlight.objects.filter(pk=waiting.pk).update(
            embedding_status=Highlight.EmbeddingStatus.PENDING
        )
        content = " ".join(alice_client.get(alone.get_absolute_url()).content.decode().split())
        assert (
            "No passage from another author connects to this one yet: 1 passage of your other "
            "books is not ready for connections." in content
        )
        spanish = alice_client.get(alone.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es-ES")
        assert (
            "Todavía ningún pasaje de otro autor conecta con este: 1 pasaje de tus otros libros "
            "aún no está listo para las conexiones." in " ".join(spanish.content.decode().split())
        )

    def test_it_is_404_for_another_reader_and_asks_a_stranger_to_log_in(
        self, anger: dict[str, Highlight], bob_client: Client, client: Client
    ) -> None:
        url = anger["anger"].get_absolute_url()
        assert bob_client.get(url).status_code == 404
        assert client.get(url).status_code == 302


@pytest.fixture
def echoes(alice: User) -> dict[str, Book]:
    """Two books by two authors that echo each other six times, and one more pair."""
    a = _book(alice, "How Not to Die", "Greger, Michael")
    b = _book(alice, "In Defense of Food", "Pollan, Michael")
    c = _book(alice, "Meditations", "Aurelius, Marcus")
    d = _book(alice, "Letters", "Seneca")
    for i in range(6):
        _pair(_highlight(alice, a, f"Eat plants, number {i}."),
              _highlight(alice, b, f"Mostly plants, number {i}."),
              0.9 - i / 100, STRENGTH.RELATED)  # fmt: skip
    obstacle = _highlight(alice, c, "The obstacle is the way.")
    _pair(obstacle, _highlight(alice, d, "Difficulties show men."), 0.7, STRENGTH.SAME_IDEA)
    return {"a": a, "b": b}


@pytest.mark.django_db
class PerBookPairTests:
    def test_the_feed_shows_at_most_three_pairs_of_two_books(
        self, alice: User, echoes: dict[str, Book]
    ) -> None:
        feed = fresh_connections(alice, limit=10)
        books = [tuple(sorted((p.highlight_a.book_id, p.highlight_b.book_id))) for p in feed]
        assert books.count(tuple(sorted((echoes["a"].pk, echoes["b"].pk)))) == PER_BOOK_PAIR
        assert len(feed) == PER_BOOK_PAIR + 1
        # The likeliest three of the six.
        assert sorted(round(p.probability, 2) for p in feed if p.probability > 0.8) == [
            0.88, 0.89, 0.9,
        ]  # fmt: skip

    def test_a_new_pair_of_two_books_with_three_older_better_ones_reaches_the_feed(
        self, alice: User, echoes: dict[str, Book]
    ) -> None:
        # The six pairs of a and b are a year old: out of the feed's pool of the newest.
        Connection.objects.update(created=timezone.now() - timedelta(days=365))
        for i in range(FRESH_POOL):  # newer, weaker pairs of other books fill the pool
            one = _book(alice, f"Filler {i}", f"Author {i}")
            two = _book(alice, f"Other filler {i}", f"Other author {i}")
            _pair(_highlight(alice, one, f"f{i}"), _highlight(alice, two, f"g{i}"), 0.2,
                  STRENGTH.RELATED)  # fmt: skip
        new = _pair(
            _highlight(alice, echoes["a"], "Beans, every day."),
            _highlight(alice, echoes["b"], "Eat food, not too much."),
            0.5,
            STRENGTH.RELATED,
        )
        assert [pair.pk for pair in fresh_connections(alice, limit=1)] == [new.pk]

    def test_the_feed_shows_each_passage_in_one_pair_only(
        self, alice: User, alice_client: Client
    ) -> None:
        socrates = _book(alice, "Dichos de Sócrates", "Sócrates")
        isocrates = _book(alice, "Sayings", "Isocrates")
        kin = _highlight(alice, socrates, "Sólo el conocimiento que llega desde dentro.")
        for i, text in enumerate(["True knowledge is knowing nothing.", "Wisdom knows nothing."]):
            _pair(kin, _highlight(alice, isocrates, text), 0.9 - i / 10, STRENGTH.RELATED)
        rule = _highlight(alice, isocrates, "Rule your pleasures.")
        _pair(rule, _highlight(alice, socrates, "Domina tus placeres."), 0.6, STRENGTH.RELATED)
        feed = alice_client.get(reverse("home")).context["fresh_connections"]
        assert [round(pair.probability, 1) for pair in feed] == [0.9, 0.6]
        sides = [h for pair in feed for h in (pair.highlight_a_id, pair.highlight_b_id)]
        assert len(sides) == len(set(sides))

    def test_the_connections_page_shows_at_most_three_and_a_book_shows_all(
        self, echoes: dict[str, Book], alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("connections")).context["page"]
        assert len(page.object_list) == PER_BOOK_PAIR + 1
        assert page.paginator.count == PER_BOOK_PAIR + 1
        of_book = alice_client.get(reverse("connections"), {"book": str(echoes["a"].code)})
        assert len(of_book.context["page"].object_list) == 6

    def test_a_deleted_passage_among_the_three_gives_its_place_to_the_next_pair(
        self, alice: User, echoes: dict[str, Book], alice_client: Client
    ) -> None:
        likeliest = echoes["a"].highlights.get(text="Eat plants, number 0.")
        highlight_delete(highlight=likeliest)
        Highlight.objects.filter(text="Mostly plants, number 1.").update(is_word=True)
        page = alice_client.get(reverse("connections")).context["page"]
        shown = sorted(round(p.probability, 2) for p in page.object_list if p.probability > 0.8)
        assert shown == [0.86, 0.87, 0.88]
        assert page.paginator.count == PER_BOOK_PAIR + 1

    def test_the_related_filter_keeps_three_of_two_books(
        self, echoes: dict[str, Book], alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("connections"), {"strength": "related"}).context["page"]
        assert [round(p.probability, 2) for p in page.object_list] == [0.9, 0.89, 0.88]

    def test_a_books_pairs_show_its_passage_first(
        self, echoes: dict[str, Book], alice_client: Client
    ) -> None:
        a, b = echoes["a"], echoes["b"]
        for chosen, other, first_words in ((a, b, "Eat plants"), (b, a, "Mostly plants")):
            for query in (
                {"book": str(chosen.code)},
                {"book": str(chosen.code), "other": str(other.code)},
            ):
                page = alice_client.get(reverse("connections"), query)
                pairs = page.context["page"].object_list
                assert len(pairs) == 6
                assert {p.highlight_a.book_id for p in pairs} == {chosen.pk}
                html = page.content.decode()
                for pair in pairs:
                    assert html.index(pair.highlight_a.text) < html.index(pair.highlight_b.text)
                assert all(p.highlight_a.text.startswith(first_words) for p in pairs)

    def test_pages_of_two_hold_the_first_page_order_and_the_cap(
        self,
        alice: User,
        echoes: dict[str, Book],
        django_assert_num_queries: Callable[..., AbstractContextManager[object]],
    ) -> None:
        # Ordered and capped over the pairs' ids, then each page's pairs read whole.
        hub = _highlight(alice, _book(alice, "Indistractable", "Eyal, Nir"), "x " * 600)
        _pair(hub, _highlight(alice, echoes["a"], "Habits shape the day."), 0.99, STRENGTH.RELATED)
        pairs = library_connections(alice, per_book_pair=PER_BOOK_PAIR)
        whole = [pair.pk for pair in pairs]
        assert len(whole) == PER_BOOK_PAIR + 2
        paged = []
        for number in (1, 2, 3):
            page = connections_page(alice, number, per_page=2, per_book_pair=PER_BOOK_PAIR)
            assert page.paginator.count == len(whole)
            with django_assert_num_queries(0):  # each pair read whole, with its books
                assert all(p.highlight_a.book.title and p.highlight_b.book.title for p in page)
            paged += [pair.pk for pair in page.object_list]
        assert paged == whole
        last = connections_page(alice, 3, per_page=2, per_book_pair=PER_BOOK_PAIR)
        assert last.object_list[-1].long_side

    def test_a_chapter_summary_comes_after_the_passages_and_is_cut_short(
        self, alice: User, echoes: dict[str, Book], alice_client: Client
    ) -> None:
        summary = " ".join(f"Chapter {i}: on habits, goals, focus and time." for i in range(40))
        assert len(summary) > LONG_PASSAGE
        hub = _highlight(alice, _book(alice, "Indistractable", "Eyal, Nir"), summary)
        _pair(hub, _highlight(alice, echoes["a"], "Habits shape the day."), 0.99, STRENGTH.RELATED)
        response = alice_client.get(reverse("connections"))
        pairs = list(response.context["page"].object_list)
        # However likely, after the pairs of passages.
        assert summary in (pairs[-1].highlight_a.text, pairs[-1].highlight_b.text)
        assert pairs[-1].long_side
        assert not any(p.long_side for p in pairs[:-1])
        content = response.content.decode()
        assert summary not in content
        assert "Chapter 0: on habits, goals, focus and time. Chapter 1:" in content
        assert "Read all" in content

    def test_the_page_filters_by_strength(
        self, echoes: dict[str, Book], alice_client: Client
    ) -> None:
        same = alice_client.get(reverse("connections"), {"strength": "same"}).context["page"]
        assert [p.probability for p in same.object_list] == [0.7]
        assert all(p.same_idea for p in same.object_list)

    def test_another_reader_sees_none_of_them(
        self, echoes: dict[str, Book], bob_client: Client, client: Client
    ) -> None:
        response = bob_client.get(reverse("connections"))
        assert list(response.context["page"].object_list) == []
        assert (
            bob_client.get(reverse("connections"), {"book": str(echoes["a"].code)}).status_code
            == 404
        )
        assert client.get(reverse("connections")).status_code == 302


@pytest.fixture
def many_pairs(alice: User) -> int:
    """Thirty pairs over ten pairs of books by different authors: two pages of 25."""
    books = [_book(alice, f"Book {i}", f"Author {i}") for i in range(11)]
    for i in range(10):
        for j in range(PER_BOOK_PAIR):
            a = _highlight(alice, books[i], f"Passage {j} of book {i}, on one theme.")
            b = _highlight(alice, books[i + 1], f"Passage {j} of book {i + 1}, on the same.")
            _pair(a, b, 0.9 - i / 100 - j / 1000, STRENGTH.RELATED)
    return 10 * PER_BOOK_PAIR


@pytest.mark.django_db
class ConnectionsPagingTests:
    @pytest.mark.parametrize("number", ["0", "-1", "-999", "abc", ""])
    def test_a_page_below_the_first_or_no_number_is_the_first(
        self, number: str, many_pairs: int, alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("connections"), {"page": number}).context["page"]
        assert (page.number, page.paginator.num_pages) == (1, 2)

    @pytest.mark.parametrize("number", ["2", "3", "99999999999999999999"])
    def test_a_page_past_the_last_is_the_last(
        self, number: str, many_pairs: int, alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("connections"), {"page": number}).context["page"]
        assert page.number == 2
        assert len(page.object_list) == many_pairs - 25


def _page_queries(client: Client, query: dict[str, str]) -> list[str]:
    """The queries of the page, its book choices already kept (books.choices)."""
    client.get(reverse("connections"), query)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("connections"), query)
    assert response.status_code == 200
    return [q["sql"] for q in captured.captured_queries]


@pytest.mark.django_db
class ConnectionsPageReadsTests:
    """What the page reads: a fixed number of queries whatever its pairs, the per-book-pair
    selection once, the pairs of the books asked for, and never another reader's."""

    @pytest.mark.parametrize("query", [{}, {"strength": "related"}, {"page": "2"}])
    def test_a_fixed_number_of_queries_whatever_the_pairs(
        self, query: dict[str, str], alice: User, echoes: dict[str, Book], alice_client: Client
    ) -> None:
        few = _page_queries(alice_client, query)
        books = [_book(alice, f"Book {i}", f"Author {i}") for i in range(11)]
        for i in range(10):
            for j in range(4):
                a = _highlight(alice, books[i], f"Passage {j} of book {i}, towards the next.")
                b = _highlight(alice, books[i + 1], f"Passage {j} of book {i + 1}, back.")
                _pair(a, b, 0.8 - j / 100, STRENGTH.RELATED)
        many = _page_queries(alice_client, query)
        assert len(many) == len(few)
        # The per-book-pair selection (a recursive walk of the index) runs once: the page's
        # pairs are then read by their ids.
        assert [sql.count("WITH RECURSIVE") for sql in many if "WITH RECURSIVE" in sql] == [1]
        page = alice_client.get(reverse("connections"), query).context["page"]
        # Three of each of eleven pairs of books, and the same idea of two more.
        same_idea = 0 if query.get("strength") == "related" else 1
        assert page.paginator.count == 11 * PER_BOOK_PAIR + same_idea

    def test_a_books_list_reads_a_fixed_number_of_queries(
        self, alice: User, echoes: dict[str, Book], alice_client: Client
    ) -> None:
        query = {"book": str(echoes["a"].code)}
        few = _page_queries(alice_client, query)
        other = _book(alice, "Food Rules", "Pollan, Michael")
        for i in range(30):
            greens = _highlight(alice, echoes["a"], f"Greens, number {i}.")
            _pair(greens, _highlight(alice, other, f"Leaves, number {i}."), 0.8, STRENGTH.RELATED)
        assert len(_page_queries(alice_client, query)) == len(few)

    def test_two_books_show_only_their_pairs(
        self, alice: User, echoes: dict[str, Book], alice_client: Client
    ) -> None:
        a, b = echoes["a"], echoes["b"]
        other = _book(alice, "Food Rules", "Pollan, Michael")
        greens = _highlight(alice, a, "Greens first.")
        elsewhere = _pair(greens, _highlight(alice, other, "Leaves first."), 0.95, STRENGTH.RELATED)
        of_a = alice_client.get(reverse("connections"), {"book": str(a.code)}).context["page"]
        assert elsewhere in of_a.object_list
        assert len(of_a.object_list) == 7
        for chosen, paired in ((a, b), (b, a)):
            query = {"book": str(chosen.code), "other": str(paired.code)}
            page = alice_client.get(reverse("connections"), query).context["page"]
            assert page.paginator.count == 6
            assert {(p.highlight_a.book_id, p.highlight_b.book_id) for p in page} == {
                (chosen.pk, paired.pk)
            }
            # Most probable first, all six (a book's own list is not capped).
            assert [round(p.probability, 2) for p in page] == [0.9, 0.89, 0.88, 0.87, 0.86, 0.85]

    @pytest.mark.parametrize(
        "query", [{}, {"strength": "related"}, {"strength": "same"}, {"page": "2"}]
    )
    def test_another_readers_pairs_never_show(
        self,
        query: dict[str, str],
        alice: User,
        bob: User,
        echoes: dict[str, Book],
        alice_client: Client,
        bob_client: Client,
    ) -> None:
        # Bob's pairs are likelier than any of Alice's, of both strengths, some between
        # books of the same titles and authors as hers.
        bobs = [_book(bob, "How Not to Die", "Greger, Michael"),
                _book(bob, "In Defense of Food", "Pollan, Michael"),
                _book(bob, "Walden", "Thoreau")]  # fmt: skip
        for i, (one, two) in enumerate([(0, 1), (0, 2), (1, 2)] * 2):
            _pair(_highlight(bob, bobs[one], f"Bob's passage {i}."),
                  _highlight(bob, bobs[two], f"Bob's other passage {i}."),
                  0.99 - i / 100, STRENGTH.SAME_IDEA if i % 2 else STRENGTH.RELATED)  # fmt: skip
        for reader, client in ((alice, alice_client), (bob, bob_client)):
            page = client.get(reverse("connections"), query).context["page"]
            assert page.object_list
            assert {p.reader_id for p in page} == {reader.pk}
            sides = {h.reader_id for p in page for h in (p.highlight_a, p.highlight_b)}
            assert sides == {reader.pk}
        shown = alice_client.get(reverse("connections"), {"strength": "related"}).context["page"]
        assert [round(p.probability, 2) for p in shown] == [0.9, 0.89, 0.88]


SPANISH = {"Accept-Language": "es"}


@pytest.fixture
def quoted_twice(alice: User) -> Connection:
    """One saying in two anthologies by two editors: a near copy the judge called related."""
    first = _book(alice, "An Anthology of Sayings, vol. 12", "Editor, First")
    second = _book(alice, "An Anthology of Sayings, vol. 15", "Editor, Second")
    pair = _pair(
        _highlight(alice, first, "Yesterday is history, tomorrow is a mystery, today is a gift."),
        _highlight(alice, second, "Yesterday is history. Tomorrow is a mystery. Today is a gift."),
        0.8, STRENGTH.RELATED,
    )  # fmt: skip
    Connection.objects.filter(pk=pair.pk).update(wording_shared=0.9)
    return pair


@pytest.mark.django_db
class NearCopyTests:
    """A pair that is one passage in both books is shown as that, not as related or the same
    idea beside words that say it is a copy."""

    @pytest.mark.parametrize("page", ["connections", "home"])
    def test_its_badge_names_it_the_same_passage(
        self, page: str, quoted_twice: Connection, alice_client: Client
    ) -> None:
        content = alice_client.get(reverse(page)).content.decode()
        assert '<span class="strength strength-copy">Same passage</span>' in content
        assert "nearly word for word in both books" in content
        assert 'class="strength strength-related"' not in content

    def test_a_pair_of_two_passages_keeps_its_strength(
        self, quoted_twice: Connection, alice_client: Client
    ) -> None:
        Connection.objects.filter(pk=quoted_twice.pk).update(wording_shared=0.4)
        content = alice_client.get(reverse("connections")).content.decode()
        assert '<span class="strength strength-related">Related</span>' in content
        assert "Same passage" not in content
        assert "word for word" not in content

    def test_it_reads_in_spanish(self, quoted_twice: Connection, alice_client: Client) -> None:
        content = alice_client.get(reverse("connections"), headers=SPANISH).content.decode()
        assert '<span class="strength strength-copy">El mismo pasaje</span>' in content
        assert "casi palabra por palabra en los dos libros" in content
        assert "Relacionados</span>" not in content

    def test_the_page_says_such_pairs_come_last(self, alice_client: Client) -> None:
        english = alice_client.get(reverse("connections")).content.decode()
        assert "the same passage quoted in two books comes last" in english
        spanish = alice_client.get(reverse("connections"), headers=SPANISH).content.decode()
        assert "un mismo pasaje citado en dos libros va al final" in spanish


@pytest.mark.django_db
class EmptyConnectionsPageTests:
    """An empty connections page says which case it is: it told a reader with 11 books
    read and no pair that connections come "once highlights from at least two books have
    been read"."""

    def _empty(self, client: Client, *, said: str = "No connections yet.") -> str:
        response = client.get(reverse("connections"))
        assert response.context["page"].paginator.count == 0
        content: str = response.content.decode()
        assert f"<strong>{said}</strong>" in content
        assert "at least two books" not in content
        return content

    def test_with_nothing_imported_it_says_to_import(self, alice_client: Client) -> None:
        assert "Import your highlights" in self._empty(alice_client)

    def test_with_nothing_read_yet_it_says_how_many_wait(
        self, alice: User, alice_client: Client
    ) -> None:
        for text in ("Let anger pass like weather.", "The remedy for anger is delay."):
            waiting = _highlight(alice, _book(alice, text[:10], "Seneca"), text)
            Highlight.objects.filter(pk=waiting.pk).update(
                embedding_status=Highlight.EmbeddingStatus.PENDING
            )
        content = self._empty(alice_client)
        assert "None of your highlights is ready for connections yet: 2 are waiting" in content

    def test_with_one_book_read_it_says_a_connection_needs_two(
        self, alice: User, alice_client: Client
    ) -> None:
        calm = _book(alice, "Calm", "Hanh, Thich Nhat")
        _highlight(alice, calm, "Let anger pass like weather.")
        _highlight(alice, calm, "Breathe in, and know you breathe in.")
        content = self._empty(alice_client)
        assert (
            "Your highlights are all from one book, and a connection joins passages from two "
            "different books." in content
        )
        assert "not ready" not in content

    def test_with_one_book_waiting_it_says_a_connection_needs_two_not_when_ready(
        self, alice: User, alice_client: Client
    ) -> None:
        # A library of one book whose passages were pending was told "Connections appear here
        # as your highlights get ready", as if another book were there; part ready, "Only one
        # book has highlights ready for connections so far".
        calm = _book(alice, "Calm", "Hanh, Thich Nhat")
        _highlight(alice, calm, "Let anger pass like weather.")
        waiting = _highlight(alice, calm, "Breathe in, and know you breathe in.")
        Highlight.objects.filter(pk=waiting.pk).update(
            embedding_status=Highlight.EmbeddingStatus.PENDING
        )
        one_book = (
            "Your highlights are all from one book, and a connection joins passages from two "
            "different books."
        )
        content = " ".join(self._empty(alice_client).split())
        assert f"{one_book} 1 of them is not ready for connections yet." in content
        assert "so far" not in content
        Highlight.objects.filter(book=calm).update(
            embedding_status=Highlight.EmbeddingStatus.PENDING
        )
        content = " ".join(self._empty(alice_client).split())
        assert f"{one_book} 2 of them are not ready for connections yet." in content
        assert "appear here as your highlights get ready" not in content
        spanish = alice_client.get(reverse("connections"), headers=SPANISH).content.decode()
        assert (
            "Todos tus subrayados son de un solo libro, y una conexión une pasajes de dos libros "
            "distintos. 2 de ellos aún no están listos para las conexiones."
        ) in " ".join(spanish.split())

    def test_with_some_still_waiting_it_says_yet(self, alice: User, alice_client: Client) -> None:
        _highlight(alice, _book(alice, "Calm", "Hanh"), "Let anger pass like weather.")
        _highlight(alice, _book(alice, "Garden", "Lloyd"), "Prune roses in March.")
        waiting = _highlight(alice, _book(alice, "Anger", "Seneca"), "The remedy is delay.")
        Highlight.objects.filter(pk=waiting.pk).update(
            embedding_status=Highlight.EmbeddingStatus.PENDING
        )
        content = " ".join(self._empty(alice_client).split())
        assert (
            "Highlights from 2 books are ready for connections, and no two passages are close "
            "enough to connect yet. 1 more highlight is not ready yet." in content
        )

    def test_a_passage_that_failed_is_not_said_to_be_coming(
        self, alice: User, alice_client: Client
    ) -> None:
        # A failed passage is not retried: "not ready yet" said of it stayed forever.
        _highlight(alice, _book(alice, "Calm", "Hanh"), "Let anger pass like weather.")
        _highlight(alice, _book(alice, "Garden", "Lloyd"), "Prune roses in March.")
        failed = _highlight(alice, _book(alice, "Anger", "Seneca"), "The remedy is delay.")
        Highlight.objects.filter(pk=failed.pk).update(
            embedding_status=Highlight.EmbeddingStatus.FAILED, embedding_error="too long"
        )
        content = " ".join(self._empty(alice_client, said="No connections.").split())
        assert "yet" not in content.split("No connections.")[1].split("</main>")[0]

    def test_with_all_read_and_no_pair_it_says_so_and_points_to_the_nearest(
        self, alice: User, alice_client: Client
    ) -> None:
        _highlight(alice, _book(alice, "Calm", "Hanh"), "Let anger pass like weather.")
        garden = _highlight(alice, _book(alice, "Garden", "Lloyd"), "Prune roses in March.")
        # Nothing waits: no "yet", which promised a connection to come.
        content = self._empty(alice_client, said="No connections.")
        assert (
            "All your highlights, from 2 books, are ready for connections, and no two passages "
            "are close enough to connect." in content
        )
        assert "No connections yet." not in content
        assert "passages nearest to it in your other books" in content
        assert f'href="{garden.get_absolute_url()}"' in content
