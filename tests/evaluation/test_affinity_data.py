"""The quotes the kindred-readers constructions are built from, read from folders written
here in the shapes of the shared ones."""

from pathlib import Path

import pytest

from affinity.demo_library import MIN_TOPIC_QUOTES, DemoDataMissing, read_fortunes
from evaluation.affinity_data import KINDLE_BOOK_CAP, read_construction, read_kindle_shelves
from tests.affinity.eval_data import write_eval_data
from tests.books.kindle import Entry, clippings_file


def _kindle(folder: Path, language: str, title: str, count: int) -> None:
    entries = [Entry(title, f"Passage number {i} of {title}, long enough.") for i in range(count)]
    (folder / language).mkdir(parents=True, exist_ok=True)
    (folder / language / f"{title}.txt").write_bytes(clippings_file(*entries))


class KindleShelvesTests:
    def test_it_makes_each_book_with_enough_highlights_a_topic(self, tmp_path: Path) -> None:
        _kindle(tmp_path, "en", "Big Book (Someone)", 200)
        _kindle(tmp_path, "pt-BR", "Livro (Alguém)", MIN_TOPIC_QUOTES)
        _kindle(tmp_path, "de", "Kurz (Jemand)", MIN_TOPIC_QUOTES - 1)
        quotes = read_kindle_shelves(tmp_path)
        topics = {q.topic: q.language for q in quotes}
        assert len(topics) == 2  # the short book is left out
        assert sorted(topics.values()) == ["en", "pt"]
        big = [q for q in quotes if q.language == "en"]
        # capped, taken evenly through the book, dealt out as volumes (no author book)
        assert len(big) == KINDLE_BOOK_CAP
        assert big[-1].text.startswith("Passage number 19")
        assert {q.author for q in quotes} == {"Anonymous"}

    def test_it_says_where_it_found_no_files(self, tmp_path: Path) -> None:
        with pytest.raises(DemoDataMissing, match="no Kindle clippings files"):
            read_kindle_shelves(tmp_path)


class LanguagesTests:
    def test_it_reads_german_and_portuguese_sayings_one_topic_per_file(
        self, tmp_path: Path
    ) -> None:
        german = tmp_path / "fortunes_de"
        german.mkdir()
        (german / "zitate").write_text(
            "Das beste an der Zukunft ist, daß immer nur ein Tag auf einmal kommt.\n"
            "\t\t-- Dean Acheson\n%\nEin zweites Zitat, lang genug für die Auswahl.\n",
            encoding="utf-8",
        )
        (german / "copyright.debian").write_text("GPL", encoding="utf-8")
        quotes = read_fortunes(german, language="de")
        assert [(q.author, q.topic, q.language) for q in quotes] == [
            ("Dean Acheson", "zitate (de)", "de"),
            ("Anónimo", "zitate (de)", "de"),
        ]

    def test_it_adds_them_to_the_demo_librarys_quotes(self, tmp_path: Path) -> None:
        data = write_eval_data(tmp_path / "eval")
        for folder, name in (("fortunes_de", "sprueche"), ("fortunes_pt", "brasil")):
            (data / folder).mkdir()
            (data / folder / name).write_text(
                "Um ditado qualquer, longo o bastante.\n", encoding="utf-8"
            )
        quotes = read_construction("languages", data)
        assert {q.language for q in quotes} == {"en", "es", "de", "pt"}
        assert len(quotes) == len(read_construction("quotes", data)) + 2

    def test_it_refuses_an_unknown_construction(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="unknown construction"):
            read_construction("poems", tmp_path)
