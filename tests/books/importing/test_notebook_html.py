"""The Kindle notebook HTML parser, on fixtures in ./fixtures (invented text in the shapes
of FORMAT.md), and on the real samples beside the shared data when they are there."""

from pathlib import Path

import pytest

from books.importing.notebook_html import NOT_A_NOTEBOOK, parse_notebook_html
from books.importing.rich import RichClipping
from tests.corpus import require_clippings

FIXTURES = Path(__file__).parent / "fixtures"


def parse(name: str) -> list[RichClipping]:
    result = parse_notebook_html((FIXTURES / name).read_bytes())
    assert all(isinstance(c, RichClipping) for c in result.clippings)
    return result.clippings  # type: ignore[return-value]


class NotebookHtmlTests:
    def test_it_reads_the_malformed_desktop_export(self) -> None:
        clippings = parse("notebook_desktop.html")
        assert [(c.kind, c.location_start, c.location_end) for c in clippings] == [
            ("highlight", 52, None),
            ("highlight", 61, 63),
            ("note", 63, None),
            ("highlight", 3031, None),
            ("bookmark", 3040, None),
        ]
        first = clippings[0]
        assert first.title == "The Quiet Engine"
        assert first.author == "Okonkwo, Chidi"
        assert first.text == "Machines hum when they are lonely."
        assert first.line == 18

    def test_it_keeps_the_section_and_chapter_and_the_colour(self) -> None:
        clippings = parse("notebook_desktop.html")
        assert [c.chapter for c in clippings[:4]] == [
            "Part One > Chapter 1", "Part One > Chapter 1", "Part One > Chapter 1",
            "Part Two > Chapter 7",
        ]  # fmt: skip
        assert [c.colour for c in clippings[:4]] == ["yellow", "pink", "", "blue"]

    def test_it_unescapes_entities(self) -> None:
        assert parse("notebook_desktop.html")[1].text == "The engine & the river <both> keep time."

    def test_it_reads_the_mobile_export_with_pages_and_line_breaks(self) -> None:
        result = parse_notebook_html((FIXTURES / "notebook_mobile.html").read_bytes())
        clippings = result.clippings
        assert [(c.kind, c.page, c.location_start) for c in clippings] == [
            ("highlight", None, 744),
            ("note", None, 745),
            ("highlight", "12", 870),
            ("highlight", "xii", None),
        ]
        assert clippings[2].text == "Every coast keeps\nits own calendar."
        assert clippings[0].title == "A Field Guide to Tides"
        assert "not a heading" not in " ".join(c.text for c in clippings)

    def test_it_reports_a_heading_without_a_place_with_its_line(self) -> None:
        result = parse_notebook_html((FIXTURES / "notebook_mobile.html").read_bytes())
        assert result.entries == 5
        [problem] = result.problems
        assert problem.line == 54
        assert "no location or page" in problem.message

    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            (
                "notebook_zh.html",
                [("highlight", 745, None), ("note", 745, None), ("highlight", 800, "12")],
            ),
            ("notebook_es.html", [("highlight", 1901, "125"), ("note", 1902, None)]),
        ],
    )
    def test_it_reads_localized_headings(
        self, name: str, expected: list[tuple[str, int, str | None]]
    ) -> None:
        assert [(c.kind, c.location_start, c.page) for c in parse(name)] == expected

    def test_it_says_when_html_is_not_a_notebook(self) -> None:
        result = parse_notebook_html(b"<html><body><p>Hello</p></body></html>")
        assert result.clippings == []
        assert result.problems[0].message == NOT_A_NOTEBOOK

    @pytest.mark.corpus
    def test_it_reads_every_real_sample_without_a_problem(self) -> None:
        samples = sorted((require_clippings() / "html").glob("*.html"))
        assert samples, "the shared folder has no notebook samples in html/"
        for sample in samples:
            result = parse_notebook_html(sample.read_bytes())
            assert result.problems == [], sample.name
            assert len(result.clippings) == result.entries > 0
            assert all(c.title and (c.location_start or c.page) for c in result.clippings)


class NotebookEmptyNoteTests:
    def test_it_hands_on_an_empty_note_for_the_import_to_skip(self) -> None:
        page = (
            '<div class="bookTitle">A Field Guide to Tides</div><div class="authors">Marsh, Ada'
            '</div><div class="noteHeading">Note -  Location 745</div><div class="noteText">'
            '</div><div class="noteHeading">Highlight (<span class="highlight_blue">blue</span>)'
            ' -  Location 750</div><div class="noteText"></div>'
        )
        result = parse_notebook_html(page.encode())
        assert [(c.kind, c.text, c.location_start) for c in result.clippings] == [("note", "", 745)]
        assert [p.message for p in result.problems] == [
            "an empty highlight under 'Highlight (blue) - Location 750'"
        ]
