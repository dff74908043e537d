"""A Readwise export an Exogram before 2026-12-07 imported into one book, "Untitled", imported
again today: its highlights go to their books, with everything the reader added to them, and
none is kept twice (books.importing.untitled)."""

import hashlib
from datetime import date, timedelta
from functools import partial
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connections
from django.test import Client
from django.utils import timezone

from accounts.models import User
from affinity.services import sharing_profile_for, sharing_update
from books.embedding.pipeline import highlights_embed
from books.events import highlights_to_embed
from books.importing import background
from books.importing.background import import_queue
from books.importing.same_book import books_merge
from books.importing.selectors import import_nothing_new
from books.importing.services import clippings_import
from books.models import Book, Connection, Deletion, Highlight, Import
from books.purging import deleted_purge
from books.services import (
    book_delete,
    deletion_bring_back,
    highlight_delete,
    highlight_favourite_toggle,
    highlight_note_update,
    highlight_tag,
)
from books.tasks import run_import
from review.models import ReviewState
from tests.books.importing.test_enrich import _library, _utc
from tests.books.kindle import Entry, clippings_file
from tests.books.test_highlight_actions import _in_a_thread, _waiting_on

FIXTURES = Path(__file__).parent / "fixtures"
# Readwise's own export: six highlights of four books, by Book Title and Book Author.
EXPORT = (FIXTURES / "readwise_export.csv").read_bytes()
LIGHTHOUSE = "A lighthouse keeper counts the ships that never come, and calls the count a harvest."
# The export's columns an Exogram before 2026-12-07 did not read (its COLUMNS had only
# Highlight, Title, Author, URL, Note, Location, Date, Tags and Color).
_READ_SINCE = (b"Book Title", b"Book Author", b"Location Type", b"Highlighted at", b"Document tags")


def _as_read_before(data: bytes) -> bytes:
    """The file as that Exogram read it: those columns renamed to names no Exogram reads,
    the rest as it is, so that today's parser reads exactly the cells it read (every row in
    "Untitled", no author, no date, a Location a Kindle location whatever its type, the Tags
    and favourites, notes and colours)."""
    header, rows = data.split(b"\n", 1)
    for name in _READ_SINCE:
        header = header.replace(name, b"Unread " + name)
    return header + b"\n" + rows


def _imported_before(reader: User, data: bytes = EXPORT) -> Import:
    """What an import of the file by that Exogram left: its highlights in "Untitled", and
    an Import recording the file itself."""
    the_import = clippings_import(
        reader=reader, data=_as_read_before(data), file_name="readwise.csv"
    )
    Import.objects.filter(pk=the_import.pk).update(sha256=hashlib.sha256(data).hexdigest())
    return the_import


def _import_again(reader: User, data: bytes = EXPORT) -> Import:
    return clippings_import(reader=reader, data=data, file_name="readwise.csv")


def _placed(reader: User) -> dict[str, tuple[str, int | None, str, object]]:
    return {
        h.text[:12]: (h.book.title, h.location_start, h.page, h.added_at)
        for h in Highlight.objects.filter(reader=reader).select_related("book")
    }


