"""Training the pair judge (books.connections.judge): features of labelled pairs computed as
the app computes them, two logistic-regression heads fitted in numpy on the `train` split,
Platt-calibrated on `calibrate`, reported on `test` (STS-B dev, held-out quotable pairs).

Never imported by the web or the worker: `manage.py train_pair_judge` is its entry point.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from books.connections.judge import (
    FEATURES,
    NEIGHBOURS,
    RELATED_BAND,
    SAME_IDEA_BAND,
    Head,
    Judge,
    PairFacts,
    features,
    shared_rarity,
    stem_frequency,
    stems,
)
from books.language import ENGLISH, language_of
from books.vocabulary import words_of
from evaluation.pair_data import Library, Pair, _bucket, quotable_library, stsb_libraries
from evaluation.vectors import cached_vectors

Floats = npt.NDArray[np.float64]
# L2 penalty of the logistic regressions, on standardized features.
PENALTY = 1.0
# Each quote's nearest that become candidate pairs (as the app's candidates are).
QUOTABLE_NEAREST = 5
QUOTABLE_TEST_SHARE = 0.2


@dataclass
class Context:
    """A library's vectors and neighbour lists: what the features of its pairs need."""

    library: Library
    main: npt.NDArray[np.float32]
    english: npt.NDArray[np.float32] | None  # rows of English texts (others zero)
    languages: list[str]
    nearest: list[dict[int, int]]  # i -> {j: rank} by any vector (the best rank)
    main_nearest: list[list[int]]
    typical: Floats
    english_typical: Floats
    stems: list[frozenset[str]]
    frequency: dict[str, int]


def _top(
    vectors: npt.NDArray[np.float32], books: Sequence[str], rows: npt.NDArray[np.intp]
) -> tuple[list[list[int]], Floats]:
    """Each row's NEIGHBOURS nearest among `rows` in other books, and their mean cosine."""
    book_ids = np.array([hash(b) for b in books])
    lists: list[list[int]] = [[] for _ in books]
    typical = np.full(len(books), np.nan)
    space = vectors[rows]
    block = 512
    for start in range(0, len(rows), block):
        part = rows[start : start + block]
        sims = vectors[part] @ space.T
        sims[book_ids[part][:, None] == book_ids[rows][None, :]] = -np.inf
        k = min(NEIGHBOURS, len(rows))
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for r, i in enumerate(part):
            order = top[r][np.argsort(-sims[r, top[r]])]
            order = order[np.isfinite(sims[r, order])]
            lists[i] = [int(rows[j]) for j in order]
            typical[i] = float(np.mean(sims[r, order])) if len(order) else 0.0
    return lists, typical


def build_context(library: Library, *, encoder: Any, folder: Path, log: Any) -> Context:
    texts = library.texts
    languages = [language_of(t) for t in texts]
    main = cached_vectors(texts, encoder=encoder, english=False, folder=folder, log=log)
    english_rows = np.array([i for i, lang in enumerate(languages) if lang == ENGLISH], dtype=int)
    english = None
    if encoder.english_spec is not None and len(english_rows):
        english = np.zeros_like(main)
        english[english_rows] = cached_vectors(
            [texts[i] for i in english_rows], encoder=encoder, english=True, folder=folder, log=log
        )
    main_lists, typical = _top(main, library.books, np.arange(len(texts)))
    english_typical = np.full(len(texts), np.nan)
    nearest = [{j: r for r, j in enumerate(found)} for found in main_lists]
    if english is not None:
        english_lists, english_typical = _top(english, library.books, english_rows)
        for i in english_rows:
            for r, j in enumerate(english_lists[i]):
                nearest[i][j] = min(r, nearest[i].get(j, r))
    stem_sets = [stems(t) for t in texts]
    return Context(
        library,
        main,
        english,
        languages,
        nearest,
        main_lists,
        typical,
        english_typical,
        stem_sets,
        stem_frequency(stem_sets),
    )


def pair_facts(context: Context, a: int, b: int) -> PairFacts:
    c = context
    both_english = c.english is not None and c.languages[a] == c.languages[b] == ENGLISH

    rare, share = shared_rarity(c.stems[a], c.stems[b], c.frequency, len(c.library.texts))
    return PairFacts(
        main=float(c.main[a] @ c.main[b]),
        english=float(c.english[a] @ c.english[b])
        if both_english and c.english is not None
        else None,
        rare=rare,
        rare_share=share,
        words_a=len(words_of(c.library.texts[a])),
        words_b=len(words_of(c.library.texts[b])),
        language_a=c.languages[a],
        language_b=c.languages[b],
        same_author=False,
    )


