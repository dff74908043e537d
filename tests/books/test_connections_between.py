"""A book page's "see pairs" for a connected book lists the pairs between the two books."""

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.connections.judge import judge_version
from books.models import Book, Connection, Highlight
from tests.books.library import book_of, highlight_in

MODEL = "test-model@00000000"


def _connect(a: Highlight, b: Highlight, distance: float = 0.05) -> None:
    """A pair the judge called related, as the worker stores it."""
    first, second = sorted((a, b), key=lambda h: h.pk)
    Connection.objects.create(
        reader_id=a.reader_id,
        highlight_a=first,
        highlight_b=second,
        distance=distance,
        probability=0.8,
        same_probability=0.1,
        strength=Connection.Strength.RELATED,
        judge_version=judge_version(),
        embedding_model=MODEL,
    )


@pytest.fixture
def shelf(alice: User) -> dict[str, Book]:
    habits = book_of(alice, "Atomic Habits", "James Clear")
    power = book_of(alice, "The Power of Habit", "Charles Duhigg")
    sea = book_of(alice, "The Sea Around Us", "Rachel Carson")
    cue = highlight_in(habits, "Every habit starts with a cue that tells you to act.", location=1)
    loop = highlight_in(power, "The habit loop is a cue, a routine and a reward.", location=2)
    tide = highlight_in(sea, "The tides follow the moon around the turning earth.", location=3)
    _connect(cue, loop)
    _connect(cue, tide, distance=0.06)
    return {"habits": habits, "power": power, "sea": sea}


