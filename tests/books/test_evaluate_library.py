"""evaluate_library on a tiny data folder written here: the real import path, real model."""

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import User
from books.connections.judge import judge_version
from books.management.commands.evaluate_library import (
    EvalBook,
    Passage,
    add_lookups,
    clippings_file,
    make_books,
)
from books.models import Connection, Highlight
from books.vocabulary import is_vocabulary

QUOTES = [
    ("A friend is one who knows you and loves you just the same.", "Elbert Hubbard"),
    ("True friendship is a plant of slow growth.", "George Washington"),
    ("Friends show their love in times of trouble, not in happiness.", "Euripides"),
    ("Technology is a useful servant but a dangerous master.", "Christian Lange"),
    ("Computers are useless. They can only give you answers.", "Pablo Picasso"),
    # The same idea as the first quote, in other words: a connection under any rule.
    ("A real friend knows everything about you and loves you all the same.", "Woodrow Wilson"),
    ("It is not a lack of love, but a lack of friendship that makes unhappy marriages.",
     "Friedrich Nietzsche"),
    ("Machines take me by surprise with great frequency.", "Alan Turing"),
]  # fmt: skip


def _folder(path: Path) -> Path:
    (path / "quotable").mkdir()
    # One topic each: each quote lands in an anthology of its own (its author has too few
    # quotes for a book), under its own editor.
    rows = [{"content": c, "author": a, "tags": [f"Topic {i}"]} for i, (c, a) in enumerate(QUOTES)]
    (path / "quotable" / "quotes.json").write_text(json.dumps(rows), encoding="utf-8")
    return path


class LibraryBuildingTests:
    def test_lookups_come_from_the_books_own_passages_at_the_share_asked(self) -> None:
        books = make_books([Passage(c, a, "en", "Friendship") for c, a in QUOTES], seed=1)
        added = add_lookups(books, share=0.2, seed=1)
        entries = [e for book in books for e in book.entries]
        assert added == 2  # 8 passages, a fifth of 10 highlights
        lookups = [e for e in entries if is_vocabulary(e)]
        assert len(lookups) == added
        every_word = " ".join(c for c, _ in QUOTES).lower()
        assert all(word in every_word for lookup in lookups for word in lookup.lower().split())

    def test_the_clippings_file_reads_back_whole(self) -> None:
        from books.importing.clippings import parse_clippings

        books = [EvalBook("Sayings", "Someone", ["One passage here.", "ineffable"])]
        result = parse_clippings(clippings_file(books, seed=1))
        assert [c.text for c in result.clippings] == ["One passage here.", "ineffable"]
        assert {c.author for c in result.clippings} == {"Someone"}


@pytest.mark.django_db
class EvaluateLibraryTests:
    def test_it_imports_connects_and_reports(
        self, tmp_path: Path, django_capture_on_commit_callbacks: Any
    ) -> None:
        out = StringIO()
        # The import sends its embedding tasks on commit; the test's transaction never
        # commits, so they run as the block ends, then the report is read again.
        with django_capture_on_commit_callbacks(execute=True):
            call_command(
                "evaluate_library", "--data", str(_folder(tmp_path)), "--spanish", "0",
                "--sample", "0", stdout=StringIO(), stderr=StringIO(),
            )  # fmt: skip
        call_command(
            "evaluate_library", "--data", str(tmp_path), "--reuse", "--sample", "3", "--json",
            stdout=out, stderr=StringIO(),
        )  # fmt: skip
        report = json.loads(out.getvalue())
        reader = User.objects.get(username="eval-library")
        assert report["highlights"] == Highlight.objects.filter(reader=reader).count() == 10
        assert report["words"] == 2
        assert report["passages"] == 8
        stored = Connection.objects.filter(reader=reader, strength__gte=1).count()
        assert report["connections"] == stored > 0
        assert report["short_side_share"] == 0.0
        assert 0 < report["passages_connected_share"] <= 1
        assert report["across_authors_share"] == 1.0  # every anthology has its own editor
        # English quotes, judged by the pinned judge (books.connections.judge).
        assert report["connections_by_kind"] == {"two English": report["connections"]}
        assert report["judge_version"] == judge_version()
        assert len(report["sample"]) == min(3, report["connections"])
        assert {s["strength"] for s in report["sample"]} <= {"same idea", "related"}

    def test_it_refuses_to_overwrite_a_reader_without_reset(
        self, tmp_path: Path, alice: User
    ) -> None:
        with pytest.raises(CommandError, match="--reset"):
            call_command(
                "evaluate_library", "--data", str(_folder(tmp_path)), "--username", "alice",
                stdout=StringIO(), stderr=StringIO(),
            )  # fmt: skip