@pytest.mark.django_db
class UntitledReimportTests:
    def test_a_reimport_moves_them_to_their_books_and_adds_none(self, alice: User) -> None:
        _imported_before(alice)
        [untitled] = Book.objects.filter(reader=alice)
        assert (untitled.title, untitled.authors) == ("Untitled", "")
        assert untitled.highlights.count() == 6
        assert not untitled.highlights.exclude(added_at=None).exists()
        # A page, an order and a time were read as Kindle locations.
        pruning = untitled.highlights.get(text__startswith="Pruning")
        assert (pruning.location_start, pruning.page) == (112, "")
        rows = {h.text: h.pk for h in Highlight.objects.filter(reader=alice)}

        again = _import_again(alice)

        assert {h.text: h.pk for h in Highlight.objects.filter(reader=alice)} == rows
        assert not Book.objects.filter(reader=alice, title="Untitled").exists()
        assert sorted(Book.objects.filter(reader=alice).values_list("title", "authors")) == [
            ("Episode 41: Bridges", "The Span Podcast"),
            ("Notes on Slow Software", "Ida Brandt"),
            ("Orchards Without Maps", "Tobías Ferreira"),
            ("The Salt Ledger", "Marta Quillfeather"),
        ]
        # Where and when the file says, as a fresh import of it places them.
        assert _placed(alice) == {
            "A lighthouse": ("The Salt Ledger", 1412, "", _utc(2021, 3, 14, 18, 7)),
            "Fog is only ": ("The Salt Ledger", 1530, "", _utc(2021, 3, 15, 7, 45, 12)),
            "Every map of": ("Orchards Without Maps", None, "87", _utc(2022, 11, 2, 21, 30)),
            "Pruning is a": ("Orchards Without Maps", None, "112", _utc(2022, 11, 3, 8)),
            "The newslett": ("Notes on Slow Software", None, "", _utc(2023, 6, 1, 12)),
            "A bridge is ": ("Episode 41: Bridges", None, "", _utc(2024, 2, 10, 19, 20, 5)),
        }
        counts = again.counts
        assert (counts["new_highlights"], counts["untitled_moved"]) == (0, 6)
        assert (counts["untitled_joined"], counts["untitled_removed"]) == (0, 1)
        assert counts["books_changed"] == 4
        assert not import_nothing_new(again)

    def test_the_library_is_the_one_a_fresh_import_makes_and_a_third_import_changes_nothing(
        self, alice: User, bob: User
    ) -> None:
        _imported_before(alice)
        _import_again(alice)
        _import_again(bob)  # bob never had an older Exogram
        assert _library(alice) == _library(bob)

        third = _import_again(alice)

        assert _library(alice) == _library(bob)
        assert third.counts["new_highlights"] == 0
        assert third.counts["untitled_moved"] == third.counts["untitled_joined"] == 0
        assert third.counts["books_changed"] == 0
        assert import_nothing_new(third)

    def test_everything_the_reader_added_in_untitled_goes_with_the_highlight(
        self, alice: User
    ) -> None:
        _imported_before(alice)
        untitled = Book.objects.get(reader=alice, title="Untitled")
        pruning = untitled.highlights.get(text__startswith="Pruning")
        highlight_note_update(
            highlight=pruning, note="Ask grandmother about the pear tree. She planted it."
        )
        bridge = untitled.highlights.get(text__startswith="A bridge")
        highlight_tag(highlight=bridge, name="promises")
        highlight_favourite_toggle(highlight=bridge)
        lighthouse = untitled.highlights.get(text=LIGHTHOUSE)
        ReviewState.objects.create(
            reader=alice, highlight=lighthouse, reviews=4, due=date(2026, 12, 24)
        )

        _import_again(alice)
        _import_again(alice)

        pruning.refresh_from_db()
        assert pruning.book.title == "Orchards Without Maps"
        assert pruning.note == "Ask grandmother about the pear tree. She planted it."
        assert pruning.note_edited
        bridge.refresh_from_db()
        assert bridge.favourite
        assert list(bridge.tags.values_list("name", flat=True)) == ["promises"]
        lighthouse.refresh_from_db()
        assert lighthouse.book.title == "The Salt Ledger"
        assert lighthouse.note == "The keeper as an accountant."
        # Its Tags as the older import read them, and now the book's Document tags too.
        assert sorted(lighthouse.tags.values_list("name", flat=True)) == [
            "harbours",
            "quill, marta",
            "sea",
        ]
        assert ReviewState.objects.get(highlight=lighthouse).reviews == 4
        fog = Highlight.objects.get(reader=alice, text__startswith="Fog")
        assert (fog.favourite, fog.colour) == (True, "blue")
        assert Highlight.objects.filter(reader=alice).count() == 6

    def test_a_highlight_deleted_in_untitled_stays_deleted_in_its_book(self, alice: User) -> None:
        _imported_before(alice)
        fog = Highlight.objects.get(reader=alice, text__startswith="Fog")
        highlight_delete(highlight=fog)

        again = _import_again(alice)

        fog.refresh_from_db()
        assert fog.deleted_at is not None
        assert fog.book.title == "The Salt Ledger"
        assert Highlight.objects.filter(reader=alice).count() == 6
        assert (again.counts["new_highlights"], again.counts["deleted_skipped"]) == (0, 1)

    def test_a_highlight_removed_for_good_from_untitled_stays_out_of_its_book(
        self, alice: User
    ) -> None:
        _imported_before(alice)
        fog = Highlight.objects.get(reader=alice, text__startswith="Fog")
        highlight_delete(highlight=fog)
        deleted_purge(reader_id=alice.pk, before=timezone.now() + timedelta(days=1))
        assert not Highlight.objects.filter(pk=fog.pk).exists()

        again = _import_again(alice)

        assert not Highlight.objects.filter(reader=alice, text__startswith="Fog").exists()
        assert Highlight.objects.filter(reader=alice).count() == 5
        assert (again.counts["new_highlights"], again.counts["untitled_moved"]) == (0, 5)
        assert again.counts["already_deleted"] == 1
        assert _import_again(alice).counts["new_highlights"] == 0

    def test_untitled_removed_for_good_whole_stays_out_of_the_books(self, alice: User) -> None:
        _imported_before(alice)
        book_delete(book=Book.objects.get(reader=alice, title="Untitled"))
        deleted_purge(reader_id=alice.pk, before=timezone.now() + timedelta(days=1))
        assert not Book.objects.filter(reader=alice).exists()

        again = _import_again(alice)

        assert (again.counts["new_highlights"], again.counts["already_deleted"]) == (0, 6)
        assert not Highlight.objects.filter(reader=alice).exists()

    def test_untitled_deleted_whole_stays_deleted_and_comes_back_into_the_books(
        self, alice: User, alice_client: Client
    ) -> None:
        _imported_before(alice)
        book_delete(book=Book.objects.get(reader=alice, title="Untitled"))

        again = _import_again(alice)

        assert (again.counts["new_highlights"], again.counts["deleted_skipped"]) == (0, 6)
        assert not Highlight.objects.filter(reader=alice).alive().exists()
        assert alice_client.get("/deleted/").status_code == 200
        [deletion] = Deletion.objects.filter(reader=alice)
        deletion_bring_back(deletion=deletion)
        assert Highlight.objects.filter(reader=alice).alive().count() == 6
        assert _placed(alice)["Pruning is a"][:3] == ("Orchards Without Maps", None, "112")

    def test_a_passage_its_book_already_holds_becomes_one_with_both_readers_marks(
        self, alice: User
    ) -> None:
        _imported_before(alice)
        kindle = clippings_file(
            Entry("The Salt Ledger (Quillfeather, Marta)", LIGHTHOUSE, location="1412-1413")
        )
        clippings_import(reader=alice, data=kindle, file_name="My Clippings.txt")
        held = Highlight.objects.get(reader=alice, text=LIGHTHOUSE, book__title="The Salt Ledger")
        highlight_tag(highlight=held, name="lights")
        assert Highlight.objects.filter(reader=alice, text=LIGHTHOUSE).count() == 2

        again = _import_again(alice)

        [one] = Highlight.objects.filter(reader=alice, text=LIGHTHOUSE)
        assert one.pk == held.pk
        assert (one.location_start, one.location_end) == (1412, 1413)
        assert one.note == "The keeper as an accountant."
        assert sorted(one.tags.values_list("name", flat=True)) == [
            "harbours",
            "lights",
            "quill, marta",
            "sea",
        ]
        assert Highlight.objects.filter(reader=alice).count() == 6
        assert (again.counts["untitled_moved"], again.counts["untitled_joined"]) == (5, 1)
        assert again.counts["new_highlights"] == 0

    def test_a_note_of_another_book_the_older_import_gave_a_highlight_goes_to_its_book(
        self, alice: User, bob: User
    ) -> None:
        # Two books, one book then: the note of its own of one, at location 100, went to the
        # highlight of the other at location 100.
        export = (
            b"Highlight,Book Title,Book Author,Note,Location Type,Location\r\n"
            b"Salt keeps what the sea gives.,The Salt Ledger,Marta Quillfeather,,location,100\r\n"
            b",Ficciones,Jorge Luis Borges,Compare Funes.,location,100\r\n"
        )
        _imported_before(alice, export)
        [given] = Highlight.objects.filter(reader=alice)
        assert given.note == "Compare Funes."

        _import_again(alice, export)
        clippings_import(reader=bob, data=export, file_name="readwise.csv")

        assert _library(alice) == _library(bob)
        given.refresh_from_db()
        assert (given.book.title, given.note) == ("The Salt Ledger", "")
        note = Highlight.objects.get(reader=alice, kind=Highlight.Kind.NOTE)
        assert (note.book.title, note.text) == ("Ficciones", "Compare Funes.")

    def test_a_note_of_another_book_in_another_part_goes_to_its_book(
        self,
        alice: User,
        bob: User,
        monkeypatch: pytest.MonkeyPatch,
        django_capture_on_commit_callbacks: Any,
    ) -> None:
        # As above, the file saved in parts: the note's row is not in the highlight's part.
        monkeypatch.setattr(background, "IMPORT_PART", 1)  # every book a part of its own
        export = (
            b"Highlight,Book Title,Book Author,Note,Location Type,Location\r\n"
            b"Salt keeps what the sea gives.,The Salt Ledger,Marta Quillfeather,,location,100\r\n"
            b",Ficciones,Jorge Luis Borges,Compare Funes.,location,100\r\n"
        )
        _imported_before(alice, export)
        [given] = Highlight.objects.filter(reader=alice)
        assert given.note == "Compare Funes."
        queued = import_queue(reader=alice, data=export, file_name="readwise.csv")
        with django_capture_on_commit_callbacks(execute=True):
            assert run_import(queued.pk) == Import.Status.DONE

        clippings_import(reader=bob, data=export, file_name="readwise.csv")

        assert _library(alice) == _library(bob)
        given.refresh_from_db()
        assert (given.book.title, given.note) == ("The Salt Ledger", "")

    def test_an_untitled_kept_out_of_sharing_keeps_its_books_out_and_nothing_else(
        self, alice: User, bob: User
    ) -> None:
        kindle = clippings_file(
            Entry("Ficciones (Borges, Jorge Luis)", "To think is to forget differences.")
        )
        for reader in (alice, bob):
            _imported_before(reader)
            clippings_import(reader=reader, data=kindle, file_name="My Clippings.txt")
        sharing_update(
            reader=alice,
            discoverable=True,
            display_name="Alice",
            excluded_books=[Book.objects.get(reader=alice, title="Untitled")],
        )
        bobs_borges = Book.objects.get(reader=bob, title="Ficciones")
        sharing_update(
            reader=bob, discoverable=True, display_name="Bob", excluded_books=[bobs_borges]
        )

        _import_again(alice)
        _import_again(bob)

        assert sorted(
            sharing_profile_for(alice).excluded_books.values_list("title", flat=True)
        ) == [
            "Episode 41: Bridges",
            "Notes on Slow Software",
            "Orchards Without Maps",
            "The Salt Ledger",
        ]
        assert list(sharing_profile_for(bob).excluded_books.all()) == [bobs_borges]

    def test_another_readers_untitled_is_never_touched(self, alice: User, bob: User) -> None:
        _imported_before(bob)
        _imported_before(alice)
        bobs = Highlight.objects.filter(reader=bob).order_by("pk")
        before = list(bobs.values_list("pk", "book_id", "location_start", "dedupe_key"))

        _import_again(alice)

        assert list(bobs.values_list("pk", "book_id", "location_start", "dedupe_key")) == before
        assert Book.objects.get(reader=bob, title="Untitled").highlights.count() == 6
        assert not Book.objects.filter(reader=alice, title="Untitled").exists()

    def test_untitled_keeps_what_the_file_does_not_place_elsewhere(self, alice: User) -> None:
        _imported_before(alice)
        # A row of the import template with no title: untitled then and now.
        loose = b"Highlight,Title,Note\r\nA line from nowhere in particular.,,\r\n"
        clippings_import(reader=alice, data=loose, file_name="loose.csv")

        again = _import_again(alice)

        untitled = Book.objects.get(reader=alice, title="Untitled")
        assert list(untitled.highlights.values_list("text", flat=True)) == [
            "A line from nowhere in particular."
        ]
        assert (again.counts["untitled_moved"], again.counts["untitled_removed"]) == (6, 0)
        assert Highlight.objects.filter(reader=alice).count() == 7

    def test_a_book_with_an_author_named_untitled_is_a_book_of_its_own(self, alice: User) -> None:
        # Readwise's import template: the reader named this book "Untitled", by Jo Poet.
        named = (
            b"Highlight,Title,Author\r\n"
            b"Pruning is a conversation held one cut at a time.,Untitled,Jo Poet\r\n"
        )
        clippings_import(reader=alice, data=named, file_name="poems.csv")

        again = _import_again(alice)

        poems = Book.objects.get(reader=alice, title="Untitled")
        assert poems.authors == "Jo Poet"
        assert poems.highlights.count() == 1
        assert again.counts["untitled_moved"] == 0
        assert again.counts["new_highlights"] == 6

    def test_an_untitled_the_reader_merged_a_book_into_is_theirs(self, alice: User) -> None:
        _imported_before(alice)
        clippings_import(
            reader=alice,
            data=clippings_file(Entry("Loose notes (Alice)", "A thought of my own.")),
            file_name="My Clippings.txt",
        )
        untitled = Book.objects.get(reader=alice, title="Untitled")
        books_merge(kept=untitled, absorbed=Book.objects.get(reader=alice, title="Loose notes"))

        again = _import_again(alice)

        assert again.counts["untitled_moved"] == 0
        assert untitled.highlights.count() == 7

    def test_a_device_highlight_in_untitled_is_left_where_its_device_finds_it(
        self, alice: User
    ) -> None:
        _imported_before(alice)
        Highlight.objects.filter(reader=alice, text=LIGHTHOUSE).update(position="a device's")

        again = _import_again(alice)

        assert again.counts["untitled_moved"] == 5
        assert Book.objects.get(reader=alice, title="Untitled").highlights.get().text == LIGHTHOUSE

    def test_the_report_says_what_happened_in_plain_words(
        self, alice: User, alice_client: Client
    ) -> None:
        _imported_before(alice)
        again = _import_again(alice)

        page = alice_client.get(again.get_absolute_url()).content.decode()

        assert (
            "6 highlights that an earlier import had put in “Untitled” are now in their own "
            "books, with everything you added to them"
        ) in page
        assert "“Untitled” had nothing else in it, and is gone." in page
        assert "Nothing new in this file" not in page
        spanish = alice_client.get(
            again.get_absolute_url(), headers={"accept-language": "es"}
        ).content.decode()
        assert "6 subrayados que una importación anterior había puesto en «Untitled»" in spanish

    def test_vectors_stay_and_the_moved_passages_are_connected_again_in_their_books(
        self, alice: User, django_capture_on_commit_callbacks: Any
    ) -> None:
        _imported_before(alice)
        ids = list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        highlights_embed(ids=ids)
        vectors = {h.pk: list(h.embedding) for h in Highlight.objects.filter(reader=alice)}

        with django_capture_on_commit_callbacks() as callbacks:
            _import_again(alice)

        queued = {
            pk
            for callback in callbacks
            if isinstance(callback, partial) and callback.args == (highlights_to_embed,)
            for pk in callback.keywords["ids"]
        }
        passages = Highlight.objects.filter(reader=alice).alive().passages()
        assert queued == set(passages.values_list("pk", flat=True))
        for highlight in Highlight.objects.filter(reader=alice):
            assert list(highlight.embedding) == vectors[highlight.pk]
        highlights_embed(ids=sorted(queued))
        assert not passages.exclude(embedding_status="done").exists()

    def test_a_file_saved_in_parts_moves_them_as_a_file_at_once(
        self,
        alice: User,
        bob: User,
        monkeypatch: pytest.MonkeyPatch,
        django_capture_on_commit_callbacks: Any,
    ) -> None:
        monkeypatch.setattr(background, "IMPORT_PART", 2)  # every book a part of its own
        _imported_before(alice)
        _imported_before(bob)
        at_once = _import_again(alice)
        queued = import_queue(reader=bob, data=EXPORT, file_name="readwise.csv")
        with django_capture_on_commit_callbacks(execute=True):
            assert run_import(queued.pk) == Import.Status.DONE
        queued.refresh_from_db()
        assert queued.counts["untitled_moved"] == at_once.counts["untitled_moved"] == 6
        assert queued.counts["new_highlights"] == 0
        assert _library(bob) == _library(alice)
        assert not Book.objects.filter(reader=bob, title="Untitled").exists()

    def test_connections_follow_and_one_now_within_a_book_goes(self, alice: User) -> None:
        _imported_before(alice)
        kindle = clippings_file(
            Entry("The Salt Ledger (Quillfeather, Marta)", "Salt keeps what the sea gives."),
            Entry("Ficciones (Borges, Jorge Luis)", "To think is to forget differences."),
        )
        clippings_import(reader=alice, data=kindle, file_name="My Clippings.txt")
        ledger = Highlight.objects.get(reader=alice, text__startswith="Salt keeps")
        borges = Highlight.objects.get(reader=alice, text__startswith="To think")
        lighthouse = Highlight.objects.get(reader=alice, text=LIGHTHOUSE)
        kept = _connect(alice, lighthouse, borges)
        _connect(alice, lighthouse, ledger)  # two books then, one book now

        _import_again(alice)

        [connection] = Connection.objects.filter(reader=alice)
        assert connection.pk == kept.pk
        their_books = Book.objects.filter(reader=alice, title__in=["The Salt Ledger", "Ficciones"])
        assert {connection.book_low_id, connection.book_high_id} == set(
            their_books.values_list("pk", flat=True)
        )

    def test_the_command_says_it_too(self, alice: User, tmp_path: Path) -> None:
        _imported_before(alice)
        path = tmp_path / "readwise.csv"
        path.write_bytes(EXPORT)
        out = StringIO()

        call_command("import_clippings", "--user", "alice", str(path), stdout=out)

        said = out.getvalue()
        assert (
            "6 highlights that an earlier import had put in “Untitled” are now in their own "
            "books, with everything you added to them"
        ) in said
        assert "“Untitled” had nothing else in it, and is gone." in said


