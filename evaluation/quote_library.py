"""The evaluation library of quotes and sayings (evaluate_library --data): one reader's
English quotes of `quotable/` and Spanish sayings of `fortunes_es/` as passages, one book per
author with a few of them and anthologies of the rest, and about a fifth of the highlights
single words or short phrases looked up in the same books. Pure Python (the realistic,
many-language library is evaluation.library).
"""

import json
import random
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

from evaluation.kindle_books import (
    ANTHOLOGY_SIZE,
    AUTHOR_BOOK_MIN,
    LibraryBook,
    Passage,
    clipping,
    clippings_bytes,
    title_line,
)


class LibraryDataMissing(Exception):
    """The evaluation data folder lacks a file the library is made from."""


ENGLISH_TAGS_GENERIC = frozenset({"Famous Quotes"})


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


def make_books(passages: list[Passage], *, seed: int) -> list[LibraryBook]:
    """One book per author with AUTHOR_BOOK_MIN passages or more, anthologies by topic.
    Anonymous Spanish proverbs are one author's: the Refranero."""
    rng = random.Random(seed)
    by_author: dict[str, list[Passage]] = defaultdict(list)
    for passage in passages:
        by_author[passage.author].append(passage)
    books: list[LibraryBook] = []
    rest: dict[tuple[str, str], list[Passage]] = defaultdict(list)
    for author, own in sorted(by_author.items()):
        if author == "Anónimo":
            for start in range(0, len(own), 100):
                volume = start // 100 + 1
                chunk: list[Passage | str] = list(own[start : start + 100])
                books.append(
                    LibraryBook(f"Refranero, tomo {volume}", "Refranero popular", "es", chunk)
                )
        elif len(own) >= AUTHOR_BOOK_MIN and author != "Anonymous":
            title = f"Collected Sayings of {author}"
            if own[0].language == "es":
                title = f"Dichos y sentencias de {author}"
            books.append(LibraryBook(title, author, own[0].language, list(own)))
        else:
            for passage in own:
                rest[(passage.language, passage.topic)].append(passage)
    for (language, topic), pool in sorted(rest.items()):
        rng.shuffle(pool)
        for volume, start in enumerate(range(0, len(pool), ANTHOLOGY_SIZE), start=1):
            name = f"An Anthology of {topic or 'Sayings'}"
            if language == "es":
                name = f"Antología de {topic}"
            chunk = list(pool[start : start + ANTHOLOGY_SIZE])
            editor = f"Editor {len(books) + 1}"
            books.append(LibraryBook(f"{name}, vol. {volume}", editor, language, chunk))
    return books


def clippings_file(books: list[LibraryBook], *, seed: int) -> bytes:
    """A Kindle `My Clippings.txt` (English UI, CRLF, BOM) with every book's highlights."""
    rng = random.Random(seed)
    moment = datetime(2023, 3, 1, 8, 0, 0)
    entries = []
    for book in books:
        title = title_line(book)
        for position, entry in enumerate(book.entries):
            # Far apart, so that no two highlights read as versions of one passage.
            start = 100 + 40 * position
            moment += timedelta(minutes=rng.randint(3, 300))
            text = entry if isinstance(entry, str) else entry.text
            entries.append(
                clipping(title, "Highlight", f"Location {start}-{start + 3}", moment, text)
            )
    return clippings_bytes(entries)
