"""How well search finds a highlight's paraphrase: Recall@1/5/10 and MRR@10 per mode.

The labelled set (STS Benchmark's CSV: sentence1, sentence2, score 0-5) goes into a
throw-away library through the app's own path: a clippings file built here, imported by
books.importing.services.clippings_import, embedded by
books.embedding.pipeline.highlights_embed. Everything
runs in one transaction that is rolled back at the end, the temporary reader included, so
nothing is left behind and no embedding task is ever queued (on_commit never fires).

Each sentence of a pair scored >= 4 is a query; its partner is the answer. The two are
placed in different books, every other sentence of the file is a distractor, and the
query's own highlight is left out of its results before ranking.
"""

import csv
import json
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.test.utils import override_settings

from accounts.models import User
from books.embedding.encoder import MODEL_CHOICES, EncoderUnavailable, get_encoder
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.models import Highlight
from books.search.search import search

DEFAULT_FILE = "stsb-en-dev.csv"
BOOKS = 20
CUTOFFS = (1, 5, 10)
MODES = (("keyword", "keyword"), ("meaning", "meaning"), ("hybrid", "auto"))
# One made-up word per title and author, found in no sentence: a title's words are part of
# every highlight's searchable text and must not match queries.
TITLE = "Stsbdev{:02d}"
AUTHOR = "Stsbeval"
ADDED = "Monday, 3 March 2025 10:00:00"


@dataclass(frozen=True)
class LabelledSet:
    sentences: list[str]  # unique, in file order
    answers: dict[int, set[int]]  # query sentence -> its partners (indexes into sentences)


def read_labelled_set(path: Path, min_score: float) -> LabelledSet:
    index: dict[str, int] = {}
    answers: dict[int, set[int]] = defaultdict(set)
    with path.open(newline="", encoding="utf-8") as file:
        for row in csv.reader(file):
            if len(row) != 3:
                continue
            first, second = row[0].strip(), row[1].strip()
            for sentence in (first, second):
                index.setdefault(sentence, len(index))
            if float(row[2]) >= min_score and first != second:
                answers[index[first]].add(index[second])
                answers[index[second]].add(index[first])
    return LabelledSet(list(index), dict(answers))


def assign_books(labelled: LabelledSet, books: int) -> list[int]:
    """Round-robin, moved along where a sentence would share a book with a partner."""
    shelf: list[int] = []
    for number in range(len(labelled.sentences)):
        taken = {shelf[p] for p in labelled.answers.get(number, ()) if p < number}
        book = number % books
        while book in taken:
            book = (book + 1) % books
        shelf.append(book)
    return shelf


def clippings_bytes(labelled: LabelledSet, shelf: list[int]) -> bytes:
    entries = []
    for number, (sentence, book) in enumerate(zip(labelled.sentences, shelf, strict=True)):
        # Locations far apart: neighbouring ranges would be merged as an extended highlight.
        start = 10 * number + 1
        entries.append(
            f"{TITLE.format(book)} ({AUTHOR})\r\n"
            f"- Your Highlight on Location {start}-{start + 1} | Added on {ADDED}\r\n"
            f"\r\n{sentence}\r\n==========\r\n"
        )
    return ("\ufeff" + "".join(entries)).encode("utf-8")


def _metrics(ranks: list[int | None]) -> dict[str, float]:
    total = max(1, len(ranks))
    found = {
        f"recall@{k}": sum(1 for r in ranks if r is not None and r <= k) / total for k in CUTOFFS
    }
    found["mrr@10"] = sum(1 / r for r in ranks if r is not None and r <= 10) / total
    return {key: round(value, 4) for key, value in found.items()}


