"""The synthetic library: pure Python, no database."""

import random
from pathlib import Path

import pytest

from affinity.demo_library import (
    DemoDataMissing,
    make_library,
    planted_pairs,
    read_fortunes,
    read_quotable,
    read_quotes,
)
from affinity.demo_library import clippings_file as demo_clippings
from books.importing.clippings import parse_clippings
from tests.affinity.eval_data import write_eval_data


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_eval_data(tmp_path / "eval")


class ReadingTests:
    def test_it_files_a_quote_under_its_rarest_subject_tag(self, tmp_path: Path) -> None:
        (tmp_path / "quotes.json").write_text(
            '[{"_id": "1", "content": "A long enough sentence about ships and tides.", '
            '"author": "Someone", "tags": ["Famous Quotes", "Wisdom", "Sailing"]},'
            ' {"_id": "2", "content": "Another sentence of wisdom, long enough to keep.", '
            '"author": "", "tags": ["Wisdom"]}]',
            encoding="utf-8",
        )
        first, second = read_quotable(tmp_path)
        assert (first.topic, first.author, first.language) == ("Sailing", "Someone", "en")
        assert (second.topic, second.author) == ("Wisdom", "Anonymous")

    def test_it_reads_fortunes_and_their_attributions(self, tmp_path: Path) -> None:
        (tmp_path / "vida.fortunes").write_text(
            "La vida es aquello que pasa\nmientras haces otros planes.\n"
            "\t\t-- John Lennon. (1940-1980) Músico.\n%\n"
            "Si el conocimiento puede crear problemas, no será la ignorancia.\n"
            "                       --- Isaac Asimov\n%\n"
            "Más vale tarde que nunca, dice el refrán de siempre.\n\t\t-- Www.frases.com.\n",
            encoding="utf-8",
        )
        quotes = read_fortunes(tmp_path)
        assert [(q.author, q.topic, q.language) for q in quotes] == [
            ("John Lennon", "vida", "es"),
            ("Isaac Asimov", "vida", "es"),
            ("Anónimo", "vida", "es"),
        ]
        assert quotes[0].text == "La vida es aquello que pasa mientras haces otros planes."

    def test_it_says_where_the_data_is_missing(self, tmp_path: Path) -> None:
        with pytest.raises(DemoDataMissing, match="does not exist"):
            read_quotes(tmp_path / "nowhere")


class LibraryTests:
    def test_it_gives_twins_one_taste_and_no_book_in_common(self, data: Path) -> None:
        library = make_library(read_quotes(data), readers=6, twin_pairs=2, opposite_pairs=1)
        by_name = {reader.username: reader for reader in library.readers}
        pairs = planted_pairs(by_name)
        assert len(pairs["twins"]) == 2
        for a, b in pairs["twins"]:
            first, second = by_name[a], by_name[b]
            assert first.taste == second.taste
            books_a = {(book.title, book.author) for book, _ in first.books}
            books_b = {(book.title, book.author) for book, _ in second.books}
            assert books_a.isdisjoint(books_b)

    def test_it_gives_opposites_no_topic_and_no_book_in_common(self, data: Path) -> None:
        library = make_library(read_quotes(data), readers=6, twin_pairs=2, opposite_pairs=1)
        by_name = {reader.username: reader for reader in library.readers}
        [(a, b)] = planted_pairs(by_name)["opposites"]
        assert set(by_name[a].taste).isdisjoint(by_name[b].taste)
        titles_a = {(book.title, book.author) for book, _ in by_name[a].books}
        titles_b = {(book.title, book.author) for book, _ in by_name[b].books}
        assert titles_a.isdisjoint(titles_b)

    def test_it_is_the_same_library_for_the_same_seed(self, data: Path) -> None:
        quotes = read_quotes(data)
        one = make_library(quotes, readers=6, twin_pairs=2, opposite_pairs=1, seed=3)
        two = make_library(quotes, readers=6, twin_pairs=2, opposite_pairs=1, seed=3)
        assert [(r.username, r.display_name, r.books) for r in one.readers] == [
            (r.username, r.display_name, r.books) for r in two.readers
        ]

    def test_it_needs_room_for_the_planted_pairs(self, data: Path) -> None:
        with pytest.raises(ValueError, match="at least 30 readers"):
            make_library(read_quotes(data), readers=20)

    def test_it_writes_a_clippings_file_the_parser_reads(self, data: Path) -> None:
        library = make_library(read_quotes(data), readers=6, twin_pairs=2, opposite_pairs=1)
        reader = library.readers[0]
        result = parse_clippings(demo_clippings(reader, random.Random(1)))
        assert result.problems == []
        assert len(result.clippings) == reader.highlight_count
        texts = {book.quotes[i].text for book, picked in reader.books for i in picked}
        assert {c.text for c in result.clippings} == texts
