"""Cached reads of a library (books.library_cache) and the pages that use them: a change
shows when it should, another reader never sees them, the queries stay few."""

from collections.abc import Callable
from io import StringIO

import numpy as np
import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.connections.services import highlights_connect
from books.importing.services import clippings_import
from books.library_cache import (
    BACKGROUND_LAG,
    LibraryCache,
    library_background_bump,
    library_version_bump,
    library_versions,
)
from books.models import Book, Highlight
from books.tasks import embed_highlights
from tests.books.kindle import BORGES, Entry, clippings_file
from tests.books.library import listed_books
from tests.theme_vectors import theme_of

MODEL = "test-model@00000000"
RNG = np.random.default_rng(19)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Counted:
    """A read that says how often it ran."""

    def __init__(self, value: object) -> None:
        self.value = value
        self.runs = 0

    def __call__(self) -> object:
        self.runs += 1
        return self.value


def _unit(vector: np.ndarray) -> list[float]:
    return (vector / np.linalg.norm(vector)).astype(np.float32).tolist()


def _book(reader: User, title: str, authors: str) -> Book:
    return Book.objects.create(
        reader=reader, title=title, authors=authors, authors_normalized=authors.casefold(),
        key=f"{title}|{authors}".casefold(),
    )  # fmt: skip


def _highlight(reader: User, book: Book, text: str, vector: list[float]) -> Highlight:
    return Highlight.objects.create(
        reader=reader, book=book, text=text, dedupe_key=f"{book.pk}:{text}",
        embedding=vector, theme_embedding=theme_of(vector), embedding_model=MODEL,
        embedding_status=Highlight.EmbeddingStatus.DONE,
    )  # fmt: skip


@pytest.fixture
def connected(alice: User) -> dict[str, Highlight]:
    """Three passages on memory in three books by three authors: three pairs."""
    memory = RNG.normal(size=384)
    rows = {
        name: _highlight(
            alice,
            _book(alice, title, author),
            text,
            _unit(memory + RNG.normal(scale=0.03, size=384)),
        )
        for name, title, author, text in [
            ("funes", "Ficciones", "Borges, Jorge Luis", "Funes remembered everything."),
            ("sacks", "The Man Who Mistook His Wife", "Sacks, Oliver", "Memory is a story."),
            ("proust", "Swann's Way", "Proust, Marcel", "The taste of the madeleine."),
        ]
    }
    highlights_connect(ids=[h.pk for h in rows.values()])
    return rows


@pytest.mark.django_db
class LibraryCacheTests:
    def test_it_computes_a_read_once_per_version(self, alice: User) -> None:
        read = Counted(["a book"])
        assert LibraryCache(alice.pk).get("books", read, "title") == ["a book"]
        assert LibraryCache(alice.pk).get("books", read, "title") == ["a book"]
        assert read.runs == 1
        library_version_bump(reader_ids=[alice.pk])
        LibraryCache(alice.pk).get("books", read, "title")
        assert read.runs == 2

    def test_it_keeps_each_part_of_a_read_apart(self, alice: User) -> None:
        by_title, by_author = Counted("by title"), Counted("by author")
        assert LibraryCache(alice.pk).get("books", by_title, "title") == "by title"
        assert LibraryCache(alice.pk).get("books", by_author, "author") == "by author"

    def test_it_never_gives_one_readers_read_to_another(self, alice: User, bob: User) -> None:
        LibraryCache(alice.pk).get("books", Counted("alice's books"), "title")
        assert LibraryCache(bob.pk).get("books", Counted("bob's books"), "title") == "bob's books"

    def test_it_shows_the_workers_changes_within_the_lag(self, alice: User) -> None:
        clock = Clock()
        LibraryCache(alice.pk, clock=clock).get("pairs", Counted("old"))
        library_background_bump(reader_ids=[alice.pk])
        clock.now += BACKGROUND_LAG - 1
        assert LibraryCache(alice.pk, clock=clock).get("pairs", Counted("new")) == "old"
        clock.now += 1
        assert LibraryCache(alice.pk, clock=clock).get("pairs", Counted("new")) == "new"

    def test_it_never_lags_behind_the_readers_own_change(self, alice: User) -> None:
        clock = Clock()
        LibraryCache(alice.pk, clock=clock).get("pairs", Counted("old"))
        library_version_bump(reader_ids=[alice.pk])
        assert LibraryCache(alice.pk, clock=clock).get("pairs", Counted("new")) == "new"

    def test_a_lost_version_is_a_new_one(self, alice: User) -> None:
        LibraryCache(alice.pk).get("books", Counted("old"))
        cache.delete(f"library-version:{alice.pk}")  # culled, or Redis restarted
        assert LibraryCache(alice.pk).get("books", Counted("new")) == "new"

    def test_it_bumps_again_once_the_change_commits(
        self, alice: User, django_capture_on_commit_callbacks: Callable[..., object]
    ) -> None:
        with django_capture_on_commit_callbacks(execute=True):  # type: ignore[attr-defined]
            library_version_bump(reader_ids=[alice.pk])
            in_transaction = library_versions(alice.pk)
        after_commit = library_versions(alice.pk)
        assert after_commit[0] != in_transaction[0]
        assert after_commit[1] == in_transaction[1]

    def test_the_embedding_task_bumps_the_workers_version(self, alice: User) -> None:
        clippings_import(
            reader=alice, data=clippings_file(Entry(BORGES, "Memory is a river of ash.")),
            file_name="c.txt",
        )  # fmt: skip
        before = library_versions(alice.pk)
        ids = list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        assert embed_highlights(ids)["embedded"] == 1
        after = library_versions(alice.pk)
        assert after[0] == before[0]
        assert after[1] != before[1]
        assert embed_highlights(ids)["embedded"] == 0  # the second call changes nothing


