"""Calibrate the connection threshold on STS-Benchmark pairs, as the app itself would connect them.

The folder holds STS-B as distributed for multilingual work: `stsb-en-{train,dev}.csv` and
`stsb-es-{train,dev}.csv` (sentence1, sentence2, score; the rows of the two languages are
aligned translations of each other), or the original tab-separated `sts-{train,dev}.csv`
for English. Aligned rows give Spanish↔English pairs: the Spanish first sentence against the
English second one, and the English first against the Spanish second.

Each pair set is judged as the app judges it (app_judges): two English sentences by the
English model beside the multilingual one (books.embedding.english), Spanish pairs and
pairs across languages by the model itself, each at its own cuts. Sentences go through the
app's own encoders and the distances are pgvector's `<=>` on vector(384) columns, so a
threshold read off this table means the same thing in the connection query. Nothing
permanent is written: the vectors live in temporary tables that are dropped in the same
transaction.

`--quotable DIR` calibrates the looser *related* threshold, a shared theme rather than a
paraphrase, on quotes with topic tags (`quotes.json`: content, author, tags): two quotes
by different authors that share a specific tag (Friendship, Technology, Politics, …, not
the site's generic Famous Quotes / Wisdom / Inspirational) are related; two that share no
tag at all are not; pairs that share only a generic tag are left out.

`--fortunes DIR` calibrates the *related* cut of two Spanish passages the same way, on the
Spanish sayings of `fortunes_es/` (strfile files, one a topic): two sayings by different
authors in one subject's file (amistad, arte, ciencia, …) are related, two of different
subjects are not; the files gathered by source, tone or author (refranes, famosos,
nietzsche, …) are left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction

from books.embedding.profiles import MODEL_CHOICES

TARGET_PRECISION = 0.90
# Thresholds are searched on this grid: a default is written with two decimals anyway.
GRID_STEP = 0.01

Floats = npt.NDArray[np.float64]

from evaluation.sts_data import (  # noqa: E402 (the readers moved out of the command)
    DIFFERENT_MAX_SCORE,
    FORTUNES_SUBJECTS,
    GENERIC_TAGS,
    PAIR_SETS,
    RELATED_GRID_STEP,
    RELATED_PAIRS_PER_TAG,
    RELATED_TARGET_PRECISION,
    SAME_IDEA_MIN_SCORE,
    SPLITS,
    LabelledPair,
    load_pair_sets,
    load_translations,
    read_fortunes_subjects,
    read_quotable,
    related_or_fail,
)


def translation_metrics(
    rows: Sequence[tuple[str, str]],
    vectors: npt.NDArray[np.float32],
    index: dict[str, int],
    threshold: float,
) -> dict[str, Any]:
    """How a model sees exact translations: the share under the threshold, and Recall@1 in
    both directions among all sentences of the split (a sentence repeated with several
    translations counts a hit on any of them)."""
    spanish = sorted({s for s, _ in rows})
    english = sorted({e for _, e in rows})
    # float32: the train split's similarity matrix is ~11,000 x 11,000.
    es_vectors = vectors[[index[s] for s in spanish]].astype(np.float32)
    en_vectors = vectors[[index[e] for e in english]].astype(np.float32)
    similarity = es_vectors @ en_vectors.T  # unit vectors: cosine
    es_at, en_at = {s: i for i, s in enumerate(spanish)}, {e: i for i, e in enumerate(english)}
    wanted = np.zeros(similarity.shape, dtype=bool)
    for s, e in rows:
        wanted[es_at[s], en_at[e]] = True
    distances = 1.0 - similarity[wanted].astype(np.float64)
    es_hits = wanted[np.arange(len(spanish)), similarity.argmax(axis=1)]
    en_hits = wanted[similarity.argmax(axis=0), np.arange(len(english))]
    return {
        "pairs": len(rows),
        "connected": round(float(np.mean(distances < threshold)), 4),
        "es_to_en_recall_at_1": round(float(np.mean(es_hits)), 4),
        "en_to_es_recall_at_1": round(float(np.mean(en_hits)), 4),
    }


# --- distances, by pgvector ---------------------------------------------------------------


def pgvector_distances(
    vectors: npt.NDArray[np.float32], pairs: Sequence[tuple[int, int]]
) -> Floats:
    """`<=>` between vectors[a] and vectors[b] for each pair, computed by the database."""
    with transaction.atomic(), connection.cursor() as wrapper:
        wrapper.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        if wrapper.fetchone() is None:
            raise CommandError("The database has no pgvector extension. Run `manage.py migrate`.")
        # Temporary tables die with the transaction's savepoint on error and are dropped
        # below on success: nothing outlives the command, even inside a test transaction.
        wrapper.execute(
            "CREATE TEMPORARY TABLE evaluate_sentence (id integer PRIMARY KEY, "
            f"embedding vector({vectors.shape[1]}) NOT NULL)"
        )
        wrapper.execute(
            "CREATE TEMPORARY TABLE evaluate_pair (n integer PRIMARY KEY, a integer NOT NULL, "
            "b integer NOT NULL)"
        )
        cursor = wrapper.cursor
        with cursor.copy("COPY evaluate_sentence (id, embedding) FROM STDIN") as copy:
            for index, vector in enumerate(vectors):
                # A list's repr is pgvector's text input ("[0.1, -0.2, …]"); each float32,
                # widened to a double and printed in full, reads back as the same float32.
                copy.write_row((index, str(vector.tolist())))
        with cursor.copy("COPY evaluate_pair (n, a, b) FROM STDIN") as copy:
            for n, (a, b) in enumerate(pairs):
                copy.write_row((n, a, b))
        wrapper.execute(
            "SELECT p.n, sa.embedding <=> sb.embedding FROM evaluate_pair p "
            "JOIN evaluate_sentence sa ON sa.id = p.a JOIN evaluate_sentence sb ON sb.id = p.b "
            "ORDER BY p.n"
        )
        rows = wrapper.fetchall()
        wrapper.execute("DROP TABLE evaluate_pair, evaluate_sentence")
    return np.array([row[1] for row in rows], dtype=np.float64)


# --- metrics ------------------------------------------------------------------------------


def _metrics(
    threshold: float,
    distances: Floats,
    same: npt.NDArray[np.bool_],
    agreed: npt.NDArray[np.bool_] | None = None,
) -> dict[str, Any]:
    """P/R/F1 of connecting the pairs under `threshold`; `agreed`: the pairs a second judge
    also connects, when the app asks both (two English passages, the same idea)."""
    # `<`, not `<=`: the connection query keeps a pair when its distance is below the threshold.
    connected = distances < threshold
    if agreed is not None:
        connected &= agreed
    tp = int(np.sum(connected & same))
    fp = int(np.sum(connected & ~same))
    fn = int(np.sum(~connected & same))
    tn = int(np.sum(~connected & ~same))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "threshold": round(threshold, 4),
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
    }


def separation_auc(distances: Floats, same: npt.NDArray[np.bool_]) -> float | None:
    """The chance that a same-idea pair is closer than a different pair (ties count half).

    Independent of any threshold: 0.5 means the distance cannot tell them apart at all,
    which no choice of threshold can repair.
    """
    positives, negatives = distances[same], np.sort(distances[~same])
    if not len(positives) or not len(negatives):
        return None
    below = np.searchsorted(negatives, positives, side="left")
    above = len(negatives) - np.searchsorted(negatives, positives, side="right")
    ties = len(negatives) - above - below
    return float((above.sum() + 0.5 * ties.sum()) / (len(positives) * len(negatives)))


def evaluate_related(
    distances: Floats, related: npt.NDArray[np.bool_], threshold: float
) -> dict[str, Any]:
    """Precision and recall of *related* at the current threshold, the loosest threshold
    with precision >= RELATED_TARGET_PRECISION on a fine grid (e5's cuts differ by
    hundredths), and a table of round thresholds from half the current one to twice it."""
    grid = [round(RELATED_GRID_STEP * i, 4) for i in range(1, round(2 / RELATED_GRID_STEP) + 1)]
    swept = [_metrics(t, distances, related) for t in grid]
    shown = 0.05 if threshold >= 0.2 else 0.01
    precise = [
        m
        for m in swept
        if m["tp"] > 0 and m["tp"] >= RELATED_TARGET_PRECISION * (m["tp"] + m["fp"])
    ]
    auc = separation_auc(distances, related)
    return {
        "related": int(np.sum(related)),
        "unrelated": int(np.sum(~related)),
        "auc": None if auc is None else round(auc, 4),
        "at_threshold": _metrics(threshold, distances, related),
        "precision_75": precise[-1] if precise else None,
        "table": [
            m
            for m in swept
            if threshold / 2 - 1e-9 <= m["threshold"] <= 2 * threshold + 1e-9
            and abs(m["threshold"] / shown - round(m["threshold"] / shown)) < 1e-6
        ],
    }


def evaluate(
    distances: Floats,
    same: npt.NDArray[np.bool_],
    cuts: Cuts,
    agreed: npt.NDArray[np.bool_] | None = None,
) -> dict[str, Any]:
    """The pair set at its cuts, and its cut swept. `agreed`: the pairs the confirming judge
    puts under its same-idea cut (Judge.confirm), which the same idea needs too."""
    grid = [round(GRID_STEP * i, 4) for i in range(1, round(2 / GRID_STEP) + 1)]
    swept = [_metrics(t, distances, same, agreed) for t in grid]
    # The first maximum: of thresholds with the same F1, the tighter one.
    best = max(swept, key=lambda m: m["f1"])
    precise = [
        m for m in swept if m["tp"] > 0 and m["tp"] >= TARGET_PRECISION * (m["tp"] + m["fp"])
    ]
    auc = separation_auc(distances, same)
    return {
        "same": int(np.sum(same)),
        "different": int(np.sum(~same)),
        "auc": None if auc is None else round(auc, 4),
        "at_same_idea": _metrics(cuts.same_idea, distances, same, agreed),
        # What connects at all: the pair's related cut.
        "at_related": _metrics(cuts.related, distances, same),
        "best_f1": best,
        # Precision is not monotonic in the threshold: "loosest" is the largest threshold
        # that still meets the target, not the end of a run from zero.
        "precision_90": precise[-1] if precise else None,
    }


@dataclass(frozen=True)
class Judge:
    """What judges one kind of pair in the app: an encoder's vectors under its cuts."""

    encoder: Any
    cuts: Cuts
    # The judge whose same-idea cut must hold too for the same idea (two English sentences:
    # the main model beside the English one).
    confirm: Judge | None = None

    @property
    def model_id(self) -> str:
        return str(self.encoder.vectors_id)

    @property
    def with_confirm(self) -> list[Judge]:
        """This judge, and the one that confirms its same idea if any."""
        return [self] if self.confirm is None else [self, self.confirm]

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        vectors: npt.NDArray[np.float32] = self.encoder.encode(texts)
        return vectors


