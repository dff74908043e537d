import datetime as dt
import threading
import time
from collections.abc import Callable

import pytest
from django.db import connection, connections, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.importing.services import clippings_import
from books.library_api import library_note_add
from books.models import NOTE_MAX_LENGTH, Book, Highlight, Tag
from books.services import highlight_note_update, highlight_tag, highlight_untag, tag_delete
from tests.books.kindle import MEMORY_LIBRARY, clippings_file
from tests.books.library import listed_books


@pytest.fixture
def think(alice: User) -> Highlight:
    clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
    return Highlight.objects.get(reader=alice, location_start=412)


HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.mark.django_db
class NoteEditTests:
    def test_it_saves_a_note_inline_and_marks_it_edited(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])
        response = alice_client.post(url, {"note": "  Funes, again.  "}, **HTMX)
        assert response.status_code == 200
        assert "Note saved." in response.content.decode()
        assert 'id="highlight-note"' in response.content.decode()
        think.refresh_from_db()
        assert (think.note, think.note_edited) == ("Funes, again.", True)
        assert "funes, again." in think.search_text

    def test_it_survives_a_reimport(
        self, think: Highlight, alice: User, alice_client: Client
    ) -> None:
        alice_client.post(reverse("highlight_note", args=[think.code]), {"note": "mine"})
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
        think.refresh_from_db()
        assert think.note == "mine"

    def test_it_works_without_javascript(self, think: Highlight, alice_client: Client) -> None:
        response = alice_client.post(reverse("highlight_note", args=[think.code]), {"note": "x"})
        assert response.status_code == 302
        assert response["Location"] == think.get_absolute_url()

    def test_a_note_too_long_says_the_limit_and_the_count_and_keeps_the_words(
        self, think: Highlight, alice_client: Client
    ) -> None:
        think.note = "the old note"
        think.save(update_fields=["note"])
        typed = "word " * 4_004  # 20,020 characters, 20,019 once its last space is trimmed
        url = reverse("highlight_note", args=[think.code])
        inline = alice_client.post(url, {"note": typed}, **HTMX).content.decode()
        plain = alice_client.post(url, {"note": typed})  # no JavaScript: the page again
        assert plain.status_code == 200
        for content in (inline, plain.content.decode()):
            assert "Notes can be up to 10,000 characters; this one has 20,019." in content
            assert f'aria-describedby="note-status">{typed}</textarea>' in content
        think.refresh_from_db()
        assert think.note == "the old note"

    def test_it_says_it_in_spanish(self, think: Highlight, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("highlight_note", args=[think.code]),
            {"note": "x" * 10_001},
            HTTP_ACCEPT_LANGUAGE="es",
            **HTMX,
        )
        assert (
            "Una nota puede tener hasta 10\u00a0000 caracteres; esta tiene 10\u00a0001."
            in response.content.decode()
        )

    def test_the_box_stops_at_the_limit_and_line_breaks_count_once(
        self, think: Highlight, alice_client: Client
    ) -> None:
        page = alice_client.get(think.get_absolute_url()).content.decode()
        assert f'maxlength="{NOTE_MAX_LENGTH}"' in page
        # A browser counts a line break once for `maxlength` and sends it as CRLF.
        lines = ["x" * 99] * 100  # 9,999 characters with "\n", 10,098 with "\r\n"
        url = reverse("highlight_note", args=[think.code])
        response = alice_client.post(url, {"note": "\r\n".join(lines)}, **HTMX)
        assert "Note saved." in response.content.decode()
        think.refresh_from_db()
        assert think.note == "\n".join(lines)

    def test_bob_cannot_write_alices_note(self, think: Highlight, bob_client: Client) -> None:
        url = reverse("highlight_note", args=[think.code])
        assert bob_client.post(url, {"note": "x" * 10_001}).status_code == 404
        assert bob_client.post(url, {"note": "mine"}, **HTMX).status_code == 404
        think.refresh_from_db()
        assert think.note != "mine"


def _tag_names(highlight: Highlight) -> list[str]:
    return sorted(highlight.tags.values_list("name", flat=True))


