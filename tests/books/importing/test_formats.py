"""The detector reads the content, never the name: every fixture, and the shared samples."""

from pathlib import Path

import pytest

from books.importing.formats import (
    BOOKCISION_JSON,
    CLIPPINGS,
    EXOGRAM_JSON,
    NOTEBOOK_HTML,
    READWISE_CSV,
    UNKNOWN_JSON,
    detect_format,
    parse_upload,
)
from tests.corpus import require_clippings

FIXTURES = Path(__file__).parent / "fixtures"

EXPECTED = {".txt": CLIPPINGS, ".html": NOTEBOOK_HTML, ".csv": READWISE_CSV}
JSON_FIXTURES = {"bookcision.json": BOOKCISION_JSON, "exogram.json": EXOGRAM_JSON}


def _expected(path: Path) -> str:
    return JSON_FIXTURES.get(path.name) or EXPECTED[path.suffix]


@pytest.mark.parametrize("path", sorted(FIXTURES.iterdir()), ids=lambda p: p.name)
class DetectFormatTests:
    def test_it_detects_every_fixture_by_its_content(self, path: Path) -> None:
        assert detect_format(path.read_bytes()) == _expected(path)

    def test_it_parses_every_fixture_into_clippings(self, path: Path) -> None:
        result = parse_upload(path.read_bytes())
        assert result.entries == len(result.clippings) + len(result.problems)


class DetectOtherContentTests:
    @pytest.mark.corpus
    def test_it_detects_the_real_files(self) -> None:
        files = [p for p in require_clippings().rglob("*") if p.suffix in (".txt", ".html")]
        for path in files:
            assert detect_format(path.read_bytes()) == EXPECTED[path.suffix], path.name

    def test_it_calls_other_json_json_and_says_what_it_expected(self) -> None:
        assert detect_format(b'{"hello": "world"}') == UNKNOWN_JSON
        [problem] = parse_upload(b'{"hello": "world"}').problems
        assert "neither an Exogram export" in problem.message

    def test_it_leaves_broken_json_and_plain_text_to_the_clippings_parser(self) -> None:
        assert detect_format(b"{not json") == CLIPPINGS
        assert detect_format(b"Just some text\nwith lines\n") == CLIPPINGS

    def test_it_reads_a_clippings_title_named_highlight_as_clippings(self) -> None:
        data = (
            b"Highlight, a Novel (Doe, Jane)\r\n- Your Highlight on Location 1-2 | Added on "
            b"Monday, 3 March 2025 10:00:00\r\n\r\nWords.\r\n==========\r\n"
        )
        assert detect_format(data) == CLIPPINGS
