"""The import against the real clippings files in ../shared/data/clippings (when present).

For every file: one import keeps every highlight entry's words in a stored highlight of its
book (coverage 100 %), a second import changes nothing, and so does the whole file after
an earlier copy of it (its first half). The files are read in place, never copied in.
"""

from pathlib import Path

import pytest

from accounts.models import User
from books.importing.clippings import parse_clippings
from books.importing.identity import book_key
from books.importing.reader_books import clippings_orient, clippings_unify_authors
from books.importing.services import clippings_import
from books.models import Book, Highlight
from tests.corpus import require_clippings

# Skipped, saying why, on a clone without the shared folder (see tests/corpus.py).
pytestmark = pytest.mark.corpus
CORPUS = require_clippings()

CLIPPINGS_FILES = sorted(CORPUS.glob("*/*.txt"))
SEPARATOR = b"=========="


def corpus_id(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def fold(text: str) -> str:
    # Written again here: the measure must not share the importer's folding.
    return " ".join(text.replace("\ufeff", "").split()).casefold()


def lost_entries(reader: User, data: bytes) -> list[tuple[int, str]]:
    """(line, text) of every highlight entry whose words no stored highlight holds."""
    books = {book.key: book.pk for book in Book.objects.filter(reader=reader)}
    texts: dict[int, list[str]] = {}
    for book_id, text in (
        Highlight.objects.alive().filter(reader=reader).values_list("book_id", "text")
    ):
        texts.setdefault(book_id, []).append(fold(text))
    lost = []
    clippings = parse_clippings(data).clippings
    # Dashed title lines turned round by the library's authors, one book's authors spelt one
    # way, as the import reads them.
    clippings_orient(reader=reader, clippings=clippings)
    clippings_unify_authors(reader=reader, clippings=clippings)
    for clipping in clippings:
        folded = fold(clipping.text)
        if clipping.kind != "highlight" or clipping.truncated or not folded:
            continue
        key = book_key(clipping.title, clipping.author)
        if not any(folded in text for text in texts.get(books[key], [])):
            lost.append((clipping.line, clipping.text))
    return lost


def first_half(data: bytes) -> bytes:
    """The file as the Kindle had it earlier: cut after the separator halfway through."""
    lines = data.split(b"\n")
    separators = [i for i, line in enumerate(lines) if line.strip(b"\r\xef\xbb\xbf") == SEPARATOR]
    if len(separators) < 2:
        return b""
    return b"\n".join(lines[: separators[len(separators) // 2 - 1] + 1]) + b"\n"


def assert_second_import_changes_nothing(reader: User, data: bytes) -> None:
    before = sorted(Highlight.objects.filter(reader=reader).values_list("pk", "text", "updated"))
    again = clippings_import(reader=reader, data=data, file_name="again.txt")
    assert (again.counts["new_highlights"], again.counts["extended_merged"]) == (0, 0)
    after = sorted(Highlight.objects.filter(reader=reader).values_list("pk", "text", "updated"))
    assert after == before


@pytest.mark.django_db
@pytest.mark.parametrize("path", CLIPPINGS_FILES, ids=corpus_id)
class CorpusImportTests:
    def test_it_keeps_every_word_and_a_second_import_changes_nothing(
        self, path: Path, alice: User
    ) -> None:
        data = path.read_bytes()

        clippings_import(reader=alice, data=data, file_name=path.name)

        assert lost_entries(alice, data) == []
        assert_second_import_changes_nothing(alice, data)

    def test_an_earlier_copy_then_the_whole_file_loses_nothing(
        self, path: Path, alice: User
    ) -> None:
        data = path.read_bytes()
        earlier = first_half(data)
        if parse_clippings(earlier).clippings:
            clippings_import(reader=alice, data=earlier, file_name="earlier.txt")

        clippings_import(reader=alice, data=data, file_name=path.name)

        assert lost_entries(alice, data) == []
        assert_second_import_changes_nothing(alice, data)
