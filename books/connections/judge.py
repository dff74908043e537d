"""The pair judge: one calibrated model gives the probability that a reader calls two passages
*related* (one theme, one idea seen two ways) and that they say *the same idea*.

Pure numpy, no Django: the writer of connections (books.connections.services) and the
trainer (evaluation.pair_judge) compute a pair's features with the same function, so what
was measured is what runs. The weights are a small pinned file beside this module
(judge.json, with a version); `manage.py train_pair_judge` writes it.

Features of a candidate pair (a passage and one of its nearest in other books), each one
measured to earn its place (docs/evaluation.md):
- each model's cosine: the main model's (every passage), the English model's (two English
  passages), the theme model's (books.embedding.theme; every passage);
- rare shared stems, weighted by their inverse passage frequency in the library;
- the lengths, and the main cosine weighed by the shorter one's;
- the two languages (within one, across two, undetected; English with Spanish), each with
  the main cosine; German, Portuguese, French or Italian as features of their own were
  tried and left out (docs/evaluation.md);
- whether they name other numbers; whether one is negated and the other not (what STS-B's
  near-paraphrases differ by); the same author.
Two passages of the same words (`wording`: case, accents and punctuation aside; a saying
in two anthologies, "Oír a todos" and "Oir a todos") are the same idea whatever the features
say: a fact, not a judgement, which the Spanish sayings' P(same idea) of 0.98 left *related*.
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

from books.language import ENGLISH, SPANISH, UNKNOWN
from books.text import fold
from books.vocabulary import words_of

WEIGHTS_FILE = Path(__file__).with_name("judge.json")

# The strength of a stored pair (Connection.strength): bands of the judge's probabilities,
# one scale for every language pair.
NEARBY, RELATED, SAME_IDEA = 0, 1, 2
# A pair is the same idea at P(same idea) ≥ the same-idea band, else related at
# P(related) ≥ the related band: each chosen on the calibration split when the judge is
# trained (the best F1 there), pinned beside its weights; these where none is pinned. Under
# them, a pair is kept as *nearby* from NEARBY_BAND: the highlight page shows the judge's
# best candidates, with what it thinks of them.
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
    "theme",  # the theme model's cosine (0 when the pair has none)
    "has_theme",
    "theme_english",  # the theme cosine of two English passages: MiniLM reads them better
    "rare",  # log(1 + IDF-weighted shared stems)
    "rare_share",  # shared stems' IDF over the smaller side's
    "short",  # log words of the shorter passage
    "long",  # log words of the longer one
    "across",  # two different languages, both detected (books.language)
    "unknown",  # a side whose language is not detected
    "main_across",  # interactions: a cosine means another thing across languages
    "main_unknown",
    "en_es",  # one English side, one Spanish
    "main_en_es",
    "main_short",  # a cosine means another thing between short passages
    "numbers",  # the two do not name the same numbers ("3 %" and "30 %", or "3 %" and none)
    "negation",  # one side negated, the other not
    "same_author",
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# Negation words of the six languages books.language tells apart ("no" is Spanish and
# English); a word ending in "n't" is one too.
NEGATIONS = frozenset(
    """not no never nothing nobody none neither nor cannot nunca jamás nada nadie ni
    tampoco ningún ninguna nicht kein keine keinen keiner nie niemals nichts niemand não
    nem ninguém jamais pas rien aucun aucune non mai niente nessuno""".split()  # noqa: SIM905
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
    numbers_differ: bool = False  # numbers_differ(a, b) of the two texts
    negation_differs: bool = False  # negated(a) != negated(b)
    theme: float | None = None  # by the theme model, when both sides have its vector
    same_words: bool = False  # wording(a) == wording(b), and not empty


def numbers_of(text: str) -> frozenset[str]:
    """The numbers a text names, as written ("1984", "3,5")."""
    return frozenset(_NUMBER.findall(text))


def numbers_differ(a: frozenset[str], b: frozenset[str]) -> bool:
    """The two texts do not name the same numbers: different ones, or one names some and
    the other none ("rose 3 %" and "rose"). Measured against "both name numbers, different
    ones": held-out log-loss 0.1507 against 0.1523 (docs/evaluation.md)."""
    return (bool(a) or bool(b)) and a != b


def negated(text: str) -> bool:
    """Whether a text holds a negation word (NEGATIONS)."""
    return any(word in NEGATIONS or word.endswith("n't") for word in words_of(text))


def wording(text: str) -> tuple[str, ...]:
    """A text's words, folded, in order: what two copies of one saying have in common."""
    return tuple(_WORD.findall(fold(text)))


def same_words(a: Sequence[str], b: Sequence[str]) -> bool:
    return bool(a) and tuple(a) == tuple(b)


def shared_wording(a: Iterable[str], b: Iterable[str]) -> float:
    """The share of their words two wordings have in common (of all the words either has):
    1.0 for one passage quoted twice, about 0.8 for a quote and its variant ("you'll" for
    "you will", "tiny" for "small"), under 0.5 for a paraphrase."""
    first, second = set(a), set(b)
    either = first | second
    return len(first & second) / len(either) if either else 0.0


def stems(text: str) -> frozenset[str]:
    return stems_of_wording(wording(text))


def stems_of_wording(words: Sequence[str]) -> frozenset[str]:
    """`stems` of a text whose `wording` is already read."""
    return frozenset(word[:STEM_LETTERS] for word in words if len(word) >= MIN_STEM)


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
    languages = (facts.language_a, facts.language_b)
    unknown = UNKNOWN in languages
    across = facts.language_a != facts.language_b and not unknown
    en_es = set(languages) == {ENGLISH, SPANISH}
    short = math.log1p(min(facts.words_a, facts.words_b))
    return [
        facts.main,
        facts.english if facts.english is not None else 0.0,
        float(has_english),
        facts.theme if facts.theme is not None else 0.0,
        float(facts.theme is not None),
        (facts.theme or 0.0) * has_english,
        math.log1p(facts.rare),
        facts.rare_share,
        short,
        math.log1p(max(facts.words_a, facts.words_b)),
        float(across),
        float(unknown),
        facts.main * across,
        facts.main * unknown,
        float(en_es),
        facts.main * en_es,
        facts.main * short,
        float(facts.numbers_differ),
        float(facts.negation_differs),
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
    same_idea_band: float = SAME_IDEA_BAND
    related_band: float = RELATED_BAND

    def strength_of(self, related: float, same_idea: float) -> int:
        return strength_of(related, same_idea, self.same_idea_band, self.related_band)

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
        for i, f in enumerate(facts):
            if f.same_words:
                related[i] = same[i] = 1.0
        return [
            (float(r), float(s), self.strength_of(float(r), float(s)))
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
            "bands": {"same_idea": self.same_idea_band, "related": self.related_band},
        }


def strength_of(
    related: float,
    same_idea: float,
    same_idea_band: float = SAME_IDEA_BAND,
    related_band: float = RELATED_BAND,
) -> int:
    if same_idea >= same_idea_band:
        return SAME_IDEA
    if related >= related_band:
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
        same_idea_band=float(data.get("bands", {}).get("same_idea", SAME_IDEA_BAND)),
        related_band=float(data.get("bands", {}).get("related", RELATED_BAND)),
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
