import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from books.models import Highlight, Import
from tests.books.kindle import MEMORY_LIBRARY, clippings_file


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

    def test_it_fails_on_a_bad_file_and_writes_nothing(self, alice: User, tmp_path: Path) -> None:
        path = tmp_path / "empty.txt"
        path.write_bytes(b"")
        with pytest.raises(CommandError, match="empty"):
            _run("--user", "alice", str(path))
        assert not Import.objects.exists()

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
        assert not Import.objects.exists()

    def test_it_fails_on_an_unknown_reader_or_a_missing_file(
        self, alice: User, tmp_path: Path
    ) -> None:
        with pytest.raises(CommandError, match="No reader named 'zed'"):
            _run("--user", "zed", str(tmp_path / "x.txt"))
        with pytest.raises(CommandError, match="Cannot read"):
            _run("--user", "alice", str(tmp_path / "missing.txt"))


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