@pytest.mark.django_db
class NoteHashtagTests:
    """Hashtags typed in the note editor tag the highlight by the import's rule
    (books.importing.hashtags.hashtags_named_anew): those the note names anew only."""

    def test_the_hashtags_of_a_saved_note_tag_the_highlight_and_htmx_shows_them(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])

        response = alice_client.post(
            url, {"note": "On #Memoria and #forgetting; C# #1 #ff0000"}, **HTMX
        )

        page = response.content.decode()
        assert _tag_names(think) == ["forgetting", "memoria"]
        assert "Note saved, and tagged from its hashtags: memoria, forgetting." in page
        # The tags swap in out of band beside the note, each with its link.
        assert 'id="highlight-tags" aria-labelledby="tags-heading" hx-swap-oob="true"' in page
        assert f'href="{reverse("tag", args=["memoria"])}"' in page
        assert 'id="highlight-note"' in page
        think.refresh_from_db()
        assert think.note == "On #Memoria and #forgetting; C# #1 #ff0000"

    def test_a_hashtag_taken_out_of_the_note_leaves_its_tag(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])
        alice_client.post(url, {"note": "#memoria"}, **HTMX)

        response = alice_client.post(url, {"note": "No hashtag now."}, **HTMX)

        assert _tag_names(think) == ["memoria"]
        assert "Note saved." in response.content.decode()
        assert "hx-swap-oob" not in response.content.decode()

    def test_a_tag_the_reader_removed_stays_removed_while_the_note_still_names_it(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])
        alice_client.post(url, {"note": "#memoria"}, **HTMX)
        tag = Tag.objects.get(name="memoria")
        alice_client.post(reverse("highlight_tag_remove", args=[think.code, tag.pk]), **HTMX)

        alice_client.post(url, {"note": "#memoria, again, and #olvido"}, **HTMX)

        assert _tag_names(think) == ["olvido"]

    def test_a_note_typed_with_a_full_width_hash_tags_too(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])

        alice_client.post(url, {"note": "記憶について\u3000\uff03記憶 \uff03忘却"}, **HTMX)

        assert _tag_names(think) == ["忘却", "記憶"]

    def test_without_javascript_the_page_says_it_and_shows_the_tags(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])

        response = alice_client.post(url, {"note": "#memoria"}, follow=True)

        page = response.content.decode()
        assert response.redirect_chain == [(think.get_absolute_url(), 302)]
        assert "Note saved, and tagged from its hashtag: memoria." in page
        assert f'href="{reverse("tag", args=["memoria"])}"' in page

    def test_it_says_it_in_spanish(self, think: Highlight, alice_client: Client) -> None:
        url = reverse("highlight_note", args=[think.code])

        response = alice_client.post(
            url, {"note": "#memoria #olvido"}, HTTP_ACCEPT_LANGUAGE="es", **HTMX
        )

        page = response.content.decode()
        assert "Nota guardada y etiquetada con sus hashtags: memoria, olvido." in page

    def test_the_service_returns_the_tags_the_note_named_anew(
        self, think: Highlight, alice: User
    ) -> None:
        # Every note the reader writes goes through it: the highlight page's, the review
        # card's, the API's and the MCP server's add_note.
        tagged = highlight_note_update(highlight=think, note="#memoria")
        again = highlight_note_update(highlight=think, note="#memoria #Memoria")

        assert (tagged, again) == (["memoria"], [])
        assert _tag_names(think) == ["memoria"]

    def test_a_save_replaces_the_note_the_row_holds_not_the_one_a_stale_page_read(
        self, think: Highlight, alice: User
    ) -> None:
        # A second tab opened before the first saved "#memoria", and the reader then
        # removed the tag: the second tab's save names "memoria" as the note before did.
        stale = Highlight.objects.get(pk=think.pk)
        highlight_note_update(highlight=think, note="#memoria")
        highlight_untag(highlight=think, tag=Tag.objects.get(reader=alice, name="memoria"))

        with CaptureQueriesContext(connection) as queries:
            tagged = highlight_note_update(highlight=stale, note="#memoria, and more")

        assert (tagged, _tag_names(think)) == ([], [])
        (locked,) = [q["sql"] for q in queries.captured_queries if "FOR UPDATE" in q["sql"]]
        assert locked.startswith('SELECT "books_highlight"."note" AS "note" FROM "books_highlight"')
        think.refresh_from_db()
        assert think.note == "#memoria, and more"

    def test_a_hashtag_pushed_past_the_twentieth_by_a_new_one_is_not_new_again(
        self, think: Highlight, alice: User
    ) -> None:
        twenty = " ".join(f"#t{i:02d}" for i in range(20))
        highlight_note_update(highlight=think, note=twenty)
        highlight_untag(highlight=think, tag=Tag.objects.get(reader=alice, name="t19"))

        added = highlight_note_update(highlight=think, note=f"#new {twenty}")
        removed = highlight_note_update(highlight=think, note=twenty)  # #new taken out

        assert (added, removed) == (["new"], [])
        assert "t19" not in _tag_names(think)
        assert len(_tag_names(think)) == 20  # t00 to t18, and new

    def test_a_change_gives_at_most_twenty_tags_those_it_names_anew(self, think: Highlight) -> None:
        twenty = " ".join(f"#t{i:02d}" for i in range(20))
        highlight_note_update(highlight=think, note=twenty)

        more = highlight_note_update(
            highlight=think, note=twenty + " " + " ".join(f"#u{i:02d}" for i in range(25))
        )

        assert more == [f"u{i:02d}" for i in range(20)]


