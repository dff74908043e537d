"""`manage.py search` and `manage.py evaluate_search`, on the real model."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from books.importing.services import clippings_import
from books.management.commands.evaluate_search import (
    assign_books,
    clippings_bytes,
    read_labelled_set,
)
from books.models import Book, Highlight, Import
from books.search.search import NOTICE_MODEL_UNAVAILABLE
from tests.books.kindle import MEMORY_LIBRARY, clippings_file

# Written for these tests: three paraphrase pairs (score >= 4) among unrelated sentences.
LABELLED = [
    ("The old lighthouse keeper forgot every name.", "The aged keeper lost all names.", 4.6),
    ("Rain fell on the harbour all night.", "It rained over the port through the night.", 4.2),
    ("She baked bread before dawn.", "Before sunrise she made the loaves.", 4.0),
    ("A train left the station on time.", "The orchard bloomed in a warm winter.", 0.2),
    ("Children played chess in the square.", "The market sold fish and lemons.", 1.4),
    ("He wrote letters to the weather.", "Someone argued with the storm in writing.", 3.2),
]  # fmt: skip


def _run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def stsb(tmp_path: Path) -> Path:
    lines = [f'"{a}","{b}",{score}' for a, b, score in LABELLED]
    (tmp_path / "stsb-en-dev.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


@pytest.mark.django_db
class SearchCommandTests:
    @pytest.fixture
    def library(self, alice: User) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")

    def test_it_prints_the_results(self, library: None) -> None:
        out, _ = _run("search", "--user", "alice", "life-story", "--mode", "keyword")
        assert "1 result(s) by words:" in out
        assert "The Man Who Mistook His Wife for a Hat (Sacks, Oliver), location 1520-1522" in out
        assert "We have each of us a life-story" in out

    def test_it_prints_json(self, library: None) -> None:
        out, _ = _run("search", "--user", "alice", "think forget", "--json")
        rows = json.loads(out)
        assert rows[0]["text"] == "To think is to forget differences, to generalize, to abstract."
        assert rows[0]["note"] == "Read this twice."
        assert rows[0]["author"] == "Borges, Jorge Luis"
        assert rows[0]["location"] == "412-414"
        assert "keyword" in rows[0]["matched"]

    def test_it_says_when_nothing_matches(self, library: None) -> None:
        out, _ = _run("search", "--user", "alice", "zebra", "--mode", "keyword")
        assert out.strip() == "No results."

    def test_it_falls_back_to_words_without_the_model(
        self, library: None, settings: object, tmp_path: Path
    ) -> None:
        settings.EXOGRAM_EMBEDDING_MODEL_DIR = tmp_path  # type: ignore[attr-defined]
        out, err = _run("search", "--user", "alice", "sleep", "--json")
        assert err.strip() == NOTICE_MODEL_UNAVAILABLE
        assert [row["location"] for row in json.loads(out)] == ["100-102"]

    def test_it_refuses_an_unknown_reader(self, alice: User) -> None:
        with pytest.raises(CommandError, match="No reader named 'zed'"):
            _run("search", "--user", "zed", "memory")


class LabelledSetTests:
    def test_it_reads_pairs_and_places_partners_in_different_books(self, stsb: Path) -> None:
        labelled = read_labelled_set(stsb / "stsb-en-dev.csv", 4.0)
        assert len(labelled.sentences) == 12
        assert labelled.answers == {0: {1}, 1: {0}, 2: {3}, 3: {2}, 4: {5}, 5: {4}}
        shelf = assign_books(labelled, 2)
        assert all(shelf[q] != shelf[p] for q, ps in labelled.answers.items() for p in ps)
        data = clippings_bytes(labelled, shelf)
        assert data.count(b"==========") == 12


@pytest.mark.django_db
class EvaluateSearchCommandTests:
    def test_it_measures_each_mode_and_leaves_nothing_behind(self, alice: User, stsb: Path) -> None:
        out, _ = _run("evaluate_search", "--data", str(stsb), "--json")
        report = json.loads(out)
        assert report["highlights"] == 12
        assert report["embedded"] == 12
        assert report["queries"] == 6
        assert set(report["modes"]) == {"keyword", "meaning", "hybrid"}
        for row in report["modes"].values():
            assert 0 <= row["recall@1"] <= row["recall@5"] <= row["recall@10"] <= 1
            assert 0 <= row["mrr@10"] <= 1
        # Paraphrases among a dozen sentences: meaning finds every one in its top five.
        assert report["modes"]["meaning"]["recall@5"] == 1.0
        assert list(User.objects.values_list("username", flat=True)) == ["alice"]
        assert not Highlight.objects.exists()
        assert not Book.objects.exists()
        assert not Import.objects.exists()

    def test_it_prints_a_table(self, stsb: Path) -> None:
        out, _ = _run("evaluate_search", "--data", str(stsb))
        lines = out.splitlines()
        assert "12 highlights in 12 books, 6 queries" in lines[0]
        assert lines[1].split() == [
            "mode",
            "Recall@1",
            "Recall@5",
            "Recall@10",
            "MRR@10",
            "ms/query",
        ]
        assert [line.split()[0] for line in lines[2:5]] == ["keyword", "meaning", "hybrid"]

    def test_it_refuses_a_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match="No labelled set"):
            _run("evaluate_search", "--data", str(tmp_path))
