"""The quotes the kindred-readers constructions are built from. Pure Python, no Django.

Each construction is a list of `Quote`s (text, author, topic, language) that
`affinity.demo_library.make_library` turns into readers with planted twins, so the same
planting, bestsellers and opposites run over very different material:

- **quotes**: quotable's English quotes by tag beside the Spanish sayings of `fortunes_es/`
  by topic file (the demo library);
- **kindle**: the shared Kindle `My Clippings.txt` files, each real book a topic (its
  highlights dealt out in volumes, so twins read the same books' ideas in different
  passages), in every language the files hold;
- **languages**: the quotes construction plus the German (`fortunes_de/`, by file) and
  Brazilian Portuguese (`fortunes_pt/`) sayings.

Everything is read in place from the shared data folder, never copied.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from affinity.demo_library import (
    MIN_TOPIC_QUOTES,
    DemoDataMissing,
    Quote,
    read_fortunes,
    read_quotes,
)
from books.importing.clippings import parse_clippings

# A real book gives at most this many highlights (six volumes of fifteen): a 600-highlight
# book would otherwise fill every reader of its topic.
KINDLE_BOOK_CAP = 90
# Only what the other constructions keep: a passage, not a word or a chapter.
TEXT_LENGTH = (20, 600)
# The folder names of the Kindle files, as the language the quotes are tagged with.
_FOLDER_LANGUAGE = {"pt-BR": "pt"}


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def read_kindle_shelves(folder: Path) -> list[Quote]:
    """Highlights of the real books with enough of them, one topic per book."""
    skipped = (".md", ".html", ".ts")  # the notes and the other formats beside the files
    files = sorted(p for p in folder.glob("*/*") if p.is_file() and p.suffix not in skipped)
    if not files:
        raise DemoDataMissing(f"no Kindle clippings files under {folder}")
    by_book: dict[str, list[tuple[str, str]]] = defaultdict(list)
    seen: set[str] = set()
    for path in files:
        language = _FOLDER_LANGUAGE.get(path.parent.name, path.parent.name)
        for clipping in parse_clippings(path.read_bytes()).clippings:
            text = _clean(clipping.text)
            if clipping.kind != "highlight" or not TEXT_LENGTH[0] <= len(text) <= TEXT_LENGTH[1]:
                continue
            if text.casefold() in seen:
                continue
            seen.add(text.casefold())
            # One file's copy of a book is one topic: two files' copies of one title stay
            # apart (another reader, other passages).
            by_book[f"{_clean(clipping.title)[:60]} [{path.stem[:12]}]"].append((text, language))
    quotes: list[Quote] = []
    for topic, rows in sorted(by_book.items()):
        if len(rows) < MIN_TOPIC_QUOTES:
            continue
        # Evenly through the book, not its first chapters only.
        step = max(1.0, len(rows) / KINDLE_BOOK_CAP)
        kept = [rows[int(i * step)] for i in range(min(len(rows), KINDLE_BOOK_CAP))]
        # "Anonymous": no author book, so the highlights are dealt out as volumes.
        quotes.extend(Quote(text, "Anonymous", topic, language) for text, language in kept)
    return quotes


def read_languages(data_dir: Path) -> list[Quote]:
    """The demo library's quotes plus the German and Portuguese sayings."""
    return (
        read_quotes(data_dir)
        + read_fortunes(data_dir / "fortunes_de", language="de")
        + read_fortunes(data_dir / "fortunes_pt", language="pt")
    )


def read_construction(name: str, data_dir: Path) -> list[Quote]:
    """The quotes of a construction, from the evaluation data folder (`eval/`; the Kindle
    files are its sibling `clippings/`)."""
    readers: dict[str, Callable[[], list[Quote]]] = {
        "quotes": lambda: read_quotes(data_dir),
        "kindle": lambda: read_kindle_shelves(data_dir.parent / "clippings"),
        "languages": lambda: read_languages(data_dir),
    }
    if name not in readers:
        raise ValueError(f"unknown construction {name!r}: one of {', '.join(CONSTRUCTIONS)}")
    return readers[name]()


CONSTRUCTIONS = ("quotes", "kindle", "languages")