@pytest.mark.django_db
class TagTests:
    def test_it_adds_and_removes_tags(self, think: Highlight, alice_client: Client) -> None:
        add = reverse("highlight_tag_add", args=[think.code])
        response = alice_client.post(add, {"name": "  Memory  "}, **HTMX)
        assert "Tagged “memory”." in response.content.decode()
        alice_client.post(add, {"name": "memory"}, **HTMX)
        tag = Tag.objects.get()
        assert list(think.tags.all()) == [tag]
        tags_page = alice_client.get(reverse("tags")).content.decode()
        assert "memory" in tags_page
        tag_page = alice_client.get(reverse("tag", args=["memory"])).content.decode()
        assert "To think is to forget" in tag_page
        remove = reverse("highlight_tag_remove", args=[think.code, tag.pk])
        alice_client.post(remove, **HTMX)
        assert not Tag.objects.exists()  # a tag on nothing is dropped

    def test_it_refuses_an_empty_tag(self, think: Highlight, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("highlight_tag_add", args=[think.code]), {"name": "   "}, **HTMX
        )
        assert "A tag needs a name" in response.content.decode()
        assert not Tag.objects.exists()

    def test_it_saves_a_name_that_grows_past_the_limit_when_case_folded(
        self, think: Highlight, alice_client: Client
    ) -> None:
        # 64 characters, as the form takes; 68 once "ß" folds to "ss": cut after the fold.
        name = "Straße" * 10 + "ßßßß"
        response = alice_client.post(
            reverse("highlight_tag_add", args=[think.code]), {"name": name}, **HTMX
        )
        assert response.status_code == 200
        (tag,) = think.tags.all()
        assert tag.name == name.casefold()[:64]

    def test_bob_cannot_see_or_use_alices_tags(
        self, think: Highlight, alice_client: Client, bob: User, bob_client: Client
    ) -> None:
        alice_client.post(reverse("highlight_tag_add", args=[think.code]), {"name": "memory"})
        tag = Tag.objects.get()
        assert bob_client.get(reverse("tag", args=["memory"])).status_code == 404
        assert b"memory" not in bob_client.get(reverse("tags")).content
        remove = reverse("highlight_tag_remove", args=[think.code, tag.pk])
        assert bob_client.post(remove).status_code == 404


@pytest.mark.django_db
class FavouriteTests:
    def test_it_toggles(self, think: Highlight, alice_client: Client) -> None:
        url = reverse("highlight_favourite", args=[think.code])
        assert "Added to favourites." in alice_client.post(url, **HTMX).content.decode()
        think.refresh_from_db()
        assert think.favourite
        alice_client.post(url, **HTMX)
        think.refresh_from_db()
        assert not think.favourite


