"""The words deck's own rules: which word a highlight is, which words a day shows, and
where a word sits in the sentence it was looked up in. Pure, no Django.

A deck of words is a deck of *words*, not of highlights: a reader who looked up "allay"
in two books, or twice in one (66 repeats among the 906 words of the shared Kindle files),
has one word to learn, so the schedule is kept per word (books.vocabulary.word_key) and
the day shows each word once, from one of its highlights.
"""

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from datetime import date

from books.text import fold
from books.vocabulary import cjk_characters

# How far, in Kindle locations, a passage may sit from a word and still be the sentence it
# was looked up in. A location is about 150 bytes, so a long sentence spans 2 to 4.
# Measured on the shared Kindle files: of the words with a passage containing them in the
# same book, 35 sit inside its range, 43 within 3 locations, 63 within 20; the passages
# further off that contain the word are other uses of it, not the sentence being read.
NEAR_LOCATIONS = 3


@dataclass(frozen=True)
class WordEntry:
    """One of the reader's word highlights, as the chooser sees it."""

    highlight_id: int
    key: str
    favourite: bool
    has_note: bool


@dataclass(frozen=True)
class ChosenWord:
    key: str
    highlight_id: int


def _shuffle(key: str, today: date) -> str:
    # A shuffle that changes daily but is the same all day (and in every process).
    return hashlib.blake2b(f"{key}|{today.isoformat()}".encode(), digest_size=8).hexdigest()


def words_choose(
    *,
    entries: Iterable[WordEntry],
    due: Mapping[str, date],
    today: date,
    count: int,
    taken: Set[str] = frozenset(),
) -> list[ChosenWord]:
    """Up to `count` words for the day, each once: the words due again (most overdue
    first) and, for half of the day's cards, words never shown yet (favourites first, then
    in a shuffle that changes daily); either half fills what the other cannot. A word due
    later is not shown: a reader who knows their words is done for the day.

    Each word is shown from its highlight with a note (the reader's definition), else from
    the one looked up first. `due` maps a word's key to its next showing; `taken` holds the
    words already on the day's deck.
    """
    occurrences: dict[str, list[WordEntry]] = {}
    for entry in entries:
        if entry.key and entry.key not in taken:
            occurrences.setdefault(entry.key, []).append(entry)
    favourites = {key for key, group in occurrences.items() if any(e.favourite for e in group)}
    fresh = sorted(
        (key for key in occurrences if key not in due),
        key=lambda key: (key not in favourites, _shuffle(key, today)),
    )
    again = sorted(
        (key for key in occurrences if key in due and due[key] <= today),
        key=lambda key: (due[key], key not in favourites, _shuffle(key, today)),
    )
    fresh_count = min(len(fresh), (count + 1) // 2)
    again_count = min(len(again), count - fresh_count)
    fresh_count = min(len(fresh), count - again_count)
    keys = again[:again_count] + fresh[:fresh_count]
    return [
        ChosenWord(
            key=key,
            highlight_id=min(
                occurrences[key], key=lambda e: (not e.has_note, e.highlight_id)
            ).highlight_id,
        )
        for key in keys
    ]


@dataclass(frozen=True)
class Part:
    """A piece of a passage: the word itself (marked) or the text around it."""

    text: str
    marked: bool


def _folded_with_origin(text: str) -> tuple[str, list[int]]:
    """The folded text, and for each of its characters the index it came from."""
    folded: list[str] = []
    origin: list[int] = []
    for index, character in enumerate(text):
        for piece in fold(character):
            folded.append(piece)
            origin.append(index)
    return "".join(folded), origin


def _pattern(key: str) -> re.Pattern[str]:
    body = r"\W+".join(re.escape(token) for token in key.split())
    if cjk_characters(key):
        return re.compile(body)  # no spaces between CJK words, so no word boundaries
    return re.compile(r"(?<!\w)" + body + r"(?!\w)")


def word_marked(passage: str, key: str) -> list[Part] | None:
    """The passage with every whole-word occurrence of the word marked, whatever its case
    and accents ("Allay" in "to allay the fears"); None when the word is not in it."""
    if not key:
        return None
    folded, origin = _folded_with_origin(passage)
    parts: list[Part] = []
    done = 0
    for match in _pattern(key).finditer(folded):
        start = origin[match.start()]
        end = origin[match.end() - 1] + 1
        # A combining accent after the last letter (text in NFD) belongs to the word.
        while end < len(passage) and unicodedata.combining(passage[end]):
            end += 1
        if start < done:
            continue
        if start > done:
            parts.append(Part(passage[done:start], marked=False))
        parts.append(Part(passage[start:end], marked=True))
        done = end
    if not parts:
        return None
    if done < len(passage):
        parts.append(Part(passage[done:], marked=False))
    return parts


@dataclass(frozen=True)
class Passage:
    text: str
    location_start: int | None
    location_end: int | None
    page: str


def _distance(passage: Passage, location: int) -> int | None:
    if passage.location_start is None:
        return None
    end = passage.location_end or passage.location_start
    if passage.location_start <= location <= end:
        return 0
    return min(abs(passage.location_start - location), abs(end - location))


def word_context(
    *, key: str, location: int | None, page: str, passages: Iterable[Passage]
) -> list[Part] | None:
    """The sentence the word was looked up in: of the same book's passages at or within
    NEAR_LOCATIONS of the word's location (on the same page when the book has no
    locations, as a PDF), the nearest that contains the word, with the word marked."""
    best: tuple[int, list[Part]] | None = None
    for passage in passages:
        if location is not None:
            distance = _distance(passage, location)
        else:
            distance = 0 if page and passage.page == page else None
        if distance is None or distance > NEAR_LOCATIONS:
            continue
        if best is not None and best[0] <= distance:
            continue
        marked = word_marked(passage.text, key)
        if marked is not None:
            best = (distance, marked)
    return best[1] if best else None