@dataclass(frozen=True)
class Cuts:
    """A model's own cosine-distance cuts (books.embedding.profiles): same idea < related."""

    same_idea: float
    related: float


def app_judges(model: str | None) -> dict[str, Judge]:
    """For each pair set, the vectors and their model's own cuts: the configured model (with
    the environment's cuts), or the built-in `model` at its own, with the English model
    beside it for two English sentences when it has one. The distances alone: the app's pair
    judge (`train_pair_judge`) weighs them with each pair's context."""
    from django.conf import settings

    from books.embedding.encoder import get_encoder
    from books.embedding.english import has_english_model

    encoder = get_encoder(model)
    same, related = encoder.spec.profile.same_idea_cut, encoder.spec.profile.related_cut
    if model is None:
        same = settings.EXOGRAM_CONNECTION_THRESHOLD or same
        related = max(same, settings.EXOGRAM_RELATED_THRESHOLD or related)
    main = Judge(encoder, Cuts(same, related))
    if not has_english_model(encoder.spec):
        return {"en": main, "es": main, "es-en": main}
    minilm = get_encoder(encoder.spec.profile.english_model)
    cuts = Cuts(minilm.spec.profile.same_idea_cut, minilm.spec.profile.related_cut)
    english = Judge(minilm, cuts, confirm=main)
    return {"en": english, "es": main, "es-en": main}


