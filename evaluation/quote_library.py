"""The evaluation library of quotes and sayings (evaluate_library --data): one reader's
English quotes of `quotable/` and Spanish sayings of `fortunes_es/` as passages, one book per
author with a few of them and anthologies of the rest, and about a fifth of the highlights
single words or short phrases looked up in the same books. Pure Python (the realistic,
many-language library is evaluation.library).
"""

import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from evaluation.library import kindle_date


class LibraryDataMissing(Exception):
    """The evaluation data folder lacks a file the library is made from."""


ENGLISH_TAGS_GENERIC = frozenset({"Famous Quotes"})
# An author with this many passages gets a book of their own; the others go to anthologies.
AUTHOR_BOOK_MIN = 4
ANTHOLOGY_SIZE = 25
WORD_SHARE = 0.2
# Of the looked-up highlights: mostly single words, some short phrases ("sine qua non").
PHRASE_SHARE = 0.15
SAMPLE = 30
# A looked-up word is long or rare: short words are rarely looked up.
LOOKUP_MIN_LETTERS = 7
_LETTERS = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")


@dataclass(frozen=True)
class Passage:
    text: str
    author: str
    language: str
    topic: str


@dataclass
class EvalBook:
    title: str
    # An anthology names its editor, one per anthology: the quotes in it are by many
    # authors, so two anthologies are not one author's books.
    author: str
    entries: list[str]  # highlight texts in reading order


def read_passages(data_dir: Path, *, spanish: int, seed: int) -> list[Passage]:
    """Every English quote, and `spanish` Spanish sayings drawn with the seed."""
    from affinity.demo_library import DemoDataMissing, read_fortunes

    path = data_dir / "quotable" / "quotes.json"
    if not path.is_file():
        raise LibraryDataMissing(f"No quotable/quotes.json in {data_dir}. Pass --data.")
    passages = []
    seen: set[str] = set()
    for row in json.loads(path.read_text(encoding="utf-8")):
        text = " ".join(row["content"].split())
        tags = [t for t in row["tags"] if t not in ENGLISH_TAGS_GENERIC] or row["tags"] or [""]
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            passages.append(Passage(text, row["author"].strip() or "Anonymous", "en", tags[0]))
    if spanish:
        try:
            fortunes = read_fortunes(data_dir / "fortunes_es")
        except DemoDataMissing as error:
            raise LibraryDataMissing(f"{error}. Pass --data, or --spanish 0.") from None
        fortunes = [f for f in fortunes if f.text.casefold() not in seen]
        rng = random.Random(seed)
        for quote in rng.sample(fortunes, min(spanish, len(fortunes))):
            passages.append(Passage(quote.text, quote.author, "es", quote.topic))
    return passages


def make_books(passages: list[Passage], *, seed: int) -> list[EvalBook]:
    """One book per author with AUTHOR_BOOK_MIN passages or more, anthologies by topic.
    Anonymous Spanish proverbs are one author's: the Refranero."""
    rng = random.Random(seed)
    by_author: dict[str, list[Passage]] = defaultdict(list)
    for passage in passages:
        by_author[passage.author].append(passage)
    books: list[EvalBook] = []
    rest: dict[tuple[str, str], list[Passage]] = defaultdict(list)
    for author, own in sorted(by_author.items()):
        if author == "Anónimo":
            for start in range(0, len(own), 100):
                volume = start // 100 + 1
                chunk = [p.text for p in own[start : start + 100]]
                books.append(EvalBook(f"Refranero, tomo {volume}", "Refranero popular", chunk))
        elif len(own) >= AUTHOR_BOOK_MIN and author != "Anonymous":
            title = f"Collected Sayings of {author}"
            if own[0].language == "es":
                title = f"Dichos y sentencias de {author}"
            books.append(EvalBook(title, author, [p.text for p in own]))
        else:
            for passage in own:
                rest[(passage.language, passage.topic)].append(passage)
    for (language, topic), pool in sorted(rest.items()):
        rng.shuffle(pool)
        for volume, start in enumerate(range(0, len(pool), ANTHOLOGY_SIZE), start=1):
            name = f"An Anthology of {topic or 'Sayings'}"
            if language == "es":
                name = f"Antología de {topic}"
            chunk = [p.text for p in pool[start : start + ANTHOLOGY_SIZE]]
            editor = f"Editor {len(books) + 1}"
            books.append(EvalBook(f"{name}, vol. {volume}", editor, chunk))
    return books


def add_lookups(books: list[EvalBook], *, share: float, seed: int) -> int:
    """Mix in words and short phrases looked up in each book's own passages, so that they
    make `share` of all highlights. Returns how many were added."""
    rng = random.Random(seed)
    passages = sum(len(book.entries) for book in books)
    wanted = round(passages * share / (1 - share))
    candidates: list[tuple[int, str]] = []
    for index, book in enumerate(books):
        for text in book.entries:
            tokens = _LETTERS.findall(text)
            for position, token in enumerate(tokens):
                if len(token) >= LOOKUP_MIN_LETTERS:
                    if rng.random() < PHRASE_SHARE and position + 2 < len(tokens):
                        candidates.append((index, " ".join(tokens[position : position + 3])))
                    else:
                        candidates.append((index, token.lower()))
    added = 0
    for index, lookup in rng.sample(candidates, min(wanted, len(candidates))):
        book = books[index]
        book.entries.insert(rng.randint(0, len(book.entries)), lookup)
        added += 1
    return added


def clippings_file(books: list[EvalBook], *, seed: int) -> bytes:
    """A Kindle `My Clippings.txt` (English UI, CRLF, BOM) with every book's highlights."""
    rng = random.Random(seed)
    moment = datetime(2023, 3, 1, 8, 0, 0)
    entries = []
    for book in books:
        title = f"{book.title} ({book.author})" if book.author else book.title
        for position, text in enumerate(book.entries):
            # Far apart, so that no two highlights read as versions of one passage.
            start = 100 + 40 * position
            moment += timedelta(minutes=rng.randint(3, 300))
            added = kindle_date(moment)
            meta = f"- Your Highlight on Location {start}-{start + 3} | Added on {added}"
            entries.append("\r\n".join([title, meta, "", text, "=========="]) + "\r\n")
    return ("\ufeff" + "".join(entries)).encode("utf-8")
