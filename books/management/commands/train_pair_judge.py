"""`manage.py train_pair_judge`: train the pair judge on labelled pairs, report it, and (with
--write) pin its weights in books/connections/judge.json. A thin entry point: the training
code is evaluation.pair_judge, never imported by the web or the worker."""

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = (
        "Train the pair judge (P(related), P(same idea)) on STS-B and quotable pairs from the "
        "shared evaluation data: fit on train, calibrate on calibrate, report F1, AUC and a "
        "reliability table on test (STS-B dev); --write pins the weights."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--data",
            type=Path,
            default=Path(settings.BASE_DIR).parent / "shared" / "data" / "eval",
            help="the evaluation data folder (stsb/, quotable/); default ../shared/data/eval",
        )
        parser.add_argument(
            "--train-rows",
            type=int,
            default=2000,
            help="STS-B train rows used (default 2000; dev is always whole)",
        )
        parser.add_argument("--weights-version", type=int, help="the new weights' version")
        parser.add_argument("--write", action="store_true", help="pin the weights")
        parser.add_argument(
            "--ablation", action="store_true", help="also leave each group of features out in turn"
        )
        parser.add_argument("--json", action="store_true", help="the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        from books.connections.judge import WEIGHTS_FILE, judge_version
        from books.embedding.encoder import get_encoder
        from evaluation.pair_judge import (
            ablation,
            labelled_rows,
            report,
            train_judge,
            weights_document,
            write_weights,
        )

        data: Path = options["data"]
        if not (data / "stsb").is_dir() or not (data / "quotable").is_dir():
            raise CommandError(f"{data} has no stsb/ and quotable/ folders (--data)")
        try:
            current = judge_version()
        except (OSError, ValueError, KeyError):
            current = 0
        version = options["weights_version"] or current + 1
        encoder = get_encoder()
        folder = Path(settings.EXOGRAM_DATA_DIR) / "pair_judge"
        rows = labelled_rows(
            data, encoder=encoder, folder=folder, log=self.stderr.write, rows=options["train_rows"]
        )
        judge = train_judge(rows, version=version)
        found: dict[str, Any] = {
            "model": encoder.spec.name,
            "version": version,
            "pairs": {s: int((rows.split == s).sum()) for s in ("train", "calibrate", "test")},
            **report(judge, rows),
        }
        found["weights"] = {
            "related": dict(zip(judge.names, judge.related.weights, strict=True)),
            "same idea": dict(zip(judge.names, judge.same_idea.weights, strict=True)),
        }
        if options["ablation"]:
            found["ablation (test log-loss)"] = ablation(rows, version)
        if options["write"]:
            write_weights(WEIGHTS_FILE, weights_document({encoder.spec.name: judge}, version))
            found["written"] = str(WEIGHTS_FILE.relative_to(Path(settings.BASE_DIR)))
        if options["json"]:
            self.stdout.write(json.dumps(found, indent=1))
            return
        self._print(found)

    def _print(self, found: dict[str, Any]) -> None:
        write = self.stdout.write
        write(f"pair judge v{found['version']} for {found['model']}; pairs {found['pairs']}")
        write("same idea on STS-B (P(same idea) ≥ 0.5; ≥ 4 same, ≤ 2 unrelated):")
        for name, m in found["same_idea_f1"].items():
            write(f"  {name:<16} P {m['precision']:.3f}  R {m['recall']:.3f}  F1 {m['f1']:.3f}")
        for split, t in found["translations"].items():
            write(
                f"  translations {split}: same idea {t['same idea']:.1%}, "
                f"related or more {t['related or more']:.1%} of {t['pairs']}"
            )
        write(f"AUC on test: {found['auc']}")
        for head, table in found["reliability"].items():
            write(f"reliability of P({head}) on test pairs:")
            write(f"  {'bin':<10}{'pairs':>7}{'predicted':>11}{'observed':>10}")
            for row in table:
                write(
                    f"  {row['bin']:<10}{row['pairs']:>7}{row['predicted']:>11.3f}"
                    f"{row['observed']:>10.3f}"
                )
        for head, weights in found["weights"].items():
            write(
                f"{head} weights (standardized): "
                + ", ".join(f"{k} {v:+.2f}" for k, v in weights.items())
            )
        if "ablation (test log-loss)" in found:
            write("test log-loss without each group (higher: the group earns its place):")
            for name, losses in found["ablation (test log-loss)"].items():
                write(
                    f"  {name:<24} related {losses['related']:.4f}  "
                    f"same idea {losses['same idea']:.4f}"
                )
        if "written" in found:
            write(self.style.SUCCESS(f"weights written to {found['written']}"))