class Command(BaseCommand):
    help = "Measure keyword, meaning and hybrid search on a labelled set of paraphrases."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--data", required=True, type=Path, help="the STS-B folder")
        parser.add_argument("--file", default=DEFAULT_FILE, help=f"the CSV in it ({DEFAULT_FILE})")
        parser.add_argument("--min-score", type=float, default=4.0, help="a pair's least score")
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument(
            "--model",
            choices=MODEL_CHOICES,
            help="evaluate this built-in model (default: the configured one)",
        )

    def execute(self, *args: Any, **options: Any) -> str | None:
        if not options.get("model"):
            return super().execute(*args, **options)
        # The whole command, search included, runs with that model as the configured one.
        with override_settings(
            EXOGRAM_EMBEDDING_MODEL=options["model"], EXOGRAM_EMBEDDING_MODEL_DIR=None
        ):
            return super().execute(*args, **options)

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["data"] / options["file"]
        if not path.is_file():
            raise CommandError(f"No labelled set at {path}.")
        try:
            get_encoder()
        except EncoderUnavailable as error:
            raise CommandError(f"Search by meaning needs the model: {error}") from None
        labelled = read_labelled_set(path, options["min_score"])
        if not labelled.answers:
            raise CommandError(f"{path} has no pair scored {options['min_score']} or more.")
        with transaction.atomic():
            report = self._evaluate(labelled, path, options["min_score"])
            # The library, its reader and their vectors exist only for this measurement.
            transaction.set_rollback(True)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self._print(report)

    def _evaluate(self, labelled: LabelledSet, path: Path, min_score: float) -> dict[str, Any]:
        started = time.perf_counter()
        reader = User.objects.create_user(f"evaluation-{uuid.uuid4().hex[:12]}")
        books = min(BOOKS, max(2, len(labelled.sentences)))
        shelf = assign_books(labelled, books)
        clippings_import(reader=reader, data=clippings_bytes(labelled, shelf), file_name=path.name)
        ids = dict(Highlight.objects.filter(reader=reader).values_list("location_start", "pk"))
        if len(ids) != len(labelled.sentences):
            raise CommandError(
                f"The import made {len(ids)} highlights of {len(labelled.sentences)} sentences."
            )
        highlight_of = [ids[10 * number + 1] for number in range(len(labelled.sentences))]
        self.stderr.write(f"Embedding {len(highlight_of)} highlights…")
        embedded = highlights_embed(ids=highlight_of).embedded
        with connection.cursor() as cursor:
            # Fresh planner statistics for the fresh rows (rolled back with the rest).
            cursor.execute("ANALYZE books_highlight")
        loaded = time.perf_counter() - started
        self.stderr.write(f"Searching {len(labelled.answers)} queries in 3 modes…")
        ranks: dict[str, list[int | None]] = {name: [] for name, _ in MODES}
        timings: dict[str, float] = {name: 0.0 for name, _ in MODES}
        for query, partners in labelled.answers.items():
            wanted = {highlight_of[p] for p in partners}
            for name, mode in MODES:
                began = time.perf_counter()
                found = search(
                    reader,
                    labelled.sentences[query],
                    mode=mode,
                    limit=max(CUTOFFS),
                    exclude_ids=[highlight_of[query]],
                )
                timings[name] += time.perf_counter() - began
                top = found.ids[: max(CUTOFFS)]
                rank = next((n for n, pk in enumerate(top, start=1) if pk in wanted), None)
                ranks[name].append(rank)
        queries = len(labelled.answers)
        return {
            "data": str(path),
            "highlights": len(highlight_of),
            "embedded": embedded,
            "books": books,
            "queries": queries,
            "min_score": min_score,
            "load_seconds": round(loaded, 1),
            "modes": {
                name: {
                    **_metrics(ranks[name]),
                    "ms_per_query": round(1000 * timings[name] / queries, 1),
                }
                for name, _ in MODES
            },
            "finished": datetime.now().isoformat(timespec="seconds"),
        }

    def _print(self, report: dict[str, Any]) -> None:
        self.stdout.write(
            f"{report['data']}: {report['highlights']} highlights in {report['books']} books, "
            f"{report['queries']} queries (each sentence of a pair scored >= "
            f"{report['min_score']:g}; the answer is "
            "its partner, in another book)"
        )
        header = f"{'mode':<9}" + "".join(
            f"{k:>11}" for k in ("Recall@1", "Recall@5", "Recall@10", "MRR@10", "ms/query")
        )
        self.stdout.write(header)
        for name, row in report["modes"].items():
            values = [row["recall@1"], row["recall@5"], row["recall@10"], row["mrr@10"]]
            line = f"{name:<9}" + "".join(f"{v:>11.3f}" for v in values)
            self.stdout.write(line + f"{row['ms_per_query']:>11.1f}")
