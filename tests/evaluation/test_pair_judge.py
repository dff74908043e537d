"""Training the pair judge: the fit, the calibration, the bands and the metrics on data
written here, and how a label becomes the two heads' targets."""

import json

import numpy as np
import pytest

from books.connections.judge import FEATURES
from evaluation.pair_judge import (
    Rows,
    auc,
    best_band,
    f1,
    fit_head,
    fit_logistic,
    reliability,
    targets,
    train_judge,
    weights_document,
)


def _rows(n: int, seed: int = 0) -> Rows:
    """Pairs whose labels follow a known logistic law of two features (and a
    miscalibrated scale, that Platt scaling must repair)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, len(FEATURES)))
    logit = 3.0 * x[:, 0] + 1.5 * x[:, 3] - 0.5
    related = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(float)
    same = (rng.uniform(size=n) < 1 / (1 + np.exp(-(logit - 2)))).astype(float)
    split = rng.choice(["train", "calibrate", "test"], size=n, p=[0.6, 0.2, 0.2])
    return Rows(x, related, same, split, np.array(["en"] * n))


class FitTests:
    def test_it_recovers_a_logistic_law(self) -> None:
        rows = _rows(6000)
        weights, bias = fit_logistic(rows.x, rows.related, penalty=0.0)
        assert weights[0] == pytest.approx(3.0, abs=0.3)
        assert weights[3] == pytest.approx(1.5, abs=0.2)
        assert bias == pytest.approx(-0.5, abs=0.15)
        assert np.all(np.abs(np.delete(weights, [0, 3])) < 0.2)

    def test_its_calibration_is_monotonic_and_close_on_held_out_pairs(self) -> None:
        rows = _rows(8000, seed=1)
        judge = train_judge(rows, version=7)
        related, same = judge.probabilities(rows.x)
        test = rows.split == "test"
        table = reliability(related[test], rows.related[test], bins=5)
        observed = [row["observed"] for row in table]
        assert observed == sorted(observed)
        for row in table:
            if row["pairs"] >= 100:
                assert abs(row["predicted"] - row["observed"]) < 0.08
        assert np.all(same <= related)

    def test_platt_scaling_repairs_an_overconfident_head(self) -> None:
        rows = _rows(8000, seed=2)
        head = fit_head(rows.x, rows.related, rows.split, range(len(FEATURES)))
        assert head.scale > 0
        unlabelled = rows.related.copy()
        unlabelled[:100] = np.nan  # unlabelled pairs are left out, not taken for negatives
        assert fit_head(rows.x, unlabelled, rows.split, range(len(FEATURES))).scale > 0

    def test_the_related_head_can_learn_from_library_pairs_alone(self) -> None:
        # A third of the pairs are a library's (judged blind) and follow another law than
        # the rest: fitted on them alone, the related head ranks them; fitted on every
        # pair, it learns the others' law. The same-idea head is fitted on every pair.
        rows = _rows(9000, seed=3)
        rng = np.random.default_rng(3)
        library = rng.uniform(size=len(rows.x)) < 1 / 3
        logit = 3.0 * rows.x[:, 5] - 1.0
        rows.related[library] = rng.uniform(size=int(library.sum())) < 1 / (
            1 + np.exp(-logit[library])
        )
        rows.library = library
        everything = train_judge(rows, version=4)
        on_library = train_judge(rows, version=4, related_on_library=True)
        test = library & (rows.split == "test")
        truth = rows.related[test] == 1
        learnt = auc(on_library.probabilities(rows.x)[0][test], truth)
        assert learnt > 0.8
        assert learnt > auc(everything.probabilities(rows.x)[0][test], truth) + 0.1
        assert on_library.same_idea == everything.same_idea

    def test_the_document_carries_its_version_and_features(self) -> None:
        judge = train_judge(_rows(2000), version=3)
        document = weights_document({"some-model": judge}, 3)
        assert document["version"] == 3
        assert document["models"]["some-model"]["features"] == list(FEATURES)
        json.dumps(document)


class TargetTests:
    @pytest.mark.parametrize(
        ("label", "origin", "related", "same"),
        [
            ("same", "stsb-score", 1.0, 1.0),
            ("unrelated", "stsb-score", 0.0, 0.0),
            ("unrelated", "blind-labels-20261204-control", 0.0, 0.0),
            # A blind judge who said "related" chose it over "the same idea"…
            ("related", "blind-labels-20261204", 1.0, 0.0),
            # …a shared tag or subject file says nothing of the same idea.
            ("related", "quotable-tags", 1.0, None),
            ("related", "fortunes-subject", 1.0, None),
        ],
    )
    def test_a_label_is_a_target_of_each_head(
        self, label: str, origin: str, related: float, same: float | None
    ) -> None:
        got_related, got_same = targets(label, origin)
        assert got_related == related
        assert np.isnan(got_same) if same is None else got_same == same


class MetricTests:
    def test_the_best_band_is_the_cut_of_best_f1(self) -> None:
        probability = np.array([0.1, 0.3, 0.35, 0.6, 0.7, 0.9])
        truth = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
        assert best_band(probability, truth) == pytest.approx(0.31)

    def test_f1(self) -> None:
        predicted = np.array([True, True, False, False])
        truth = np.array([True, False, True, False])
        assert f1(predicted, truth) == {"precision": 0.5, "recall": 0.5, "f1": 0.5}

    def test_auc(self) -> None:
        truth = np.array([False, False, True, True])
        assert auc(np.array([0.1, 0.2, 0.3, 0.4]), truth) == 1.0
        assert auc(np.array([0.4, 0.3, 0.2, 0.1]), truth) == 0.0
