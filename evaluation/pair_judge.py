"""Training the pair judge (books.connections.judge) on the committed label files
(evaluation/labels/*.tsv, texts read from the shared data by reference): features computed
as the app computes them, two logistic-regression heads fitted in numpy on the `train`
split, Platt-calibrated on `calibrate`, reported on `test` (STS-B dev whole, 15 % of every
other set, blind judgements included): F1, AUC per kind, reliability tables, and the related
band's precision on German, Portuguese and French pairs.

The related head is fitted on the blind judgements of library pairs alone (each passage and
its nearest in a reader's other books): that is what it judges, and there the STS-B, tag and
subject pairs mislead it (held out, its AUC on library pairs 0.83 against 0.68 when fitted on
everything; docs/evaluation.md). The same-idea head is fitted on every labelled pair.

Never imported by the web or the worker: `manage.py train_pair_judge` is its entry point.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from books.connections.judge import (
    FEATURES,
    Head,
    Judge,
    PairFacts,
    features,
    negated,
    numbers_differ,
    numbers_of,
    shared_rarity,
    stem_frequency,
    stems,
)
from books.importing.identity import normalize_author, same_author
from books.language import ENGLISH, language_of
from books.vocabulary import words_of
from evaluation.labels import LABELS_DIR, Side, labelled_texts, read_labels, source_entries
from evaluation.languages import guess_language
from evaluation.vectors import cached_vectors

if TYPE_CHECKING:
    from books.embedding.encoder import Encoders

Floats = npt.NDArray[np.float64]
# L2 penalty of the logistic regressions, on standardized features.
PENALTY = 1.0


@dataclass
class Rows:
    """Labelled pairs as the judge sees them: features, labels (nan: not labelled for that
    head) and what the reports group them by."""

    x: Floats
    related: Floats
    same: Floats
    split: npt.NDArray[np.str_]
    kind: npt.NDArray[np.str_]  # en, es, es-en, translation (STS-B), or the label set's name
    dev: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    languages: npt.NDArray[np.str_] = field(default_factory=lambda: np.zeros(0, dtype=str))
    control: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # Judged blind among a library's nearest neighbours (the blind-* label sets).
    library: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # Each pair's facts and texts, when read from label files (features to try are computed
    # from them without encoding anything again).
    facts: list[PairFacts] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.x)
        if len(self.dev) != n:
            self.dev = np.zeros(n, dtype=bool)
        if len(self.languages) != n:
            self.languages = np.array([""] * n)
        if len(self.control) != n:
            self.control = np.zeros(n, dtype=bool)
        if len(self.library) != n:
            self.library = np.zeros(n, dtype=bool)


# STS-B's label sets, by the kind their figures are reported as.
STSB_KINDS = {
    "stsb-en": "en",
    "stsb-es": "es",
    "stsb-es-en": "es-en",
    "stsb-translations": "translation",
}
# Blind judgements: a pair judged `related` was judged *not* the same idea. In sets made
# from the data's filing (tags, subject files), `related` says nothing of the same idea.
BLIND_ORIGIN = "blind-"


def targets(label: str, origin: str) -> tuple[float, float]:
    """(related, same idea) of a label: 1, 0 or nan (not labelled for that head)."""
    if label == "same":
        return 1.0, 1.0
    if label == "unrelated":
        return 0.0, 0.0
    return 1.0, 0.0 if origin.startswith(BLIND_ORIGIN) else np.nan


def kind_of(first: str, second: str) -> str:
    return "-".join(sorted((first, second)))


@dataclass
class _Library:
    """The distinct texts a group of label sets stands on: stems are weighed by their
    rarity among them, as the app weighs them among a reader's passages."""

    texts: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)

    def add(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.texts)
            self.texts.append(text)
        return self.index[text]


def _author(shared: Path, side: Side) -> str:
    entry = source_entries(shared, side.source).get(side.locator)
    return normalize_author(entry.author) if entry is not None else ""


