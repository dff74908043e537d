import io
import json
import zipfile
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.importing import enrich
from books.importing.selectors import imports_listed
from books.importing.upload import FILE_EMPTY
from books.models import Highlight, Import
from books.services import highlight_delete
from books.tasks import purge_deleted
from tests.books.kindle import BORGES, MEMORY_LIBRARY, Entry, clippings_file


def _run(*args: str) -> str:
    out = StringIO()
    call_command("import_clippings", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
class ImportCommandTests:
    def test_it_imports_and_prints_the_report(self, alice: User, tmp_path: Path) -> None:
        path = tmp_path / "My Clippings.txt"
        path.write_bytes(clippings_file(*MEMORY_LIBRARY))
        output = _run("--user", "alice", str(path))
        assert "new highlights" in output
        assert "  books touched                2\n  new books                    2\n" in output
        again = _run("--user", "alice", str(path))
        assert "  new books                    0\n" in again
        assert Highlight.objects.filter(reader=alice).count() == 5

    def test_a_json_files_problems_are_printed_without_a_line(
        self, alice: User, tmp_path: Path
    ) -> None:
        books = [
            {"title": "T", "highlights": [{"text": "kept"}, {"text": "x", "location_start": "ten"}]}
        ]
        path = tmp_path / "e.json"
        path.write_text(json.dumps({"format": "exogram", "version": 1, "books": books}))

        output = _run("--user", "alice", str(path))

        assert "  'T', highlight 2: a location must be a whole number, not 'ten'\n" in output
        assert "line 0" not in output

    def test_it_says_which_entries_were_left_out_because_the_reader_deleted_them(
        self, alice: User, tmp_path: Path
    ) -> None:
        path = tmp_path / "My Clippings.txt"
        path.write_bytes(clippings_file(*MEMORY_LIBRARY))
        first = _run("--user", "alice", str(path))
        for start in (380, 1520):
            highlight_delete(highlight=Highlight.objects.get(reader=alice, location_start=start))
        Highlight.objects.filter(reader=alice, location_start=1520).update(
            deleted_at=timezone.now() - timedelta(days=31)
        )
        purge_deleted()

        again = _run("--user", "alice", str(path))

        assert "left out" not in first
        assert (
            "  1 entry in this file was left out: you deleted it, and it is in Recently deleted "
            "(/deleted/).\n"
            "  1 entry in this file was left out: you deleted it, and it has since been removed "
            "for good.\n"
            "  Nothing new in this file: everything else in it is already in your library.\n"
        ) in again
        # Plain words on the page's counts: the JSON report's stay as they were.
        report = json.loads(_run("--user", "alice", str(path), "--json"))
        assert (report["deleted_skipped"], report["already_deleted"]) == (1, 1)

    def test_it_says_how_many_hashtags_were_not_made_tags_past_the_cap(
        self, alice: User, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(enrich, "HASHTAG_TAGS_PER_FILE", 1)
        path = tmp_path / "My Clippings.txt"
        path.write_bytes(
            clippings_file(
                Entry(BORGES, "The artist keeps looking.", location="100-102"),
                Entry(BORGES, "#artist #being #looking", kind="Note", location="102"),
            )
        )

        output = _run("--user", "alice", str(path))

        assert (
            "  2 hashtags in this file were not made tags: at most 1 new tags from one file.\n"
            in output
        )

    def test_it_says_nothing_of_left_out_entries_when_none_were(
        self, alice: User, tmp_path: Path
    ) -> None:
        path = tmp_path / "My Clippings.txt"
        path.write_bytes(clippings_file(*MEMORY_LIBRARY))
        _run("--user", "alice", str(path))

        again = _run("--user", "alice", str(path))

        assert "left out" not in again
        assert "Nothing new" not in again

    def test_it_prints_json_and_is_idempotent(self, alice: User, tmp_path: Path) -> None:
        path = tmp_path / "My Clippings.txt"
        path.write_bytes(clippings_file(*MEMORY_LIBRARY))
        first = json.loads(_run("--user", "alice", str(path), "--json"))
        second = json.loads(_run("--user", "alice", str(path), "--json"))
        assert first["new_highlights"] == 5
        assert (first["new_books"], second["new_books"]) == (2, 0)
        assert first["notes_attached"] == 1
        assert first["bookmarks_skipped"] == 1
        assert first["problems"] == []
        assert second["new_highlights"] == 0
        assert second["duplicates_skipped"] == 6
        assert first["sha256"] == second["sha256"]
        assert Import.objects.filter(reader=alice).count() == 2

    def test_it_refuses_a_bad_file_and_adds_nothing(self, alice: User, tmp_path: Path) -> None:
        path = tmp_path / "empty.txt"
        path.write_bytes(b"")
        with pytest.raises(CommandError, match="empty"):
            _run("--user", "alice", str(path))
        # Only the refusal is kept (RefusedImportCommandTests).
        assert [i.status for i in Import.objects.all()] == [Import.Status.REFUSED]
        assert not Highlight.objects.exists()

    def test_it_says_what_the_page_says_of_a_file_in_another_format(
        self, alice: User, tmp_path: Path
    ) -> None:
        path = tmp_path / "highlights.csv"
        path.write_bytes(b"Title,Foo,Bar\nA,B,C\n")
        with pytest.raises(CommandError, match=r"at line 1: this CSV's header has no Highlight"):
            _run("--user", "alice", str(path))
        path = tmp_path / "export.json"
        path.write_bytes(b'[\n  {"text": "x"},\n]\n')
        with pytest.raises(CommandError, match="at line 2: not valid JSON, at column 16: a comma"):
            _run("--user", "alice", str(path))
        assert not Highlight.objects.exists()

    def test_it_fails_on_an_unknown_reader_or_a_missing_file(
        self, alice: User, tmp_path: Path
    ) -> None:
        with pytest.raises(CommandError, match="No reader named 'zed'"):
            _run("--user", "zed", str(tmp_path / "x.txt"))
        with pytest.raises(CommandError, match="Cannot read"):
            _run("--user", "alice", str(tmp_path / "missing.txt"))
        # A file never read is no refusal of it: nothing is kept.
        assert not Import.objects.exists()


PICTURE = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 40


def _bomb() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("KoboReader.sqlite", b"\x00" * (16 * 1024 * 1024))
    return buffer.getvalue()


# A file of each kind the page refuses, and what both the page and the command say of it.
REFUSED_FILES = [
    ("picture.png", PICTURE, "This file is an image (PNG), not highlights."),
    ("empty.txt", b"", "The file is empty: there is nothing to import."),
    ("export.json", b'[\n  {"text": "x"},\n]\n', "at line 2: not valid JSON, at column 16"),
    ("notes.txt", b"just some notes\nnothing else\n", "This text file is in none of the formats"),
    ("kobo.zip", _bomb(), "Nothing in this file could be imported: 'KoboReader.sqlite'"),
]


def _refusals_listed(client: Client) -> list[tuple[str, str]]:
    """Past imports as the import page's context gives them: each refused file and why."""
    imports = client.get(reverse("import")).context["imports"]
    return [(i.file_name, i.error) for i in imports if i.status == Import.Status.REFUSED]


@pytest.mark.django_db
class RefusedImportCommandTests:
    """A file the command refuses is kept in Past imports as the page keeps it."""

    @pytest.mark.parametrize(("name", "data", "reason"), REFUSED_FILES)
    def test_it_lists_a_refused_file_as_the_page_does(
        self,
        alice: User,
        alice_client: Client,
        tmp_path: Path,
        name: str,
        data: bytes,
        reason: str,
    ) -> None:
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(CommandError) as refused:
            _run("--user", "alice", str(path))
        alice_client.post(reverse("import"), {"file": SimpleUploadedFile(name, data)})

        by_page, by_command = _refusals_listed(alice_client)  # newest first
        assert by_command == by_page
        assert reason in by_command[1]
        # The command says what the page keeps, its line number too.
        assert str(refused.value) == f"{path}: {by_command[1]}"
        assert "Refused: nothing added" in alice_client.get(reverse("import")).content.decode()
        assert not Highlight.objects.exists()

    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_it_refuses_a_file_over_the_limit_with_the_limit(
        self, alice: User, tmp_path: Path
    ) -> None:
        path = tmp_path / "big.txt"
        path.write_bytes(b"x" * (1024 * 1024 + 100))
        with pytest.raises(CommandError, match=r"big.txt: The file is 1.1 MB; the limit is 1 MB."):
            _run("--user", "alice", str(path))

        [listed] = imports_listed(alice.pk)
        assert (listed.file_name, listed.status) == ("big.txt", Import.Status.REFUSED)
        assert listed.error == "The file is 1.1 MB; the limit is 1 MB."

    def test_its_json_carries_the_refusal(self, alice: User, tmp_path: Path) -> None:
        path = tmp_path / "empty.txt"
        path.write_bytes(b"")
        out = StringIO()
        with pytest.raises(CommandError, match="empty"):
            call_command("import_clippings", "--user", "alice", "--json", str(path), stdout=out)

        report = json.loads(out.getvalue())
        refused = Import.objects.get(reader=alice)
        assert report["code"] == str(refused.code)
        assert (report["file_name"], report["status"]) == ("empty.txt", "refused")
        assert report["error"] == FILE_EMPTY

    def test_a_good_file_still_imports_beside_a_refused_one(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        (tmp_path / "empty.txt").write_bytes(b"")
        (tmp_path / "My Clippings.txt").write_bytes(clippings_file(*MEMORY_LIBRARY))
        with pytest.raises(CommandError):
            _run("--user", "alice", str(tmp_path / "empty.txt"))
        report = json.loads(_run("--user", "alice", "--json", str(tmp_path / "My Clippings.txt")))

        assert (report["status"], report["error"], report["new_highlights"]) == ("done", "", 5)
        statuses = [(i.file_name, i.status) for i in imports_listed(alice.pk)]
        assert statuses == [("My Clippings.txt", "done"), ("empty.txt", "refused")]

    def test_another_reader_never_sees_it(
        self, alice_client: Client, bob_client: Client, tmp_path: Path
    ) -> None:
        (tmp_path / "picture.png").write_bytes(PICTURE)
        with pytest.raises(CommandError):
            _run("--user", "alice", str(tmp_path / "picture.png"))

        assert [name for name, _ in _refusals_listed(alice_client)] == ["picture.png"]
        assert _refusals_listed(bob_client) == []


@pytest.mark.django_db
class ImportCommandFormatsTests:
    @pytest.mark.parametrize(
        ("fixture", "kept"),
        [("notebook_desktop.html", 3), ("readwise.csv", 5), ("bookcision.json", 3)],
    )
    def test_it_imports_other_formats_whatever_their_name(
        self, alice: User, tmp_path: Path, fixture: str, kept: int
    ) -> None:
        path = tmp_path / "export.txt"
        path.write_bytes((Path(__file__).parent / "fixtures" / fixture).read_bytes())
        report = json.loads(_run("--user", "alice", "--json", str(path)))
        assert Highlight.objects.filter(reader=alice).count() == kept
        again = json.loads(_run("--user", "alice", "--json", str(path)))
        assert again["new_highlights"] == 0
        assert report["problems"] == Import.objects.filter(reader=alice).last().problems  # type: ignore[union-attr]

    def test_it_exports_and_reimports_json_between_readers(
        self, alice: User, bob: User, tmp_path: Path
    ) -> None:
        source = tmp_path / "My Clippings.txt"
        source.write_bytes(clippings_file(*MEMORY_LIBRARY))
        _run("--user", "alice", str(source))
        out = tmp_path / "library.json"
        call_command("export", str(out), user="alice", format="json", stdout=StringIO())
        _run("--user", "bob", str(out))
        texts = sorted(Highlight.objects.filter(reader=bob).values_list("text", "note"))
        assert texts == sorted(Highlight.objects.filter(reader=alice).values_list("text", "note"))
