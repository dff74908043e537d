import json
import zipfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from books.models import Highlight
from tests.books.exporting.library import build_library


@pytest.fixture
def rows(alice: User) -> dict[str, Highlight]:
    return build_library(alice)


@pytest.mark.django_db
class ExportCommandTests:
    def test_it_writes_the_library_in_each_format(
        self, tmp_path: Path, rows: dict[str, Highlight]
    ) -> None:
        out = StringIO()
        call_command("export", str(tmp_path / "lib.zip"), user="alice", format="md", stdout=out)
        assert "Wrote" in out.getvalue()
        assert len(zipfile.ZipFile(tmp_path / "lib.zip").namelist()) == 3
        call_command("export", str(tmp_path / "lib.csv"), user="alice", format="csv", stdout=out)
        assert (tmp_path / "lib.csv").read_bytes().startswith(b"\xef\xbb\xbfHighlight,")
        call_command("export", str(tmp_path / "lib.json"), user="alice", format="json", stdout=out)
        assert len(json.loads((tmp_path / "lib.json").read_text())["books"]) == 3

    def test_it_writes_one_book(self, tmp_path: Path, rows: dict[str, Highlight]) -> None:
        code = str(rows["To"].book.code)
        call_command(
            "export", str(tmp_path / "f.md"), user="alice", format="md", book=code,
            stdout=StringIO(),
        )  # fmt: skip
        assert (tmp_path / "f.md").read_text().startswith('---\ntitle: "Ficciones"\n')

    def test_it_refuses_another_readers_book(
        self, tmp_path: Path, bob: User, rows: dict[str, Highlight]
    ) -> None:
        code = str(rows["To"].book.code)
        with pytest.raises(CommandError, match="bob has no book"):
            call_command("export", str(tmp_path / "x.md"), user="bob", format="md", book=code)
        assert not (tmp_path / "x.md").exists()

    def test_it_refuses_a_malformed_code_and_an_unknown_reader(
        self, tmp_path: Path, alice: User
    ) -> None:
        with pytest.raises(CommandError, match="is not a book code"):
            call_command("export", str(tmp_path / "x"), user="alice", format="md", book="x")
        with pytest.raises(CommandError, match="No reader named 'nobody'"):
            call_command("export", str(tmp_path / "x"), user="nobody", format="md")

    def test_it_says_when_it_cannot_write(self, tmp_path: Path, alice: User) -> None:
        with pytest.raises(CommandError, match="Cannot write"):
            call_command(
                "export", str(tmp_path / "missing" / "x.json"), user="alice", format="json"
            )
