"""Kindred readers measured on the shared demo library: the app's centroids never find
fewer planted twins than the plain mean of each reader's vectors (issue 30)."""

from pathlib import Path

import pytest

from books.embedding.encoder import get_encoder
from evaluation.affinity import evaluate_construction
from tests.affinity.eval_data import write_eval_data

EVAL_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "eval"


class ConstructionTests:
    """The in-memory evaluation on a small folder written here, with the real model."""

    def test_it_reports_the_app_and_the_plain_mean_side_by_side(self, tmp_path: Path) -> None:
        data = write_eval_data(tmp_path / "eval")
        report = evaluate_construction("quotes", data, get_encoder(), readers=30)
        assert report["construction"] == "quotes"
        assert report["twin_pairs"] == 10
        assert set(report["twin_pairs_in_top"]) == {"app", "plain_mean", "centred"}
        for row in report["twins"]:
            assert all(1 <= rank <= 29 for rank in row["app"] + row["plain_mean"])


@pytest.mark.slow
@pytest.mark.corpus
class SharedDemoLibraryTests:
    def test_it_never_finds_fewer_twins_than_the_plain_mean(self) -> None:
        if not (EVAL_DATA / "quotable").is_dir():
            pytest.skip(f"no evaluation data at {EVAL_DATA}")
        # The demo library seed_demo_library builds by default: 60 readers, seed 7.
        report = evaluate_construction("quotes", EVAL_DATA, get_encoder())
        found = report["twin_pairs_in_top"]
        assert found["app"] >= found["plain_mean"], report["twins"]
        assert found["app"] >= report["aim_pairs"], report["twins"]
