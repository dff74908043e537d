"""KOReader's sidecars (both layouts) and JSON export become clippings; hostile ones do not run."""

import json
from datetime import UTC, datetime
from pathlib import Path

from books.importing.formats import KOREADER_JSON, detect_format, parse_upload
from books.importing.koreader import (
    SIDECAR_BOOKMARKS_OF,
    SIDECAR_EMPTY_OF,
    parse_koreader_json,
    parse_koreader_lua,
)
from books.importing.rich import RichClipping
from tests.books.importing.devices import SIDECAR_ANNOTATIONS, SIDECAR_OLD, hostile_sidecar


def _highlights(data: bytes, source: str = "") -> list[RichClipping]:
    result = parse_koreader_lua(data, source=source)
    found = [c for c in result.clippings if c.kind != "bookmark"]
    assert all(isinstance(c, RichClipping) for c in found)
    return found  # type: ignore[return-value]


class KOReaderSidecarTests:
    def test_it_reads_the_annotations_layout(self) -> None:
        result = parse_koreader_lua(SIDECAR_ANNOTATIONS.encode())
        assert (result.entries, len(result.clippings), result.problems) == (3, 3, [])
        bookmark, first, second = result.clippings
        assert bookmark.kind == "bookmark"
        assert isinstance(first, RichClipping)
        assert isinstance(second, RichClipping)
        assert (first.title, first.author, first.page, first.chapter, first.colour) == (
            "The Quiet Engine", "Chidi Okonkwo", "21", "Chapter 1", "yellow",
        )  # fmt: skip
        assert first.text == "Machines hum when they are lonely. 🧠 café"
        assert first.note == 'First line with "quotes" and a \\ path.\nSecond line\ttabbed\x01'
        assert first.added_at == datetime(2026, 2, 20, 18, 8, 18, tzinfo=UTC)
        assert first.note_added_at == datetime(2026, 2, 20, 18, 9, 21, tzinfo=UTC)
        assert first.line == 11
        assert (second.text, second.note, second.colour) == (
            "The river keeps\nwhat the town forgets.", "", "blue",
        )  # fmt: skip

    def test_it_reads_the_older_layout_with_notes_from_the_twin_bookmarks(self) -> None:
        result = parse_koreader_lua(SIDECAR_OLD.encode())
        assert (result.entries, result.problems) == (4, [])
        highlights = {c.text: c for c in result.clippings if c.kind == "highlight"}
        assert [c.kind for c in result.clippings].count("bookmark") == 1
        assert {text: (c.page, c.note) for text, c in highlights.items()} == {  # type: ignore[attr-defined]
            "The sea remembers every boat": ("56", ""),
            # its twin's `text` is the reader's note…
            "Salt is patient": ("56", "My grandmother said this."),
            # …or KOReader's own "Page N … @ date" line, which is no note
            "Every harbour is a promise": ("60", ""),
        }
        first = highlights["Salt is patient"]
        assert (first.title, first.author) == ("Tidal Pools", "Mara Quist; Idris Marrow")

    def test_a_highlighted_bookmark_without_its_highlight_is_kept_from_its_notes(self) -> None:
        text = SIDECAR_OLD.replace(
            '["text"] = "Salt is patient"', '["text"] = "Salt is patient"', 1
        )
        # Drop page 60's highlight: its twin bookmark still holds the text.
        start = text.index("        [60] = {")
        end = text.index('        }\n    },\n    ["bookmarks"]')
        text = text[:start].rstrip().rstrip(",") + "\n" + text[end + len("        }\n") :]
        result = parse_koreader_lua(text.encode())
        assert "Every harbour is a promise" in [c.text for c in result.clippings]
        assert result.entries == len(result.clippings) + len(result.problems)

    def test_the_title_comes_from_the_path_when_the_file_has_none(self) -> None:
        bare = (
            b"-- /mnt/onboard/x/Dune.sdr/Dune.epub.annotations.lua\n"
            b'return { ["annotations"] = {\n [1] = { ["pos0"] = "/p", ["pageno"] = 2,'
            b' ["text"] = "Fear is the mind-killer." } } }'
        )
        assert _highlights(bare)[0].title == "Dune"
        no_comment = bare.split(b"\n", 1)[1]
        assert _highlights(no_comment, source="Books/Dune.sdr/metadata.epub.lua")[0].title == "Dune"
        assert _highlights(no_comment)[0].title == "Untitled"

    def test_a_command_in_an_entry_is_never_run_and_is_a_problem_with_its_line(
        self, tmp_path: Path
    ) -> None:
        marker = tmp_path / "ran"
        result = parse_koreader_lua(hostile_sidecar(marker).encode())
        assert [c.text for c in result.clippings] == ["A harmless highlight"]
        assert [(p.line, p.message) for p in result.problems] == [
            (14, "annotation 2: 'os' (only data is read, nothing is run)")
        ]
        assert result.entries == 2
        assert not marker.exists()

    def test_a_command_before_the_data_refuses_the_file(self, tmp_path: Path) -> None:
        marker = tmp_path / "ran"
        result = parse_upload(hostile_sidecar(marker, first_line=True).encode())
        assert result.clippings == []
        assert [(p.line, p.message) for p in result.problems] == [
            (
                1,
                "not KOReader data: 'os' where 'return {' was expected; "
                "the file was read, never run",
            )
        ]
        assert not marker.exists()

    def test_a_sidecar_without_highlights_says_so_naming_its_book(self) -> None:
        result = parse_koreader_lua(
            b'-- x\nreturn { ["annotations"] = {}, ["doc_props"] = { ["title"] = "README" } }'
        )
        assert (result.clippings, result.problems, result.entries) == ([], [], 0)
        assert result.holds_nothing == SIDECAR_EMPTY_OF % {"title": "README"}

    def test_a_sidecar_of_only_bookmarks_says_so(self) -> None:
        result = parse_koreader_lua(
            b"-- /mnt/onboard/Dune.sdr/metadata.epub.lua\n"
            b'return { ["annotations"] = { [1] = { ["page"] = "/body/p[1]/text().0",'
            b' ["pageno"] = 3, ["text"] = "in Chapter 1" } } }'
        )
        assert [c.kind for c in result.clippings] == ["bookmark"]
        assert result.problems == []
        assert result.holds_nothing == SIDECAR_BOOKMARKS_OF % {"title": "Dune"}

    def test_a_sidecar_with_a_highlight_holds_something(self) -> None:
        assert parse_koreader_lua(SIDECAR_ANNOTATIONS.encode()).holds_nothing == ""

    def test_a_string_left_open_is_reported_on_its_own_line_and_the_rest_is_kept(
        self,
    ) -> None:
        # The string on line 6 has no closing quote. Read on over the line break, it ended
        # at line 7's first quote, and the fault was reported past it.
        data = (
            b"-- a sidecar\n"
            b"return {\n"
            b'    ["annotations"] = {\n'
            b"        [1] = {\n"
            b'            ["chapter"] = "Shore",\n'
            b'            ["text"] = "The quote is never closed,\n'
            b'            ["pos0"] = "/body/DocFragment[2]/body/p[1]/text().0",\n'
            b"        },\n"
            b"        [2] = {\n"
            b'            ["text"] = "The second one is whole.",\n'
            b'            ["pos0"] = "/body/DocFragment[2]/body/p[3]/text().0",\n'
            b"        },\n"
            b"    },\n"
            b'    ["doc_props"] = { ["title"] = "Low Water" },\n'
            b"}\n"
        )
        result = parse_koreader_lua(data)
        assert [(c.text, c.title) for c in result.clippings] == [
            ("The second one is whole.", "Low Water")
        ]
        assert [(p.line, p.message) for p in result.problems] == [
            (6, "annotation 1: a string that never ends (only data is read, nothing is run)")
        ]

    def test_an_older_sidecar_cut_inside_a_string_points_at_that_line_first(self) -> None:
        data = (
            b"-- cut short\n"
            b"return {\n"
            b'    ["highlight"] = {\n'
            b"        [4] = {\n"
            b"            [1] = {\n"
            b'                ["text"] = "cut here,\n'
            b'                ["chapter"] = "Two",\n'
        )
        result = parse_koreader_lua(data)
        assert result.clippings == []
        first = result.problems[0]
        assert (first.line, first.message) == (
            6,
            "highlight 1 of page 4: a string that never ends (only data is read, nothing is run)",
        )

    def test_a_line_break_inside_a_string_is_kept_when_the_file_reads_cleanly(self) -> None:
        # calibre's KOReader plugin wrote `keywords` with bare line breaks: still just text.
        data = (
            b"return {\n"
            b'    ["doc_props"] = { ["title"] = "Kept", ["keywords"] = "one\ntwo" },\n'
            b'    ["annotations"] = { [1] = { ["text"] = "Whole.", ["pos0"] = "/p[1].0" } },\n'
            b"}\n"
        )
        result = parse_koreader_lua(data)
        assert result.problems == []
        assert [(c.text, c.title) for c in result.clippings] == [("Whole.", "Kept")]

    def test_it_is_told_by_content_under_any_name(self) -> None:
        assert detect_format(SIDECAR_OLD.encode()) == "koreader-lua"
        assert detect_format(b"\xef\xbb\xbf" + SIDECAR_ANNOTATIONS.encode()) == "koreader-lua"
        assert detect_format(b"return {}") == "koreader-lua"
        assert detect_format(b"Return of the King (Tolkien)\n- Your Highlight") == "clippings"