def quotable_pairs(context: Context, tags: list[frozenset[str]]) -> list[Pair]:
    """Each quote's nearest of other authors: related when they share a specific tag,
    unrelated when both have specific tags and share none."""
    found = {}
    for a, near in enumerate(context.nearest):
        for b, rank in near.items():
            if rank >= QUOTABLE_NEAREST or not tags[a] or not tags[b]:
                continue
            key = (min(a, b), max(a, b))
            split = "test" if _bucket(f"q{key}") < QUOTABLE_TEST_SHARE else "train"
            if split == "train" and _bucket(f"c{key}") < 0.25:
                split = "calibrate"
            found[key] = Pair(*key, int(bool(tags[a] & tags[b])), None, split, "quotable")
    return list(found.values())


@dataclass
class Rows:
    x: Floats
    related: npt.NDArray[np.float64]  # nan: unlabelled
    same: npt.NDArray[np.float64]
    split: npt.NDArray[np.str_]
    kind: npt.NDArray[np.str_]


def labelled_rows(
    shared: Path, *, encoder: Any, folder: Path, log: Callable[[str], None], rows: int | None
) -> Rows:
    contexts: list[tuple[Context, list[Pair]]] = []
    for library in stsb_libraries(shared / "stsb", train_rows=rows):
        log(f"{library.name}: {len(library.texts)} texts, {len(library.pairs)} pairs")
        contexts.append(
            (build_context(library, encoder=encoder, folder=folder, log=log), library.pairs)
        )
    quotes, tags = quotable_library(shared / "quotable")
    context = build_context(quotes, encoder=encoder, folder=folder, log=log)
    pairs = quotable_pairs(context, tags)
    log(f"quotable: {len(quotes.texts)} texts, {len(pairs)} pairs")
    contexts.append((context, pairs))
    x, related, same, split, kind = [], [], [], [], []
    for context, found in contexts:
        for pair in found:
            x.append(features(pair_facts(context, pair.a, pair.b)))
            related.append(np.nan if pair.related is None else pair.related)
            same.append(np.nan if pair.same is None else pair.same)
            split.append(pair.split)
            kind.append(pair.kind)
    return Rows(np.array(x), np.array(related), np.array(same), np.array(split), np.array(kind))


def fit_logistic(x: Floats, y: Floats, penalty: float = PENALTY) -> tuple[Floats, float]:
    """L2-penalized logistic regression by Newton's method: (weights, bias)."""
    design = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(design.shape[1])
    ridge = np.full(design.shape[1], penalty)
    ridge[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(design @ w)))
        gradient = design.T @ (p - y) + ridge * w
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(ridge)
        step = np.linalg.solve(hessian + 1e-9 * np.eye(len(w)), gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w[:-1], float(w[-1])


def fit_head(x: Floats, y: Floats, split: npt.NDArray[np.str_], columns: Sequence[int]) -> Head:
    """Fitted on `train`, Platt-scaled on `calibrate`; features outside `columns` weigh 0."""
    labelled = ~np.isnan(y)
    train, calibrate = labelled & (split == "train"), labelled & (split == "calibrate")
    weights, bias = fit_logistic(x[train][:, columns], y[train])
    full = np.zeros(x.shape[1])
    full[list(columns)] = weights
    logit = x[calibrate] @ full + bias
    (scale,), shift = fit_logistic(logit[:, None], y[calibrate], penalty=0.0)
    return Head(tuple(float(w) for w in full), bias, float(scale), float(shift))


def train_judge(rows: Rows, *, version: int, columns: Sequence[int] | None = None) -> Judge:
    fitted = rows.split == "train"
    mean = rows.x[fitted].mean(axis=0)
    std = rows.x[fitted].std(axis=0)
    std[std == 0] = 1.0
    x = (rows.x - mean) / std
    columns = list(range(len(FEATURES))) if columns is None else list(columns)
    return Judge(
        version=version,
        names=FEATURES,
        mean=tuple(map(float, mean)),
        std=tuple(map(float, std)),
        related=fit_head(x, rows.related, rows.split, columns),
        same_idea=fit_head(x, rows.same, rows.split, columns),
    )


def f1(predicted: npt.NDArray[np.bool_], truth: npt.NDArray[np.bool_]) -> dict[str, float]:
    tp = float(np.sum(predicted & truth))
    precision = tp / max(1.0, float(np.sum(predicted)))
    recall = tp / max(1.0, float(np.sum(truth)))
    score = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "f1": round(score, 3)}