def labelled_rows(
    shared: Path,
    *,
    encoders: Encoders,
    folder: Path,
    log: Callable[[str], None],
    labels: Path = LABELS_DIR,
) -> Rows:
    """Every pair of the committed label files (evaluation/labels/*.tsv), its texts read
    from the shared data (`shared`: the data folder), its features computed as the app
    computes them. STS-B's texts form one library, all the others (quotes, sayings, Kindle
    passages) another: a stem's rarity is counted within each."""
    sets = {path.stem: read_labels(path) for path in sorted(labels.glob("*.tsv"))}
    libraries: dict[str, _Library] = {"stsb": _Library(), "library": _Library()}
    pairs = []
    for name, label_rows in sets.items():
        library = libraries["stsb" if name in STSB_KINDS else "library"]
        resolved = labelled_texts(label_rows, shared)
        log(f"{name}: {len(resolved)} pairs")
        for found in resolved:
            row = found.row
            a, b = library.add(found.a_text), library.add(found.b_text)
            author = same_author(_author(shared, row.a), _author(shared, row.b))
            pairs.append((name, library, a, b, row, author))
    contexts = {}
    for name, library in libraries.items():
        texts = library.texts
        languages = [language_of(t) for t in texts]
        main = cached_vectors(texts, encoders=encoders, kind="main", folder=folder, log=log)
        english = np.zeros_like(main)
        english_rows = [i for i, lang in enumerate(languages) if lang == ENGLISH]
        if english_rows and encoders.english_spec is not None:
            english[english_rows] = cached_vectors(
                [texts[i] for i in english_rows],
                encoders=encoders,
                kind="english",
                folder=folder,
                log=log,
            )
        theme = (
            cached_vectors(texts, encoders=encoders, kind="theme", folder=folder, log=log)
            if encoders.with_theme and texts
            else None
        )
        stem_sets = [stems(t) for t in texts]
        words = [len(words_of(t)) for t in texts]
        numbers = [numbers_of(t) for t in texts]
        negations = [negated(t) for t in texts]
        has_english = encoders.english_spec is not None
        contexts[name] = (
            languages, main, english, theme, stem_sets, stem_frequency(stem_sets), words,
            has_english, numbers, negations,
        )  # fmt: skip
    x, related, same, split, kind, dev, pair_languages, control = ([] for _ in range(8))
    all_facts, all_texts = [], []
    guessed: dict[str, str] = {}
    for name, library, a, b, row, author in pairs:
        group = "stsb" if name in STSB_KINDS else "library"
        (languages, main, english, theme, stem_sets, frequency, words, has_english, numbers,
         negations) = contexts[group]  # fmt: skip
        both_english = has_english and languages[a] == languages[b] == ENGLISH
        rare, share = shared_rarity(stem_sets[a], stem_sets[b], frequency, len(library.texts))
        facts = PairFacts(
            main=float(main[a] @ main[b]),
            english=float(english[a] @ english[b]) if both_english else None,
            rare=rare,
            rare_share=share,
            words_a=words[a],
            words_b=words[b],
            language_a=languages[a],
            language_b=languages[b],
            same_author=author,
            numbers_differ=numbers_differ(numbers[a], numbers[b]),
            negation_differs=negations[a] != negations[b],
            theme=None if theme is None else float(theme[a] @ theme[b]),
        )
        x.append(features(facts))
        all_facts.append(facts)
        all_texts.append((library.texts[a], library.texts[b]))
        r, s = targets(row.label, row.origin)
        related.append(r)
        same.append(s)
        split.append(row.split)
        kind.append(STSB_KINDS.get(name, name))
        dev.append("-dev." in row.a.source or "-dev." in row.b.source)
        for text in (library.texts[a], library.texts[b]):
            if text not in guessed:
                guessed[text] = guess_language(text)
        pair_languages.append(kind_of(guessed[library.texts[a]], guessed[library.texts[b]]))
        control.append(row.origin.endswith("-control"))
    return Rows(
        np.array(x),
        np.array(related),
        np.array(same),
        np.array(split),
        np.array(kind),
        np.array(dev, dtype=bool),
        np.array(pair_languages),
        np.array(control, dtype=bool),
        np.char.startswith(np.array(kind, dtype=str), BLIND_ORIGIN),
        all_facts,
        all_texts,
    )


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


