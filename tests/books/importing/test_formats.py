"""The detector reads the content, never the name: every fixture, and the shared samples."""

from pathlib import Path

import pytest

from books.importing.clippings import NOT_A_CLIPPINGS_FILE
from books.importing.formats import (
    BOOKCISION_JSON,
    CLIPPINGS,
    EXOGRAM_JSON,
    JSON_COLON_EXPECTED,
    JSON_CONTROL_CHARACTER,
    JSON_ENDS_EARLY,
    JSON_NAME_EXPECTED,
    JSON_TRAILING_COMMA,
    NOT_A_NOTEBOOK,
    NOT_VALID_JSON,
    NOTEBOOK_HTML,
    READWISE_CSV,
    UNKNOWN_JSON,
    detect_format,
    parse_upload,
)
from books.importing.readwise_csv import NO_HIGHLIGHT_COLUMN
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

    def test_it_detects_readwises_export_header_and_reads_its_books(self) -> None:
        # Detected before too (it has a Highlight column), but read as one untitled book.
        header = (
            "\ufeffHighlight,Book Title,Book Author,Amazon Book ID,Note,Color,Tags,"
            "Location Type,Location,Highlighted at,Document tags\r\n"
        )
        row = "Words.,A Book,An Author,,,,,location,12,2021-03-14 18:07:00+00:00,\r\n"
        data = (header + row).encode()
        assert detect_format(data) == READWISE_CSV
        [clipping] = parse_upload(data).clippings
        assert (clipping.title, clipping.author, clipping.location_start) == (
            "A Book",
            "An Author",
            12,
        )

    def test_a_csv_whose_first_64_kb_end_inside_a_character_is_still_a_csv(self) -> None:
        # Exogram's own export (a byte order mark, then UTF-8) of a Chinese library: read as
        # Windows-1252 for the cut character, its header began "ï»¿Highlight".
        header = "\ufeffHighlight,Title,Author,Note,Location\r\n".encode()
        row = "記憶是一種重建。,一本書,某人,,12\r\n".encode()
        # A note of as many letters as put byte 65,536 one byte into a row's first character.
        pad = (65535 - len(header) - len(row)) % len(row)
        first = f"記憶是一種重建。,一本書,某人,{'x' * pad},12\r\n".encode()
        data = header + first + row * (65536 // len(row))
        with pytest.raises(UnicodeDecodeError):
            data[:65536].decode("utf-8")
        assert detect_format(data) == READWISE_CSV
        assert len(parse_upload(data).clippings) == 1 + 65536 // len(row)

    def test_it_reads_a_clippings_title_named_highlight_as_clippings(self) -> None:
        data = (
            b"Highlight, a Novel (Doe, Jane)\r\n- Your Highlight on Location 1-2 | Added on "
            b"Monday, 3 March 2025 10:00:00\r\n\r\nWords.\r\n==========\r\n"
        )
        assert detect_format(data) == CLIPPINGS


class AnotherFormatsOwnProblemTests:
    """A file the Kindle parser reads nothing of, which plainly is JSON, HTML or CSV, is
    told its own format's problem at its own line, not "not a Kindle file" at line 1."""

    def _problem(self, data: bytes) -> tuple[int, str]:
        result = parse_upload(data)
        assert result.clippings == []
        [problem] = result.problems
        return problem.line, problem.message

    def test_a_trailing_comma_in_json_is_pointed_at_with_its_line_and_column(self) -> None:
        data = (
            b'{"title": "Salt Roads", "authors": "R. Vale",\n'
            b'  "highlights": [{"text": "The road was white."},\n'
            b'                 {"text": "Then it rained."},]}\n'
        )
        assert self._problem(data) == (
            3,
            NOT_VALID_JSON % {"column": 45, "problem": JSON_TRAILING_COMMA},
        )

    @pytest.mark.parametrize(
        ("data", "line", "column", "problem"),
        [
            (b'{"a": 1\n', 1, 8, JSON_ENDS_EARLY),
            (b'[\n  {"a" 1}\n]', 2, 8, JSON_COLON_EXPECTED),
            (b'{\n  "a": "no end\n}', 2, 15, JSON_CONTROL_CHARACTER),
            (b"{not json", 1, 2, JSON_NAME_EXPECTED),
            (b"\xef\xbb\xbf[1,\r\n 2,\r\n]", 2, 3, JSON_TRAILING_COMMA),
        ],
    )
    def test_other_json_errors_say_what_and_where(
        self, data: bytes, line: int, column: int, problem: str
    ) -> None:
        assert self._problem(data) == (
            line,
            NOT_VALID_JSON % {"column": column, "problem": problem},
        )

    def test_a_kindle_file_whose_first_title_starts_with_a_bracket_is_still_read(self) -> None:
        data = (
            b"[Draft] Field Notes (Doe, Jane)\r\n- Your Highlight on Location 1-2 | Added on "
            b"Monday, 3 March 2025 10:00:00\r\n\r\nWords.\r\n==========\r\n"
        )
        result = parse_upload(data)
        assert [c.text for c in result.clippings] == ["Words."]

    def test_html_that_is_no_notebook_says_so(self) -> None:
        data = b"<!DOCTYPE html>\n<html><body><p>My reading list</p></body></html>\n"
        assert self._problem(data) == (1, NOT_A_NOTEBOOK)

    def test_a_notebook_whose_marks_come_late_is_read_as_one(self) -> None:
        padding = b"<!-- " + b"x" * 70_000 + b" -->\n"
        notebook = (FIXTURES / "notebook_mobile.html").read_bytes()
        data = b"<html>" + padding + notebook.split(b"<html", 1)[-1].split(b">", 1)[-1]
        result = parse_upload(data)
        assert result.clippings
        assert [c.text for c in result.clippings] == [
            c.text for c in parse_upload(notebook).clippings
        ]

    @pytest.mark.parametrize(
        ("data", "found"),
        [
            (b"Title,Foo,Bar\nA,B,C\n", "Title, Foo, Bar"),
            (b"Libro;Autor;Cita\nUno;Dos;Tres\nCuatro;Cinco;Seis\n", "Libro, Autor, Cita"),
        ],
    )
    def test_a_csv_without_a_highlight_column_says_what_it_needs_and_found(
        self, data: bytes, found: str
    ) -> None:
        line, message = self._problem(data)
        assert (line, message) == (1, NO_HIGHLIGHT_COLUMN % {"found": found})

    def test_plain_text_is_still_not_a_kindle_file(self) -> None:
        assert self._problem(b"Hello, world\nand so on\n") == (1, NOT_A_CLIPPINGS_FILE)