def auc(scores: Floats, truth: npt.NDArray[np.bool_]) -> float:
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    positives = int(truth.sum())
    negatives = len(truth) - positives
    if not positives or not negatives:
        return float("nan")
    return float((ranks[truth].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def reliability(probability: Floats, truth: Floats, bins: int = 10) -> list[dict[str, Any]]:
    """Predicted against observed, in bins of predicted probability."""
    table = []
    for low in np.linspace(0, 1, bins, endpoint=False):
        inside = (probability >= low) & (probability < low + 1 / bins + (low + 1 / bins >= 1))
        if inside.any():
            table.append(
                {
                    "bin": f"{low:.1f}-{low + 1 / bins:.1f}",
                    "pairs": int(inside.sum()),
                    "predicted": round(float(probability[inside].mean()), 3),
                    "observed": round(float(truth[inside].mean()), 3),
                }
            )
    return table


def report(judge: Judge, rows: Rows) -> dict[str, Any]:
    related, same = judge.probabilities(rows.x)
    found: dict[str, Any] = {"same_idea_f1": {}, "translations": {}, "auc": {}, "reliability": {}}
    for split in ("calibrate", "test"):
        in_split = rows.split == split
        for kind in ("en", "es", "es-en"):
            chosen = in_split & (rows.kind == kind) & ~np.isnan(rows.same)
            found["same_idea_f1"][f"{kind} {split}"] = f1(
                same[chosen] >= SAME_IDEA_BAND, rows.same[chosen] == 1
            )
        chosen = in_split & (rows.kind == "translation")
        found["translations"][split] = {
            "same idea": round(float(np.mean(same[chosen] >= SAME_IDEA_BAND)), 3),
            "related or more": round(float(np.mean(related[chosen] >= RELATED_BAND)), 3),
            "pairs": int(chosen.sum()),
        }
    test = rows.split == "test"
    for head, probability, truth in (
        ("related", related, rows.related),
        ("same idea", same, rows.same),
    ):
        chosen = test & ~np.isnan(truth)
        found["auc"][head] = round(auc(probability[chosen], truth[chosen] == 1), 4)
        found["reliability"][head] = reliability(probability[chosen], truth[chosen])
    quotes = test & (rows.kind == "quotable")
    found["auc"]["related, quotable"] = round(auc(related[quotes], rows.related[quotes] == 1), 4)
    return found


def log_loss(judge: Judge, rows: Rows) -> dict[str, float]:
    related, same = judge.probabilities(rows.x)
    test = rows.split == "test"
    found = {}
    for head, p, truth in (("related", related, rows.related), ("same idea", same, rows.same)):
        chosen = test & ~np.isnan(truth)
        q = np.clip(p[chosen], 1e-6, 1 - 1e-6)
        y = truth[chosen]
        found[head] = round(float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q))), 4)
    return found


# Features measured together: each group is left out in turn.
GROUPS = {
    "english model": ("english", "has_english"),
    "rare stems": ("rare", "rare_share"),
    "lengths": ("short", "long"),
    "languages": ("across", "undetected", "main_across", "main_undetected"),
    "same author": ("same_author",),
}


def ablation(rows: Rows, version: int) -> dict[str, dict[str, float]]:
    """Test log-loss of the judge without each group of features (higher: it earns its
    place)."""
    found = {"all": log_loss(train_judge(rows, version=version), rows)}
    for name, group in GROUPS.items():
        columns = [i for i, f in enumerate(FEATURES) if f not in group]
        found[f"without {name}"] = log_loss(
            train_judge(rows, version=version, columns=columns), rows
        )
    return found


def weights_document(judges: dict[str, Judge], version: int) -> dict[str, Any]:
    return {
        "version": version,
        "trained": datetime.date.today().isoformat(),
        "models": {name: judge.as_json() for name, judge in judges.items()},
    }


def write_weights(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
