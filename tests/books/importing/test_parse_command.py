import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.books.kindle import MEMORY_LIBRARY, clippings_file


class ParseClippingsCommandTests:
    def test_it_prints_every_field_as_json(self, tmp_path: Path) -> None:
        path = tmp_path / "My Clippings.txt"
        path.write_bytes(clippings_file(*MEMORY_LIBRARY))
        out = StringIO()
        call_command("parse_clippings", str(path), "--json", stdout=out)
        parsed = json.loads(out.getvalue())
        assert parsed["problems"] == []
        first = parsed["clippings"][0]
        assert first["title"] == "Ficciones"
        assert first["author"] == "Borges, Jorge Luis"
        assert (first["kind"], first["location_start"], first["location_end"]) == (
            "highlight",
            412,
            414,
        )
        assert first["added_at"].startswith("2025-03-03T10:00:00")
        assert first["language"] == "en"
        assert first["line"] == 1
        assert [c["kind"] for c in parsed["clippings"]].count("bookmark") == 1

    def test_it_fails_on_a_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError):
            call_command("parse_clippings", str(tmp_path / "missing.txt"))
