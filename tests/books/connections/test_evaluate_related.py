"""The *related* calibration of evaluate_connections, on a tiny quotable-shaped folder
written here (real model), and the pair labelling it rests on."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from books.embedding.encoder import MINILM_RELATED_THRESHOLD
from books.management.commands.evaluate_connections import TaggedQuote, related_pairs

QUOTES = [
    ("A friend is one who knows you and loves you just the same.", "Hubbard", ["Friendship"]),
    ("True friendship is a plant of slow growth.", "Washington", ["Friendship", "Famous Quotes"]),
    ("Friends show their love in times of trouble.", "Euripides", ["Friendship"]),
    ("Technology is a useful servant but a dangerous master.", "Lange", ["Technology"]),
    ("Computers are useless. They can only give you answers.", "Picasso", ["Technology"]),
    ("The machine does not isolate us from the great problems of nature.", "Saint-Exupéry",
     ["Technology", "Famous Quotes"]),
    ("In the depth of winter I learned there was in me an invincible summer.", "Camus",
     ["Famous Quotes"]),
    ("Well done is better than well said.", "Franklin", ["Wisdom"]),
]  # fmt: skip


def _folder(path: Path) -> Path:
    rows = [{"content": c, "author": a, "tags": t} for c, a, t in QUOTES]
    (path / "quotes.json").write_text(json.dumps(rows), encoding="utf-8")
    return path


def _quotes() -> list[TaggedQuote]:
    return [TaggedQuote(c, a, frozenset(t)) for c, a, t in QUOTES]


class RelatedPairsTests:
    def test_related_pairs_share_a_specific_tag_across_authors(self) -> None:
        pairs = related_pairs(_quotes())
        texts = {q.text: set(q.tags) for q in _quotes()}
        related = [p for p in pairs if p.same]
        # Three friendship pairs and three technology pairs.
        assert len(related) == 6
        for pair in related:
            assert texts[pair.first] & texts[pair.second] - {"Famous Quotes"}

    def test_unrelated_pairs_share_no_tag_and_have_a_subject(self) -> None:
        pairs = related_pairs(_quotes())
        texts = {q.text: set(q.tags) for q in _quotes()}
        unrelated = [p for p in pairs if not p.same]
        assert unrelated
        for pair in unrelated:
            assert not texts[pair.first] & texts[pair.second]
            # A quote with only generic tags has no known subject: never in a pair.
            assert "Well done is better than well said." not in (pair.first, pair.second)
            assert not pair.first.startswith("In the depth of winter")

    def test_it_draws_the_same_pairs_every_time(self) -> None:
        assert related_pairs(_quotes()) == related_pairs(_quotes())


def _evaluate(*args: str) -> str:
    out = StringIO()
    call_command("evaluate_connections", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.django_db
class EvaluateRelatedTests:
    def test_it_reports_precision_and_recall_per_threshold(self, tmp_path: Path) -> None:
        from books.embedding.encoder import MINILM_RELATED_THRESHOLD

        report = json.loads(_evaluate("--quotable", str(_folder(tmp_path)), "--json"))
        # English quotes, judged as the app judges two English passages: by the English
        # model beside the default one, at its related cut.
        assert report["related_threshold"] == MINILM_RELATED_THRESHOLD
        assert report["model"].startswith("all-MiniLM-L6-v2@")
        # 3 x 3 friendship-technology pairs, less Washington's and Saint-Exupéry's, which
        # share "Famous Quotes": as many as among all the pairs.
        assert (report["related"], report["unrelated"]) == (6, 8)
        thresholds = [row["threshold"] for row in report["table"]]
        assert thresholds == sorted(thresholds)
        assert thresholds[0] == 0.2
        assert thresholds[-1] == 0.7
        recalls = [row["recall"] for row in report["table"]]
        assert recalls == sorted(recalls)
        at = report["at_threshold"]
        assert at["tp"] + at["fn"] == 6
        assert at["fp"] + at["tn"] == 8
        # Friends with friends and machines with machines are closer than the rest.
        assert report["auc"] > 0.7
        if report["precision_75"] is not None:
            assert report["precision_75"]["precision"] >= 0.75

    def test_it_prints_a_table(self, tmp_path: Path) -> None:
        table = _evaluate("--quotable", str(_folder(tmp_path)))
        assert f"current related threshold {MINILM_RELATED_THRESHOLD:.3f}" in table
        assert "P ≥ 0.75" in table

    def test_it_needs_a_folder(self) -> None:
        with pytest.raises(CommandError, match="--data"):
            _evaluate()

    def test_it_explains_a_folder_without_quotes(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match=r"No quotes\.json"):
            _evaluate("--quotable", str(tmp_path))
