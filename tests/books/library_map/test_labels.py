"""Regions and their names: pure, no database."""

# Russian texts are Cyrillic, whose letters ruff takes for Latin look-alikes.
# ruff: noqa: RUF001, RUF003

import numpy as np

from books.library_map.labels import name_regions, regions, words_of


class WordsTests:
    def test_it_drops_stop_words_of_the_readers_languages(self) -> None:
        assert words_of("The habit is the entrance ramp") == ["habit", "entrance", "ramp"]
        assert words_of("Que la memoria es el tesoro de todas las ciudades") == [
            "memoria",
            "tesoro",
            "ciudades",
        ]

    def test_it_drops_the_filler_of_seven_languages(self) -> None:
        # Each line's filler named real regions of a reader's map ("pour · plus · comme").
        cases = {
            "Il faut pour elle plus de temps, comme tout le monde.": ["monde"],
            "Die Erinnerung ist nicht mehr als ein Spiegel der Seele.": [
                "erinnerung",
                "spiegel",
                "seele",
            ],
            "A saudade não é mais do que uma lembrança com tempo.": ["saudade", "lembranca"],
            "La memoria è più forte quando non è sempre con noi.": ["memoria", "forte"],
            "Todo lo que tiene una vez su forma vuelve al mar.": ["vuelve", "mar"],
            # "его" ("his") looks like "ero": a map named a region "god · universe · ero".
            "Облако стало хлестать его по рукам, и это было всё, что он помнил.": [
                "облако",
                "хлестать",
                "рукам",
                "помнил",
            ],
        }
        for text, expected in cases.items():
            assert words_of(text) == expected, text

    def test_it_keeps_a_word_that_is_filler_only_in_another_language(self) -> None:
        # "sea" is Spanish filler (the subjunctive of "ser") and an English subject.
        assert words_of("The sea was calm that night, and the war was over.") == [
            "sea",
            "calm",
            "night",
            "war",
        ]
        assert "sea" not in words_of("Que sea lo que tenga que ser, dijo el viejo.")

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

    def test_it_never_names_two_regions_with_one_word(self) -> None:
        rng = np.random.default_rng(2)
        centres = ((0.1, 0.1), (0.9, 0.1), (0.5, 0.9))
        positions = np.vstack([rng.normal(c, 0.02, size=(20, 2)) for c in centres])
        # "life" is the commonest word of two regions: it names one of them only.
        texts = (
            ["Life, life, life: a habit needs a cue."] * 20
            + ["Life, life, life: the sea at night."] * 20
            + ["The garden soil, the seeds, the worms in the compost."] * 20
        )
        assignment = np.repeat(np.arange(3), 20).astype(np.int64)
        named = name_regions(texts, positions.astype(np.float32), assignment)
        assert len(named) == 3
        words = [word for region in named for word in region.words]
        assert len(words) == len(set(words))
        assert words.count("life") == 1

    def test_it_names_a_region_with_a_word_or_its_plural_not_both(self) -> None:
        positions = np.random.default_rng(4).normal(0.5, 0.01, size=(6, 2)).astype(np.float32)
        texts = ["The selfish gene: genes, genes and one gene in the pool of genes."] * 6
        (region,) = name_regions(texts, positions, np.zeros(6, dtype=np.int64))
        assert len({word.rstrip("s") for word in region.words}) == len(region.words)
        assert "pool" in region.words

    def test_it_shows_words_as_the_reader_spells_them(self) -> None:
        positions = np.random.default_rng(3).normal(0.5, 0.01, size=(6, 2)).astype(np.float32)
        texts = ["Una canción para la canción del café."] * 6
        assignment = np.zeros(6, dtype=np.int64)
        (region,) = name_regions(texts, positions, assignment)
        assert region.words[:2] == ("canción", "café")

    def test_a_russian_region_is_named_by_its_words_not_its_filler(self) -> None:
        # A reader's map named a region "god · universe · ero": "ero" was the Russian "его".
        positions = np.random.default_rng(5).normal(0.5, 0.01, size=(8, 2)).astype(np.float32)
        texts = [
            "Он знал, что его Бог создал мир, и это было всё, что он знал о вселенной.",
            "Его вселенной нет конца, и Бог его не ищет, потому что это его мир.",
        ] * 4
        (region,) = name_regions(texts, positions, np.zeros(8, dtype=np.int64))
        assert "его" not in region.words
        assert set(region.words) <= {"бог", "мир", "вселенной", "знал"}
        # As the reader wrote it: й kept, though the label's words are counted folded.
        assert "вселенной" in region.words

    def test_it_leaves_small_libraries_as_one_region(self) -> None:
        positions = np.random.default_rng(1).random((6, 2)).astype(np.float32)
        assert set(regions(positions).tolist()) == {0}
