"""Labelled pairs for the pair judge, read from the shared evaluation data (never copied into
the repo): STS-B English, Spanish, Spanish-English and exact translations (same idea /
unrelated), quotable's quotes (related when two authors' quotes share a specific tag).

Each *library* is a set of texts that stand for a reader's passages: a pair's context
features (mutual rank, margin over typical neighbours, rare stems) are computed inside it,
as the app computes them inside the reader's library. Splits: STS-B train rows are `train`
or `calibrate` by a hash of the row; STS-B dev rows are always `test`; quotable pairs by a
hash of the pair.
"""

from __future__ import annotations

import csv
import hashlib
import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# Quotable's tags that say nothing specific about a quote's idea.
GENERIC_TAGS = frozenset({"Famous Quotes", "Wisdom", "Inspirational", "Motivational", "Life"})
# STS-B scores: same idea at or above, unrelated at or below (the data set's own advice);
# a related theme from RELATED_SCORE.
SAME_SCORE, UNRELATED_SCORE, RELATED_SCORE = 4.0, 2.0, 3.0
CALIBRATE_SHARE = 0.25


@dataclass(frozen=True)
class Pair:
    a: int  # index of a text in its library
    b: int
    related: int | None  # 1, 0, or None: not labelled for that head
    same: int | None
    split: str  # train | calibrate | test
    kind: str  # en, es, es-en, translation, quotable


@dataclass
class Library:
    name: str
    texts: list[str] = field(default_factory=list)
    books: list[str] = field(default_factory=list)  # a passage's "book": never its own pair
    pairs: list[Pair] = field(default_factory=list)
    _index: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, text: str, book: str) -> int:
        key = (text, book)
        if key not in self._index:
            self._index[key] = len(self.texts)
            self.texts.append(text)
            self.books.append(book)
        return self._index[key]


def _bucket(key: str) -> float:
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def _split(row_key: str, dev: bool) -> str:
    if dev:
        return "test"
    return "calibrate" if _bucket(row_key) < CALIBRATE_SHARE else "train"


def _stsb(path: Path) -> list[tuple[str, str, float]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return [(a, b, float(score)) for a, b, score in csv.reader(handle)]


def _labels(score: float) -> tuple[int | None, int | None]:
    related = 1 if score >= RELATED_SCORE else 0 if score <= UNRELATED_SCORE else None
    same = 1 if score >= SAME_SCORE else 0 if score <= UNRELATED_SCORE else None
    return related, same


def _spread(rows: list[T], wanted: int | None) -> list[T]:
    """`wanted` rows spread evenly over the file: STS-B is ordered by genre (captions, then
    news, then forums), and its first rows alone are all captions."""
    if wanted is None or wanted >= len(rows):
        return rows
    return [rows[i * len(rows) // wanted] for i in range(wanted)]


def stsb_libraries(folder: Path, *, train_rows: int | None = None) -> list[Library]:
    """English, Spanish, Spanish-English and translation libraries of each STS-B split
    (`train_rows` rows of train, spread over it; all of dev)."""
    found = []
    for part in ("train", "dev"):
        dev = part == "dev"
        rows = None if dev else train_rows
        english = _spread(_stsb(folder / f"stsb-en-{part}.csv"), rows)
        spanish = _spread(_stsb(folder / f"stsb-es-{part}.csv"), rows)
        kinds = {
            "en": english,
            "es": spanish,
            "es-en": [(e[0], s[1], e[2]) for e, s in zip(english, spanish, strict=True)],
        }
        for kind, rows_of in kinds.items():
            library = Library(f"stsb-{kind}-{part}")
            for i, (a, b, score) in enumerate(rows_of):
                related, same = _labels(score)
                if related is None and same is None:
                    continue
                # Each distinct sentence its own "book" (STS-B repeats some sentences).
                ia, ib = library.add(a, a), library.add(b, b)
                if ia == ib:
                    continue
                library.pairs.append(Pair(ia, ib, related, same, _split(f"{kind}{i}", dev), kind))
            found.append(library)
        # Exact translations: an English sentence and its Spanish version are the same idea.
        library = Library(f"stsb-translation-{part}")
        for i, (e, s) in enumerate(zip(english, spanish, strict=True)):
            if e[0] == s[0]:
                continue
            ia, ib = library.add(e[0], e[0]), library.add(s[0], s[0])
            library.pairs.append(Pair(ia, ib, 1, 1, _split(f"tr{i}", dev), "translation"))
        found.append(library)
    return found


def quotable_library(folder: Path) -> tuple[Library, list[frozenset[str]]]:
    """quotable's quotes, a book per author, and each quote's specific tags. Its pairs are
    chosen among each quote's nearest later (evaluation.pair_judge), as the app would."""
    quotes = json.loads((folder / "quotes.json").read_text(encoding="utf-8"))
    library = Library("quotable")
    tags = []
    for quote in quotes:
        library.add(quote["content"].strip(), quote["author"])
        tags.append(frozenset(quote["tags"]) - GENERIC_TAGS)
    return library, tags


def text_key(text: str) -> str:
    return hashlib.sha256(unicodedata.normalize("NFC", text).strip().encode()).hexdigest()[:16]
