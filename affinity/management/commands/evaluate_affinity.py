import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User
from affinity.demo_library import USERNAME_PREFIX, DemoDataMissing, planted_pairs
from affinity.management.commands.seed_demo_library import DEFAULT_DATA
from affinity.models import PassageEcho, ReaderCentroid
from affinity.selectors import nearest_readers
from affinity.services import shared_highlights
from books.models import EMBEDDING_DIMENSIONS, Highlight
from evaluation.affinity import READERS, Embedded, evaluate_construction
from evaluation.affinity_data import CONSTRUCTIONS

# The aim: each twin finds the other in its top 3, for at least 9 pairs of 10.
TOP = 3
AIM_SHARE = 0.9
# A passage held by this many readers or more counts as famous in the report.
FAMOUS = 5

Matrix = npt.NDArray[np.float64]


def _rank(order: list[int], target: int) -> int | None:
    return order.index(target) + 1 if target in order else None


def _ranks_numpy(vectors: Matrix, index: dict[int, int], a: int, b: int) -> int:
    """Where b ranks among everyone nearest to a (1 = nearest), by cosine similarity."""
    similarity = vectors @ vectors[index[a]]
    similarity[index[a]] = -np.inf
    return int((similarity > similarity[index[b]]).sum()) + 1


class Command(BaseCommand):
    help = (
        "Evaluate kindred readers on the demo library: where each planted twin ranks for "
        "its partner, where opposites rank, and what famous passages do to centroids."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument(
            "--construction",
            action="append",
            choices=[*CONSTRUCTIONS, "all"],
            help="instead of the seeded demo library, build this construction's readers in "
            "memory, embed them with the real model and compare the app's centroids with the "
            "plain mean (repeat it, or `all`)",
        )
        parser.add_argument(
            "--data",
            type=Path,
            default=DEFAULT_DATA,
            help=f"the evaluation data folder, read in place (default {DEFAULT_DATA})",
        )
        parser.add_argument(
            "--seed", type=int, action="append", help="library seed(s) with --construction (7)"
        )
        parser.add_argument(
            "--readers", type=int, default=READERS, help=f"readers with --construction ({READERS})"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["construction"]:
            self._constructions(options)
            return
        readers = {r.username: r for r in User.objects.filter(username__startswith=USERNAME_PREFIX)}
        pairs = planted_pairs(readers)
        if not pairs["twins"]:
            raise CommandError("No demo library: run `manage.py seed_demo_library` first.")
        centroids = {
            c.reader_id: c
            for c in ReaderCentroid.objects.filter(
                reader__in=readers.values(), vector__isnull=False
            )
        }
        missing = [u for u, r in readers.items() if r.pk not in centroids]
        if missing:
            raise CommandError(
                f"{len(missing)} demo reader(s) have no centroid yet (e.g. {missing[0]}); "
                "wait for the worker to embed their highlights."
            )
        report = self._evaluate(readers, pairs, centroids)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self._print(report)

    def _evaluate(
        self,
        readers: dict[str, User],
        pairs: dict[str, list[tuple[str, str]]],
        centroids: dict[int, ReaderCentroid],
    ) -> dict[str, Any]:
        # The app's own ranking: the kindred query over every sharing reader.
        everyone = len(centroids)
        orders = {
            reader_id: [other for other, _ in nearest_readers(centroid, limit=everyone + 10)]
            for reader_id, centroid in centroids.items()
        }
        # The same readers ranked on simpler centroids, to measure what each step does:
        # the plain mean of the shared vectors, and the echo-weighted mean before the
        # reading space.
        ids = sorted(centroids)
        index = {reader_id: i for i, reader_id in enumerate(ids)}
        model_id = centroids[ids[0]].embedding_model
        plain = np.zeros((len(ids), EMBEDDING_DIMENSIONS))
        for reader_id in ids:
            rows = shared_highlights(reader_id).filter(
                embedding_model=model_id, embedding_status=Highlight.EmbeddingStatus.DONE
            )
            vectors = np.asarray(list(rows.values_list("embedding", flat=True)), dtype=np.float64)
            mean = vectors.mean(axis=0)
            plain[index[reader_id]] = mean / np.linalg.norm(mean)
        weighted = np.asarray([centroids[i].vector for i in ids], dtype=np.float64)
        variants = {"plain_mean": plain, "echo_weighted": weighted}

        def ranks(kind: str) -> list[dict[str, Any]]:
            rows = []
            for a_name, b_name in pairs[kind]:
                a, b = readers[a_name].pk, readers[b_name].pk
                row: dict[str, Any] = {
                    "a": a_name,
                    "b": b_name,
                    "app": [_rank(orders[a], b), _rank(orders[b], a)],
                }
                for name, vectors in variants.items():
                    row[name] = [
                        _ranks_numpy(vectors, index, a, b),
                        _ranks_numpy(vectors, index, b, a),
                    ]
                rows.append(row)
            return rows

        twins = ranks("twins")
        opposites = ranks("opposites")

        def in_top(key: str) -> int:
            return sum(all(rank is not None and rank <= TOP for rank in row[key]) for row in twins)

        def spread(vectors: Matrix) -> dict[str, float]:
            similarity = vectors @ vectors.T
            off = similarity[~np.eye(len(vectors), dtype=bool)]
            return {"mean": round(float(off.mean()), 4), "std": round(float(off.std()), 4)}

        holders: dict[int, set[int]] = {}
        for highlight_id, holder in PassageEcho.objects.filter(
            highlight__reader__in=readers.values(), embedding_model=model_id
        ).values_list("highlight_id", "echo__reader_id"):
            holders.setdefault(highlight_id, set()).add(holder)
        total = sum(
            shared_highlights(r.pk)
            .filter(embedding_model=model_id, embedding_status=Highlight.EmbeddingStatus.DONE)
            .count()
            for r in readers.values()
        )
        famous = sum(1 for held in holders.values() if len(held) >= FAMOUS)
        return {
            "readers": everyone,
            "model": model_id,
            "twins": twins,
            "twin_pairs_in_top": {
                "app": in_top("app"),
                **{name: in_top(name) for name in variants},
            },
            "top": TOP,
            "aim_pairs": math.ceil(AIM_SHARE * len(twins)),
            "opposites": opposites,
            "similarity_between_readers": {
                "plain_mean": spread(plain),
                "app": spread(weighted),
            },
            "highlights": total,
            "famous_highlights": famous,
            "famous_share": round(famous / total, 4) if total else 0.0,
            "famous_min_holders": FAMOUS,
        }

    def _constructions(self, options: dict[str, Any]) -> None:
        from books.embedding.encoder import get_encoder, get_encoders

        names = options["construction"]
        names = list(CONSTRUCTIONS) if "all" in names else list(dict.fromkeys(names))
        encoder = get_encoder()
        embedded = Embedded()
        reports = []
        for name in names:
            for seed in options["seed"] or [7]:
                try:
                    reports.append(
                        evaluate_construction(name, options["data"], encoder, seed=seed,
                                              readers=options["readers"], embedded=embedded)
                    )  # fmt: skip
                except DemoDataMissing as error:
                    raise CommandError(f"{error}. Pass --data with the evaluation data.") from None
        if options["json"]:
            self.stdout.write(json.dumps(reports, indent=2))
            return
        columns = ("app", "plain_mean", "centred")
        model_id = get_encoders().model_id
        self.stdout.write(
            f"Twins in each other's top {TOP} (mean rank of a twin), model {model_id}"
        )
        header = "".join(f"{c:>16}" for c in columns)
        self.stdout.write(f"  {'construction':<16}{'seed':>5}{header}")
        for report in reports:
            cells = "".join(
                f"{report['twin_pairs_in_top'][c]}/{report['twin_pairs']} "
                f"({report['mean_twin_rank'][c]:.1f})".rjust(16)
                for c in columns
            )
            self.stdout.write(f"  {report['construction']:<16}{report['seed']:>5}{cells}")

    def _print(self, report: dict[str, Any]) -> None:
        out = self.stdout.write
        n = report["readers"]
        out(f"{n} sharing demo readers, model {report['model']}")
        columns = ("app", "echo_weighted", "plain_mean")
        header = f"  {'pair':<30}" + "".join(f"{c:>16}" for c in columns)
        out(f"\nTwins (same taste, no book in common): rank of each for the other among {n - 1}")
        out(header)
        for row in report["twins"]:
            cells = "".join(f"{row[c][0]!s:>11}, {row[c][1]!s:<3}" for c in columns)
            out(f"  {row['a'] + ' / b':<30}{cells}")
        top, aim, found = report["top"], report["aim_pairs"], report["twin_pairs_in_top"]
        verdict = "meets" if found["app"] >= aim else "MISSES"
        out(
            f"  twins in each other's top {top}: {found['app']} of {len(report['twins'])} "
            f"pairs ({verdict} the aim of {aim}); the stored centroids compared here "
            f"{found['echo_weighted']}, plain mean {found['plain_mean']}"
        )
        out(f"\nOpposites (other topics, other language): rank among {n - 1} (last = {n - 1})")
        out(header)
        for row in report["opposites"]:
            cells = "".join(f"{row[c][0]!s:>11}, {row[c][1]!s:<3}" for c in columns)
            out(f"  {row['a'] + ' / b':<30}{cells}")
        spread = report["similarity_between_readers"]
        out(
            f"\nFamous passages: {report['famous_highlights']} of {report['highlights']} "
            f"highlights ({report['famous_share']:.0%}) are held by "
            f"{report['famous_min_holders']}+ readers."
        )
        out("  cosine similarity between two readers, mean (std):")
        for name in ("plain_mean", "app"):
            out(f"    {name:<14} {spread[name]['mean']:>7} ({spread[name]['std']})")
