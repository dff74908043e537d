from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.labels import LABELS_DIR, SHARED_DATA, LabelError, labelled_texts, read_labels
from evaluation.labels import write_labels as labels_write
from evaluation.pair_labels import build_label_sets


class Command(BaseCommand):
    help = (
        "Write the label sets made from the public data's own filing (STS-B scores, quotable "
        "tags, the Spanish sayings' subjects) as references into the shared data, one TSV a "
        "set; --check reads every label file back against the shared data instead."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--shared", type=Path, default=SHARED_DATA, help="the shared data")
        parser.add_argument("--out", type=Path, default=LABELS_DIR, help="where the TSVs go")
        parser.add_argument(
            "--check", action="store_true", help="check every TSV in --out resolves, write none"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["check"]:
                self._check(options["out"], options["shared"])
                return
            sets = build_label_sets(options["shared"])
        except LabelError as error:
            raise CommandError(str(error)) from None
        for name, rows in sorted(sets.items()):
            labels_write(options["out"] / f"{name}.tsv", rows)
            self.stdout.write(f"{name}.tsv: {len(rows)} pairs, {_counts(rows)}")

    def _check(self, folder: Path, shared: Path) -> None:
        paths = sorted(folder.glob("*.tsv"))
        if not paths:
            raise CommandError(f"no label files in {folder}")
        for path in paths:
            rows = read_labels(path)
            labelled_texts(rows, shared)
            self.stdout.write(f"{path.name}: {len(rows)} pairs resolve, {_counts(rows)}")


def _counts(rows: list[Any]) -> str:
    counts = Counter((row.label, row.split) for row in rows)
    return ", ".join(f"{label}/{split} {n}" for (label, split), n in sorted(counts.items()))
