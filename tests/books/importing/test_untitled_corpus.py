"""The real clippings files in ../shared/data/clippings (when present) as a reader leaving
Readwise has them: each file imported, exported in Readwise's columns and given the names
Readwise's own export uses (Book Title, Book Author, Highlighted at). Imported first by an
Exogram that did not read those names (every row in "Untitled"), then again today, the
library is the one a fresh import of the export makes, and a third import changes nothing
(books.importing.untitled). The files are read in place, never copied in."""

from pathlib import Path

import pytest

from accounts.models import User
from books.exporting.services import library_export
from books.importing.services import clippings_import
from books.models import Book
from books.text import fold_spacing
from tests.books.importing.test_enrich import _library
from tests.books.importing.test_untitled import _imported_before
from tests.corpus import require_clippings

# Skipped, saying why, on a clone without the shared folder (see tests/corpus.py).
pytestmark = pytest.mark.corpus
CORPUS = require_clippings()

CLIPPINGS_FILES = sorted(CORPUS.glob("*/*.txt"))
# Exogram's CSV export writes the import template's names; Readwise's own export these.
_EXPORT_NAMES = (
    (b"Title", b"Book Title"),
    (b"Author", b"Book Author"),
    (b"Date", b"Highlighted at"),
)


def _readwise_export(reader: User) -> bytes:
    data = library_export(reader=reader, format="csv").data
    header, rows = data.split(b"\r\n", 1)
    for template, export in _EXPORT_NAMES:
        header = header.replace(template, export)
    return header + b"\r\n" + rows


def _held(reader: User) -> list[str]:
    """The reader's library (_library), its words folded, in an order of its own: of two rows
    whose words only their case or spacing tell apart, at one place, each import keeps the
    one it met first (one dedupe key), and two books of one title list theirs in any order."""
    return sorted(
        repr((*row[:3], fold_spacing(str(row[3])), fold_spacing(str(row[4])), *row[5:]))
        for row in _library(reader)
    )


@pytest.mark.django_db
@pytest.mark.parametrize("path", CLIPPINGS_FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_a_readwise_export_an_older_exogram_put_in_untitled_comes_back_as_a_fresh_import(
    path: Path,
) -> None:
    kindle = User.objects.create(username="kindle")
    clippings_import(reader=kindle, data=path.read_bytes(), file_name="My Clippings.txt")
    export = _readwise_export(kindle)
    alice = User.objects.create(username="alice")
    fresh = User.objects.create(username="fresh")
    _imported_before(alice, export)
    again = clippings_import(reader=alice, data=export, file_name="readwise.csv")
    clippings_import(reader=fresh, data=export, file_name="readwise.csv")
    assert _held(alice) == _held(fresh)
    assert again.counts["untitled_moved"] + again.counts["untitled_joined"] > 0
    assert not Book.objects.filter(reader=alice, title="Untitled", authors="").exists()
    third = clippings_import(reader=alice, data=export, file_name="readwise.csv")
    assert (third.counts["new_highlights"], third.counts["standalone_notes"]) == (0, 0)
    assert (third.counts["untitled_moved"], third.counts["untitled_joined"]) == (0, 0)
    assert _held(alice) == _held(fresh)
