"""A highlight deleted on the device stays deleted: an older copy of the device's file does
not bring it back (books.importing.device_deleted)."""

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.exporting.services import library_export
from books.importing import background
from books.importing.background import import_queue
from books.importing.services import clippings_import
from books.models import Highlight, Import, PurgedHighlight
from books.tasks import run_import
from tests.books.importing.devices import AppleRow, apple_books_zip

KEPT = AppleRow(1, "There was something of stolid resignation in her face.", "#opposites")
DEVOURING = "dévoreuse"
RAISED = "Ainsi va le monde, et les rejetons avec lui."
# The older copy: both alive. The newer: the reader deleted them on the Mac since (the same
# rows, their modification date moved on).
OLDER = [
    KEPT,
    AppleRow(2, DEVOURING, created=552353612.0),
    AppleRow(3, RAISED, "#famille", created=552354119.0),
]
NEWER = [
    KEPT,
    AppleRow(2, DEVOURING, created=552353612.0, modified=556475313.0, deleted=1),
    AppleRow(3, RAISED, "#famille", created=552354119.0, modified=556475320.0, deleted=1),
]


# Three books of one Mac: the newer copy deletes one highlight of the first (kept alive in
# the second as a live row of the same file too, highlighted again), and every highlight of
# the third, so that its deleted rows reach the import with no live entry of their book.
TIDES, SHELLS = "1A2B3C4D5E6F708192A3B4C5D6E7F801", "FFEEDDCCBBAA99887766554433221100"
BOOKS = {TIDES: ("The Edge of the Sea", "Rachel Carson"), SHELLS: ("Gift from the Sea", "Anne")}
SHELL = "One cannot collect all the beautiful shells on the beach."
MOON = "The moon shell is a symbol of solitude."
EBB = "The edge of the sea is a strange and beautiful place."
EBB_AGAIN = "All through the long history of Earth it has been an area of unrest."
OLDER_BOOKS = [
    *OLDER,
    AppleRow(11, EBB, created=552353700.0, asset=TIDES),
    AppleRow(12, EBB_AGAIN, created=552353800.0, asset=TIDES),
    AppleRow(21, SHELL, "#shells", created=552353900.0, asset=SHELLS),
    AppleRow(22, MOON, created=552354000.0, asset=SHELLS),
]
NEWER_BOOKS = [
    *NEWER,
    AppleRow(11, EBB, created=552353700.0, modified=556475400.0, deleted=1, asset=TIDES),
    AppleRow(13, EBB, created=556475500.0, asset=TIDES),
    AppleRow(12, EBB_AGAIN, created=552353800.0, modified=556475410.0, deleted=1, asset=TIDES),
    AppleRow(
        21, SHELL, "#shells", created=552353900.0, modified=556475420.0, deleted=1, asset=SHELLS
    ),
    AppleRow(22, MOON, created=552354000.0, modified=556475430.0, deleted=1, asset=SHELLS),
]


def _alive(reader: User) -> dict[str, str]:
    return dict(
        Highlight.objects.alive().filter(reader=reader).values_list("text", "note").order_by("text")
    )


def _deleted(reader: User) -> set[str]:
    return set(
        Highlight.objects.filter(reader=reader, deleted_at__isnull=False).values_list(
            "text", flat=True
        )
    )


