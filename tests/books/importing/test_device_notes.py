"""A device's notes imported from copies of its file made at different times: the newer
note wins, an older copy never takes it back, words no date can order are all kept, and a
note that changed is a change in the report (docs/readers-import.md, "Notes")."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.exporting.services import library_export
from books.importing.services import clippings_import
from books.models import Highlight, Import
from books.services import highlight_note_update
from books.tasks import run_import
from tests.books.importing.devices import (
    SIDECAR_ANNOTATIONS,
    AppleRow,
    KoboRow,
    apple_books_zip,
    kobo_database,
)
from tests.books.kindle import SACKS, Entry, clippings_file

DIOGENES = "Diogenes founded the Cynic school."
COAL = "An unlit lump of coal at room temperature emits light."
# Core Data seconds: Apple Books' modification dates of the two copies' rows.
MADE, EDITED, EDITED_AGAIN = 555011717.5, 555011782.6, 556408046.8


def _apple_copies(folder: Path) -> tuple[bytes, bytes]:
    """The same Mac's Apple Books at two dates: the note on Diogenes edited in between,
    and the one on coal differing under the same modification date (as in a real pair of
    snapshots, where a tag was renamed without the date moving)."""
    older = apple_books_zip(
        folder / "older",
        [
            AppleRow(1, DIOGENES, "#cyn", created=MADE, modified=EDITED),
            AppleRow(2, COAL, "#fun-fact", created=MADE, modified=EDITED),
        ],
    )
    newer = apple_books_zip(
        folder / "newer",
        [
            AppleRow(1, DIOGENES, "#cynicism", created=MADE, modified=EDITED_AGAIN),
            AppleRow(2, COAL, "@fun-facts", created=MADE, modified=EDITED),
        ],
    )
    return older, newer


def _notes(reader: User) -> dict[str, str]:
    return dict(Highlight.objects.filter(reader=reader).values_list("text", "note"))


def _changes(the_import: Import) -> tuple[int, int]:
    return the_import.counts["notes_attached"], the_import.counts["books_changed"]


@pytest.mark.django_db
class AppleBooksNoteTests:
    def test_an_older_copy_never_takes_back_a_newer_note_and_nothing_flips(
        self, alice: User, tmp_path: Path
    ) -> None:
        older, newer = _apple_copies(tmp_path)
        clippings_import(reader=alice, data=newer, file_name="documents.zip")

        first_older = clippings_import(reader=alice, data=older, file_name="highsierra.zip")

        wanted = {DIOGENES: "#cynicism", COAL: "@fun-facts\n\n#fun-fact"}
        assert _notes(alice) == wanted
        assert _changes(first_older) == (1, 1)  # the coal note gained the other copy's words
        for data in (newer, older, newer):
            again = clippings_import(reader=alice, data=data, file_name="again.zip")
            assert _changes(again) == (0, 0)
            assert _notes(alice) == wanted

    def test_a_newer_copy_replaces_the_notes_it_edited_and_reports_the_change(
        self, alice: User, tmp_path: Path
    ) -> None:
        older, newer = _apple_copies(tmp_path)
        clippings_import(reader=alice, data=older, file_name="highsierra.zip")

        update = clippings_import(reader=alice, data=newer, file_name="documents.zip")

        assert _notes(alice) == {DIOGENES: "#cynicism", COAL: "#fun-fact\n\n@fun-facts"}
        assert _changes(update) == (2, 1)
        assert update.counts["new_highlights"] == 0

    def test_the_page_says_a_file_that_changed_notes_was_imported(
        self, alice_client: Client, tmp_path: Path
    ) -> None:
        older, newer = _apple_copies(tmp_path)
        alice_client.post(reverse("import"), _upload(older))

        changed = alice_client.post(reverse("import"), _upload(newer), follow=True)
        again = alice_client.post(reverse("import"), _upload(newer), follow=True)

        assert "nothing new to add" not in changed.content.decode()
        assert "was already in your library: nothing new to add" in again.content.decode()

    def test_the_background_import_counts_a_changed_note_too(
        self, alice: User, alice_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        older, newer = _apple_copies(tmp_path)
        clippings_import(reader=alice, data=older, file_name="highsierra.zip")
        monkeypatch.setattr("books.importing.background.IMPORT_INLINE_MAX_BYTES", 100)
        alice_client.post(reverse("import"), _upload(newer))
        queued = Import.objects.get(reader=alice, status=Import.Status.QUEUED)

        assert run_import(queued.pk) == Import.Status.DONE

        queued.refresh_from_db()
        assert _changes(queued) == (2, 1)
        assert _notes(alice)[DIOGENES] == "#cynicism"


def _upload(data: bytes) -> dict[str, SimpleUploadedFile]:
    return {"file": SimpleUploadedFile("library.zip", data, content_type="application/zip")}


MACHINES = "Machines hum when they are lonely. 🧠 café"
NOTE = 'First line with \\"quotes\\" and a \\\\ path.\\\nSecond line\\9tabbed\\1'


def _sidecar(note: str, updated: str = "2026-02-20 18:09:21") -> bytes:
    """SIDECAR_ANNOTATIONS with another note (as Lua writes it) on its noted highlight."""
    assert f'["note"] = "{NOTE}"' in SIDECAR_ANNOTATIONS
    return (
        SIDECAR_ANNOTATIONS.replace(f'["note"] = "{NOTE}"', f'["note"] = "{note}"')
        .replace('"2026-02-20 18:09:21"', f'"{updated}"')
        .encode()
    )


@pytest.mark.django_db
class KOReaderNoteTests:
    def test_the_original_after_a_longer_copy_leaves_the_longer_note(self, alice: User) -> None:
        longer = _sidecar("yay, and a longer thought I added later on the device")
        clippings_import(reader=alice, data=longer, file_name="metadata.epub.lua")

        original = clippings_import(reader=alice, data=_sidecar("yay"), file_name="m.lua")

        assert _notes(alice)[MACHINES] == "yay, and a longer thought I added later on the device"
        assert _changes(original) == (0, 0)

    def test_a_note_edited_later_wins_and_the_earlier_copy_changes_nothing(
        self, alice: User
    ) -> None:
        earlier = _sidecar("first thought")
        later = _sidecar("second thought", updated="2026-03-01 09:00:00")
        clippings_import(reader=alice, data=earlier, file_name="metadata.epub.lua")

        update = clippings_import(reader=alice, data=later, file_name="metadata.epub.lua")
        back = clippings_import(reader=alice, data=earlier, file_name="metadata.epub.lua")

        assert _notes(alice)[MACHINES] == "second thought"
        assert _changes(update) == (1, 1)
        assert _changes(back) == (0, 0)

    def test_a_book_with_a_new_highlight_and_a_changed_note_is_counted_once(
        self, alice: User
    ) -> None:
        whole = _sidecar("first thought").decode()
        end = whole.index('    },\n    ["doc_props"]')
        earlier = whole[: whole.index("        [3] = {")] + whole[end:]  # without highlight 3
        clippings_import(reader=alice, data=earlier.encode(), file_name="metadata.epub.lua")
        later = _sidecar("second thought", updated="2026-03-01 09:00:00")

        update = clippings_import(reader=alice, data=later, file_name="metadata.epub.lua")

        assert update.counts["new_highlights"] == 1
        assert _changes(update) == (1, 1)


RIVER = "The river keeps what the town forgets."


def _kobo(path: Path, note: str, modified: str | None) -> bytes:
    row = KoboRow("b2", RIVER, note, kind="note", modified=modified)
    return kobo_database(path, [row])


@pytest.mark.django_db
class KoboNoteTests:
    def test_the_note_with_the_later_date_modified_wins(self, alice: User, tmp_path: Path) -> None:
        earlier = _kobo(tmp_path / "a.sqlite", "İlk düşünce", "2024-11-14T08:00:00Z")
        later = _kobo(tmp_path / "b.sqlite", "Çok güzel tasvir edilmiş", "2024-12-01T18:30:00Z")
        clippings_import(reader=alice, data=earlier, file_name="KoboReader.sqlite")

        update = clippings_import(reader=alice, data=later, file_name="KoboReader.sqlite")
        back = clippings_import(reader=alice, data=earlier, file_name="KoboReader.sqlite")

        assert _notes(alice) == {RIVER: "Çok güzel tasvir edilmiş"}
        assert (_changes(update), _changes(back)) == ((1, 1), (0, 0))


def _edit_note(reader: User, text: str, note: str) -> None:
    highlight = Highlight.objects.get(reader=reader, text=text)
    highlight_note_update(highlight=highlight, note=note)


def _reimports_change_nothing(reader: User, files: list[tuple[bytes, str]], notes: dict) -> None:
    for data, name in files:
        again = clippings_import(reader=reader, data=data, file_name=name)
        assert _changes(again) == (0, 0)
        assert _notes(reader) == notes


@pytest.mark.django_db
class ReaderEditedNoteTests:
    """A note the reader edited here keeps their words, and a newer note from the device
    is kept beside it and counted as a change, in every format that carries notes."""

    def test_a_koreader_note_edited_later_on_the_device_is_kept_beside_the_readers(
        self, alice: User
    ) -> None:
        earlier = _sidecar("first thought")
        later = _sidecar("second thought", updated="2026-03-01 09:00:00")
        clippings_import(reader=alice, data=earlier, file_name="metadata.epub.lua")
        _edit_note(alice, MACHINES, "my own words")

        update = clippings_import(reader=alice, data=later, file_name="metadata.epub.lua")

        wanted = {MACHINES: "my own words\n\nsecond thought"}
        assert {MACHINES: _notes(alice)[MACHINES]} == wanted
        assert _changes(update) == (1, 1)
        assert Highlight.objects.get(reader=alice, text=MACHINES).note_edited is True
        _reimports_change_nothing(
            alice, [(later, "metadata.epub.lua"), (earlier, "metadata.epub.lua")], _notes(alice)
        )

    def test_a_kobo_note_modified_later_is_kept_beside_the_readers(
        self, alice: User, tmp_path: Path
    ) -> None:
        earlier = _kobo(tmp_path / "a.sqlite", "İlk düşünce", "2024-11-14T08:00:00Z")
        later = _kobo(tmp_path / "b.sqlite", "Çok güzel tasvir edilmiş", "2024-12-01T18:30:00Z")
        clippings_import(reader=alice, data=earlier, file_name="KoboReader.sqlite")
        _edit_note(alice, RIVER, "mis palabras")

        update = clippings_import(reader=alice, data=later, file_name="KoboReader.sqlite")

        assert _notes(alice) == {RIVER: "mis palabras\n\nÇok güzel tasvir edilmiş"}
        assert _changes(update) == (1, 1)
        _reimports_change_nothing(
            alice, [(later, "KoboReader.sqlite"), (earlier, "KoboReader.sqlite")], _notes(alice)
        )

    def test_an_apple_books_note_edited_later_is_kept_beside_the_readers(
        self, alice: User, tmp_path: Path
    ) -> None:
        older, newer = _apple_copies(tmp_path)
        clippings_import(reader=alice, data=older, file_name="older.zip")
        _edit_note(alice, DIOGENES, "the dog philosopher")

        update = clippings_import(reader=alice, data=newer, file_name="newer.zip")

        notes = _notes(alice)
        assert notes[DIOGENES] == "the dog philosopher\n\n#cynicism"
        assert update.counts["notes_attached"] == 2  # and the coal note, tied, kept both
        _reimports_change_nothing(alice, [(newer, "n.zip"), (older, "o.zip")], notes)

    def test_an_exogram_export_with_a_newer_note_is_kept_beside_the_readers(
        self, alice: User, bob: User
    ) -> None:
        highlight = Entry(SACKS, "A life-story, an inner narrative.", location="1520-1522")
        first = Entry(SACKS, "device note", kind="Note", location="1522")
        newer = Entry(
            SACKS, "newer device note", kind="Note", location="1522",
            added="Friday, 7 March 2025 10:00:00",
        )  # fmt: skip
        clippings_import(reader=alice, data=clippings_file(highlight, first), file_name="a.txt")
        clippings_import(reader=bob, data=clippings_file(highlight, newer), file_name="b.txt")
        _edit_note(alice, highlight.text, "edited here")
        exported = library_export(reader=bob, format="json").data

        update = clippings_import(reader=alice, data=exported, file_name="bob.json")

        assert _notes(alice) == {highlight.text: "edited here\n\nnewer device note"}
        assert _changes(update) == (1, 1)
        _reimports_change_nothing(alice, [(exported, "bob.json")], _notes(alice))

    def test_an_exogram_export_brings_the_readers_edit_over_the_note_it_was_edited_from(
        self, alice: User, bob: User
    ) -> None:
        highlight = Entry(SACKS, "A life-story, an inner narrative.", location="1520-1522")
        kindle = clippings_file(
            highlight, Entry(SACKS, "device note", kind="Note", location="1522")
        )
        clippings_import(reader=alice, data=kindle, file_name="a.txt")
        clippings_import(reader=bob, data=kindle, file_name="b.txt")
        _edit_note(alice, highlight.text, "edited in the other account")
        exported = library_export(reader=alice, format="json").data

        update = clippings_import(reader=bob, data=exported, file_name="alice.json")

        assert _notes(bob) == {highlight.text: "edited in the other account"}
        assert Highlight.objects.get(reader=bob).note_edited is True
        assert _changes(update) == (1, 1)
        _reimports_change_nothing(bob, [(exported, "a.json"), (kindle, "k.txt")], _notes(bob))