@pytest.mark.django_db
class DeleteTests:
    def test_it_deletes_and_offers_undo_once(self, think: Highlight, alice_client: Client) -> None:
        response = alice_client.post(reverse("highlight_delete", args=[think.code]))
        assert response["Location"] == think.book.get_absolute_url()
        book_page = alice_client.get(response["Location"]).content.decode()
        # Listed only under Recently deleted, below the book's highlights.
        listed, deleted = book_page.split('id="recently-deleted"')
        assert "To think is to forget" not in listed
        assert "To think is to forget" in deleted
        assert reverse("highlight_undo", args=[think.code]) in book_page
        assert (
            reverse("highlight_undo", args=[think.code])
            not in alice_client.get(reverse("home")).content.decode()
        )
        assert alice_client.get(think.get_absolute_url()).status_code == 404
        restored = alice_client.post(reverse("highlight_undo", args=[think.code]))
        assert restored["Location"] == think.get_absolute_url()
        assert alice_client.get(think.get_absolute_url()).status_code == 200

    def test_it_cannot_undo_after_the_window(self, think: Highlight, alice_client: Client) -> None:
        alice_client.post(reverse("highlight_delete", args=[think.code]))
        Highlight.objects.filter(pk=think.pk).update(
            deleted_at=timezone.now() - dt.timedelta(hours=2)
        )
        alice_client.post(reverse("highlight_undo", args=[think.code]))
        think.refresh_from_db()
        assert think.deleted_at is not None

    def test_a_deleted_highlight_is_not_brought_back_by_reimport(
        self, think: Highlight, alice: User, alice_client: Client
    ) -> None:
        alice_client.post(reverse("highlight_delete", args=[think.code]))
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
        assert alice_client.get(think.get_absolute_url()).status_code == 404

    def test_bob_cannot_delete_or_restore_alices_highlight(
        self, think: Highlight, bob_client: Client
    ) -> None:
        assert bob_client.post(reverse("highlight_delete", args=[think.code])).status_code == 404
        assert bob_client.post(reverse("highlight_undo", args=[think.code])).status_code == 404
        think.refresh_from_db()
        assert think.deleted_at is None

    @pytest.mark.parametrize(
        "name", ["highlight_note", "highlight_tag_add", "highlight_favourite", "highlight_delete"]
    )
    def test_anonymous_readers_are_sent_to_login(
        self, think: Highlight, client: Client, name: str
    ) -> None:
        response = client.post(reverse(name, args=[think.code]))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class HomeExtrasTests:
    def test_it_shows_a_highlight_of_the_day(self, think: Highlight, alice_client: Client) -> None:
        response = alice_client.get(reverse("home"))
        chosen = response.context["highlight_of_the_day"]
        assert chosen is not None
        assert chosen.reader_id == think.reader_id
        assert chosen.kind == "highlight"


@pytest.mark.django_db
class LibrarySortTests:
    def test_it_sorts_and_filters(self, think: Highlight, alice_client: Client) -> None:
        by_count = listed_books(
            alice_client.get(reverse("library"), {"sort": "highlights"}).content
        )
        assert by_count[0][0] == "Ficciones"
        found = listed_books(alice_client.get(reverse("library"), {"q": "sacks"}).content)
        assert [title for title, _ in found] == ["The Man Who Mistook His Wife for a Hat"]
        empty = alice_client.get(reverse("library"), {"q": "nothing like it"})
        assert "No book matches" in empty.content.decode()


@pytest.mark.django_db
class SemanticMapTests:
    def test_it_has_an_empty_state_and_shows_nothing_of_others(
        self, think: Highlight, bob_client: Client
    ) -> None:
        Highlight.objects.update(embedding_status=Highlight.EmbeddingStatus.DONE,
                                 embedding=[1.0] + [0.0] * 383)  # fmt: skip
        content = bob_client.get(reverse("map")).content.decode()
        assert "Nothing to map yet" in content
        assert "map-canvas" not in content


def _two_highlights(reader: User) -> tuple[Highlight, Highlight]:
    book = Book.objects.create(reader=reader, title="Ficciones", authors="Borges", key="f|b")
    return (
        Highlight.objects.create(reader=reader, book=book, text="Funes.", dedupe_key="funes"),
        Highlight.objects.create(reader=reader, book=book, text="Tlön.", dedupe_key="tlon"),
    )