def _connect(reader: User, a: Highlight, b: Highlight) -> Connection:
    return Connection.objects.create(
        reader=reader,
        highlight_a_id=min(a.pk, b.pk),
        highlight_b_id=max(a.pk, b.pk),
        book_low_id=min(a.book_id, b.book_id),
        book_high_id=max(a.book_id, b.book_id),
        distance=0.2,
        embedding_model="test",
    )


@pytest.mark.django_db(transaction=True)
class UntitledReimportRaceTests:
    def test_a_note_saved_while_the_import_moves_its_highlight_is_kept(self, alice: User) -> None:
        # As in the note of another book: the import would give the highlight its own
        # row's note (none), while the reader saves a note of theirs on another connection.
        export = (
            b"Highlight,Book Title,Book Author,Note,Location Type,Location\r\n"
            b"Salt keeps what the sea gives.,The Salt Ledger,Marta Quillfeather,,location,100\r\n"
            b",Ficciones,Jorge Luis Borges,Compare Funes.,location,100\r\n"
        )
        _imported_before(alice, export)
        [given] = Highlight.objects.filter(reader=alice)
        saving = connections["default"].copy()
        saving.connect()
        saving.set_autocommit(False)
        try:
            with saving.cursor() as cursor:
                cursor.execute(
                    "SELECT id FROM books_highlight WHERE id = %s FOR UPDATE", [given.pk]
                )
                cursor.execute(
                    "UPDATE books_highlight SET note = 'Mine.', note_edited = true WHERE id = %s",
                    [given.pk],
                )
                cursor.execute("SELECT pg_backend_pid()")
                pid = cursor.fetchone()[0]
            outcome: dict[str, object] = {}
            importing = _in_a_thread(lambda: _import_again(alice, export), outcome)
            waited = _waiting_on(pid, importing)
            saving.commit()
        finally:
            saving.close()
        importing.join(timeout=60)

        assert waited, "the import went on without waiting for the note save"
        assert "error" not in outcome
        given.refresh_from_db()
        assert (given.book.title, given.note, given.note_edited) == (
            "The Salt Ledger",
            "Mine.",
            True,
        )
