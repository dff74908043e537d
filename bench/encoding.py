"""What the encoder benchmarks share (bench_encoder, bench_e5): the STS-B pairs they read
and the machine's other load while they ran."""

from __future__ import annotations

import csv
import os
import resource
import time
from pathlib import Path

from bench.paths import EVAL_DIR

STSB_DIR = EVAL_DIR / "stsb"


def read_pairs(name: str) -> list[tuple[str, str, float]]:
    path = STSB_DIR / name
    if not path.is_file():
        raise SystemExit(f"STS-B is not at {path}; set EXOGRAM_EVAL_DIR to the evaluation folder")
    with path.open(newline="", encoding="utf-8") as file:
        return [(row[0], row[1], float(row[2])) for row in csv.reader(file) if len(row) == 3]


class OtherLoad:
    """How much of the machine other processes used while a block ran (Linux only).

    The bench shares its machine; a rate measured while something else ran is low for a
    reason the report should show. Share = others' CPU seconds / (wall seconds x cores).
    """

    def __enter__(self) -> OtherLoad:
        self.share: float | None = None
        self._start = (_machine_busy_seconds(), _own_cpu_seconds(), time.perf_counter())
        return self

    def __exit__(self, *exc: object) -> None:
        busy, own, wall = _machine_busy_seconds(), _own_cpu_seconds(), time.perf_counter()
        if busy is None or self._start[0] is None:
            return
        others = (busy - self._start[0]) - (own - self._start[1])
        self.share = max(0.0, others / ((wall - self._start[2]) * (os.cpu_count() or 1)))


def _machine_busy_seconds() -> float | None:
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