@pytest.mark.django_db
class ConnectionsPageTests:
    def test_it_drops_a_deleted_highlights_pairs_at_once(
        self, connected: dict[str, Highlight], alice_client: Client
    ) -> None:
        assert alice_client.get(reverse("connections")).context["page"].paginator.count == 3
        alice_client.post(reverse("highlight_delete", args=[connected["proust"].code]))
        response = alice_client.get(reverse("connections"))
        assert response.context["page"].paginator.count == 1
        assert b"The taste of the madeleine." not in response.content

    def test_it_shows_an_edited_note_at_once(
        self, connected: dict[str, Highlight], alice_client: Client
    ) -> None:
        alice_client.get(reverse("connections"))
        url = reverse("highlight_note", args=[connected["funes"].code])
        alice_client.post(url, {"note": "Like my grandmother."})
        assert b"Like my grandmother." in alice_client.get(reverse("connections")).content

    def test_it_shows_the_connections_found_again_at_once(
        self, connected: dict[str, Highlight], alice_client: Client
    ) -> None:
        assert alice_client.get(reverse("connections")).context["page"].paginator.count == 3
        # As after an upgrade of the rule: the stored pairs no longer hold (here, a vector
        # moved behind the cache's back), and `manage.py reconnect` finds them again.
        far = _unit(RNG.normal(size=384))
        Highlight.objects.filter(pk=connected["proust"].pk).update(
            embedding=far, theme_embedding=theme_of(far)
        )
        call_command("reconnect", stdout=StringIO())
        assert alice_client.get(reverse("connections")).context["page"].paginator.count == 1

    def test_another_reader_never_sees_the_cached_pairs(
        self, connected: dict[str, Highlight], alice_client: Client, bob_client: Client
    ) -> None:
        assert b"Funes remembered everything." in alice_client.get(reverse("connections")).content
        response = bob_client.get(reverse("connections"))
        assert b"Funes remembered everything." not in response.content
        assert b"No connections yet" in response.content

    def test_its_queries_are_few_without_a_cache(
        self,
        connected: dict[str, Highlight],
        alice_client: Client,
        django_assert_num_queries: Callable[..., object],
    ) -> None:
        # The stored verdicts are an indexed filter: no cache of the pairs to keep.
        alice_client.get(reverse("connections"))
        library_version_bump(reader_ids=[connected["funes"].reader_id])
        # Session, reader, latest import; the reader's books by one author (compared as the
        # import compares authors); the pairs' ids in order, the page's rows (with their
        # books); the versions and the book filter's choices (cached per version: once they
        # are, one query fewer).
        with django_assert_num_queries(8):  # type: ignore[operator]
            alice_client.get(reverse("connections"))
        with django_assert_num_queries(7):  # type: ignore[operator]
            alice_client.get(reverse("connections"))

    def test_it_sends_anonymous_readers_to_login(self, client: Client) -> None:
        response = client.get(reverse("connections"))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class LibraryPageTests:
    def test_it_counts_an_import_at_once(self, alice: User, alice_client: Client) -> None:
        assert listed_books(alice_client.get(reverse("library")).content) == []
        clippings_import(
            reader=alice, data=clippings_file(Entry(BORGES, "Memory is a river of ash.")),
            file_name="c.txt",
        )  # fmt: skip
        assert listed_books(alice_client.get(reverse("library")).content) == [("Ficciones", 1)]

    def test_it_counts_a_delete_at_once(
        self, connected: dict[str, Highlight], alice_client: Client
    ) -> None:
        assert len(listed_books(alice_client.get(reverse("library")).content)) == 3
        alice_client.post(reverse("highlight_delete", args=[connected["proust"].code]))
        counts = dict(listed_books(alice_client.get(reverse("library")).content))
        # Its one highlight deleted, the book has nothing to show: no longer listed.
        assert "Swann's Way" not in counts
        assert len(counts) == 2

    def test_another_reader_never_sees_the_cached_books(
        self, connected: dict[str, Highlight], alice_client: Client, bob_client: Client
    ) -> None:
        assert b"Ficciones" in alice_client.get(reverse("library")).content
        response = bob_client.get(reverse("library"))
        assert listed_books(response.content) == []
        assert b"Ficciones" not in response.content

    def test_its_queries_are_few_and_fewer_once_cached(
        self,
        connected: dict[str, Highlight],
        alice_client: Client,
        django_assert_num_queries: Callable[..., object],
    ) -> None:
        alice_client.get(reverse("library"))
        library_version_bump(reader_ids=[connected["funes"].reader_id])
        with django_assert_num_queries(4):  # type: ignore[operator]
            alice_client.get(reverse("library"))  # session, reader, versions, books
        with django_assert_num_queries(3):  # type: ignore[operator]
            alice_client.get(reverse("library"))

    def test_it_sends_anonymous_readers_to_login(self, client: Client) -> None:
        response = client.get(reverse("library"))
        assert response.status_code == 302


