"""A library moved to another account through Exogram's JSON export keeps what its reader
deleted: a deleted highlight stays deleted (in Recently deleted, with its date) and one
removed for good stays out, so the device's next file brings neither back; the restore's
report says only what is true of the new account; and an export of version 1 still reads."""

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.exporting.services import library_export
from books.importing.background import import_queue, import_run
from books.importing.services import clippings_import
from books.models import Highlight, Import, PurgedHighlight
from books.purging import deleted_purge
from books.services import (
    highlight_delete,
    highlight_note_update,
    highlight_tag,
    import_deletable,
)
from tests.books.importing.devices import AppleRow, apple_books_zip
from tests.books.importing.test_deleted_on_device import (
    DEVOURING,
    KEPT,
    NEWER,
    OLDER,
    _alive,
)
from tests.books.kindle import MEMORY_LIBRARY, clippings_file

KINDLE = clippings_file(*MEMORY_LIBRARY)
LEAF = "He remembered every leaf of every tree of every wood."


def _leaf(reader: User) -> Highlight:
    return Highlight.objects.get(reader=reader, text=LEAF)


def _moved(alice: User, bob: User) -> tuple[bytes, Import]:
    """Alice's library exported and imported into Bob's new account."""
    exported = library_export(reader=alice, format="json").data
    return exported, clippings_import(reader=bob, data=exported, file_name="alice.json")


@pytest.mark.django_db
class DeletedHighlightMoveTests:
    def test_a_deleted_highlight_stays_deleted_and_the_kindle_file_does_not_bring_it_back(
        self, alice: User, bob: User
    ) -> None:
        clippings_import(reader=alice, data=KINDLE, file_name="My Clippings.txt")
        highlight_delete(highlight=_leaf(alice))
        exported, restore = _moved(alice, bob)

        kindle = clippings_import(reader=bob, data=KINDLE, file_name="My Clippings.txt")

        assert restore.counts["deleted_kept"] == 1
        assert _leaf(bob).deleted_at == _leaf(alice).deleted_at
        assert (kindle.counts["new_highlights"], kindle.counts["deleted_skipped"]) == (0, 1)
        assert not Highlight.objects.alive().filter(reader=bob, text=LEAF).exists()
        again = clippings_import(reader=bob, data=exported, file_name="alice.json")
        assert again.counts["deleted_kept"] == 0
        assert Highlight.objects.filter(reader=bob, text=LEAF).count() == 1

    def test_it_keeps_the_note_tags_and_favourite_of_a_deleted_highlight_to_bring_back(
        self, alice: User, bob: User, bob_client: Client
    ) -> None:
        clippings_import(reader=alice, data=KINDLE, file_name="My Clippings.txt")
        leaf = _leaf(alice)
        highlight_note_update(highlight=leaf, note="Funes, the memorious.")
        highlight_tag(highlight=leaf, name="memory")
        leaf.favourite = True
        leaf.save(update_fields=["favourite"])
        highlight_delete(highlight=leaf)
        _moved(alice, bob)

        page = bob_client.get(reverse("deleted")).content.decode()
        bob_client.post(reverse("highlight_bring_back", args=[_leaf(bob).code]))

        assert LEAF in page
        brought = _leaf(bob)
        assert brought.deleted_at is None
        assert (brought.note, brought.note_edited, brought.favourite) == (
            "Funes, the memorious.",
            True,
            True,
        )
        assert list(brought.tags.values_list("name", flat=True)) == ["memory"]

    def test_a_highlight_removed_for_good_stays_out_after_the_move(
        self, alice: User, bob: User
    ) -> None:
        clippings_import(reader=alice, data=KINDLE, file_name="My Clippings.txt")
        highlight_delete(highlight=_leaf(alice))
        deleted_purge(reader_id=alice.pk, before=timezone.now() + timedelta(seconds=1))
        assert not Highlight.objects.filter(reader=alice, text=LEAF).exists()
        exported, restore = _moved(alice, bob)

        kindle = clippings_import(reader=bob, data=KINDLE, file_name="My Clippings.txt")

        assert restore.counts["removed_remembered"] == 1
        assert (kindle.counts["new_highlights"], kindle.counts["already_deleted"]) == (0, 1)
        assert not Highlight.objects.filter(reader=bob, text=LEAF).exists()
        again = clippings_import(reader=bob, data=exported, file_name="alice.json")
        assert again.counts["removed_remembered"] == 0
        assert PurgedHighlight.objects.filter(reader=bob).count() == 1

    def test_a_deleted_highlight_removed_for_good_here_is_not_restored_again(
        self, alice: User, bob: User
    ) -> None:
        clippings_import(reader=alice, data=KINDLE, file_name="My Clippings.txt")
        highlight_delete(highlight=_leaf(alice))
        exported, _ = _moved(alice, bob)
        deleted_purge(reader_id=bob.pk, before=timezone.now() + timedelta(seconds=1))

        again = clippings_import(reader=bob, data=exported, file_name="alice.json")

        assert (again.counts["deleted_kept"], again.counts["already_deleted"]) == (0, 1)
        assert not Highlight.objects.filter(reader=bob, text=LEAF).exists()

    def test_a_large_export_saved_in_the_background_keeps_them_too(
        self, alice: User, bob: User
    ) -> None:
        clippings_import(reader=alice, data=KINDLE, file_name="My Clippings.txt")
        highlight_delete(highlight=_leaf(alice))
        think = Highlight.objects.get(reader=alice, location_start=412)
        highlight_delete(highlight=think)
        deleted_purge(reader_id=alice.pk, before=think.deleted_at)  # only the leaf goes
        exported = library_export(reader=alice, format="json").data
        queued = import_queue(reader=bob, data=exported, file_name="alice.json")
        import_run(import_id=queued.pk)
        queued.refresh_from_db()

        kindle = clippings_import(reader=bob, data=KINDLE, file_name="My Clippings.txt")

        assert (queued.counts["deleted_kept"], queued.counts["removed_remembered"]) == (1, 1)
        assert kindle.counts["new_highlights"] == 0
        assert not Highlight.objects.alive().filter(reader=bob, location_start__in=[380, 412])

    def test_a_highlight_deleted_on_the_device_stays_one_after_the_move(
        self, tmp_path: Path, alice: User, bob: User
    ) -> None:
        clippings_import(
            reader=alice, data=apple_books_zip(tmp_path / "new", NEWER), file_name="new.zip"
        )
        exported, restore = _moved(alice, bob)
        # The reader highlights the passage again on the Mac, after the delete.
        again = [KEPT, AppleRow(9, DEVOURING, created=557000000.0)]
        later = apple_books_zip(tmp_path / "later", again)

        older = clippings_import(
            reader=bob, data=apple_books_zip(tmp_path / "old", OLDER), file_name="old.zip"
        )
        report = clippings_import(reader=bob, data=later, file_name="later.zip")

        assert restore.counts["removed_remembered"] == 2
        assert set(
            PurgedHighlight.objects.filter(reader=bob).values_list("on_device", "added_at")
        ) == set(PurgedHighlight.objects.filter(reader=alice).values_list("on_device", "added_at"))
        assert (older.counts["new_highlights"], older.counts["deleted_on_device"]) == (0, 2)
        assert report.counts["new_highlights"] == 1
        assert DEVOURING in _alive(bob)
        assert PurgedHighlight.objects.filter(reader=bob).count() == 2
        assert (
            clippings_import(reader=bob, data=exported, file_name="alice.json").counts[
                "removed_remembered"
            ]
            == 0
        )

    def test_an_export_of_version_2_without_device_traces_still_imports(
        self, alice: User, bob: User
    ) -> None:
        clippings_import(reader=alice, data=KINDLE, file_name="My Clippings.txt")
        highlight_delete(highlight=_leaf(alice))
        deleted_purge(reader_id=alice.pk, before=timezone.now() + timedelta(seconds=1))
        document = json.loads(library_export(reader=alice, format="json").data)
        for record in document["removed_for_good"]:
            del record["on_device"], record["added_at"]

        old = clippings_import(reader=bob, data=json.dumps(document).encode(), file_name="v2.json")

        assert (old.problems, old.counts["removed_remembered"]) == ([], 1)
        assert PurgedHighlight.objects.get(reader=bob).on_device is False

    def test_an_export_of_version_1_still_imports(self, alice: User, bob: User) -> None:
        clippings_import(reader=alice, data=KINDLE, file_name="My Clippings.txt")
        document = json.loads(library_export(reader=alice, format="json").data)
        document["version"] = 1
        del document["removed_for_good"]
        for book in document["books"]:
            del book["deleted"]
            for record in book["highlights"]:
                del record["note_edited_at"]

        old = clippings_import(reader=bob, data=json.dumps(document).encode(), file_name="v1.json")

        assert old.problems == []
        assert old.counts["new_highlights"] == Highlight.objects.filter(reader=alice).count()
        assert sorted(Highlight.objects.filter(reader=bob).values_list("text", "note")) == sorted(
            Highlight.objects.filter(reader=alice).values_list("text", "note")
        )


