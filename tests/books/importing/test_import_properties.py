"""Properties of the import, checked with Hypothesis on files a reader could have made.

A generated book is a run of words with locations (or pages only). A reader highlights
spans of it and, as readers do, extends them, shortens them, re-selects them starting
earlier or later, highlights them twice, splits them at a page turn and highlights the
passage next door. For any such file:

1. after one import, every highlight entry's text (whitespace and case folded) is inside a
   stored highlight of its book: no word is lost;
2. importing the same file again changes nothing: no new highlight, no merge, no row;
3. the same holds for any earlier copy of the file (a prefix: the Kindle only appends)
   imported first, and then the whole file;
4. a highlight the reader deleted stays deleted: importing the file again brings back
   neither it nor its words, and a longer file keeps it deleted.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Book, Highlight, Import
from tests.books.kindle import Entry, clippings_file

# Moderate example counts: every example imports several files into the real database.
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# Stop words on purpose: neighbouring passages share them, and must still stay apart.
VOCABULARY = [
    "the", "of", "to", "is", "a", "and", "in", "that", "it", "was", "river", "memory",
    "forgets", "lantern", "orchard", "winter", "patient", "letter", "argument", "weather",
    "cartographer", "soup", "kindness", "harbour", "hill", "bloomed", "quietly", "Straße",
]  # fmt: skip
TITLES = ["The Quiet Engine (Okonkwo, Chidi)", "Lanterns Over Harbour Street (Vell, Miriam)"]
START = datetime(2025, 3, 3, 8, 0, 0)
_readers = itertools.count()


@dataclass(frozen=True)
class Book_:
    title: str
    tokens: list[str]
    words_per_location: int
    paged: bool

    def text(self, start: int, end: int) -> str:
        return " ".join(self.tokens[start:end])

    def location(self, word: int) -> int:
        return 100 + word // self.words_per_location


@st.composite
def books(draw: st.DrawFn, title: str) -> Book_:
    size = draw(st.integers(40, 160))
    words = draw(st.lists(st.sampled_from(VOCABULARY), min_size=size, max_size=size))
    ends = draw(st.sets(st.integers(0, size - 1), max_size=size // 5))
    tokens = []
    for index, word in enumerate(words):
        if index == 0 or index - 1 in ends:
            word = word[:1].upper() + word[1:]
        tokens.append(word + ("." if index in ends else ""))
    return Book_(title, tokens, draw(st.integers(2, 12)), draw(st.booleans()))


ACTIONS = ["new", "extend", "shorten", "earlier", "later", "again", "split", "next", "spaces"]


@st.composite
def clippings_files(draw: st.DrawFn) -> list[Entry]:
    """Entries in the order a reader made them."""
    shelf = [draw(books(title)) for title in draw(st.sampled_from([TITLES[:1], TITLES]))]
    made: list[tuple[Book_, int, int]] = []
    entries: list[Entry] = []
    clock = START
    for _ in range(draw(st.integers(1, 18))):
        action = draw(st.sampled_from(ACTIONS)) if made else "new"
        clock += timedelta(seconds=draw(st.sampled_from([5, 20, 50, 300, 86_400])))
        if action == "new":
            book = draw(st.sampled_from(shelf))
            start = draw(st.integers(0, len(book.tokens) - 2))
            end = draw(st.integers(start + 1, min(len(book.tokens), start + 30)))
        else:
            book, start, end = draw(st.sampled_from(made))
            size = len(book.tokens)
            step = draw(st.integers(1, 8))
            if action == "extend":
                start, end = max(0, start - draw(st.integers(0, 3))), min(size, end + step)
            elif action == "shorten" and end - start > 2:
                start, end = start + 1, max(start + 2, end - step)
            elif action == "earlier":
                start, end = max(0, start - step), max(start - step + 1, end - step)
            elif action == "later":
                start, end = min(size - 1, start + step), min(size, end + step)
            elif action == "next" and end < size:
                start, end = end, min(size, end + step)
            elif action == "split" and end - start > 1:
                middle = draw(st.integers(start + 1, end - 1))
                entries.append(_entry(book, start, middle, clock, share_end=True))
                clock += timedelta(seconds=draw(st.integers(1, 90)))
                start = middle
        made.append((book, start, end))
        entries.append(_entry(book, start, end, clock, spaces=action == "spaces"))
    return entries


def _entry(
    book: Book_,
    start: int,
    end: int,
    when: datetime,
    *,
    share_end: bool = False,
    spaces: bool = False,
) -> Entry:
    text = book.text(start, end)
    if spaces:
        text = text.replace(" ", "  ").upper()
    first, last = book.location(start), book.location(end - 1)
    if share_end:
        last = book.location(end)  # the half before a page turn ends where the next starts
    added = (
        f"Monday, 3 March 2025 {when:%H:%M:%S}"
        if when.day == 3
        else f"{when:%A, %d %B %Y %H:%M:%S}"
    )
    if book.paged:
        page = (
            str(1 + first // 4) if first // 4 == last // 4 else f"{1 + first // 4}-{1 + last // 4}"
        )
        return Entry(book.title, text, location="", page=page, added=added)
    where = f"{first}-{last}" if last != first else f"{first}"
    return Entry(book.title, text, location=where, added=added)


def fold(text: str) -> str:
    # Written again here: the property must not share the importer's folding.
    return " ".join(text.replace("\ufeff", "").split()).casefold()


def _import(reader: User, entries: list[Entry]) -> Import:
    return clippings_import(reader=reader, data=clippings_file(*entries), file_name="my.txt")


def _lost(reader: User, entries: list[Entry], *, alive_only: bool = True) -> list[str]:
    """The entries whose words no stored highlight of their book holds."""
    highlights = Highlight.objects.alive() if alive_only else Highlight.objects.all()
    by_title: dict[str, list[str]] = {}
    for title, text in highlights.filter(reader=reader).values_list("book__title", "text"):
        by_title.setdefault(title, []).append(fold(text))
    books = {book.title for book in Book.objects.filter(reader=reader)}
    lost = []
    for entry in entries:
        title = entry.title.rsplit(" (", 1)[0]
        assert title in books
        if fold(entry.text) and not any(fold(entry.text) in t for t in by_title.get(title, [])):
            lost.append(entry.text)
    return lost


def _state(reader: User) -> list[tuple[int, str, object, object]]:
    return sorted(
        Highlight.objects.filter(reader=reader).values_list("pk", "text", "updated", "deleted_at")
    )


def _assert_nothing_changes(reader: User, entries: list[Entry]) -> None:
    before = _state(reader)
    again = _import(reader, entries)
    assert again.counts["new_highlights"] == 0
    assert again.counts["extended_merged"] == 0
    assert not again.merges.exists()
    assert _state(reader) == before


def _reader() -> User:
    return User.objects.create_user(f"reader-{next(_readers)}")


@pytest.mark.django_db
class ImportPropertyTests:
    @SETTINGS
    @given(entries=clippings_files())
    def test_one_import_keeps_every_word_and_a_second_changes_nothing(
        self, entries: list[Entry]
    ) -> None:
        reader = _reader()

        _import(reader, entries)

        assert _lost(reader, entries) == []
        _assert_nothing_changes(reader, entries)

    @SETTINGS
    @given(entries=clippings_files(), share=st.floats(0.0, 1.0))
    def test_an_earlier_copy_then_the_whole_file_reaches_the_same_promise(
        self, entries: list[Entry], share: float
    ) -> None:
        reader = _reader()
        prefix = entries[: int(len(entries) * share)]
        if prefix:
            _import(reader, prefix)

        _import(reader, entries)

        assert _lost(reader, entries) == []
        _assert_nothing_changes(reader, entries)

    @SETTINGS
    @given(entries=clippings_files(), share=st.floats(0.0, 1.0), data=st.data())
    def test_a_deleted_highlight_stays_deleted_with_its_versions(
        self, entries: list[Entry], share: float, data: st.DataObject
    ) -> None:
        reader = _reader()
        prefix = entries[: max(1, int(len(entries) * share))]
        _import(reader, prefix)
        stored = list(Highlight.objects.filter(reader=reader).order_by("pk"))
        deleted = data.draw(st.sampled_from(stored))
        deleted.deleted_at = timezone.now()
        deleted.save(update_fields=["deleted_at"])

        # The same file again brings nothing back: not the highlight, not its words.
        _assert_nothing_changes(reader, prefix)
        _import(reader, entries)

        deleted.refresh_from_db()
        assert deleted.deleted_at is not None
        # Every word is still somewhere, the deleted highlight included.
        assert _lost(reader, entries, alive_only=False) == []
        _assert_nothing_changes(reader, entries)
