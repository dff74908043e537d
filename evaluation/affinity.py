"""Kindred readers measured without a database: each construction's readers built in memory,
their passages embedded once by the real model, and the planted twins looked for among the
readers' centroids as the app computes them (affinity.reading: echo-weighted means) beside
the plain mean of each reader's vectors, and the centred mean for comparison.

What the app adds to the ranking (the SQL nearest-centroid query) is a cosine ordering of
the same centroids, so the figures here are the app's; `evaluate_affinity` without
`--construction` measures the seeded demo library through the app's own query instead.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from affinity.demo_library import DemoLibrary, make_library, planted_pairs
from affinity.reading import ReaderSums
from evaluation.affinity_data import read_construction

Matrix = npt.NDArray[np.float64]
# The aim: each twin finds the other in its top 3, for at least 9 pairs of 10.
TOP = 3
AIM_SHARE = 0.9
READERS = 60


class Encoder(Protocol):
    def encode(self, texts: list[str]) -> Any: ...


@dataclass
class Embedded:
    """Every passage of a library, embedded once by the main model (the vectors readers
    are compared in; affinity.reading)."""

    main: dict[str, Matrix] = field(default_factory=dict)

    def add(self, texts: set[str], encoder: Encoder, batch: int = 256) -> None:
        todo = sorted(texts - self.main.keys())
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            for text, vector in zip(chunk, np.asarray(encoder.encode(chunk)), strict=True):
                self.main[text] = vector.astype(np.float64)


def _texts(library: DemoLibrary) -> list[list[str]]:
    return [
        [book.quotes[i].text for book, picked in reader.books for i in picked]
        for reader in library.readers
    ]


def reader_sums(library: DemoLibrary, embedded: Embedded) -> list[ReaderSums]:
    """Each reader's sums as the app's centroid refresh makes them; a passage's holders are
    the readers who highlighted the very same text (the app also counts near-identical
    ones, which the constructions do not make)."""
    texts = _texts(library)
    holders = Counter(text for shelf in texts for text in set(shelf))
    return [
        ReaderSums.of([embedded.main[t] for t in shelf], [holders[t] for t in shelf])
        for shelf in texts
    ]


def _unit_rows(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: Matrix = matrix / np.where(norms == 0, 1.0, norms)
    return unit


def twin_ranks(positions: Matrix, index: dict[str, int], a: str, b: str) -> tuple[int, int]:
    """Where each twin ranks among everyone nearest to the other (1 = nearest), by cosine."""
    unit = _unit_rows(positions)

    def rank(me: int, other: int) -> int:
        similarity = unit @ unit[me]
        similarity[me] = -np.inf
        return int((similarity > similarity[other]).sum()) + 1

    return rank(index[a], index[b]), rank(index[b], index[a])


def plain_means(library: DemoLibrary, embedded: Embedded) -> Matrix:
    """The plain mean of each reader's main-model vectors: what the app must never fall
    below."""
    return np.asarray(
        [np.mean([embedded.main[t] for t in shelf], axis=0) for shelf in _texts(library)]
    )


def app_centroids(sums: list[ReaderSums]) -> Matrix:
    """Each reader's centroid as the app places it."""
    return np.asarray([s.total for s in sums])


def centred_means(sums: list[ReaderSums], plain: Matrix, library: DemoLibrary) -> Matrix:
    """The app's weighted means minus the mean highlight: the variant measured beside it."""
    counts = np.asarray([reader.highlight_count for reader in library.readers], dtype=np.float64)
    mean_highlight = (plain * counts[:, None]).sum(axis=0) / counts.sum()
    centred: Matrix = np.asarray([s.total / s.weight for s in sums]) - mean_highlight
    return centred


def evaluate_library(
    library: DemoLibrary, embedded: Embedded, *, methods: dict[str, Matrix] | None = None
) -> dict[str, Any]:
    """Twins in each other's top 3 by the app's positions and by the plain mean."""
    names = [reader.username for reader in library.readers]
    index = {name: i for i, name in enumerate(names)}
    pairs = planted_pairs(names)["twins"]
    sums = reader_sums(library, embedded)
    plain = plain_means(library, embedded)
    compared = {
        "app": app_centroids(sums),
        "plain_mean": plain,
        "centred": centred_means(sums, plain, library),
        **(methods or {}),
    }
    ranks = {
        name: [twin_ranks(positions, index, a, b) for a, b in pairs]
        for name, positions in compared.items()
    }
    return {
        "readers": len(names),
        "twin_pairs": len(pairs),
        "aim_pairs": math.ceil(AIM_SHARE * len(pairs)),
        "top": TOP,
        "twin_pairs_in_top": {
            name: sum(max(pair) <= TOP for pair in found) for name, found in ranks.items()
        },
        "mean_twin_rank": {name: round(float(np.mean(found)), 2) for name, found in ranks.items()},
        "twins": [
            {"a": a, "b": b, **{name: list(ranks[name][i]) for name in ranks}}
            for i, (a, b) in enumerate(pairs)
        ],
    }


def evaluate_construction(
    name: str,
    data_dir: Path,
    encoder: Encoder,
    *,
    seed: int = 7,
    readers: int = READERS,
    embedded: Embedded | None = None,
) -> dict[str, Any]:
    """Build one construction's readers, embed their passages, and evaluate."""
    library = make_library(read_construction(name, data_dir), readers=readers, seed=seed)
    embedded = embedded if embedded is not None else Embedded()
    embedded.add({text for shelf in _texts(library) for text in shelf}, encoder)
    report = evaluate_library(library, embedded)
    return {"construction": name, "seed": seed, **report}
