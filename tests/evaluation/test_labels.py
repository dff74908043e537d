"""Label files: read, written, and resolved against a shared data folder written here."""

import json
from pathlib import Path

import pytest

from evaluation.labels import (
    COLUMNS,
    LabelError,
    LabelRow,
    Side,
    clippings_entries,
    fortune_entries,
    labelled_texts,
    read_labels,
    side_for,
    text_sha,
    write_labels,
)

HEADER = "\t".join(COLUMNS)

STSB = (
    "A cat sits on the mat.,A cat is sitting on the mat.,4.8\n"
    '"Rain, then sun.",The stock market fell.,0.2\n'
)
QUOTES = [
    {
        "_id": "q1",
        "content": "Friendship doubles joy.",
        "author": "Someone",
        "tags": ["Friendship"],
    },
    {
        "_id": "q2",
        "content": "A friend is a second self.",
        "author": "Other",
        "tags": ["Friendship"],
    },
]
FORTUNES = "Der Weg ist das Ziel,\nsagt man.\n\t\t-- Konfuzius\n%\n%\nKeine Rose ohne Dornen.\n%\n"
CLIPPINGS = (
    "\ufeffA Book (Ann Author)\r\n- Your Highlight on Location 10-12 | Added on Monday, "
    "January 1, 2024 8:00:00 AM\r\n\r\nThe first highlight.\r\n==========\r\n"
    "\ufeffA Book (Ann Author)\r\n- Your Highlight on Location 20-22 | Added on Monday, "
    "January 1, 2024 8:05:00 AM\r\n\r\nLine one\r\nline two\r\n==========\r\n"
)


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    root = tmp_path / "shared"
    (root / "eval" / "stsb").mkdir(parents=True)
    (root / "eval" / "stsb" / "stsb-en-dev.csv").write_text(STSB, encoding="utf-8")
    (root / "eval" / "quotable").mkdir()
    (root / "eval" / "quotable" / "quotes.json").write_text(json.dumps(QUOTES), encoding="utf-8")
    (root / "eval" / "fortunes_de").mkdir()
    (root / "eval" / "fortunes_de" / "zitate").write_text(FORTUNES, encoding="utf-8")
    (root / "clippings" / "en").mkdir(parents=True)
    (root / "clippings" / "en" / "My Clippings.txt").write_bytes(CLIPPINGS.encode("utf-8"))
    return root


def _row(shared: Path, a: tuple[str, str], b: tuple[str, str], label: str = "same") -> LabelRow:
    return LabelRow(side_for(shared, *a), side_for(shared, *b), label, "test-origin", "test")


class LabelFileTests:
    def test_it_reads_back_what_it_writes(self, shared: Path, tmp_path: Path) -> None:
        rows = [
            _row(
                shared, ("eval/stsb/stsb-en-dev.csv", "0:0"), ("eval/stsb/stsb-en-dev.csv", "0:1")
            ),
            _row(
                shared,
                ("eval/quotable/quotes.json", "q1"),
                ("eval/fortunes_de/zitate", "1"),
                "unrelated",
            ),
        ]
        path = tmp_path / "labels" / "set.tsv"
        assert write_labels(path, rows) == 2
        assert path.read_text(encoding="utf-8").splitlines()[0] == HEADER
        assert read_labels(path) == rows

    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ("a\t0:0\t0123456789abcdef\tb\t0:1\t0123456789abcdef\tsame\to", "8 fields"),
            ("a\t0:0\t0123\tb\t0:1\t0123456789abcdef\tsame\to\ttest", "a_sha '0123'"),
            ("a\t0:0\t0123456789abcdef\tb\t0:1\t0123456789abcdef\tsimilar\to\ttest", "label"),
            ("a\t0:0\t0123456789abcdef\tb\t0:1\t0123456789abcdef\tsame\to\tdev", "split 'dev'"),
            ("a\t0:0\t0123456789abcdef\t../b\t0:1\t0123456789abcdef\tsame\to\ttest", "b_source"),
            ("a\t0:0\t0123456789abcdef\tb\t0:1\t0123456789abcdef\tsame\t\ttest", "origin"),
        ],
    )
    def test_it_names_the_line_of_a_bad_row(self, tmp_path: Path, line: str, message: str) -> None:
        path = tmp_path / "bad.tsv"
        good = "a\t0:0\t0123456789abcdef\tb\t0:1\t0123456789abcdef\tsame\to\ttest"
        path.write_text(f"{HEADER}\n{good}\n{line}\n", encoding="utf-8")
        with pytest.raises(LabelError, match=rf"bad\.tsv:3: .*{message}"):
            read_labels(path)

    def test_it_refuses_a_file_without_the_header(self, tmp_path: Path) -> None:
        path = tmp_path / "bad.tsv"
        path.write_text("a\tb\n", encoding="utf-8")
        with pytest.raises(LabelError, match=r"bad\.tsv:1: the header"):
            read_labels(path)

    def test_it_says_when_the_file_is_missing(self, tmp_path: Path) -> None:
        with pytest.raises(LabelError, match="no label file"):
            read_labels(tmp_path / "absent.tsv")


