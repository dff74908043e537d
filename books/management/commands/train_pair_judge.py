"""`manage.py train_pair_judge`: train the pair judge on labelled pairs, report it, and (with
--write) pin its weights in books/connections/judge.json. A thin entry point: the training
code is evaluation.pair_judge, never imported by the web or the worker."""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = (
        "Train the pair judge (P(related), P(same idea)) on the committed label files "
        "(evaluation/labels/*.tsv), their texts read from the shared data: fit on train, "
        "calibrate and choose the bands on calibrate, report F1 on STS-B dev, AUC per kind "
        "and reliability tables on test; --write pins the weights."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--data",
            type=Path,
            default=Path(settings.BASE_DIR).parent / "shared" / "data",
            help="the shared data folder the label files point into; default ../shared/data",
        )
        parser.add_argument("--weights-version", type=int, help="the new weights' version")
        parser.add_argument("--write", action="store_true", help="pin the weights")
        parser.add_argument(
            "--ablation", action="store_true", help="also leave each group of features out in turn"
        )
        parser.add_argument(
            "--bands",
            nargs=2,
            type=float,
            metavar=("RELATED", "SAME_IDEA"),
            help="pin these bands of P(related) and P(same idea) (default 0.5 and 0.5); "
            "choose them on blind-judged library pairs (docs/evaluation.md)",
        )
        parser.add_argument("--json", action="store_true", help="the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        from books.connections.judge import WEIGHTS_FILE, judge_version
        from books.embedding.encoder import get_encoders
        from evaluation.labels import LabelError
        from evaluation.pair_judge import (
            ablation,
            held_out_summary,
            labelled_rows,
            log_loss,
            report,
            train_judge,
            weights_document,
            write_weights,
        )

        data: Path = options["data"]
        if not (data / "eval").is_dir():
            raise CommandError(f"{data} has no eval/ folder: not the shared data (--data)")
        try:
            current = judge_version()
        except (OSError, ValueError, KeyError):
            current = 0
        version = options["weights_version"] or current + 1
        encoders = get_encoders()
        folder = Path(settings.EXOGRAM_DATA_DIR) / "pair_judge"
        try:
            rows = labelled_rows(data, encoders=encoders, folder=folder, log=self.stderr.write)
        except LabelError as error:
            raise CommandError(str(error)) from None
        judge = train_judge(rows, version=version, related_on_library=True)
        if options["bands"]:
            related_band, same_idea_band = options["bands"]
            judge = replace(judge, related_band=related_band, same_idea_band=same_idea_band)
        found: dict[str, Any] = {
            "model": encoders.main.spec.name,
            "version": version,
            "pairs": {s: int((rows.split == s).sum()) for s in ("train", "calibrate", "test")},
            "log-loss on test": log_loss(judge, rows),
            **report(judge, rows),
        }
        found["weights"] = {
            "related": dict(zip(judge.names, judge.related.weights, strict=True)),
            "same idea": dict(zip(judge.names, judge.same_idea.weights, strict=True)),
        }
        if options["ablation"]:
            found["ablation (test log-loss)"] = ablation(rows, version, related_on_library=True)
            chosen = report(
                train_judge(rows, version=version, bands=True, related_on_library=True), rows
            )
            found["bands chosen on calibrate"] = {
                "bands": chosen["bands"],
                "same idea F1, STS-B dev": {
                    k: chosen["same_idea_f1"][f"{k} dev"]["f1"] for k in ("en", "es", "es-en")
                },
                "translations, STS-B dev": chosen["translations"]["dev"]["same idea"],
                "thin languages, held out": chosen["thin languages"]["held out"],
            }
        if options["write"]:
            document = weights_document({encoders.main.spec.name: judge}, version)
            half = replace(judge, related_band=0.5, same_idea_band=0.5)
            document["held out"] = held_out_summary(found, report(half, rows))
            write_weights(WEIGHTS_FILE, document)
            found["written"] = str(WEIGHTS_FILE.relative_to(Path(settings.BASE_DIR)))
        if options["json"]:
            self.stdout.write(json.dumps(found, indent=1))
            return
        self._print(found)

    def _print(self, found: dict[str, Any]) -> None:
        write = self.stdout.write
        write(f"pair judge v{found['version']} for {found['model']}; pairs {found['pairs']}")
        write(f"log-loss on test: {found['log-loss on test']}")
        bands = found["bands"]
        write(
            f"same idea at P(same idea) ≥ {bands['same idea']:.2f}, related at P(related) ≥ "
            f"{bands['related']:.2f} (chosen on calibrate); STS-B ≥ 4 same, ≤ 2 unrelated:"
        )
        for name, m in found["same_idea_f1"].items():
            write(f"  {name:<24} P {m['precision']:.3f}  R {m['recall']:.3f}  F1 {m['f1']:.3f}")
        for split, t in found["translations"].items():
            write(
                f"  translations {split}: same idea {t['same idea']:.1%}, "
                f"related or more {t['related or more']:.1%} of {t['pairs']}"
            )
        write("AUC on test, by kind:")
        for name, value in found["auc"].items():
            write(f"  {name:<40} {value:.3f}")
        judged = [
            (f"German/Portuguese/French blind pairs ({part})", t)
            for part, t in found["thin languages"].items()
        ] + [("Blind library pairs (test)", found["library pairs, test"])]
        for name, t in judged:
            share = t["of which judged related"] / max(1, t["related band"])
            write(
                f"{name}: {t['pairs']} pairs, {t['judged related']} judged related; the "
                f"related band keeps {t['related band']}, {t['of which judged related']} "
                f"judged related ({share:.0%})"
            )
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
        if "bands chosen on calibrate" in found:
            write(f"with the bands chosen on calibrate: {found['bands chosen on calibrate']}")
        if "written" in found:
            write(self.style.SUCCESS(f"weights written to {found['written']}"))
