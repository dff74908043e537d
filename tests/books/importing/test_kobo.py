"""A Kobo's KoboReader.sqlite becomes clippings; other SQLite files are refused plainly."""

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from books.importing.formats import detect_format, parse_upload
from books.importing.kobo import NOT_KOBO, parse_kobo
from books.importing.rich import EMPTY, HIDDEN, RichClipping
from tests.books.importing.devices import KOBO_ROWS, KoboRow, kobo_database


class KoboTests:
    def test_it_reads_highlights_notes_chapters_and_skips_hidden_and_empty_rows(
        self, tmp_path: Path
    ) -> None:
        data = kobo_database(tmp_path / "KoboReader.sqlite")
        assert detect_format(data) == "kobo-sqlite"
        result = parse_upload(data)
        assert (result.entries, result.problems, result.skipped) == (7, [], {HIDDEN: 1, EMPTY: 1})
        assert len(result.clippings) + sum(result.skipped.values()) == result.entries
        by_text = {c.text: c for c in result.clippings if isinstance(c, RichClipping)}
        assert set(by_text) == {
            "Machines hum when they are lonely.",
            "The river keeps what the town forgets.",
            "淮南子 and a harbour",
            "From a book whose row is gone.",
            "A thought with no words selected",
        }
        # A note with no highlighted text is a note on its own, not lost.
        assert by_text["A thought with no words selected"].kind == "note"
        noted = by_text["The river keeps what the town forgets."]
        assert (noted.title, noted.author, noted.chapter, noted.note) == (
            "The Quiet Engine", "Okonkwo, Chidi", "Chapter One", "Çok güzel tasvir edilmiş",
        )  # fmt: skip
        assert by_text["淮南子 and a harbour"].chapter == "Chapter Two"
        assert by_text["淮南子 and a harbour"].added_at == datetime(
            2024, 11, 14, 8, 0, 0, 553000, tzinfo=UTC
        )
        # A book whose row is gone is named after its file.
        assert by_text["From a book whose row is gone."].title == "Harbour Lights"

    def test_the_upload_is_never_written_to(self, tmp_path: Path) -> None:
        path = tmp_path / "KoboReader.sqlite"
        data = kobo_database(path)
        parse_kobo(data)
        assert path.read_bytes() == data
        assert sorted(p.name for p in tmp_path.iterdir()) == ["KoboReader.sqlite"]

    def test_a_sqlite_file_of_something_else_is_refused_with_a_clear_message(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "other.sqlite"
        connection = sqlite3.connect(path)
        connection.execute("CREATE TABLE invoices (id INTEGER, total REAL)")
        connection.execute("CREATE TABLE customers (name TEXT)")
        connection.commit()
        connection.close()
        result = parse_upload(path.read_bytes())
        assert result.clippings == []
        assert [p.message for p in result.problems] == [NOT_KOBO]

    def test_a_bookmark_table_that_is_a_view_is_not_read(self, tmp_path: Path) -> None:
        path = tmp_path / "view.sqlite"
        connection = sqlite3.connect(path)
        connection.execute("CREATE TABLE content (ContentID TEXT, Title TEXT, Attribution TEXT)")
        # A view computes what it likes when read: a recursive query that never ends.
        connection.execute(
            "CREATE VIEW Bookmark AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
            "FROM n) SELECT i AS BookmarkID FROM n"
        )
        connection.commit()
        connection.close()
        result = parse_upload(path.read_bytes())
        assert [p.message for p in result.problems] == [NOT_KOBO]

    def test_a_kobo_table_without_its_columns_is_refused_saying_which(self, tmp_path: Path) -> None:
        path = tmp_path / "odd.sqlite"
        connection = sqlite3.connect(path)
        connection.execute("CREATE TABLE content (ContentID TEXT, Title TEXT, Attribution TEXT)")
        connection.execute("CREATE TABLE Bookmark (BookmarkID TEXT, Text TEXT)")
        connection.execute("CREATE TABLE Unexpected (anything BLOB)")
        connection.commit()
        connection.close()
        result = parse_upload(path.read_bytes())
        assert [p.message for p in result.problems] == [
            "a Kobo database whose 'Bookmark' table lacks Annotation, ContentID, DateCreated, "
            "VolumeID"
        ]

    def test_a_damaged_database_is_refused_not_a_traceback(self, tmp_path: Path) -> None:
        data = kobo_database(tmp_path / "KoboReader.sqlite")
        damaged = data[:100] + b"\xff" * (len(data) - 100)
        result = parse_upload(damaged)
        assert result.clippings == []
        assert result.problems
        assert result.problems[0].line == 1

    def test_a_dogear_is_a_bookmark(self, tmp_path: Path) -> None:
        rows = [*KOBO_ROWS[:1], KoboRow("d1", None, kind="dogear")]
        result = parse_kobo(kobo_database(tmp_path / "KoboReader.sqlite", rows))
        assert [c.kind for c in result.clippings] == ["highlight", "bookmark"]
