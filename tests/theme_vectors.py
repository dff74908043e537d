"""A theme vector (books.embedding.theme) for a highlight whose main vector a test built at a
known place: the vector seen through one fixed random projection into the theme model's 512
numbers, which keeps the cosines between such vectors near the main vectors' ones (as two
models that agree would), so the pair judge reads both alike."""

from collections.abc import Sequence

import numpy as np

from books.models import EMBEDDING_DIMENSIONS, THEME_DIMENSIONS

PROJECTION = np.random.default_rng(7).normal(size=(THEME_DIMENSIONS, EMBEDDING_DIMENSIONS))


def theme_of(vector: Sequence[float] | np.ndarray) -> list[float]:
    projected = PROJECTION @ np.asarray(vector, dtype=np.float64)
    unit: list[float] = (projected / np.linalg.norm(projected)).astype(np.float32).tolist()
    return unit