# --- the command --------------------------------------------------------------------------


class EvaluateConnections(BaseCommand):
    help = (
        "Calibrate the connection threshold on STS-B pairs (English, Spanish, Spanish↔English): "
        "precision, recall and F1 at the current threshold, the best-F1 threshold and the "
        "loosest threshold with precision ≥ 0.90, on train and dev."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--data", type=Path, help="the STS-B folder (stsb-en-train.csv, …): same idea"
        )
        parser.add_argument(
            "--quotable",
            type=Path,
            help="the quotable folder (quotes.json with tags): calibrate the related threshold",
        )
        parser.add_argument(
            "--fortunes",
            type=Path,
            help="the fortunes_es folder (Spanish sayings by subject): calibrate the related "
            "threshold of two Spanish passages",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument(
            "--model",
            choices=MODEL_CHOICES,
            help="evaluate this built-in model, at its own threshold (default: the configured one)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from books.embedding.encoder import EncoderUnavailable

        folders = [name for name in ("data", "quotable", "fortunes") if options[name] is not None]
        if not folders:
            raise CommandError(
                "Pass --data with the STS-B folder (same idea), --quotable with the quotable "
                "folder (related, English) and/or --fortunes with the fortunes_es folder "
                "(related, Spanish)."
            )
        if options["json"] and len(folders) > 1:
            raise CommandError("With --json, pass one of --data, --quotable and --fortunes.")
        # Every folder is read and checked before anything is encoded: a bad second folder
        # fails at once, not after minutes spent on the first.
        related_sets: list[tuple[str, list[LabelledPair], dict[str, Any]]] = []
        if options["quotable"] is not None:
            quotes = read_quotable(Path(options["quotable"]))
            # The quotes are English: judged as the app judges two English passages.
            labels = {"generic_tags": sorted(GENERIC_TAGS)}
            related_sets.append(("en", related_or_fail(quotes, options["quotable"]), labels))
        if options["fortunes"] is not None:
            sayings = read_fortunes_subjects(Path(options["fortunes"]))
            labels = {"subjects": sorted(FORTUNES_SUBJECTS)}
            related_sets.append(("es", related_or_fail(sayings, options["fortunes"]), labels))
        if options["data"] is not None:
            pair_sets = load_pair_sets(Path(options["data"]))
            translations = load_translations(Path(options["data"]))
        for pair_set, pairs, labels in related_sets:
            self._calibrate_related(options, pair_set, pairs, labels)
        if options["data"] is None:
            return
        try:
            judges = app_judges(options["model"])
        except EncoderUnavailable as error:
            raise CommandError(str(error)) from None

        # Each distinct sentence is encoded once by each model that judges it: STS-B repeats
        # many across pairs, and the encoder is the slow part on a small CPU.
        needed: dict[str, dict[str, int]] = {}
        encoders: dict[str, Judge] = {}
        for (_, name), pairs in pair_sets.items():
            for judge in judges[name].with_confirm:
                encoders.setdefault(judge.model_id, judge)
                index = needed.setdefault(judge.model_id, {})
                for pair in pairs:
                    index.setdefault(pair.first, len(index))
                    index.setdefault(pair.second, len(index))
        across_index = needed.setdefault(judges["es-en"].model_id, {})
        for rows in translations.values():
            for spanish, english in rows:
                across_index.setdefault(spanish, len(across_index))
                across_index.setdefault(english, len(across_index))
        vectors = {}
        for model_id, index in needed.items():
            self._progress(options, f"encoding {len(index)} distinct sentences with {model_id}")
            vectors[model_id] = encoders[model_id].encode(list(index))

        # Every pair a model measures, in one pgvector call a model (each call uploads the
        # model's vectors): a pair set's distances are a slice of them.
        order = sorted(pair_sets, key=lambda k: (SPLITS.index(k[0]), PAIR_SETS.index(k[1])))
        asked: dict[str, list[tuple[int, int]]] = {model_id: [] for model_id in needed}
        spans: dict[tuple[str, str, str], slice] = {}
        for split, name in order:
            pairs = pair_sets[(split, name)]
            for judge in judges[name].with_confirm:
                index, wanted = needed[judge.model_id], asked[judge.model_id]
                spans[(split, name, judge.model_id)] = slice(len(wanted), len(wanted) + len(pairs))
                wanted += [(index[p.first], index[p.second]) for p in pairs]
        measured = {}
        for model_id, wanted in asked.items():
            self._progress(options, f"measuring {len(wanted)} pairs of {model_id} with pgvector")
            measured[model_id] = pgvector_distances(vectors[model_id], wanted)

        results = []
        for split, name in order:
            pairs, judge = pair_sets[(split, name)], judges[name]
            distances = measured[judge.model_id][spans[(split, name, judge.model_id)]]
            same = np.array([p.same for p in pairs], dtype=bool)
            agreed = None
            if judge.confirm is not None:
                confirm = judge.confirm
                span = spans[(split, name, confirm.model_id)]
                agreed = measured[confirm.model_id][span] < confirm.cuts.same_idea
            results.append(
                {
                    "split": split,
                    "pairs": name,
                    "judge": judge.model_id,
                    "cuts": [judge.cuts.same_idea, judge.cuts.related],
                    "same_idea_confirmed_by": None
                    if judge.confirm is None
                    else [judge.confirm.model_id, judge.confirm.cuts.same_idea],
                    **evaluate(distances, same, judge.cuts, agreed),
                }
            )
        across = judges["es-en"]
        report = {
            "model": judges["es"].model_id,
            "judges": {name: judge.model_id for name, judge in judges.items()},
            "confirmed_by": {
                name: [judge.confirm.model_id, judge.confirm.cuts.same_idea]
                for name, judge in judges.items()
                if judge.confirm is not None
            },
            "same_idea_min_score": SAME_IDEA_MIN_SCORE,
            "different_max_score": DIFFERENT_MAX_SCORE,
            "target_precision": TARGET_PRECISION,
            "results": results,
            "translations": [
                {
                    "split": split,
                    "threshold": across.cuts.related,
                    **translation_metrics(
                        rows,
                        vectors[across.model_id],
                        needed[across.model_id],
                        across.cuts.related,
                    ),
                }
                for split, rows in translations.items()
            ],
        }
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
        else:
            self._write_table(report)
            self._write_translations(report)

    def _write_translations(self, report: dict[str, Any]) -> None:
        if not report["translations"]:
            return
        write = self.stdout.write
        write("")
        write(
            "translations (row i of stsb-es vs row i of stsb-en): the share connected at the "
            "related cut across languages, and Recall@1 — how often a sentence's nearest "
            "neighbour among all sentences of the other language in the split is its translation"
        )
        header = (
            f"{'':<13}{'split':<6}{'pairs':>7}{'connected':>11}{'es→en R@1':>11}{'en→es R@1':>11}"
        )
        write(header)
        write("─" * len(header))
        for row in report["translations"]:
            write(
                f"{'translations':<13}{row['split']:<6}{row['pairs']:>7}{row['connected']:>11.3f}"
                f"{row['es_to_en_recall_at_1']:>11.3f}{row['en_to_es_recall_at_1']:>11.3f}"
            )

    def _calibrate_related(
        self,
        options: dict[str, Any],
        pair_set: str,
        pairs: list[LabelledPair],
        labels: dict[str, Any],
    ) -> None:
        """The related cut of one pair set ("en", "es") on labelled pairs of quotes;
        `labels` says in the report how they were labelled."""
        from books.embedding.encoder import EncoderUnavailable

        try:
            judge = app_judges(options["model"])[pair_set]
        except EncoderUnavailable as error:
            raise CommandError(str(error)) from None
        threshold = judge.cuts.related
        index: dict[str, int] = {}
        for pair in pairs:
            index.setdefault(pair.first, len(index))
            index.setdefault(pair.second, len(index))
        self._progress(options, f"encoding {len(index)} distinct quotes with {judge.model_id}")
        vectors = judge.encode(list(index))
        self._progress(options, f"measuring {len(pairs)} pairs with pgvector")
        distances = pgvector_distances(vectors, [(index[p.first], index[p.second]) for p in pairs])
        related = np.array([p.same for p in pairs], dtype=bool)
        report = {
            "model": judge.model_id,
            "pair_set": pair_set,
            "related_threshold": threshold,
            **labels,
            "target_precision": RELATED_TARGET_PRECISION,
            **evaluate_related(distances, related, threshold),
        }
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
            return
        write = self.stdout.write
        write(
            f"{pair_set} pairs, model {report['model']}, current related threshold {threshold:.3f}"
        )
        write(
            f"related: two quotes by different authors sharing a specific subject "
            f"({report['related']} pairs, at most {RELATED_PAIRS_PER_TAG} a subject); "
            f"unrelated: two quotes sharing none ({report['unrelated']} pairs, as many to one "
            f"related pair as among all pairs); AUC {report['auc']}"
        )
        write("")
        write(f"{'threshold':<10}{'P':>7}{'R':>7}{'F1':>7}{'pairs under':>13}")
        for m in report["table"]:
            write(
                f"{m['threshold']:<10.2f}{m['precision']:>7.3f}{m['recall']:>7.3f}"
                f"{m['f1']:>7.3f}{m['tp'] + m['fp']:>13}"
            )
        write("")
        for key, label in (("at_threshold", "current"), ("precision_75", "P ≥ 0.75")):
            m = report[key]
            if m is None:
                write(f"{label}: none")
            else:
                write(
                    f"{label}: {m['threshold']:.3f}  P {m['precision']:.3f}  "
                    f"R {m['recall']:.3f}  F1 {m['f1']:.3f}"
                )

    def _progress(self, options: dict[str, Any], message: str) -> None:
        if options["verbosity"] >= 1:
            # stderr, so that --json output on stdout stays parseable.
            self.stderr.write(message, style_func=None)

    def _write_table(self, report: dict[str, Any]) -> None:
        write = self.stdout.write
        judges = report["judges"]
        write(f"model {report['model']}; each pair set judged as the app judges it:")
        for name, judge in judges.items():
            confirmed = report["confirmed_by"].get(name)
            also = (
                ""
                if confirmed is None
                else f"; the same idea (and the best-F1 and P columns) only where "
                f"{confirmed[0]} is under {confirmed[1]:g} too"
            )
            write(f"  {name:<6} by {judge}{also}")
        write(
            f"a pair connects when its distance is below its cut; STS score ≥ "
            f"{SAME_IDEA_MIN_SCORE:g} is the same idea, ≤ {DIFFERENT_MAX_SCORE:g} different"
        )
        write(
            "AUC: the chance a same-idea pair is closer than a different one (0.5 = no signal); "
            f"thresholds searched in steps of {GRID_STEP:g}"
        )
        write("")
        header = (
            f"{'split':<6}{'pairs':<7}{'same':>6}{'diff':>6}{'AUC':>7} │ "
            f"{'same idea':<10}{'P':>6}{'R':>6}{'F1':>6} │ "
            f"{'related':<10}{'P':>6}{'R':>6}{'F1':>6} │ "
            f"{'best F1':<10}{'P':>6}{'R':>6}{'F1':>6} │ "
            f"{'P ≥ ' + format(TARGET_PRECISION, '.2f'):<10}{'P':>6}{'R':>6}{'F1':>6}"
        )
        write(header)
        write("─" * len(header))
        for row in report["results"]:
            auc = "" if row["auc"] is None else f"{row['auc']:.3f}"
            cells = [
                f"{row['split']:<6}{row['pairs']:<7}{row['same']:>6}{row['different']:>6}{auc:>7}"
            ]
            for key in ("at_same_idea", "at_related", "best_f1", "precision_90"):
                m = row[key]
                if m is None:
                    cells.append(f"{'none':<10}{'':>18}")
                    continue
                at = f"< {m['threshold']:.3f}"
                cells.append(f"{at:<10}{m['precision']:>6.3f}{m['recall']:>6.3f}{m['f1']:>6.3f}")
            write(" │ ".join(cells))
