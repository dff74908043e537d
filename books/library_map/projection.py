"""Placing highlights on a plane so that neighbours in meaning stay neighbours on the map.

Pure numpy, no Django. A principal-component view (the old map) keeps the two directions
along which a library varies most, and scatters what is close in 384 dimensions: on a
quotes library only about a third of each highlight's 10 nearest neighbours stayed among
its 20 nearest on the plane. This is a small UMAP-style layout instead: a graph of each
highlight's nearest neighbours, weighted by how close they are, then laid out by
attraction along the graph's edges and repulsion from random other points, starting from
the principal-component view. bench/bench_map.py measures both.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]

NEIGHBOURS = 15
# The curve 1 / (1 + a d^(2b)) that UMAP fits for min_dist 0.1, spread 1: how strongly two
# points at map distance d count as neighbours.
_A, _B = 1.577, 0.895
NEGATIVE_SAMPLES = 5
# Beyond this many points the neighbour search runs on the first 64 principal components:
# the all-pairs product over 384 dimensions grows with the square of the library.
FULL_DIMENSION_MAX = 30_000
REDUCED_DIMENSIONS = 64
_BLOCK = 2048


def principal_components(vectors: Floats, dimensions: int = 2) -> Floats:
    if len(vectors) <= dimensions:
        return np.zeros((len(vectors), dimensions), dtype=np.float32)
    centred = vectors - vectors.mean(axis=0)
    # Eigenvectors of the d x d covariance: cheap however many highlights there are.
    _, eigenvectors = np.linalg.eigh(np.cov(centred, rowvar=False))
    components: Floats = (centred @ eigenvectors[:, ::-1][:, :dimensions]).astype(np.float32)
    return components


def nearest_neighbours(vectors: Floats, k: int) -> tuple[npt.NDArray[np.int64], Floats]:
    """Each row's k nearest other rows by cosine distance (rows are unit vectors)."""
    n = len(vectors)
    k = min(k, n - 1)
    indices = np.empty((n, k), dtype=np.int64)
    distances = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, _BLOCK):
        block = vectors[start : start + _BLOCK]
        similarity = block @ vectors.T
        rows = np.arange(len(block))
        similarity[rows, start + rows] = -np.inf  # never your own neighbour
        top = np.argpartition(-similarity, k, axis=1)[:, :k]
        top_similarity = np.take_along_axis(similarity, top, axis=1)
        order = np.argsort(-top_similarity, axis=1)
        indices[start : start + len(block)] = np.take_along_axis(top, order, axis=1)
        distances[start : start + len(block)] = 1 - np.take_along_axis(
            top_similarity, order, axis=1
        )
    return indices, np.maximum(distances, 0)


def _edge_weights(distances: Floats) -> Floats:
    """UMAP's fuzzy membership: 1 for the nearest neighbour, falling off at a per-point
    scale chosen so that each point's weights sum to log2(k)."""
    k = distances.shape[1]
    rho = distances[:, :1]
    excess = np.maximum(distances - rho, 0)
    target = np.log2(k)
    low = np.zeros((len(distances), 1), dtype=np.float64)
    high = np.full((len(distances), 1), np.inf)
    sigma = np.ones((len(distances), 1), dtype=np.float64)
    for _ in range(48):  # a bisection per point, all points at once
        total = np.exp(-excess / sigma).sum(axis=1, keepdims=True)
        too_wide = total > target
        high = np.where(too_wide, sigma, high)
        low = np.where(too_wide, low, sigma)
        sigma = np.where(np.isinf(high), sigma * 2, (low + high) / 2)
    weights: Floats = np.exp(-excess / np.maximum(sigma, 1e-6)).astype(np.float32)
    return weights


def _graph(indices: npt.NDArray[np.int64], weights: Floats) -> tuple[Any, Any, Floats]:
    """The symmetric neighbour graph as edge lists: w = a + b - a*b over both directions."""
    n, k = indices.shape
    heads = np.repeat(np.arange(n), k)
    tails = indices.ravel()
    w = weights.ravel()
    # Combine (i, j) and (j, i): key the unordered pair, merge the two directed weights.
    low, high = np.minimum(heads, tails), np.maximum(heads, tails)
    keys = low * n + high
    order = np.argsort(keys, kind="stable")
    keys, w = keys[order], w[order]
    unique, first, counts = np.unique(keys, return_index=True, return_counts=True)
    merged = w[first].astype(np.float64)
    pairs = counts == 2
    second = w[first[pairs] + 1]
    merged[pairs] = merged[pairs] + second - merged[pairs] * second
    return unique // n, unique % n, merged.astype(np.float32)


