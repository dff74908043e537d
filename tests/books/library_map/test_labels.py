"""Regions and their names: pure, no database."""

import numpy as np

from books.library_map.labels import name_regions, regions, words_of


class WordsTests:
    def test_it_drops_stop_words_of_the_readers_languages(self) -> None:
        assert words_of("The habit is the entrance ramp") == ["habit", "entrance", "ramp"]
        assert words_of("Que la memoria es el tesoro de todas las cosas") == [
            "memoria",
            "tesoro",
            "cosas",
        ]

    def test_it_folds_accents_and_case(self) -> None:
        assert words_of("Canción CANCIÓN canción") == ["cancion"] * 3

    def test_it_drops_contractions_numbers_and_short_words(self) -> None:
        assert words_of("Don't go in 1984, it's an ox") == []


class RegionTests:
    def test_it_names_each_clump_by_its_own_words(self) -> None:
        rng = np.random.default_rng(0)
        left = rng.normal((0.1, 0.5), 0.02, size=(30, 2))
        right = rng.normal((0.9, 0.5), 0.02, size=(30, 2))
        positions = np.vstack([left, right]).astype(np.float32)
        texts = ["A habit needs a cue and a reward, every habit."] * 30 + [
            "The sea and the tide, the sea at night."
        ] * 30
        assignment = regions(positions)
        assert len(set(assignment[:30].tolist())) == 1
        assert set(assignment[:30].tolist()).isdisjoint(assignment[30:].tolist())
        named = {region.words for region in name_regions(texts, positions, assignment)}
        assert len(named) == 2
        habit, sea = sorted(named, key=lambda words: "habit" not in words)
        assert "habit" in habit
        assert "sea" in sea
        assert "habit" not in sea

    def test_it_leaves_small_libraries_as_one_region(self) -> None:
        positions = np.random.default_rng(1).random((6, 2)).astype(np.float32)
        assert set(regions(positions).tolist()) == {0}
