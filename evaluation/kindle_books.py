"""What both evaluation libraries are made of (evaluation.library, the realistic one, and
evaluation.quote_library, quotes and sayings): a passage, a book of highlights, the words a
reader looked up in it, and a Kindle's way of writing them into `My Clippings.txt`. Pure
Python.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

# About a fifth of all highlights are words (and a few short phrases) looked up in the same
# books, as on a real Kindle (22 % on the library issue 28 measured).
WORD_SHARE = 0.2
# Of the looked-up highlights: mostly single words, some short phrases ("sine qua non").
PHRASE_SHARE = 0.15
# A looked-up word is long or rare: short words are rarely looked up.
LOOKUP_MIN_LETTERS = 7
# An author with this many passages gets a book of their own; the others go to anthologies.
AUTHOR_BOOK_MIN = 4
ANTHOLOGY_SIZE = 25

_LETTERS = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip


@dataclass(frozen=True)
class Passage:
    text: str
    author: str
    language: str
    topic: str
    # Where it came from (as in evaluation.labels), so that a judgement of a pair of them
    # can be kept as a label row without the texts; "" where no label is kept.
    source: str = ""
    locator: str = ""


@dataclass
class LibraryBook:
    title: str
    # An anthology names its editor, one per anthology: the quotes in it are by many
    # authors, so two anthologies are not one author's books.
    author: str
    language: str
    # Highlights in reading order: a passage, or a looked-up word (a str).
    entries: list[Passage | str] = field(default_factory=list)


def add_lookups(books: Sequence[LibraryBook], *, share: float, seed: int) -> int:
    """Mix in words and short phrases looked up in each book's own passages, so that they
    make `share` of all highlights. Returns how many were added."""
    rng = random.Random(seed)
    passages = sum(len(book.entries) for book in books)
    wanted = round(passages * share / (1 - share))
    candidates: list[tuple[int, str]] = []
    for index, book in enumerate(books):
        for entry in book.entries:
            if not isinstance(entry, Passage):
                continue
            tokens = _LETTERS.findall(entry.text)
            for position, token in enumerate(tokens):
                if len(token) >= LOOKUP_MIN_LETTERS:
                    if rng.random() < PHRASE_SHARE and position + 2 < len(tokens):
                        candidates.append((index, " ".join(tokens[position : position + 3])))
                    else:
                        # As a reader selects it: German keeps its nouns' capital
                        # ("Mädchen"); elsewhere a capital is the sentence's, not the word's.
                        word = token if book.language == "de" else token.lower()
                        candidates.append((index, word))
    picked = rng.sample(candidates, min(wanted, len(candidates)))
    for index, lookup in picked:
        entries = books[index].entries
        entries.insert(rng.randint(0, len(entries)), lookup)
    return len(picked)


def kindle_date(moment: datetime) -> str:
    """The date as a Kindle with an English UI writes it after "Added on"."""
    hour = moment.hour % 12 or 12
    half = "AM" if moment.hour < 12 else "PM"
    return (
        f"{_WEEKDAYS[moment.weekday()]}, {_MONTHS[moment.month - 1]} {moment.day}, "
        f"{moment.year} {hour}:{moment:%M:%S} {half}"
    )


def title_line(book: LibraryBook) -> str:
    """A clipping's first line: `Title (Author)`, or the title alone."""
    return f"{book.title} ({book.author})" if book.author else book.title


def clipping(title: str, kind: str, where: str, moment: datetime, text: str) -> str:
    """One entry of `My Clippings.txt` (CRLF): `kind` Highlight or Note, `where` the
    location ("Location 100-103")."""
    meta = f"- Your {kind} on {where} | Added on {kindle_date(moment)}"
    return "\r\n".join([title, meta, "", text, "=========="]) + "\r\n"


def clippings_bytes(entries: Sequence[str]) -> bytes:
    """The file as a Kindle writes it: UTF-8 with a BOM."""
    return ("\ufeff" + "".join(entries)).encode("utf-8")