def layout(vectors: Floats, *, seed: int = 0, epochs: int | None = None) -> Floats:
    """2-D positions for unit `vectors`, neighbours kept together."""
    n = len(vectors)
    if n < 4:
        return principal_components(vectors)
    rng = np.random.default_rng(seed)
    search_space = vectors
    if n > FULL_DIMENSION_MAX:
        search_space = principal_components(vectors, REDUCED_DIMENSIONS)
        search_space /= np.linalg.norm(search_space, axis=1, keepdims=True) + 1e-9
    indices, distances = nearest_neighbours(search_space, NEIGHBOURS)
    heads, tails, weights = _graph(indices, _edge_weights(distances))

    start = principal_components(vectors)
    spread = float(np.abs(start).max()) or 1.0
    positions = (start / spread * 10).astype(np.float32)
    positions += rng.normal(0, 1e-3, positions.shape).astype(np.float32)
    epochs = epochs or (500 if n <= 10_000 else 200)
    # Edges are sampled in proportion to their weight, as UMAP does: an edge of weight w
    # takes part in a share w / max(w) of the epochs.
    chance = weights / weights.max()
    for epoch in range(epochs):
        rate = 1.0 - epoch / epochs
        chosen = rng.random(len(chance)) < chance
        a, b = heads[chosen], tails[chosen]
        step = np.zeros_like(positions)
        delta = positions[a] - positions[b]
        d2 = (delta * delta).sum(axis=1, keepdims=True)
        pull = (-2 * _A * _B * np.power(d2, _B - 1, where=d2 > 0, out=np.zeros_like(d2))) / (
            1 + _A * np.power(d2, _B)
        )
        move = np.clip(pull * delta, -4, 4)
        _accumulate(step, a, move)
        _accumulate(step, b, -move)
        # Repulsion from random points, applied to the edge's head only.
        heads_rep = np.repeat(a, NEGATIVE_SAMPLES)
        others = rng.integers(0, n, len(heads_rep))
        delta = positions[heads_rep] - positions[others]
        d2 = (delta * delta).sum(axis=1, keepdims=True)
        push = (2 * _B) / ((0.001 + d2) * (1 + _A * np.power(d2, _B)))
        move = np.where(d2 > 0, np.clip(push * delta, -4, 4), 0)
        _accumulate(step, heads_rep, move)
        positions += rate * step / np.maximum(1, np.bincount(a, minlength=n))[:, None]
    return positions


def _accumulate(into: Floats, rows: npt.NDArray[np.int64], values: Floats) -> None:
    # bincount per column: ~20x faster than np.add.at for hundreds of thousands of rows.
    for column in range(into.shape[1]):
        into[:, column] += np.bincount(rows, weights=values[:, column], minlength=len(into))


def neighbourhood_kept(vectors: Floats, positions: Floats, *, k: int = 10, wide: int = 20) -> float:
    """The share of each point's k nearest neighbours in meaning that are among its `wide`
    nearest on the map: 1.0 keeps every neighbourhood, a random plane about wide / n."""
    n = len(vectors)
    if n <= wide:
        return 1.0
    true_neighbours, _ = nearest_neighbours(vectors, k)
    kept = 0
    squared = (positions * positions).sum(axis=1)
    for start in range(0, n, 512):
        block = positions[start : start + 512]
        d2 = squared[start : start + 512, None] + squared[None, :] - 2 * (block @ positions.T)
        rows = np.arange(len(block))
        d2[rows, start + rows] = np.inf
        near = np.argpartition(d2, wide, axis=1)[:, :wide]
        for row, neighbours in enumerate(true_neighbours[start : start + len(block)]):
            kept += len(np.intersect1d(neighbours, near[row], assume_unique=True))
    return kept / (n * k)
