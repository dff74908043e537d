"""Where a reader's reading sits, in numbers: pure numpy, no Django.

A reader's centroid is the echo-weighted mean of the main model's vectors of their shared
highlights, L2-normalized; kindred readers are the nearest centroids by cosine, compared
as they are. Decided by measurement (docs/affinity.md: three constructions of planted
twin readers, none tuned on alone, plus a harder one):
- **The main model's vectors** (multilingual-e5-small by default): it places every passage,
  whatever its language. The English model's vectors (English passages only) found no more
  twins beside it, and none for readers in other languages.
- **No reading space.** The 32 whitened axes tuned for MiniLM lost twins under e5 (the
  issue's 4 of 10 against the plain mean's 8); whitening in all 384 dimensions, softly or
  not, and centring on the mean highlight never found more twins than the plain mean on
  the three constructions, and centring lost one of the demo library's ten pairs.
  Centring did help on a harder construction (tiny topics, famous passages a third of
  every library), so `evaluate_affinity` keeps reporting it beside the two.
- **Echo weighting**: a passage held by many sharing readers weighs less. Never fewer
  twins than without it, and more where famous passages abound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float64]

# A passage held by up to this many sharing readers counts in full: readers of one book
# share some passages, and that says something. Beyond it a passage is famous, and its
# holders share ECHO_FULL readers' worth of weight. Measured on the demo library (10 seeds,
# bestsellers read by 80% of readers): 1/holders lost twins that plain means found when
# nothing was famous; this cap kept them and did best with bestsellers.
ECHO_FULL = 4
# Neighbours looked at per highlight, and so the most holders one passage can count.
ECHO_CAP = 32


def echo_weight(holders: int) -> float:
    """How much a highlight counts in its reader's centroid, by how many sharing readers
    (its own included) hold the same passage."""
    return min(1.0, ECHO_FULL / float(max(1, min(holders, ECHO_CAP))))


def unit_or_none(vector: Vector) -> Vector | None:
    """The vector at unit length; None for a zero vector, which has no direction."""
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        return None
    unit: Vector = vector / norm
    return unit


@dataclass(frozen=True)
class ReaderSums:
    """A reader's echo-weighted sum of vectors, as a centroid refresh makes it."""

    total: Vector
    weight: float

    @classmethod
    def of(cls, vectors: Sequence[Vector], holders: Sequence[int]) -> ReaderSums:
        weights = np.asarray([echo_weight(h) for h in holders], dtype=np.float64)
        matrix = np.asarray(vectors, dtype=np.float64).reshape(len(weights), -1)
        return cls((weights[:, None] * matrix).sum(axis=0), float(weights.sum()))

    def centroid(self) -> Vector | None:
        return unit_or_none(self.total)
