import json
from pathlib import Path

from books.importing.bookcision_json import NOT_BOOKCISION, parse_bookcision

FIXTURES = Path(__file__).parent / "fixtures"


class BookcisionTests:
    def test_it_reads_highlights_with_their_notes_and_notes_alone(self) -> None:
        document = json.loads((FIXTURES / "bookcision.json").read_text())
        result = parse_bookcision(document)
        assert [(c.kind, c.location_start, c.text[:20]) for c in result.clippings] == [
            ("highlight", 380, "He remembered every "),
            ("highlight", 412, "To think is to forge"),
            ("note", 900, "Read the whole story"),
        ]
        assert result.clippings[0].note == "Funes again."  # type: ignore[attr-defined]
        assert result.clippings[0].title == "Ficciones"
        assert result.clippings[0].author == "Jorge Luis Borges"

    def test_it_reports_an_empty_highlight_and_keeps_the_rest(self) -> None:
        result = parse_bookcision(json.loads((FIXTURES / "bookcision.json").read_text()))
        assert result.entries == 4
        assert [p.message for p in result.problems] == ["'Ficciones', highlight 4: no text"]

    def test_it_hands_on_an_empty_note_for_the_import_to_skip(self) -> None:
        books = [{"title": "A", "highlights": [{"isNoteOnly": True, "note": " ", "location": 5}]}]
        result = parse_bookcision(books)
        assert [(c.kind, c.text, c.location_start) for c in result.clippings] == [("note", "", 5)]
        assert result.problems == []

    def test_it_reads_a_list_of_books_and_author_lists(self) -> None:
        books = [
            {"title": "A", "authors": ["X", "Y"], "highlights": [{"text": "one", "location": 5}]},
            {"title": "B", "highlights": [{"text": "two", "location": {"value": "7"}}]},
        ]
        result = parse_bookcision(books)
        assert [(c.title, c.author, c.location_start) for c in result.clippings] == [
            ("A", "X, Y", 5),
            ("B", "", 7),
        ]

    def test_it_refuses_other_json(self) -> None:
        assert parse_bookcision({"hello": "world"}).problems[0].message == NOT_BOOKCISION
