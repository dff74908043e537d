"""The pair judge: one calibrated model gives the probability that a reader calls two passages
*related* (one theme, one idea seen two ways) and that they say *the same idea*.

Pure numpy, no Django: the writer of connections (books.connections.services) and the
trainer (evaluation.pair_judge) compute a pair's features with the same function, so what
was measured is what runs. The weights are a small pinned file beside this module
(judge.json, with a version); `manage.py train_pair_judge` writes it.

Features of a candidate pair (a passage and one of its nearest in other books), each one
measured to earn its place (docs/evaluation.md):
- each model's cosine: the main model's (every passage), the English model's (two English
  passages);
- rare shared stems, weighted by their inverse passage frequency in the library;
- the lengths, the two languages (within one, across two, undetected), the same author.
Mutual rank and the margin over each side's typical neighbour were tried and left out: on
held-out pairs they did not lower the judge's log-loss at all (docs/evaluation.md), and they
cost a second round of neighbour queries for every candidate.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from books.text import fold

WEIGHTS_FILE = Path(__file__).with_name("judge.json")

# The strength of a stored pair (Connection.strength): bands of the judge's probabilities,
# one scale for every language pair and model.
NEARBY, RELATED, SAME_IDEA = 0, 1, 2
# A pair is the same idea at P(same idea) ≥ SAME_IDEA_BAND, else related at
# P(related) ≥ RELATED_BAND. Under it, a pair is kept as *nearby* from NEARBY_BAND: the
# highlight page shows the judge's best candidates, with what it thinks of them.
SAME_IDEA_BAND = 0.5
RELATED_BAND = 0.5
NEARBY_BAND = 0.2
# Each passage's candidates: its nearest this many in other books, by each vector it has.
NEIGHBOURS = 8

# A stem: the first letters of a folded word of at least MIN_STEM letters. Crude, but it
# works alike in every language a reader highlights in (no stemmer per language needed).
MIN_STEM = 4
STEM_LETTERS = 6
_WORD = re.compile(r"[^\W\d_]+")

FEATURES = (
    "main",  # the main model's cosine
    "english",  # the English model's cosine (0 when the pair has none)
    "has_english",
    "rare",  # log(1 + IDF-weighted shared stems)
    "rare_share",  # shared stems' IDF over the smaller side's
    "short",  # log words of the shorter passage
    "long",  # log words of the longer one
    "across",  # two different languages
    "undetected",  # both undetected (German, Portuguese, French… books.language)
    "main_across",  # interactions: a cosine means another thing across languages
    "main_undetected",
    "same_author",
)


@dataclass(frozen=True)
class PairFacts:
    """What the features of one pair are computed from."""

    main: float  # cosine similarity by the main model
    english: float | None  # by the English model, when both sides have its vector
    rare: float  # IDF-weighted shared stems
    rare_share: float
    words_a: int
    words_b: int
    language_a: str
    language_b: str
    same_author: bool


def stems(text: str) -> frozenset[str]:
    return frozenset(
        word[:STEM_LETTERS] for word in _WORD.findall(fold(text)) if len(word) >= MIN_STEM
    )


def shared_rarity(
    a: frozenset[str], b: frozenset[str], frequency: Mapping[str, int], passages: int
) -> tuple[float, float]:
    """(IDF-weighted shared stems, their share of the smaller side's weight)."""

    def idf(stem: str) -> float:
        return math.log((passages + 1) / (frequency.get(stem, 0) + 1))

    shared = sum(idf(s) for s in a & b)
    smaller = min(sum(idf(s) for s in a), sum(idf(s) for s in b))
    return shared, shared / smaller if smaller > 0 else 0.0


def stem_frequency(stem_sets: Iterable[frozenset[str]]) -> dict[str, int]:
    found: dict[str, int] = {}
    for stem_set in stem_sets:
        for stem in stem_set:
            found[stem] = found.get(stem, 0) + 1
    return found


def features(facts: PairFacts) -> list[float]:
    """The pair's features, in the order of FEATURES."""
    has_english = facts.english is not None
    across = facts.language_a != facts.language_b
    undetected = facts.language_a == facts.language_b == "unknown"
    return [
        facts.main,
        facts.english if facts.english is not None else 0.0,
        float(has_english),
        math.log1p(facts.rare),
        facts.rare_share,
        math.log1p(min(facts.words_a, facts.words_b)),
        math.log1p(max(facts.words_a, facts.words_b)),
        float(across),
        float(undetected),
        facts.main * across,
        facts.main * undetected,
        float(facts.same_author),
    ]


Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Head:
    """One logistic regression over the standardized features, then Platt scaling fitted on
    pairs it was not fitted on."""

    weights: tuple[float, ...]
    bias: float
    scale: float = 1.0  # Platt: sigmoid(scale * logit + shift)
    shift: float = 0.0

    def probability(self, standardized: Floats) -> Floats:
        logit = standardized @ np.asarray(self.weights) + self.bias
        result: Floats = 1.0 / (1.0 + np.exp(-(self.scale * logit + self.shift)))
        return result


@dataclass(frozen=True)
class Judge:
    version: int
    names: tuple[str, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    related: Head
    same_idea: Head

    def standardize(self, rows: Sequence[Sequence[float]] | Floats) -> Floats:
        matrix = np.asarray(rows, dtype=np.float64).reshape(-1, len(self.names))
        standardized: Floats = (matrix - np.asarray(self.mean)) / np.asarray(self.std)
        return standardized

    def probabilities(self, rows: Sequence[Sequence[float]] | Floats) -> tuple[Floats, Floats]:
        """(P(related), P(same idea)) of each row of features. The same idea is related
        too: P(related) is never below P(same idea)."""
        standardized = self.standardize(rows)
        same = self.same_idea.probability(standardized)
        related = np.maximum(self.related.probability(standardized), same)
        return related, same

    def judge(self, facts: Sequence[PairFacts]) -> list[tuple[float, float, int]]:
        """(P(related), P(same idea), strength) of each pair."""
        if not facts:
            return []
        related, same = self.probabilities([features(f) for f in facts])
        return [
            (float(r), float(s), strength_of(float(r), float(s)))
            for r, s in zip(related, same, strict=True)
        ]

    def as_json(self) -> dict[str, Any]:
        def head(h: Head) -> dict[str, Any]:
            return {"weights": list(h.weights), "bias": h.bias, "scale": h.scale, "shift": h.shift}

        return {
            "version": self.version,
            "features": list(self.names),
            "mean": list(self.mean),
            "std": list(self.std),
            "related": head(self.related),
            "same_idea": head(self.same_idea),
        }


def strength_of(related: float, same_idea: float) -> int:
    if same_idea >= SAME_IDEA_BAND:
        return SAME_IDEA
    if related >= RELATED_BAND:
        return RELATED
    return NEARBY


def judge_from_json(data: Mapping[str, Any]) -> Judge:
    def head(h: Mapping[str, Any]) -> Head:
        return Head(
            tuple(map(float, h["weights"])),
            float(h["bias"]),
            float(h.get("scale", 1.0)),
            float(h.get("shift", 0.0)),
        )

    names = tuple(data["features"])
    if names != FEATURES:
        raise ValueError(
            f"the judge's weights are for features {names}, this code computes {FEATURES}: "
            "retrain with `manage.py train_pair_judge`"
        )
    return Judge(
        version=int(data["version"]),
        names=names,
        mean=tuple(map(float, data["mean"])),
        std=tuple(map(float, data["std"])),
        related=head(data["related"]),
        same_idea=head(data["same_idea"]),
    )


@cache
def _pinned() -> tuple[int, dict[str, Judge]]:
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    judges = {model: judge_from_json(found) for model, found in data["models"].items()}
    return int(data["version"]), judges


def judge_version() -> int:
    """The version of the pinned weights: stored on each pair it judged."""
    return _pinned()[0]


# A model the pinned weights were not trained for (a model folder) is judged by its own
# cuts alone: P = sigmoid(SLOPE * (cosine - (1 - cut))), 0.5 at the cut.
SLOPE = 40.0


def judge_for(model_name: str, *, same_idea_cut: float, related_cut: float) -> Judge:
    """The judge of pairs of a main model's vectors: the pinned one trained for it, else
    one of the model's own cosine cuts (its folder's threshold and related_threshold)."""
    found = _pinned()[1].get(model_name)
    if found is not None:
        return found
    main = [1.0 if name == "main" else 0.0 for name in FEATURES]

    def head(cut: float) -> Head:
        return Head(tuple(SLOPE * w for w in main), -SLOPE * (1.0 - cut))

    zeros, ones = (0.0,) * len(FEATURES), (1.0,) * len(FEATURES)
    return Judge(_pinned()[0], FEATURES, zeros, ones, head(related_cut), head(same_idea_cut))