@pytest.mark.django_db
class HighlightPageQueriesTests:
    def test_its_queries_do_not_grow_with_its_connections(
        self,
        connected: dict[str, Highlight],
        alice_client: Client,
        django_assert_num_queries: Callable[..., object],
    ) -> None:
        # Session, reader, highlight, connections, their rows, merges, tags, reader's tags.
        with django_assert_num_queries(8):  # type: ignore[operator]
            alice_client.get(connected["funes"].get_absolute_url())

    def test_it_counts_the_library_once_per_version_for_the_nearest_passages(
        self,
        connected: dict[str, Highlight],
        alice: User,
        alice_client: Client,
        django_assert_num_queries: Callable[..., object],
    ) -> None:
        # Nothing connects to it: its page shows the nearest passages, whose scan is chosen
        # by the library's size.
        alone = _highlight(
            alice, _book(alice, "Invisible Cities", "Calvino, Italo"),
            "Cities, like dreams, are made of desires and fears.", _unit(RNG.normal(size=384)),
        )  # fmt: skip
        url = alone.get_absolute_url()
        assert b"Nearest in your library" in alice_client.get(url).content
        # Session, reader, highlight, connections, versions, the nearest (an exact scan in
        # a library this small), their rows, merges, tags, reader's tags.
        with django_assert_num_queries(10):  # type: ignore[operator]
            response = alice_client.get(url)
        assert b"Funes remembered everything." in response.content
        library_version_bump(reader_ids=[alice.pk])
        with django_assert_num_queries(11):  # type: ignore[operator]
            alice_client.get(url)  # and the size, counted again


