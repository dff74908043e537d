"""One bad entry no longer sinks a whole import: NUL characters, oversized highlights."""

import json
import re
import threading
import unicodedata
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from hypothesis import given
from hypothesis import strategies as st

from accounts.models import User
from books.importing.clippings import parse_clippings
from books.importing.screening import (
    MAX_ENTRY_CHARS,
    screen_entries,
    without_control_characters,
)
from books.importing.services import clippings_import
from books.models import Highlight, Import
from tests.books.kindle import BORGES, MEMORY_LIBRARY, SACKS, Entry, clippings_file
from tests.threads import run_in_threads

FIXTURES = Path(__file__).parent / "fixtures"

# Enough good entries that the bad ones sit well past the first 8 KB, where the binary
# check (which looks at the start of the file) cannot see them.
GOOD = [
    Entry(SACKS, f"Good passage number {n} about memory.", location=f"{n * 10}")
    for n in range(1, 120)
]


def _file_with_bad_entries() -> bytes:
    nul = Entry(BORGES, "Funes remembered\x00 every leaf.", location="5000")
    huge = Entry(BORGES, "word " * 250_000, location="6000")  # 1.25 MB
    return clippings_file(*GOOD, nul, huge, Entry(BORGES, "The last good one.", location="7000"))


def _line_of(data: bytes, text: str) -> int:
    before = data.decode("utf-8-sig").split(text)[0]
    return before.count("\n") - 2  # the title is two lines above the text


class ScreenEntriesTests:
    @given(st.text())
    def test_it_only_drops_control_and_stray_zero_width_characters(self, text: str) -> None:
        cleaned = without_control_characters(text)
        assert without_control_characters(cleaned) == cleaned
        assert not any(
            (unicodedata.category(ch) == "Cc" and ch not in "\t\n") or ch in "\ufeff\u2060"
            for ch in cleaned
        )
        # Every character kept is the text's, in order: a line break may become a new line.
        lines = re.sub("\r\n|[\r\x0b\x0c\x85]", "\n", text)
        kept = iter(lines)
        assert all(ch in kept for ch in cleaned)
        dropped = set(lines) - set(cleaned)
        assert all(
            unicodedata.category(ch) == "Cc" or ch in "\ufeff\u2060\u200b\u200c\u200d"
            for ch in dropped
        )

    def test_it_removes_nul_characters_and_keeps_the_entry(self) -> None:
        result = screen_entries(parse_clippings(_file_with_bad_entries()))
        texts = [c.text for c in result.clippings]
        assert "Funes remembered every leaf." in texts
        assert not any("\x00" in c.text or "\x00" in c.title for c in result.clippings)

    def test_it_makes_an_oversized_entry_a_problem_with_its_line(self) -> None:
        data = _file_with_bad_entries()
        result = screen_entries(parse_clippings(data))
        assert [p.line for p in result.problems] == [_line_of(data, "word word")]
        assert f"more than the {MAX_ENTRY_CHARS:,}" in result.problems[0].message
        assert len(result.clippings) == len(GOOD) + 2


