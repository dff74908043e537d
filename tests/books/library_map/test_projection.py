"""The layout keeps neighbourhoods: pure numpy, no database."""

import numpy as np

from books.library_map.projection import (
    layout,
    nearest_neighbours,
    neighbourhood_kept,
    principal_components,
)


def _clustered(n_clusters: int = 12, per_cluster: int = 40, seed: int = 3) -> np.ndarray:
    """Unit vectors in 384-d around random centres: ideas, and highlights about each."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_clusters, 384))
    vectors = np.repeat(centres, per_cluster, axis=0) + rng.normal(
        scale=0.6, size=(n_clusters * per_cluster, 384)
    )
    unit: np.ndarray = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return unit


class NearestNeighboursTests:
    def test_it_finds_the_same_neighbours_as_a_full_sort(self) -> None:
        vectors = _clustered(per_cluster=10)
        indices, distances = nearest_neighbours(vectors, 5)
        similarity = vectors @ vectors.T
        np.fill_diagonal(similarity, -np.inf)
        expected = np.argsort(-similarity, axis=1)[:, :5]
        assert (indices == expected).mean() > 0.99
        assert np.all(np.diff(distances, axis=1) >= -1e-6)  # nearest first
        assert not np.any(indices == np.arange(len(vectors))[:, None])  # never itself


class LayoutTests:
    def test_it_keeps_more_neighbourhoods_than_principal_components(self) -> None:
        vectors = _clustered()
        kept_by_layout = neighbourhood_kept(vectors, layout(vectors, seed=1))
        kept_by_pca = neighbourhood_kept(vectors, principal_components(vectors))
        assert kept_by_layout > kept_by_pca + 0.15
        assert kept_by_layout > 0.5

    def test_it_is_the_same_for_the_same_seed(self) -> None:
        vectors = _clustered(n_clusters=3, per_cluster=10)
        assert np.array_equal(layout(vectors, seed=7), layout(vectors, seed=7))

    def test_it_places_tiny_libraries_without_failing(self) -> None:
        for n in (0, 1, 2, 3, 5):
            vectors = _clustered(n_clusters=1, per_cluster=max(n, 1))[:n]
            positions = layout(vectors)
            assert positions.shape == (n, 2)
            assert np.all(np.isfinite(positions))

    def test_it_gives_finite_positions_when_highlights_repeat(self) -> None:
        # The same passage highlighted in several books: identical vectors, zero distances.
        vectors = np.repeat(_clustered(n_clusters=2, per_cluster=5), 4, axis=0)
        assert np.all(np.isfinite(layout(vectors)))


class NeighbourhoodKeptTests:
    def test_it_is_one_for_the_original_space_and_low_for_noise(self) -> None:
        vectors = _clustered(n_clusters=4, per_cluster=30)
        same = vectors  # its own space: every neighbourhood kept
        noise = np.random.default_rng(0).normal(size=(len(vectors), 2)).astype(np.float32)
        assert neighbourhood_kept(vectors, same) > 0.9
        assert neighbourhood_kept(vectors, noise) < 0.2