@pytest.mark.django_db
class RestoreReportTests:
    def test_a_restore_does_not_claim_the_reader_edited_a_note_here(
        self, alice: User, bob: User, bob_client: Client
    ) -> None:
        clippings_import(reader=alice, data=KINDLE, file_name="My Clippings.txt")
        highlight_note_update(highlight=_leaf(alice), note="Written in the old account.")
        _, restore = _moved(alice, bob)

        page = bob_client.get(reverse("import_report", args=[restore.code])).content.decode()

        assert "it added stays" not in page
        assert _leaf(bob).note_edited is True  # still the reader's own words: never replaced
        assert import_deletable(the_import=restore).filter(pk=_leaf(bob).pk).exists()

    def test_it_offers_back_only_what_was_deleted_since_not_what_the_reader_deleted_there(
        self, alice: User, bob: User, bob_client: Client
    ) -> None:
        clippings_import(reader=alice, data=KINDLE, file_name="My Clippings.txt")
        highlight_delete(highlight=_leaf(alice))
        _, restore = _moved(alice, bob)
        report = reverse("import_report", args=[restore.code])

        first = bob_client.get(report).content.decode()
        bob_client.post(reverse("import_bring_back", args=[restore.code]))
        think = Highlight.objects.get(reader=bob, location_start=412)
        highlight_delete(highlight=think)
        then = bob_client.get(report).content.decode()
        bob_client.post(reverse("import_bring_back", args=[restore.code]))

        assert "Deleted what this import added" not in first
        assert "Deleted what this import added: 1 highlight and its note." in then
        assert _leaf(bob).deleted_at == _leaf(alice).deleted_at
        assert Highlight.objects.alive().filter(pk=think.pk).exists()

    def test_a_note_edited_after_the_restore_keeps_its_highlight(
        self, alice: User, bob: User, bob_client: Client
    ) -> None:
        clippings_import(reader=alice, data=KINDLE, file_name="My Clippings.txt")
        _, restore = _moved(alice, bob)
        highlight_note_update(highlight=_leaf(bob), note="Written here, after the move.")

        page = bob_client.get(reverse("import_report", args=[restore.code])).content.decode()

        assert "1 highlight it added stays: you wrote a note on it here" in page
        assert not import_deletable(the_import=restore).filter(pk=_leaf(bob).pk).exists()