@pytest.mark.django_db
class BadEntryImportTests:
    def test_the_good_entries_are_imported_and_the_bad_one_reported(self, alice: User) -> None:
        data = _file_with_bad_entries()
        assert b"\x00" not in data[:8192]
        the_import = clippings_import(reader=alice, data=data, file_name="c.txt")
        assert the_import.status == Import.Status.DONE
        assert the_import.counts["new_highlights"] == len(GOOD) + 2
        assert Highlight.objects.filter(reader=alice, text="Funes remembered every leaf.").exists()
        assert Highlight.objects.filter(reader=alice, text="The last good one.").exists()
        assert [p["line"] for p in the_import.problems] == [_line_of(data, "word word")]

    def test_a_problem_quoting_a_nul_is_saved_with_a_visible_mark(self, alice: User) -> None:
        # Found by the fuzzer: an unreadable metadata line with a NUL in it, quoted in the
        # problem, made the report unsavable (PostgreSQL's JSON holds no NUL either).
        data = clippings_file(*GOOD).replace(
            b"- Your Highlight on Location 1000 |", b"\x00- Your Highlight on Location 1000 |"
        )
        assert data.index(b"\x00") > 8192  # past what the binary check reads
        the_import = clippings_import(reader=alice, data=data, file_name="c.txt")
        assert the_import.status == Import.Status.DONE
        assert the_import.counts["new_highlights"] == len(GOOD) - 1
        [problem] = the_import.problems
        assert "\u2400- Your Highlight" in problem["message"]

    def test_a_nul_in_a_note_of_a_json_file_is_dropped_not_the_import(self, alice: User) -> None:
        # A JSON file holds a NUL as `\u0000` with no NUL byte: the upload check passes it,
        # and a note with one failed the whole import (found by review).
        document = json.loads((FIXTURES / "bookcision.json").read_text())
        document["highlights"][0]["note"] = "Funes\u0000 again."
        data = json.dumps(document).encode()
        assert b"\x00" not in data
        the_import = clippings_import(reader=alice, data=data, file_name="b.json")
        assert the_import.status == Import.Status.DONE
        assert Highlight.objects.get(reader=alice, note="Funes again.").text.startswith("He rem")

    def test_a_file_holding_control_characters_adds_nothing_the_second_time(
        self, alice: User
    ) -> None:
        # Stored without them, and cleaned the same way the second time: known again.
        data = clippings_file(Entry(BORGES, "Funes\x07 remembered\x1b[2J every leaf."))
        clippings_import(reader=alice, data=data, file_name="c.txt")
        again = clippings_import(reader=alice, data=data, file_name="c.txt")
        assert again.counts["new_highlights"] == 0
        assert Highlight.objects.filter(reader=alice).count() == 1

    def test_control_characters_are_not_stored_and_nothing_else_is_lost(self, alice: User) -> None:
        # A bell, an escape, a C1 control, a byte order mark or a zero-width space left by a
        # copy showed as boxes and cut words in two for search; the rest stays as it was.
        title = "Fic\x08ciones\u200b (Borges, Jorge Luis)"
        data = clippings_file(
            Entry(title, "\u200bFunes\x07 remembered\x1b every\x9b leaf.\ufeff", location="10"),
            Entry(
                title,
                "Thai \u0e04\u0e33\u200b\u0e04\u0e33, a scientist \U0001f469\u200d\U0001f52c",
                location="20",
            ),
            Entry(title, "First line\x0bsecond\ttabbed\x85third", kind="Note", location="20"),
        )
        the_import = clippings_import(reader=alice, data=data, file_name="c.txt")
        assert the_import.problems == []
        stored = {h.location_start: h for h in Highlight.objects.filter(reader=alice)}
        assert stored[10].text == "Funes remembered every leaf."
        assert stored[10].book.title == "Ficciones"
        # A zero-width character between two others means something: kept.
        assert stored[20].text == (
            "Thai \u0e04\u0e33\u200b\u0e04\u0e33, a scientist \U0001f469\u200d\U0001f52c"
        )
        # A line break stays a line break, a tab a tab.
        assert stored[20].note == "First line\nsecond\ttabbed\nthird"
        assert "remembered" in Highlight.objects.get(pk=stored[10].pk).search_text

    def test_a_json_files_control_characters_go_too(self, alice: User) -> None:
        document = json.loads((FIXTURES / "bookcision.json").read_text())
        document["highlights"][0]["note"] = "Funes\u0007 \u001b[1magain\u200b"
        data = json.dumps(document).encode()
        clippings_import(reader=alice, data=data, file_name="b.json")
        assert Highlight.objects.filter(reader=alice, note="Funes [1magain").exists()

    def test_the_command_prints_the_problem_and_no_traceback(
        self, alice: User, tmp_path: object
    ) -> None:
        path = tmp_path / "My Clippings.txt"  # type: ignore[operator]
        path.write_bytes(_file_with_bad_entries())
        out, err = StringIO(), StringIO()
        call_command("import_clippings", str(path), user="alice", stdout=out, stderr=err)
        assert "Traceback" not in out.getvalue() + err.getvalue()
        assert "characters long, more than the 100,000" in out.getvalue()
        assert re.search(rf"new highlights\s+{len(GOOD) + 2}\n", out.getvalue())


@pytest.mark.django_db(transaction=True)
class ConcurrentImportTests:
    def test_two_imports_of_one_file_at_once_give_one_set_of_highlights(self, alice: User) -> None:
        data = clippings_file(*MEMORY_LIBRARY, *GOOD)
        imports: list[Import] = []
        errors: list[BaseException] = []
        start = threading.Barrier(2)

        def work() -> None:
            try:
                start.wait()
                imports.append(clippings_import(reader=alice, data=data, file_name="c.txt"))
            except BaseException as error:  # the test reports it below
                errors.append(error)

        run_in_threads(work)
        assert errors == []
        assert sorted(i.counts["new_highlights"] for i in imports) == [0, len(GOOD) + 5]
        second = next(i for i in imports if i.counts["new_highlights"] == 0)
        assert second.status == Import.Status.DONE
        assert second.counts["duplicates_skipped"] == len(GOOD) + 6
        assert Highlight.objects.filter(reader=alice).count() == len(GOOD) + 5