class LabelledTextsTests:
    def test_it_resolves_each_kind_of_source(self, shared: Path) -> None:
        rows = [
            _row(shared, ("eval/stsb/stsb-en-dev.csv", "1:0"), ("eval/quotable/quotes.json", "q2")),
            _row(
                shared,
                ("eval/fortunes_de/zitate", "0"),
                ("clippings/en/My Clippings.txt", "1"),
            ),
        ]
        resolved = labelled_texts(rows, shared)
        assert [(r.a_text, r.b_text) for r in resolved] == [
            ("Rain, then sun.", "A friend is a second self."),
            ("Der Weg ist das Ziel, sagt man.", "Line one\nline two"),
        ]
        assert resolved[0].label == "same"

    def test_it_refuses_a_text_that_has_changed(self, shared: Path, tmp_path: Path) -> None:
        path = tmp_path / "set.tsv"
        row = _row(shared, ("eval/fortunes_de/zitate", "1"), ("eval/quotable/quotes.json", "q1"))
        write_labels(path, [row])
        (shared / "eval" / "fortunes_de" / "zitate").write_text(
            FORTUNES.replace("Rose", "Tulpe"), encoding="utf-8"
        )
        # A fresh folder name, so that the entries read before are not reused.
        moved = shared.rename(tmp_path / "moved")
        with pytest.raises(LabelError, match=r"set\.tsv:2: side a .*zitate at 1\) has changed"):
            labelled_texts(read_labels(path), moved)

    def test_it_says_which_file_or_entry_is_missing(self, shared: Path) -> None:
        quote = side_for(shared, "eval/quotable/quotes.json", "q1")
        missing_file = LabelRow(quote, Side("eval/none.csv", "0:0", quote.sha), "same", "o", "test")
        with pytest.raises(LabelError, match=r"side b: no file eval/none\.csv"):
            labelled_texts([missing_file], shared)
        missing_entry = LabelRow(
            quote, Side("eval/quotable/quotes.json", "q9", quote.sha), "same", "o", "test"
        )
        with pytest.raises(LabelError, match="has no entry at 'q9'"):
            labelled_texts([missing_entry], shared)


class SourceEntriesTests:
    def test_it_numbers_fortunes_past_empty_entries(self) -> None:
        entries = fortune_entries(FORTUNES)
        assert [(e.locator, e.text, e.author) for e in entries] == [
            ("0", "Der Weg ist das Ziel, sagt man.", "Konfuzius"),
            ("1", "Keine Rose ohne Dornen.", ""),
        ]

    def test_it_reads_kindle_bodies_and_authors(self) -> None:
        entries = clippings_entries(CLIPPINGS)
        assert [(e.text, e.author) for e in entries] == [
            ("The first highlight.", "Ann Author"),
            ("Line one\nline two", "Ann Author"),
        ]

    def test_it_hashes_the_normalized_text(self) -> None:
        assert text_sha(" caf\u0065\u0301 \n") == text_sha("caf\u00e9")
        assert len(text_sha("x")) == 16