@pytest.mark.django_db
class ConnectionsBetweenBooksTests:
    def test_it_links_each_connected_book_to_the_pairs_between_them(
        self, shelf: dict[str, Book], alice_client: Client
    ) -> None:
        habits, power = shelf["habits"], shelf["power"]
        page = alice_client.get(habits.get_absolute_url()).content.decode()
        expected = f"{reverse('connections')}?book={habits.code}&amp;other={power.code}"
        assert f'href="{expected}"' in page

    def test_it_lists_only_the_pairs_between_the_two_books(
        self, shelf: dict[str, Book], alice_client: Client
    ) -> None:
        habits, power = shelf["habits"], shelf["power"]
        url = reverse("connections")
        every = alice_client.get(url, {"book": str(habits.code)}).content.decode()
        assert "habit loop" in every
        assert "tides follow the moon" in every
        between = alice_client.get(url, {"book": str(habits.code), "other": str(power.code)})
        content = between.content.decode()
        assert "habit loop" in content
        assert "tides follow the moon" not in content
        assert "Pairs between" in content
        count = between.context["page"].paginator.count
        assert count >= 1
        assert f"· {count} pair{'s' if count > 1 else ''} ·" in content
        # Either book may be named first.
        reverse_order = alice_client.get(url, {"book": str(power.code), "other": str(habits.code)})
        assert "habit loop" in reverse_order.content.decode()

    def test_it_is_not_found_for_another_readers_book(
        self, shelf: dict[str, Book], bob: User, bob_client: Client
    ) -> None:
        mine = book_of(bob, "Bob's Book")
        response = bob_client.get(
            reverse("connections"), {"book": str(mine.code), "other": str(shelf["power"].code)}
        )
        assert response.status_code == 404

    def test_it_sends_the_same_book_twice_to_the_books_own_connections(
        self, shelf: dict[str, Book], alice_client: Client
    ) -> None:
        habits = str(shelf["habits"].code)
        url = reverse("connections")
        response = alice_client.get(
            url, {"book": habits, "other": habits, "strength": "related", "page": "2"}
        )
        assert response.status_code == 302
        assert response["Location"] == f"{url}?book={habits}&strength=related"
        page = alice_client.get(response["Location"]).content.decode()
        assert "Pairs between" not in page
        assert "habit loop" in page
        assert "tides follow the moon" in page

    def test_it_is_not_found_for_another_readers_book_alone(
        self, shelf: dict[str, Book], bob_client: Client
    ) -> None:
        response = bob_client.get(reverse("connections"), {"book": str(shelf["habits"].code)})
        assert response.status_code == 404

    def test_it_is_not_found_for_another_readers_book_twice(
        self, shelf: dict[str, Book], bob_client: Client
    ) -> None:
        theirs = str(shelf["habits"].code)
        response = bob_client.get(reverse("connections"), {"book": theirs, "other": theirs})
        assert response.status_code == 404

    def test_it_sends_anonymous_readers_to_log_in(
        self, shelf: dict[str, Book], client: Client
    ) -> None:
        response = client.get(
            reverse("connections"),
            {"book": str(shelf["habits"].code), "other": str(shelf["power"].code)},
        )
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class UnconnectedBookTests:
    """A book whose passages are embedded, and which connects to no other book, says so
    where the connected books would be, instead of leaving the reader to wonder; "yet" only
    while passages still wait to be embedded. A Portuguese book was told "No passage of this
    book connects to another book yet" with nothing left to embed anywhere."""

    def _novel(self, alice: User) -> Book:
        novel = book_of(alice, "Les vaisseaux du cœur", "Benoîte Groult")
        read = highlight_in(novel, "Je n'avais pas beaucoup fait l'amour dans ma vie.", location=1)
        Highlight.objects.filter(pk=read.pk).update(embedding_status=Highlight.EmbeddingStatus.DONE)
        return novel

    def _other_book(self, alice: User, *, done: bool) -> None:
        other = book_of(alice, "Walden", "Thoreau")
        passage = highlight_in(other, "Simplify, simplify, and live deliberately.", location=1)
        if done:
            Highlight.objects.filter(pk=passage.pk).update(
                embedding_status=Highlight.EmbeddingStatus.DONE
            )

    def test_with_nothing_waiting_it_says_none_is_close_enough_without_yet(
        self, alice: User, alice_client: Client
    ) -> None:
        novel = self._novel(alice)
        self._other_book(alice, done=True)
        page = alice_client.get(novel.get_absolute_url()).content.decode()
        assert (
            "No passage of this book connects to another book: none is close enough to a "
            "passage of your other books. Each passage\u2019s own page shows the nearest ones in "
            "your library." in " ".join(page.split())
        )
        assert "yet" not in page.split('class="muted unconnected"')[1].split("</p>")[0]

    def test_alone_in_the_library_it_says_there_is_nothing_to_compare(
        self, alice: User, alice_client: Client
    ) -> None:
        novel = self._novel(alice)
        page = alice_client.get(novel.get_absolute_url()).content.decode()
        said = page.split('class="muted unconnected"')[1].split("</p>")[0]
        assert (
            "No passage of this book connects to another book: your library has no other book "
            "with passages to compare." in said
        )
        assert "yet" not in said
        assert "nearest ones" not in said

    def test_alone_in_the_library_its_waiting_passages_bring_no_yet(
        self, alice: User, alice_client: Client
    ) -> None:
        # A library of one book whose other passages are pending was told "No passage of
        # this book connects to another book yet", as if another book were there.
        novel = self._novel(alice)
        highlight_in(novel, "Il faut apprendre à vivre avec ce que l'on a.", location=5)
        page = alice_client.get(novel.get_absolute_url()).content.decode()
        said = " ".join(page.split('class="muted unconnected"')[1].split("</p>")[0].split())
        assert (
            "No passage of this book connects to another book: your library has no other book "
            "with passages to compare." in said
        )
        assert "yet" not in said

    def test_alone_in_the_library_a_ready_passages_page_names_no_other_books(
        self, alice: User, alice_client: Client
    ) -> None:
        # Its page said "your other books have no passage to compare it with" with no other
        # book in the library.
        novel = self._novel(alice)
        passage = novel.highlights.get()
        page = " ".join(alice_client.get(passage.get_absolute_url()).content.decode().split())
        assert (
            "A connection joins passages from two different books, and your library has no "
            "other book with passages to compare it with." in page
        )
        assert "your other books" not in page

    def test_while_its_own_passages_wait_it_says_yet_and_how_many(
        self, alice: User, alice_client: Client
    ) -> None:
        novel = self._novel(alice)
        self._other_book(alice, done=True)
        highlight_in(novel, "Il faut apprendre à vivre avec ce que l'on a.", location=5)
        page = alice_client.get(novel.get_absolute_url()).content.decode()
        assert (
            "No passage of this book connects to another book yet: 1 of its passages is not "
            "ready for connections." in " ".join(page.split())
        )

    def test_while_other_books_wait_it_says_yet_and_how_many(
        self, alice: User, alice_client: Client
    ) -> None:
        novel = self._novel(alice)
        self._other_book(alice, done=False)
        page = alice_client.get(novel.get_absolute_url()).content.decode()
        assert (
            "No passage of this book connects to another book yet: 1 passage of your other "
            "books is not ready for connections." in " ".join(page.split())
        )

    def test_it_says_nothing_while_the_passages_wait_for_the_model(
        self, alice: User, alice_client: Client
    ) -> None:
        novel = book_of(alice, "Les vaisseaux du cœur", "Benoîte Groult")
        highlight_in(novel, "Je n'avais pas beaucoup fait l'amour dans ma vie.", location=1)
        page = alice_client.get(novel.get_absolute_url()).content.decode()
        assert "connects to another book yet" not in page

    def test_a_connected_book_lists_its_books_instead(
        self, shelf: dict[str, Book], alice_client: Client
    ) -> None:
        Highlight.objects.update(embedding_status=Highlight.EmbeddingStatus.DONE)
        page = alice_client.get(shelf["habits"].get_absolute_url()).content.decode()
        assert "Connects most to" in page
        assert "connects to another book yet" not in page

    def test_it_says_it_in_spanish(self, alice: User, alice_client: Client) -> None:
        alice.language = "es"
        alice.save(update_fields=["language"])
        novel = self._novel(alice)
        self._other_book(alice, done=True)
        page = " ".join(alice_client.get(novel.get_absolute_url()).content.decode().split())
        assert (
            "Ningún pasaje de este libro conecta con otro libro: ninguno se parece lo bastante "
            "a un pasaje de tus otros libros." in page
        )
        assert "todavía" not in page.split('class="muted unconnected"')[1].split("</p>")[0]
        highlight_in(novel, "Il faut apprendre à vivre avec ce que l'on a.", location=5)
        page = " ".join(alice_client.get(novel.get_absolute_url()).content.decode().split())
        assert (
            "Ningún pasaje de este libro conecta todavía con otro libro: 1 de sus pasajes aún "
            "no está listo para las conexiones." in page
        )