@pytest.mark.django_db
class BookChoicesTests:
    """The book filters of the search and connections pages, kept per version."""

    def test_it_offers_a_new_book_at_once(self, alice: User, alice_client: Client) -> None:
        assert b"Ficciones" not in alice_client.get(reverse("search")).content
        clippings_import(
            reader=alice, data=clippings_file(Entry(BORGES, "Memory is a river of ash.")),
            file_name="c.txt",
        )  # fmt: skip
        page = alice_client.get(reverse("search")).content.decode()
        code = Book.objects.get(reader=alice).code
        assert f'<option value="{code}">Ficciones</option>' in page
        assert '<option value="Borges, Jorge Luis">' in page  # the author list

    def test_two_books_of_one_title_are_told_apart_by_their_authors(
        self, alice: User, alice_client: Client
    ) -> None:
        clippings_import(
            reader=alice,
            data=clippings_file(
                Entry("Meditations (Marcus Aurelius)", "Waste no more time arguing."),
                Entry("Meditations (Descartes, René)", "I think, therefore I am."),
                Entry(BORGES, "Memory is a river of ash."),
            ),
            file_name="c.txt",
        )
        page = alice_client.get(reverse("search")).content.decode()
        codes = dict(Book.objects.filter(reader=alice).values_list("authors", "code"))
        aurelius, descartes = codes["Marcus Aurelius"], codes["Descartes, René"]
        assert f'<option value="{aurelius}">Meditations — Marcus Aurelius</option>' in page
        assert f'<option value="{descartes}">Meditations — Descartes, René</option>' in page
        assert f'<option value="{codes["Borges, Jorge Luis"]}">Ficciones</option>' in page

    def test_titles_alike_where_they_are_cut_are_told_apart_too(
        self, alice: User, alice_client: Client
    ) -> None:
        stem = "A Very Long History of the Quiet Engines That Ran Under the Harbour Streets"
        clippings_import(
            reader=alice,
            data=clippings_file(
                Entry(f"{stem}, Volume One (Vell, Miriam)", "The engines never slept."),
                Entry(f"{stem}, Volume Two (Okonkwo, Chidi)", "The harbour kept its lights."),
            ),
            file_name="c.txt",
        )
        page = alice_client.get(reverse("search")).content.decode()
        assert "… — Vell, Miriam</option>" in page
        assert "… — Okonkwo, Chidi</option>" in page

    def test_it_shows_the_chosen_book_only_where_it_was_chosen(
        self, connected: dict[str, Highlight], alice_client: Client
    ) -> None:
        code = connected["funes"].book.code
        chosen = f'<option value="{code}" selected>Ficciones</option>'

        def page(name: str, **params: object) -> str:
            return str(alice_client.get(reverse(name), params).content.decode())

        assert chosen in page("search", q="memory", book=code)
        assert chosen in page("connections", book=code)
        assert chosen not in page("search", q="memory")
        assert chosen not in page("connections")
        # Refused for another field, the page still shows the reader's choice.
        assert chosen in page("search", q="memory", book=code, added_from="not a date")

    def test_another_reader_never_sees_the_cached_choices(
        self, connected: dict[str, Highlight], alice_client: Client, bob_client: Client
    ) -> None:
        code = connected["funes"].book.code
        assert b"Ficciones" in alice_client.get(reverse("search")).content
        assert b"Ficciones" in alice_client.get(reverse("connections")).content
        for url in (reverse("search"), reverse("connections")):
            assert b"Ficciones" not in bob_client.get(url).content
        # Another reader's book named in the URL is neither chosen nor shown.
        refused = {"q": "memory", "book": code, "added_from": "not a date"}
        assert b"Ficciones" not in bob_client.get(reverse("search"), refused).content

    def test_they_are_read_once_per_version(
        self,
        connected: dict[str, Highlight],
        alice_client: Client,
        django_assert_num_queries: Callable[..., object],
    ) -> None:
        alice_client.get(reverse("search"))
        # Session, reader, versions: the choices are kept.
        with django_assert_num_queries(3):  # type: ignore[operator]
            alice_client.get(reverse("search"))
        library_version_bump(reader_ids=[connected["funes"].reader_id])
        with django_assert_num_queries(4):  # type: ignore[operator]
            alice_client.get(reverse("search"))  # and the books, read again
