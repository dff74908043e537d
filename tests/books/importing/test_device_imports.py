"""KOReader, Kobo and Apple Books files through the import: the same guarantees as a Kindle's.

Idempotent (an updated database adds only what is new), versions merged, notes attached,
the same book from two devices one book, binary uploads through the background path, and
the upload page and `import_clippings` taking them under any name.
"""

import json
import sqlite3
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.importing.kobo import NOT_KOBO
from books.importing.rich import DELETED, EMPTY, HIDDEN
from books.importing.services import clippings_import
from books.models import Book, Highlight, Import, ImportUpload
from books.tasks import run_import
from tests.books.importing.devices import (
    KOBO_ROWS,
    SIDECAR_ANNOTATIONS,
    SIDECAR_OLD,
    KoboRow,
    apple_books_zip,
    kobo_database,
    padded_sidecar,
    peak_memory,
    zip_of,
)


def _texts(reader: User) -> list[str]:
    return sorted(Highlight.objects.filter(reader=reader).values_list("text", flat=True))


def _snapshot(reader: User) -> list[tuple[object, ...]]:
    return sorted(
        Highlight.objects.filter(reader=reader).values_list("pk", "text", "note", "updated")
    )


@pytest.mark.django_db
class DeviceImportTests:
    def test_an_updated_kobo_database_adds_only_what_is_new(
        self, alice: User, tmp_path: Path
    ) -> None:
        first = kobo_database(tmp_path / "KoboReader.sqlite")
        done = clippings_import(reader=alice, data=first, file_name="KoboReader.sqlite")
        assert done.counts["new_highlights"] == 4
        assert done.counts["standalone_notes"] == 1
        assert done.counts["notes_attached"] == 1
        assert done.counts["skipped_in_file"] == {HIDDEN: 1, EMPTY: 1}
        noted = Highlight.objects.get(reader=alice, text="The river keeps what the town forgets.")
        assert (noted.note, noted.chapter) == ("Çok güzel tasvir edilmiş", "Chapter One")
        before = _snapshot(alice)

        again = clippings_import(reader=alice, data=first, file_name="KoboReader.sqlite")
        assert (again.counts["new_highlights"], again.counts["duplicates_skipped"]) == (0, 5)
        assert _snapshot(alice) == before

        later = kobo_database(
            tmp_path / "KoboReader.sqlite",
            [*KOBO_ROWS, KoboRow("b7", "A new line, read on the train.", "New note")],
        )
        update = clippings_import(reader=alice, data=later, file_name="KoboReader.sqlite")
        assert update.counts["new_highlights"] == 1
        assert update.counts["duplicates_skipped"] == 5
        assert Highlight.objects.get(text="A new line, read on the train.").note == "New note"

    def test_a_newer_koreader_sidecar_adds_only_its_new_highlights_and_notes(
        self, alice: User
    ) -> None:
        earlier = SIDECAR_OLD.replace(
            '["text"] = "My grandmother said this."',
            '["text"] = "Page 56 Salt is patient @ 2020-11-14 15:04:00"',
        )
        clippings_import(reader=alice, data=earlier.encode(), file_name="metadata.epub.lua")
        assert Highlight.objects.get(reader=alice, text="Salt is patient").note == ""
        later = clippings_import(reader=alice, data=SIDECAR_OLD.encode(), file_name="m.lua")
        assert later.counts["new_highlights"] == 0
        assert later.counts["notes_attached"] == 1
        note = Highlight.objects.get(reader=alice, text="Salt is patient").note
        assert note == "My grandmother said this."
        before = _snapshot(alice)
        clippings_import(reader=alice, data=SIDECAR_OLD.encode(), file_name="m.lua")
        assert _snapshot(alice) == before

    def test_an_extended_koreader_highlight_is_merged_without_losing_a_word(
        self, alice: User
    ) -> None:
        clippings_import(reader=alice, data=SIDECAR_OLD.encode(), file_name="a.lua")
        extended = SIDECAR_OLD.replace(
            '["text"] = "The sea remembers every boat"',
            '["text"] = "The sea remembers every boat that left the harbour"',
        )
        merged = clippings_import(reader=alice, data=extended.encode(), file_name="b.lua")
        assert merged.counts["extended_merged"] == 1
        assert merged.counts["new_highlights"] == 0
        assert "The sea remembers every boat that left the harbour" in _texts(alice)
        assert "The sea remembers every boat" not in _texts(alice)

    def test_the_same_book_from_a_kindle_and_from_koreader_is_one_book(self, alice: User) -> None:
        kindle = (
            "Tidal Pools (Marrow, Idris; Quist, Mara)\r\n"
            "- Your Highlight on page 12 | Location 170-172 | Added on Monday, March 4, 2024 "
            "9:01:22 PM\r\n\r\nA line from the Kindle.\r\n==========\r\n"
        )
        clippings_import(reader=alice, data=kindle.encode(), file_name="My Clippings.txt")
        clippings_import(reader=alice, data=SIDECAR_OLD.encode(), file_name="metadata.epub.lua")
        assert Book.objects.filter(reader=alice).count() == 1
        assert Highlight.objects.filter(reader=alice).count() == 4

    def test_apple_books_rows_skipped_in_the_file_are_counted_in_the_report(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        data = apple_books_zip(tmp_path / "mac")
        done = clippings_import(reader=alice, data=data, file_name="library.zip")
        assert done.counts["new_highlights"] == 3
        assert done.counts["notes_attached"] == 1
        assert done.counts["skipped_in_file"] == {DELETED: 1, EMPTY: 2}
        page = alice_client.get(done.get_absolute_url()).content.decode()
        assert "Skipped in the file: deleted on the device" in page
        again = clippings_import(reader=alice, data=data, file_name="library.zip")
        assert (again.counts["new_highlights"], again.counts["extended_merged"]) == (0, 0)

    def test_the_command_imports_a_zip_and_says_what_it_skipped(
        self, alice: User, tmp_path: Path
    ) -> None:
        path = tmp_path / "export.bin"
        path.write_bytes(apple_books_zip(tmp_path / "mac"))
        out = StringIO()
        call_command("import_clippings", "--user", "alice", str(path), stdout=out)
        assert "skipped in the file, deleted on the device: 1" in out.getvalue()
        out = StringIO()
        call_command("import_clippings", "--user", "alice", str(path), "--json", stdout=out)
        report = json.loads(out.getvalue())
        assert (report["new_highlights"], report["duplicates_skipped"]) == (0, 4)


def _upload(name: str, data: bytes) -> dict[str, SimpleUploadedFile]:
    return {"file": SimpleUploadedFile(name, data, content_type="application/octet-stream")}


@pytest.mark.django_db
class DeviceUploadTests:
    @pytest.mark.parametrize("kind", ["koreader", "kobo", "apple"])
    def test_the_upload_page_imports_each_under_a_name_that_says_nothing(
        self, alice: User, alice_client: Client, tmp_path: Path, kind: str
    ) -> None:
        data = {
            "koreader": lambda: SIDECAR_ANNOTATIONS.encode(),
            "kobo": lambda: kobo_database(tmp_path / "k.sqlite"),
            "apple": lambda: apple_books_zip(tmp_path / "mac"),
        }[kind]()
        response = alice_client.post(reverse("import"), _upload("upload", data))
        the_import = Import.objects.get(reader=alice)
        assert response.status_code == 302
        assert response["Location"] == the_import.get_absolute_url()
        assert Highlight.objects.filter(reader=alice).count() == {
            "koreader": 2, "kobo": 5, "apple": 4
        }[kind]  # fmt: skip

    def test_a_sqlite_file_that_is_not_a_readers_is_refused_on_the_page(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        path = tmp_path / "x.sqlite"
        connection = sqlite3.connect(path)
        connection.execute("CREATE TABLE invoices (id INTEGER)")
        connection.commit()
        connection.close()
        response = alice_client.post(reverse("import"), _upload("data", path.read_bytes()))
        assert response.status_code == 200
        assert "is not a Kobo" in response.content.decode()
        assert NOT_KOBO.startswith("This SQLite database is not a Kobo")
        assert not Highlight.objects.filter(reader=alice).exists()

    def test_the_upload_page_says_to_zip_the_wal_files_too(self, alice_client: Client) -> None:
        page = alice_client.get(reverse("import")).content.decode()
        assert "-wal" in page
        assert "BKLibrary" in page
        assert "KoboReader.sqlite" in page

    def test_a_large_binary_upload_survives_the_background_path(
        self, alice: User, alice_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("books.importing.background.IMPORT_INLINE_MAX_BYTES", 100)
        data = apple_books_zip(tmp_path / "mac")
        alice_client.post(reverse("import"), _upload("upload", data))
        the_import = Import.objects.get(reader=alice)
        assert the_import.status == Import.Status.QUEUED
        assert bytes(ImportUpload.objects.get(the_import=the_import).data) == data
        assert run_import(the_import.pk) == Import.Status.DONE
        the_import.refresh_from_db()
        assert the_import.counts["new_highlights"] == 3
        assert the_import.counts["skipped_in_file"] == {DELETED: 1, EMPTY: 2}
        assert Highlight.objects.filter(reader=alice).exclude(note="").count() == 1
        assert not ImportUpload.objects.exists()

    def test_a_small_zip_that_unpacks_a_thousand_fold_is_refused_holding_little(
        self, alice: User, alice_client: Client
    ) -> None:
        # The explorer's 267 KB zip of 32 sidecars just under 8 MB each grew the web
        # process by 260 MB: eight of them here, 64 MB from some 64 KB.
        bomb = zip_of(
            {f"b{n}.sdr/metadata.epub.lua": padded_sidecar(8 * 2**20 - 1024) for n in range(8)}
        )
        assert len(bomb) < 256 * 1024
        response, peak = peak_memory(
            lambda: alice_client.post(reverse("import"), _upload("books.zip", bomb))
        )
        assert response.status_code == 200
        page = response.content.decode()
        assert "the files in this zip would unpack" in page
        assert "(a zip bomb?): the zip was not unpacked" in page
        assert peak < 16 * 2**20
        assert Import.objects.get(reader=alice).status == Import.Status.REFUSED
        assert not Highlight.objects.filter(reader=alice).exists()

    def test_a_small_zip_that_unpacks_to_more_than_a_request_reads_goes_to_a_worker(
        self, alice: User, alice_client: Client
    ) -> None:
        data = zip_of({f"b{n}.sdr/metadata.epub.lua": padded_sidecar(2**20) for n in range(3)})
        assert len(data) < 64 * 1024
        alice_client.post(reverse("import"), _upload("books.zip", data))
        the_import = Import.objects.get(reader=alice)
        assert the_import.status == Import.Status.QUEUED
        assert run_import(the_import.pk) == Import.Status.DONE
        assert _texts(alice) == [
            "Every harbour is a promise", "Salt is patient", "The sea remembers every boat"
        ]  # fmt: skip

    def test_a_kobo_database_through_the_background_path(
        self, alice: User, alice_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("books.importing.background.IMPORT_INLINE_MAX_BYTES", 100)
        data = kobo_database(tmp_path / "KoboReader.sqlite")
        alice_client.post(reverse("import"), _upload("KoboReader.sqlite", data))
        the_import = Import.objects.get(reader=alice)
        assert run_import(the_import.pk) == Import.Status.DONE
        assert Highlight.objects.filter(reader=alice).count() == 5