EXPORT = {
    "version": "json/1.0.0",
    "created_on": 1704543882,
    "documents": [
        {
            "file": "/mnt/onboard/Quist, Mara/Tidal Pools - Mara Quist.epub",
            "title": "Tidal Pools",
            "author": "Mara Quist",
            "entries": [
                {"time": 1701612097, "page": 24, "sort": "highlight", "drawer": "lighten",
                 "text": "Salt is patient\nand so is the sea", "chapter": "Tides"},
                {"time": 1701612176, "page": 27, "sort": "annotation", "drawer": "comment",
                 "text": "Every harbour is a promise", "note": "Yes.", "color": "Green"},
                {"time": 1701612200, "page": 30, "sort": "highlight", "text": ""},
            ],
        },
        {"file": "/books/Notes on Walking.pdf", "entries": [{"page": 3, "text": "Walk on."}]},
    ],
}  # fmt: skip


class KOReaderJsonTests:
    def test_it_reads_the_exporters_documents(self) -> None:
        data = json.dumps(EXPORT).encode()
        assert detect_format(data) == KOREADER_JSON
        result = parse_upload(data)
        assert result.entries == 4
        assert [(p.line, p.message) for p in result.problems] == [
            (3, "document 1 'Tidal Pools', entry 3: no text")
        ]
        first, second, third = result.clippings
        assert isinstance(second, RichClipping)
        assert (first.title, first.author, first.page, first.text) == (
            "Tidal Pools", "Mara Quist", "24", "Salt is patient\nand so is the sea",
        )  # fmt: skip
        assert first.added_at == datetime.fromtimestamp(1701612097, UTC)
        assert (second.note, second.colour) == ("Yes.", "green")
        assert third.title == "Notes on Walking"

    def test_it_reads_a_single_books_export_with_its_files_list(self) -> None:
        export = {
            "files": [{"file": "/books/Tidal Pools.epub", "title": "Tidal Pools",
                       "author": "Mara Quist", "version": "json/1.0.0"}],
            "entries": [
                {"text": "Salt is patient", "time": 1701612097, "sort": "highlight", "page": 3},
                {"text": "Every harbour", "sort": "annotation", "drawer": "comment",
                 "note": "Yes.", "book": "Harbour Lights", "author": "Idris Marrow"},
            ],
        }  # fmt: skip
        data = json.dumps(export).encode()
        assert detect_format(data) == KOREADER_JSON
        first, second = parse_upload(data).clippings
        assert (first.title, first.author, first.page) == ("Tidal Pools", "Mara Quist", "3")
        assert (second.title, second.author) == ("Harbour Lights", "Idris Marrow")

    def test_json_that_is_no_export_is_not_taken_for_one(self) -> None:
        assert parse_koreader_json({"documents": "x"}).problems[0].message == (
            "not a KOReader JSON export"
        )
