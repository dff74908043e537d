"""Did you mean: a query that found nothing, written again with the reader's own words.

"happines" finds nothing by words (its stem is not "happiness"'s) and nothing close by
meaning (the model reads it as two unknown pieces). The reader's library has "happiness": a
word one slip away (a letter left out, added, changed, or two letters swapped), or two for
a long word, is what they meant, and the most common such word of their library is the one
offered.

The library's words come from PostgreSQL (ts_stat over the folded text: 74 ms for 5,500
highlights, about a second for 100,000) and are kept under the library's version: asked
only when a search finds nothing. Looked up as SymSpell does: each word and each of its
one-letter deletions lead to the word, so a word within two slips is found by a handful of
dictionary reads, not by measuring the query against every word of the library.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from django.db import connection

from books.library_cache import LibraryCache
from books.models import Highlight
from books.search.query import NOT_MEANING, WORD
from books.search.results import SearchResults
from books.text import fold

# Shorter words are too easily another word ("cat" → "car", "hat", "cut"): left alone.
SHORTEST_CORRECTED = 4
# A word this long or longer may be two slips from the reader's; a shorter one, one.
TWO_SLIPS_FROM = 7


@dataclass(frozen=True)
class Lexicon:
    """The reader's words with how many highlights have each, the words each one-letter
    deletion of them leads to, and the long words by their first letter."""

    counts: dict[str, int]
    by_deletion: dict[str, tuple[str, ...]]
    # Two slips are found by the deletions only when each side lost one letter: for the
    # rest ("cartografy"), the long words of the same first letter are measured one by one
    # (a slip in a word's first letter is the rarest).
    long_by_initial: dict[str, tuple[str, ...]]

    @classmethod
    def of(cls, counts: dict[str, int]) -> Lexicon:
        by_deletion: defaultdict[str, list[str]] = defaultdict(list)
        long_by_initial: defaultdict[str, list[str]] = defaultdict(list)
        for word in counts:
            if len(word) >= SHORTEST_CORRECTED - 1 and word.isalpha():
                for key in _deletions(word):
                    by_deletion[key].append(word)
            if len(word) >= TWO_SLIPS_FROM - 2 and word.isalpha():
                long_by_initial[word[0]].append(word)
        return cls(
            counts,
            {key: tuple(words) for key, words in by_deletion.items()},
            {key: tuple(words) for key, words in long_by_initial.items()},
        )

    def closest(self, word: str) -> str | None:
        """The reader's most common word within reach of `word`, the nearer first; None
        if `word` is theirs, too short, or nothing is near."""
        if word in self.counts or len(word) < SHORTEST_CORRECTED or not word.isalpha():
            return None
        reach = 2 if len(word) >= TWO_SLIPS_FROM else 1
        near = {
            candidate for key in _deletions(word) for candidate in self.by_deletion.get(key, ())
        }
        if reach == 2:
            near.update(self.long_by_initial.get(word[0], ()))
        near = {candidate for candidate in near if abs(len(candidate) - len(word)) <= reach}
        scored = [
            (distance, -self.counts[candidate], candidate)
            for candidate in near
            if (distance := slips(word, candidate)) <= reach
        ]
        return min(scored)[2] if scored else None


def _deletions(word: str) -> set[str]:
    """The word itself and the word with each one letter left out."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


def slips(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment): letters left out, added or
    changed, and two neighbours swapped, each one slip."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, letter in enumerate(a, start=1):
        current = [i]
        for j, other in enumerate(b, start=1):
            cost = 0 if letter == other else 1
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and letter == b[j - 2] and a[i - 2] == other:
                value = min(value, previous2[j - 2] + 1)
            current.append(value)
        previous2, previous = previous, current
    return previous[-1]


def library_words(reader_id: int) -> dict[str, int]:
    """Each folded word of the reader's live highlights and notes, with how many have it."""
    table = Highlight._meta.db_table
    # ts_stat takes its query as text: the reader's id is an integer, written in as one.
    documents = (
        f"SELECT to_tsvector('simple', search_text) FROM {table} "
        f"WHERE reader_id = {int(reader_id)} AND deleted_at IS NULL"
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT word, ndoc FROM ts_stat(%s)", [documents])
        return {word: int(count) for word, count in cursor.fetchall()}


def suggestion(reader_id: int, query: str, shelf: LibraryCache | None = None) -> str:
    """The query with each word the library lacks written as the reader's closest word, or
    "" when no word changes. Filters and exclusions ("author:…", "-word") are kept as typed:
    they name what the reader knows, not what they misspelled."""
    shelf = shelf or LibraryCache(reader_id)
    lexicon = shelf.get("spelling-lexicon", lambda: Lexicon.of(library_words(reader_id)))
    changed = False

    def correct(match: re.Match[str]) -> str:
        nonlocal changed
        written = match.group(0)
        closest = lexicon.closest(fold(written))
        if closest is None:
            return written
        changed = True
        return closest.capitalize() if written[0].isupper() else closest

    pieces, start = [], 0
    for kept in NOT_MEANING.finditer(query):
        pieces += [WORD.sub(correct, query[start : kept.start()]), kept.group(0)]
        start = kept.end()
    pieces.append(WORD.sub(correct, query[start:]))
    return "".join(pieces) if changed else ""


def suggestion_for(reader_id: int, found: SearchResults) -> str:
    """What a search offers instead, for the page, search.json and the command alike: a
    suggestion when the words did not all match. A search by meaning alone that found
    something asked for no words: none."""
    if not found.mode_used or found.keyword_pass == "all":
        return ""
    if found.total and found.mode_used == "meaning":
        return ""
    return suggestion(reader_id, found.query)
