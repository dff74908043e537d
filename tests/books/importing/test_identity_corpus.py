"""Book and author identity over the real clippings files in ../shared/data/clippings
(read in place; skipped, saying why, when the folder is not beside the repository)."""

# ruff: noqa: RUF001

from collections import defaultdict
from functools import cache

import pytest

from books.importing.clippings import Clipping, parse_clippings
from books.importing.identity import (
    book_key,
    normalize_author,
    normalize_title,
    same_author,
    same_author_or_family_name,
)
from tests.corpus import require_clippings

CORPUS = require_clippings()
CLIPPINGS_FILES = sorted(CORPUS.glob("*/*.txt"))

# Author fields written in the table tests (test_identity.py) that come from these files.
CORPUS_VARIANTS = [
    "Seneca,",
    "Sêneca",
    "Smart Ph.D., Bradford D.",
    "Richard P Feynman",
    "Richard P. Feynman and Ralph Leighton",
    "Richard Phillips Feynman;Edward Hutchings;Ralph Leighton",
    "Nothomb Amélie",
    "Berkun  Scott",
    "Beauvoir de,Simone",
    "Nir Eyal;",
    "Andrew Cohen and Professor Brian Cox",
    "Fernando Trujillo Sanz and César García Muñoz",
    "Сандерсон, Брендон",
    "Брендон Сандерсон",
    "中島\u3000岳志",
    "中島岳志",
    "マイケル サンデル",
    "マイケル・サンデル",
    "[美]约翰·威廉斯",
    "泽卡斯（Zakas. Nicholas C.）",
    "Сергей Васильевич Лукьяненко",
    "Сергей Лукьяненко",
    "Федор Михайлович Достоевский",
    "Dostoyevsky, Fyodor",
    "Стивен Кинг",
    "Stephen King",
    "Нил Гейман",
    "Рэй Дуглас Брэдбери",
    "Ray Bradbury",
    "Владимир Владимирович Набоков",
]
# Groups of those fields that name one person, as a reader would say.
ONE_PERSON = [
    ["Seneca", "Seneca,", "Sêneca"],
    ["Richard P Feynman", "Richard P. Feynman and Ralph Leighton"],
    [
        "Richard P. Feynman and Ralph Leighton",
        "Richard Phillips Feynman;Edward Hutchings;Ralph Leighton",
    ],
    ["Nothomb Amélie", "Amélie Nothomb"],
    ["Сандерсон, Брендон", "Брендон Сандерсон"],
    ["中島\u3000岳志", "中島岳志"],
    ["マイケル サンデル", "マイケル・サンデル"],
    ["Сергей Васильевич Лукьяненко", "Сергей Лукьяненко"],
]
# Pairs of fields that name one person written otherwise (`same_author_or_family_name`,
# for the connections, not `same_author`): every such pair in the files, judged by hand.
WRITTEN_OTHERWISE = {
    frozenset(pair)
    for pair in [
        ("Федор Михайлович Достоевский", "Dostoyevsky, Fyodor"),
        ("Стивен Кинг", "Stephen King"),
        ("Рэй Дуглас Брэдбери", "Ray Bradbury"),
        ("3124 Владимирович Набоков", "Владимир Владимирович Набоков"),  # as the file has it
    ]
}
CREDENTIALS = {"md", "phd", "dr", "prof", "professor", "faclm", "jr", "sr", "mr", "mrs"}


@cache
def _clippings() -> tuple[tuple[str, tuple[Clipping, ...]], ...]:
    return tuple(
        (path.name, tuple(parse_clippings(path.read_bytes()).clippings)) for path in CLIPPINGS_FILES
    )


def _authors() -> set[str]:
    return {c.author for _, clippings in _clippings() for c in clippings}


class AuthorIdentityCorpusTests:
    def test_it_finds_the_tables_variants_in_the_files(self) -> None:
        assert set(CORPUS_VARIANTS) <= _authors()

    @pytest.mark.parametrize("group", ONE_PERSON)
    def test_it_makes_one_author_of_each_group(self, group: list[str]) -> None:
        first, *others = [normalize_author(name) for name in group]
        assert all(same_author(first, other) for other in others)

    def test_the_connections_join_only_one_person_written_otherwise(self) -> None:
        people = sorted({normalize_author(author) for author in _authors()} - {""})
        joined = {
            frozenset((a, b))
            for i, a in enumerate(people)
            for b in people[i + 1 :]
            if same_author_or_family_name(a, b) and not same_author(a, b)
        }
        expected = {
            frozenset(normalize_author(name) for name in pair) for pair in WRITTEN_OTHERWISE
        }
        assert joined == expected

    def test_it_leaves_no_credential_in_any_normalized_name(self) -> None:
        left = {
            author
            for author in _authors()
            if CREDENTIALS & set(normalize_author(author).replace(";", " ").split())
        }
        assert left == set()

    def test_it_folds_the_corpus_into_fewer_people(self) -> None:
        written = {author for author in _authors() if author}
        people = {normalize_author(author) for author in written}
        # Each fold is a variant merged: `Seneca,`/`Sêneca`, spaces in CJK names, …
        assert len(written) - len(people) >= 6


class BookIdentityCorpusTests:
    def test_it_gives_each_book_of_a_file_one_key(self) -> None:
        for name, clippings in _clippings():
            keys_by_title: defaultdict[str, set[str]] = defaultdict(set)
            authors_by_title: defaultdict[str, set[str]] = defaultdict(set)
            for c in clippings:
                keys_by_title[normalize_title(c.title)].add(book_key(c.title, c.author))
                authors_by_title[normalize_title(c.title)].add(normalize_author(c.author))
            for title, keys in keys_by_title.items():
                authors = sorted(authors_by_title[title])
                one_author = all(same_author(authors[0], other) for other in authors[1:])
                assert len(keys) == 1 or not one_author, (name, title, keys)

    def test_it_joins_the_subtitle_written_twice(self) -> None:
        feynman = {
            book_key(c.title, c.author)
            for _, clippings in _clippings()
            for c in clippings
            if c.title.startswith("\"Surely You're Joking")
        }
        assert len(feynman) == 1