@pytest.mark.django_db
class DeletedOnDeviceTests:
    def test_it_does_not_bring_back_from_an_older_copy_what_was_deleted_on_the_device(
        self, tmp_path: Path, alice: User
    ) -> None:
        newer = clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "new", NEWER), file_name="new.zip"
        )
        assert newer.counts["skipped_in_file"] == {"deleted on the device": 2}
        older = clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "old", OLDER), file_name="old.zip"
        )
        assert _alive(alice) == {KEPT.text: KEPT.note}
        assert (older.counts["new_highlights"], older.counts["deleted_on_device"]) == (0, 2)
        assert _deleted(alice) == set()
        # Nothing of their words is kept: hashes only.
        traces = PurgedHighlight.objects.filter(reader=alice, on_device=True)
        assert traces.count() == 2
        assert not any(DEVOURING in str(t.text_hashes) for t in traces)

    def test_a_highlight_an_older_copy_brought_goes_to_recently_deleted(
        self, tmp_path: Path, alice: User
    ) -> None:
        clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "old", OLDER), file_name="old.zip"
        )
        newer = clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "new", NEWER), file_name="new.zip"
        )
        assert newer.counts["moved_deleted_on_device"] == 2
        assert _alive(alice) == {KEPT.text: KEPT.note}
        assert _deleted(alice) == {DEVOURING, RAISED}

    def test_either_order_ends_in_the_same_library_and_each_file_again_changes_nothing(
        self, tmp_path: Path, alice: User, bob: User
    ) -> None:
        files = {
            "old": apple_books_zip(tmp_path / "old", OLDER),
            "new": apple_books_zip(tmp_path / "new", NEWER),
        }
        for reader, order in ((alice, ["new", "old"]), (bob, ["old", "new"])):
            for name in order:
                clippings_import(reader=reader, data=files[name], file_name=f"{name}.zip")
        assert _alive(alice) == _alive(bob) == {KEPT.text: KEPT.note}
        for reader in (alice, bob):
            traces = PurgedHighlight.objects.filter(reader=reader).count()
            rows = list(Highlight.objects.filter(reader=reader).values().order_by("pk"))
            for name in ("new", "old", "new"):
                again = clippings_import(reader=reader, data=files[name], file_name="again.zip")
                assert again.counts["new_highlights"] == 0
                assert again.counts["moved_deleted_on_device"] == 0
            assert PurgedHighlight.objects.filter(reader=reader).count() == traces
            assert list(Highlight.objects.filter(reader=reader).values().order_by("pk")) == rows

    def test_one_brought_back_from_recently_deleted_stays_when_the_newer_file_comes_again(
        self, tmp_path: Path, alice: User
    ) -> None:
        clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "old", OLDER), file_name="old.zip"
        )
        newer = apple_books_zip(tmp_path / "new", NEWER)
        clippings_import(reader=alice, data=newer, file_name="new.zip")
        Highlight.objects.filter(reader=alice, text=DEVOURING).update(deleted_at=None)
        clippings_import(reader=alice, data=newer, file_name="new.zip")
        assert DEVOURING in _alive(alice)

    def test_the_passage_highlighted_again_after_the_delete_is_imported(
        self, tmp_path: Path, alice: User
    ) -> None:
        clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "new", NEWER), file_name="new.zip"
        )
        again = [KEPT, AppleRow(9, DEVOURING, created=557000000.0)]
        report = clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "later", again), file_name="later.zip"
        )
        assert report.counts["new_highlights"] == 1
        assert DEVOURING in _alive(alice)

    def test_a_highlight_made_after_the_delete_stays_in_either_order(
        self, tmp_path: Path, alice: User, bob: User
    ) -> None:
        files = {
            "new": apple_books_zip(tmp_path / "new", NEWER),
            # The passage highlighted again on the Mac after the delete (a new row).
            "later": apple_books_zip(
                tmp_path / "later", [KEPT, AppleRow(9, DEVOURING, created=557000000.0)]
            ),
        }
        for reader, order in ((alice, ["new", "later"]), (bob, ["later", "new"])):
            for name in order:
                clippings_import(reader=reader, data=files[name], file_name=f"{name}.zip")

        assert _alive(alice) == _alive(bob) == {KEPT.text: KEPT.note, DEVOURING: ""}
        assert _deleted(alice) == _deleted(bob) == set()

    def test_a_deleted_row_holding_a_nul_stays_deleted_in_either_order(
        self, tmp_path: Path, alice: User, bob: User
    ) -> None:
        # A damaged database: the NUL is dropped from the live row, so from the deleted one too.
        damaged = "Ainsi va le monde,\x00 et les rejetons avec lui."
        files = {
            "old": apple_books_zip(
                tmp_path / "old", [KEPT, AppleRow(3, damaged, created=552354119.0)]
            ),
            "new": apple_books_zip(
                tmp_path / "new",
                [KEPT, AppleRow(3, damaged, created=552354119.0, modified=556475320.0, deleted=1)],
            ),
        }
        for reader, order in ((alice, ["new", "old"]), (bob, ["old", "new"])):
            for name in order:
                clippings_import(reader=reader, data=files[name], file_name=f"{name}.zip")

        assert _alive(alice) == _alive(bob) == {KEPT.text: KEPT.note}
        assert _deleted(bob) == {damaged.replace("\x00", "")}

    def test_a_live_row_of_the_same_file_with_its_words_keeps_the_highlight(
        self, tmp_path: Path, alice: User
    ) -> None:
        clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "old", OLDER), file_name="old.zip"
        )
        # Deleted, and highlighted again (a new row) before the newer copy was made.
        rows = [*NEWER, AppleRow(9, DEVOURING, created=557000000.0)]
        report = clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "new", rows), file_name="new.zip"
        )
        assert report.counts["moved_deleted_on_device"] == 1
        assert DEVOURING in _alive(alice)
        assert _deleted(alice) == {RAISED}

    def test_the_report_says_what_was_left_out(
        self, tmp_path: Path, alice: User, alice_client: Client
    ) -> None:
        clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "new", NEWER), file_name="new.zip"
        )
        older = clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "old", OLDER), file_name="old.zip"
        )
        page = alice_client.get(older.get_absolute_url())
        assert "Deleted on your device, not brought back" in page.content.decode()

    def test_an_upload_that_only_moved_them_to_recently_deleted_does_not_say_nothing_new(
        self, tmp_path: Path, alice: User, alice_client: Client
    ) -> None:
        for name, rows in (("old", OLDER), ("new", NEWER)):
            data = apple_books_zip(tmp_path / name, rows)
            upload = SimpleUploadedFile(f"{name}.zip", data, content_type="application/zip")
            response = alice_client.post(reverse("import"), {"file": upload}, follow=True)
        page = response.content.decode()

        assert (
            Import.objects.filter(reader=alice).latest("pk").counts["moved_deleted_on_device"] == 2
        )
        assert "Imported new.zip." in page
        assert "nothing new to add" not in page
        assert "Nothing new in this file" not in page

    def test_an_older_copy_whose_entries_were_all_deleted_on_the_device_is_not_nothing_new(
        self, tmp_path: Path, alice: User, alice_client: Client
    ) -> None:
        clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "new", NEWER), file_name="new.zip"
        )
        older = clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "old", OLDER), file_name="old.zip"
        )

        page = alice_client.get(older.get_absolute_url()).content.decode()

        assert "Deleted on your device, not brought back" in page
        assert "everything in it is already in your library" not in page

    def test_the_report_of_an_older_copy_says_its_entries_were_left_out_as_deleted_there(
        self, tmp_path: Path, alice: User, alice_client: Client
    ) -> None:
        clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "new", NEWER), file_name="new.zip"
        )
        older = clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "old", OLDER), file_name="old.zip"
        )

        page = alice_client.get(older.get_absolute_url()).content.decode()
        spanish = alice_client.get(older.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es-ES")

        assert "2 entries in this file were left out: you deleted them on your device." in page
        assert "Nothing new in this file: everything else in it is already in your library." in page
        assert (
            "2 entradas de este archivo se han omitido: las borraste en tu dispositivo."
            in spanish.content.decode()
        )

    def test_an_import_saved_in_parts_remembers_them_as_one_at_once(
        self,
        tmp_path: Path,
        alice: User,
        bob: User,
        monkeypatch: pytest.MonkeyPatch,
        django_capture_on_commit_callbacks: Any,
    ) -> None:
        monkeypatch.setattr(background, "IMPORT_PART", 1)
        files = [apple_books_zip(tmp_path / "old", OLDER), apple_books_zip(tmp_path / "new", NEWER)]
        for data in [*files, files[0]]:
            at_once = clippings_import(reader=bob, data=data, file_name="mac.zip")
            the_import = import_queue(reader=alice, data=data, file_name="mac.zip")
            with django_capture_on_commit_callbacks(execute=True):
                assert run_import(the_import.pk) == Import.Status.DONE
            the_import.refresh_from_db()
            assert the_import.counts == at_once.counts
        assert _alive(alice) == _alive(bob) == {KEPT.text: KEPT.note}
        assert _deleted(alice) == _deleted(bob) == {DEVOURING, RAISED}

    def test_an_import_of_three_books_in_parts_gives_the_library_one_at_once_gives(
        self,
        tmp_path: Path,
        alice: User,
        bob: User,
        monkeypatch: pytest.MonkeyPatch,
        django_capture_on_commit_callbacks: Any,
    ) -> None:
        monkeypatch.setattr(background, "IMPORT_PART", 1)
        carol, dave = (User.objects.create_user(name) for name in ("carol", "dave"))

        def in_parts(reader: User, data: bytes, name: str) -> Import:
            the_import = import_queue(reader=reader, data=data, file_name=name)
            with django_capture_on_commit_callbacks(execute=True):
                assert run_import(the_import.pk) == Import.Status.DONE
            the_import.refresh_from_db()
            return the_import

        older = apple_books_zip(tmp_path / "old", OLDER_BOOKS, books=BOOKS)
        newer = apple_books_zip(tmp_path / "new", NEWER_BOOKS, books=BOOKS)
        for data in (older, newer, older):
            at_once = clippings_import(reader=bob, data=data, file_name="mac.zip")
            assert in_parts(alice, data, "mac.zip").counts == at_once.counts
        # Bob's library moved through Exogram's JSON (its traces with it), at once and in parts.
        exported = library_export(reader=bob, format="json").data
        at_once = clippings_import(reader=carol, data=exported, file_name="bob.json")
        assert in_parts(dave, exported, "bob.json").counts == at_once.counts
        for data in (older, newer):
            at_once = clippings_import(reader=carol, data=data, file_name="mac.zip")
            assert in_parts(dave, data, "mac.zip").counts == at_once.counts
            assert (
                at_once.counts["new_highlights"],
                at_once.counts["moved_deleted_on_device"],
            ) == (0, 0)

        alive = {KEPT.text: KEPT.note, EBB: ""}
        assert _alive(alice) == _alive(bob) == _alive(carol) == _alive(dave) == alive
        deleted = {DEVOURING, RAISED, EBB_AGAIN, SHELL, MOON}
        assert _deleted(alice) == _deleted(bob) == _deleted(carol) == _deleted(dave) == deleted
        traces = [
            sorted(
                PurgedHighlight.objects.filter(reader=reader).values_list(
                    "book_key", "on_device", "added_at"
                )
            )
            for reader in (alice, bob, carol, dave)
        ]
        assert traces[0] == traces[1] == traces[2] == traces[3]
        assert len(traces[0]) == 5


@pytest.mark.django_db
class ImportDeletePromptTests:
    def test_it_says_the_notes_added_to_highlights_already_there_stay(
        self, tmp_path: Path, alice: User, alice_client: Client
    ) -> None:
        clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "a", [KEPT]), file_name="a.zip"
        )
        # The same row with other words for its note under the same date (Apple Books'
        # "#cynicism" and "#cyn"): kept beside it; and a new highlight without a note.
        rows = [AppleRow(1, KEPT.text, "#contrast"), AppleRow(2, DEVOURING, created=552353612.0)]
        second = clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "b", rows), file_name="b.zip"
        )
        assert (second.counts["notes_attached"], second.counts["new_highlights"]) == (1, 1)
        page = alice_client.get(second.get_absolute_url()).content.decode()
        assert (
            "This deletes what this import added that nothing has changed since: 1 highlight,"
            in page
        )
        assert "The notes this import added to highlights that were already in your library" in page

    def test_it_says_nothing_of_other_notes_when_they_are_all_on_its_own_highlights(
        self, tmp_path: Path, alice: User, alice_client: Client
    ) -> None:
        the_import = clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "a", OLDER), file_name="a.zip"
        )
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "3 highlights and the notes on 2 of them" in page
        assert "The notes this import added to highlights that were already" not in page