def _waiting_on(pid: int, *running: threading.Thread) -> bool:
    """Whether a backend waits for a lock `pid` holds; asked until one does, or every
    thread is done (30 s at most: a guard against a hung test, not a timing)."""
    deadline = time.monotonic() + 30
    while any(t.is_alive() for t in running) and time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_blocking_pids(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if any(pid in row[0] for row in cursor.fetchall()):
                return True
    return False


def _in_a_thread(work: Callable[[], object], outcome: dict[str, object]) -> threading.Thread:
    def run() -> None:
        try:
            outcome["done"] = work()
        except Exception as error:  # what the test asserts never happens
            outcome["error"] = error
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
class NoteSaveRaceTests:
    """A note save and a delete of the tag it tags with, at once, on two connections: the
    delete waits for the save or the save makes the tag again; neither fails."""

    def test_a_tag_deleted_while_the_note_tags_with_it_is_made_again(self, alice: User) -> None:
        funes, tlon = _two_highlights(alice)
        tag = highlight_tag(highlight=tlon, name="memoria")
        # A delete of the tag under way: the tag locked, its links and itself not yet gone.
        deleter = connections["default"].copy()
        deleter.connect()
        deleter.set_autocommit(False)
        try:
            with deleter.cursor() as cursor:
                cursor.execute("SELECT id FROM books_tag WHERE id = %s FOR UPDATE", [tag.pk])
                cursor.execute("SELECT pg_backend_pid()")
                pid = cursor.fetchone()[0]
            outcome: dict[str, object] = {}
            saving = _in_a_thread(
                lambda: highlight_note_update(highlight=funes, note="#memoria"), outcome
            )
            waited = _waiting_on(pid, saving)
            with deleter.cursor() as cursor:
                cursor.execute("DELETE FROM books_highlight_tags WHERE tag_id = %s", [tag.pk])
                cursor.execute("DELETE FROM books_tag WHERE id = %s", [tag.pk])
            deleter.commit()
        finally:
            deleter.close()
        saving.join(timeout=60)

        assert waited, "the note save went on without waiting for the delete"
        assert outcome == {"done": ["memoria"]}
        funes.refresh_from_db()
        assert (funes.note, _tag_names(funes), _tag_names(tlon)) == ("#memoria", ["memoria"], [])
        assert not Tag.objects.filter(pk=tag.pk).exists()

    def test_a_tag_deleted_while_a_note_save_tags_with_it_waits_for_it(self, alice: User) -> None:
        funes, tlon = _two_highlights(alice)
        tag = highlight_tag(highlight=tlon, name="memoria")
        saved, go = threading.Event(), threading.Event()
        pids: list[int] = []

        def save_and_hold() -> list[str]:
            # The note saved and tagged, its transaction not yet committed.
            with transaction.atomic():
                tagged = highlight_note_update(highlight=funes, note="#memoria")
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_backend_pid()")
                    pids.append(cursor.fetchone()[0])
                saved.set()
                go.wait(timeout=60)
            return tagged

        saver: dict[str, object] = {}
        saving = _in_a_thread(save_and_hold, saver)
        assert saved.wait(timeout=60)
        deleter: dict[str, object] = {}
        deleting = _in_a_thread(lambda: tag_delete(tag=tag), deleter)
        waited = _waiting_on(pids[0], deleting)
        go.set()
        saving.join(timeout=60)
        deleting.join(timeout=60)

        assert waited, "the delete went on without waiting for the note save"
        assert (saver, deleter) == ({"done": ["memoria"]}, {"done": 2})
        funes.refresh_from_db()
        assert (funes.note, _tag_names(funes)) == ("#memoria", [])
        assert not Tag.objects.filter(reader=alice).exists()

    def test_two_additions_to_a_note_at_once_keep_both(self, alice: User) -> None:
        funes, _ = _two_highlights(alice)
        # An addition under way on another connection: the row locked, its words written,
        # not yet committed.
        first = connections["default"].copy()
        first.connect()
        first.set_autocommit(False)
        try:
            with first.cursor() as cursor:
                cursor.execute(
                    "SELECT id FROM books_highlight WHERE id = %s FOR UPDATE", [funes.pk]
                )
                cursor.execute(
                    "UPDATE books_highlight SET note = 'Ireneo.' WHERE id = %s", [funes.pk]
                )
                cursor.execute("SELECT pg_backend_pid()")
                pid = cursor.fetchone()[0]
            outcome: dict[str, object] = {}
            adding = _in_a_thread(
                lambda: library_note_add(alice, code=str(funes.code), text="Memory."), outcome
            )
            waited = _waiting_on(pid, adding)
            first.commit()
        finally:
            first.close()
        adding.join(timeout=60)

        assert waited, "the addition read the note without waiting for the other one"
        assert "error" not in outcome
        funes.refresh_from_db()
        assert funes.note == "Ireneo.\n\nMemory."
