"""Names: authors and titles are a book's fields, never searchable text.

An `author:` / `book:` prefix filters by them (`books_with_fields`); a name typed among
the words ("what did Kierkegaard say about despair") is recognised (`names_in`), and that
author's or book's highlights that match the rest of the query come first.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import QuerySet

from accounts.models import User
from books.models import Book, Highlight
from books.search.keyword import matching
from books.search.query import ParsedQuery, tsquery
from books.text import WORD, fold

# A name's frame, left out of the topic once the name is recognised: "what did X say about".
_FILLER = "what did does do say says said about on of by think thinks thought write wrote"
NAME_FILLER = frozenset(
    f"{_FILLER} writes in from according to que dijo dice decia sobre de del piensa pensaba "
    "escribio segun en acerca".split(" ")
)
# A last name or a one-word title alone names a book only when it is a word of this many
# letters or more (see names_in); highlights counted no further than this.
NAME_MIN_LENGTH = 4
NAME_COUNT_CAP = 1000
NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
# The named books' highlights come first when they are this close (cosine distance) to the
# best match of the whole library, or share the words. Measured: 0.35 keeps the names task
# within a point of no margin at all, and gives paraphrases that mention a name (Colin
# Powell, an author of the library) back 1.7 points of MRR@10.
NAMED_MARGIN = 0.35


@dataclass(frozen=True)
class NamedBooks:
    """Books a query names: by an author: or book: prefix, or by a name among its words."""

    book_ids: frozenset[int]
    names: tuple[str, ...]  # as the reader's books write them
    words: frozenset[str] = frozenset()  # the query words that named them


def reader_books(reader: User) -> list[tuple[int, str, str]]:
    return list(Book.objects.filter(reader=reader).values_list("id", "title", "authors_normalized"))


# A book's names are read at every search, from its title and authors alone: kept per
# process, and looked for only when their first word is in the query (over 1,000 books,
# names_in took 6.5 ms of CPU a search before, 0.7 ms after).
NAME_FORMS_CACHE_SIZE = 20_000


@functools.lru_cache(maxsize=NAME_FORMS_CACHE_SIZE)
def _author_names(authors_normalized: str) -> tuple[str, ...]:
    return tuple(fold(name) for name in authors_normalized.split("; ") if name)


@functools.lru_cache(maxsize=NAME_FORMS_CACHE_SIZE)
def _author_name_words(authors_normalized: str) -> tuple[tuple[str, ...], ...]:
    """Each author's name as words, without Jr, III and the like."""
    return tuple(
        tuple(w for w in WORD.findall(name) if w not in NAME_SUFFIXES)
        for name in _author_names(authors_normalized)
    )


@functools.lru_cache(maxsize=NAME_FORMS_CACHE_SIZE)
def _title_words(title: str) -> tuple[str, ...]:
    # The title before its subtitle: "Thinking, Fast and Slow: …" is named "thinking fast
    # and slow".
    return tuple(WORD.findall(fold(re.split(r"\s[\u2013\u2014-]\s|:\s|\(", title)[0])))


def books_with_fields(
    books: Sequence[tuple[int, str, str]], authors: Sequence[str], titles: Sequence[str]
) -> NamedBooks:
    """The books whose authors contain every author: value and whose titles contain every
    book: value (folded, as whole words)."""
    chosen: set[int] = set()
    names: list[str] = []
    for pk, title, authors_normalized in books:
        author_text = f" {' '.join(_author_names(authors_normalized))} "
        title_text = f" {' '.join(WORD.findall(fold(title)))} "
        if all(f" {a} " in author_text for a in authors) and all(
            f" {t} " in title_text for t in titles
        ):
            chosen.add(pk)
            names.append(title)
    return NamedBooks(frozenset(chosen), tuple(names))


def _contains(sequence: Sequence[str], part: Sequence[str]) -> bool:
    width = len(part)
    return any(
        tuple(sequence[i : i + width]) == tuple(part) for i in range(len(sequence) - width + 1)
    )


def capitalized_words(query: str) -> frozenset[str]:
    """The query's words written with a capital, folded: how a reader writes a name."""
    return frozenset(fold(word) for word in WORD.findall(query) if word[0].isupper())


def names_in(
    parsed: ParsedQuery,
    books: Sequence[tuple[int, str, str]],
    *,
    capitalized: frozenset[str],
    library: QuerySet[Highlight],
) -> NamedBooks:
    """The books a query names among its free words: a whole title or author's name, or an
    author's last name (or a one-word title) written as a name and more theirs than a word.

    "death" never names *A Death in the Family*: a title is named whole. A last name alone
    ("Kierkegaard on despair") must be written with a capital (or be the whole query), and
    the books it names must hold more highlights than the library's highlights that have it
    as a word: "Wooden chairs" never names John Wooden, and "Robinson was fired" does not
    name Marilynne Robinson in a library of news.
    """
    free = [w for text, words in parsed.units if not text.startswith('"') for w in words]
    if not free:
        return NamedBooks(frozenset(), ())
    alone = len(parsed.units) == 1
    # A name is looked for in the words only when its first word is among them.
    present = frozenset(free)
    whole: dict[int, list[tuple[str, ...]]] = defaultdict(list)  # book → whole names in it
    single: dict[str, set[int]] = defaultdict(set)  # a one-word name → its books
    for pk, title, authors_normalized in books:
        title_words = _title_words(title)
        if len(title_words) > 1 and title_words[0] in present and _contains(free, title_words):
            whole[pk].append(title_words)
        elif len(title_words) == 1:
            single[title_words[0]].add(pk)
        for name_words in _author_name_words(authors_normalized):
            if len(name_words) > 1 and name_words[0] in present and _contains(free, name_words):
                whole[pk].append(name_words)
            elif name_words:
                single[name_words[-1]].add(pk)
    for word, pks in single.items():
        if len(word) < NAME_MIN_LENGTH or word not in free or not (alone or word in capitalized):
            continue
        own = library.filter(book_id__in=pks)[:NAME_COUNT_CAP].count()
        mentions = matching(library, tsquery(f"'{word}'"))[: own + 1].count()
        if mentions <= own:
            for pk in pks:
                whole[pk].append((word,))
    names = [title for pk, title, _ in books if pk in whole]
    used = {word for found in whole.values() for words in found for word in words}
    return NamedBooks(frozenset(whole), tuple(names), frozenset(used))
