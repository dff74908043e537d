import json
from datetime import UTC, datetime
from pathlib import Path

from books.importing.exogram_json import parse_exogram_json
from books.importing.rich import RichClipping

FIXTURES = Path(__file__).parent / "fixtures"


class ExogramJsonTests:
    def test_it_reads_every_field(self) -> None:
        result = parse_exogram_json(json.loads((FIXTURES / "exogram.json").read_text()))
        first = result.clippings[0]
        assert isinstance(first, RichClipping)
        assert (first.title, first.author) == ("The Quiet Engine", "Okonkwo, Chidi")
        assert (first.page, first.location_start, first.location_end) == ("12", 170, 172)
        assert first.added_at == datetime(2024, 3, 4, 21, 1, 22, tzinfo=UTC)
        assert first.added_raw == "Monday, March 4, 2024 9:01:22 PM"
        assert (first.note, first.note_edited, first.favourite) == ("My own words.", True, True)
        assert first.tags == ("machines", "solitude")
        assert (first.chapter, first.colour) == ("Chapter 1", "yellow")
        assert result.clippings[1].kind == "note"

    def test_it_reads_a_devices_position_and_files_from_before_it_was_exported(self) -> None:
        # The fixture is an export from before positions were exported: still read whole.
        old = parse_exogram_json(json.loads((FIXTURES / "exogram.json").read_text()))
        assert [c.position for c in old.clippings] == ["", ""]
        position = '[["000000007",[1,2,12,1,14]],["000000007",[1,2,13,1,20]]]'
        document = {
            "format": "exogram",
            "version": 1,
            "books": [
                {
                    "title": "T",
                    "highlights": [
                        {"text": "kept where the device put it", "position": position},
                        # Not a position: the highlight is kept, without one.
                        {"text": "a broken position", "position": "[[1]"},
                        {"text": "not a string", "position": 7},
                        {"text": "a Kindle's", "position": ""},
                    ],
                }
            ],
        }
        result = parse_exogram_json(document)
        assert [(c.text, c.position) for c in result.clippings] == [
            ("kept where the device put it", position),
            ("a broken position", ""),
            ("not a string", ""),
            ("a Kindle's", ""),
        ]
        assert result.problems == []

    def test_it_reports_a_broken_entry_and_keeps_the_rest(self) -> None:
        result = parse_exogram_json(json.loads((FIXTURES / "exogram.json").read_text()))
        assert result.entries == 3
        assert len(result.clippings) == 2
        assert [p.message for p in result.problems] == [
            "'The Quiet Engine', highlight 3: a location must be a whole number, not 'ten'"
        ]

    def test_it_keeps_a_highlight_with_no_text_by_its_place(self) -> None:
        document = {
            "format": "exogram",
            "version": 1,
            "books": [
                {
                    "title": "T",
                    "highlights": [
                        {"text": "", "location_start": 700, "added_at": "2025-03-04T08:00:00"},
                        {"text": ""},
                        {"kind": "note", "text": " ", "location_start": 9},
                    ],
                }
            ],
        }
        result = parse_exogram_json(document)
        # The empty note goes on, for the import to skip and count (not a problem).
        assert [(c.kind, c.text, c.location_start) for c in result.clippings] == [
            ("highlight", "", 700),
            ("note", " ", 9),
        ]
        assert [p.message for p in result.problems] == [
            "'T', highlight 2: no text, no location, no date",
        ]

    def test_it_refuses_a_version_it_does_not_know(self) -> None:
        result = parse_exogram_json({"format": "exogram", "version": 99, "books": []})
        assert result.clippings == []
        assert "version 99" in result.problems[0].message

    def test_it_refuses_a_bad_location(self) -> None:
        document = {
            "format": "exogram",
            "version": 1,
            "books": [{"title": "T", "highlights": [{"text": "x", "location_start": "ten"}]}],
        }
        [problem] = parse_exogram_json(document).problems
        assert "a location must be a whole number, not 'ten'" in problem.message

    def test_a_date_out_of_range_is_a_problem_of_its_entry_and_the_rest_is_kept(self) -> None:
        # In UTC it would be in the year 10000: the parser raised OverflowError and the
        # whole file was refused.
        highlights = [
            {"text": "Kept before.", "added_at": "2024-03-04T21:01:22+00:00"},
            {"text": "The far future.", "added_at": "9999-12-31T23:59:59-14:00"},
            {"text": "Kept after.", "note_added_at": "0001-01-01T00:00:00+14:00"},
        ]
        books = [{"title": "T", "highlights": highlights}]
        document = {"format": "exogram", "version": 1, "books": books}
        result = parse_exogram_json(document)
        assert [c.text for c in result.clippings] == ["Kept before."]
        assert [p.message for p in result.problems] == [
            "'T', highlight 2: a date out of range: '9999-12-31T23:59:59-14:00'",
            "'T', highlight 3: a date out of range: '0001-01-01T00:00:00+14:00'",
        ]