def fit_head(
    x: Floats,
    y: Floats,
    split: npt.NDArray[np.str_],
    columns: Sequence[int],
    among: npt.NDArray[np.bool_] | None = None,
) -> Head:
    """Fitted on `train`, Platt-scaled on `calibrate` (of the pairs `among`, when given);
    features outside `columns` weigh 0."""
    labelled = ~np.isnan(y) if among is None else ~np.isnan(y) & among
    train, calibrate = labelled & (split == "train"), labelled & (split == "calibrate")
    weights, bias = fit_logistic(x[train][:, columns], y[train])
    full = np.zeros(x.shape[1])
    full[list(columns)] = weights
    logit = x[calibrate] @ full + bias
    (scale,), shift = fit_logistic(logit[:, None], y[calibrate], penalty=0.0)
    return Head(tuple(float(w) for w in full), bias, float(scale), float(shift))


def best_band(probability: Floats, truth: Floats) -> float:
    """The cut on a probability with the best F1 on these pairs (every 0.01 from 0.2)."""
    best, band = -1.0, 0.5
    for cut in np.round(np.arange(0.2, 0.9, 0.01), 2):
        score = f1(probability >= cut, truth == 1)["f1"]
        if score > best:
            best, band = score, float(cut)
    return band


def train_judge(
    rows: Rows,
    *,
    version: int,
    columns: Sequence[int] | None = None,
    bands: bool = False,
    related_on_library: bool = False,
) -> Judge:
    """Both heads fitted on `train`, Platt-scaled on `calibrate`; with `related_on_library`,
    the related head on the library pairs alone (`Rows.library`). With `bands`, each band is
    chosen on `calibrate` too (the best F1: same idea on STS-B's pairs, related on every
    labelled one) instead of 0.5: measured, and not pinned (docs/evaluation.md)."""
    fitted = rows.split == "train"
    mean = rows.x[fitted].mean(axis=0)
    std = rows.x[fitted].std(axis=0)
    std[std == 0] = 1.0
    x = (rows.x - mean) / std
    columns = list(range(len(FEATURES))) if columns is None else list(columns)
    judge = Judge(
        version=version,
        names=FEATURES,
        mean=tuple(map(float, mean)),
        std=tuple(map(float, std)),
        related=fit_head(
            x, rows.related, rows.split, columns, rows.library if related_on_library else None
        ),
        same_idea=fit_head(x, rows.same, rows.split, columns),
    )
    if not bands:
        return judge
    related, same = judge.probabilities(rows.x)
    calibrate = rows.split == "calibrate"
    stsb = calibrate & np.isin(rows.kind, list(STSB_KINDS.values())) & ~np.isnan(rows.same)
    labelled = calibrate & ~np.isnan(rows.related)
    return replace(
        judge,
        same_idea_band=best_band(same[stsb], rows.same[stsb]),
        related_band=best_band(related[labelled], rows.related[labelled]),
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


# Kinds of pair whose related precision the issue aims at (≥ 75 %): a German, Portuguese
# or French passage with its nearest in another book, within its language or across.
THIN_LANGUAGES = ("de", "pt", "fr")


def report(judge: Judge, rows: Rows) -> dict[str, Any]:
    """STS-B dev's same-idea F1 and translations at the judge's bands; on the held-out
    `test` split, AUC per kind and reliability of both heads; the related band's precision
    on the blind-judged German, Portuguese and French pairs."""
    related, same = judge.probabilities(rows.x)
    same_band, related_band = judge.same_idea_band, judge.related_band
    found: dict[str, Any] = {
        "bands": {"same idea": same_band, "related": related_band},
        "same_idea_f1": {},
        "translations": {},
        "auc": {},
        "reliability": {},
        "thin languages": {},
    }
    for part, chosen_part in (("dev", rows.dev), ("held-out train", ~rows.dev)):
        test = chosen_part & (rows.split == "test")
        for kind in ("en", "es", "es-en"):
            chosen = test & (rows.kind == kind) & ~np.isnan(rows.same)
            found["same_idea_f1"][f"{kind} {part}"] = f1(
                same[chosen] >= same_band, rows.same[chosen] == 1
            )
        chosen = test & (rows.kind == "translation")
        found["translations"][part] = {
            "same idea": round(float(np.mean(same[chosen] >= same_band)), 3),
            "related or more": round(float(np.mean(related[chosen] >= related_band)), 3),
            "pairs": int(chosen.sum()),
        }
    test = rows.split == "test"
    for head, probability, truth in (
        ("related", related, rows.related),
        ("same idea", same, rows.same),
    ):
        chosen = test & ~np.isnan(truth)
        found["auc"][f"{head}, all"] = round(auc(probability[chosen], truth[chosen] == 1), 4)
        for kind in dict.fromkeys(rows.kind.tolist()):
            in_kind = chosen & (rows.kind == kind)
            value = auc(probability[in_kind], truth[in_kind] == 1)
            if not np.isnan(value):
                found["auc"][f"{head}, {kind}"] = round(value, 4)
        found["reliability"][head] = reliability(probability[chosen], truth[chosen])
    # What the related head is fitted for: the blind-judged pairs of a library's neighbours.
    chosen = test & rows.library & ~np.isnan(rows.related)
    found["reliability"]["related, library pairs"] = reliability(
        related[chosen], rows.related[chosen], bins=5
    )
    thin = np.array([any(lang in pair.split("-") for lang in THIN_LANGUAGES)
                     for pair in rows.languages.tolist()])  # fmt: skip
    blind = thin & np.char.startswith(rows.kind.astype(str), "blind-")
    for part, chosen in (("held out", blind & (rows.split != "train")), ("all", blind)):
        found["thin languages"][part] = _band_precision(chosen, related, related_band, rows)
    found["library pairs, test"] = _band_precision(
        rows.library & (rows.split == "test"), related, related_band, rows
    )
    return found


def _band_precision(
    chosen: npt.NDArray[np.bool_], related: Floats, band: float, rows: Rows
) -> dict[str, int]:
    kept = chosen & (related >= band)
    return {
        "pairs": int(chosen.sum()),
        "judged related": int(np.nansum(rows.related[chosen])),
        "related band": int(kept.sum()),
        "of which judged related": int(np.nansum(rows.related[kept])),
    }


def held_out_summary(found: dict[str, Any], at_half: dict[str, Any]) -> dict[str, Any]:
    """The report's figures on pairs nothing was fitted on, pinned beside the weights (a
    test reads them against the issue's aims): `found` at the pinned bands, `at_half` at
    P ≥ 0.5 (how well the same-idea head ranks STS-B, whatever band is pinned)."""
    thin = found["thin languages"]["held out"]
    library = found["library pairs, test"]
    translations = at_half["translations"]["dev"]["same idea"]

    def dev(report: dict[str, Any], measure: str) -> dict[str, float]:
        f1s = report["same_idea_f1"]
        return {k: f1s[f"{k} dev"][measure] for k in ("en", "es", "es-en")}

    return {
        "same idea F1, STS-B dev, at P >= 0.5": dev(at_half, "f1"),
        "translations judged the same idea, STS-B dev, at P >= 0.5": translations,
        "same idea precision, STS-B dev, at the pinned band": dev(found, "precision"),
        "same idea F1, STS-B dev, at the pinned band": dev(found, "f1"),
        "German/Portuguese/French blind pairs in the related band, judged related": [
            thin["of which judged related"],
            thin["related band"],
        ],
        "library pairs in the related band, judged related": [
            library["of which judged related"],
            library["related band"],
        ],
        "log-loss on test": found["log-loss on test"],
    }


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
    "theme model": ("theme", "has_theme"),
    "rare stems": ("rare", "rare_share"),
    "lengths": ("short", "long", "main_short"),
    "length-dependent cosine": ("main_short",),
    "languages": ("across", "unknown", "main_across", "main_unknown", "en_es", "main_en_es"),
    "English-Spanish": ("en_es", "main_en_es"),
    "numbers": ("numbers",),
    "negation": ("negation",),
    "same author": ("same_author",),
}  # fmt: skip


def ablation(
    rows: Rows, version: int, *, related_on_library: bool = False
) -> dict[str, dict[str, float]]:
    """Test log-loss of the judge without each group of features (higher: it earns its
    place)."""
    train = partial(train_judge, rows, version=version, related_on_library=related_on_library)
    found = {"all": log_loss(train(), rows)}
    for name, group in GROUPS.items():
        columns = [i for i, f in enumerate(FEATURES) if f not in group]
        found[f"without {name}"] = log_loss(train(columns=columns), rows)
    return found


def weights_document(judges: dict[str, Judge], version: int) -> dict[str, Any]:
    return {
        "version": version,
        "trained": datetime.date.today().isoformat(),
        "models": {name: judge.as_json() for name, judge in judges.items()},
    }


def write_weights(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
