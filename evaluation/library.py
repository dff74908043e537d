"""A realistic reader's Kindle `My Clippings.txt`, built from the shared data. Pure Python.

One reader, several languages, written the way a Kindle writes: English quotes
(`quotable/`) and real English highlights (a shared Kindle file), Spanish sayings
(`fortunes_es/`), German ones (`fortunes_de/`), Portuguese sayings and real Brazilian
highlights, and real French highlights (the French books of two shared Kindle files).
On top of the passages:

- about a fifth of all highlights are words (and a few short phrases) looked up in the
  same books, as on a real Kindle (22 % on the library issue 28 measured);
- some passages are selected in part first and then re-selected longer, once or several
  times: the Kindle appends each version and keeps the old ones, the import merges them;
- some passages carry a note the reader typed, written just after the highlight.

Every passage remembers where it came from (`Passage.source`, `.locator`, as in
evaluation.labels), so a judgement of a pair of them can be kept as a label row without
the texts. The file is written outside the repository (it holds the shared texts).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from evaluation.kindle_books import (
    ANTHOLOGY_SIZE,
    AUTHOR_BOOK_MIN,
    WORD_SHARE,
    LibraryBook,
    Passage,
    add_lookups,
    clipping,
    clippings_bytes,
    title_line,
)
from evaluation.labels import SHARED_DATA, Entry, LabelError, source_entries
from evaluation.languages import guess_language

RESELECT_SHARE = 0.12
NOTE_SHARE = 0.04
MIN_CHARS, MAX_CHARS = 20, 600
MIN_WORDS = 5

# (language, source, how many passages, what kind of source)
SOURCES: tuple[tuple[str, str, int, str], ...] = (
    ("en", "eval/quotable/quotes.json", 1900, "quotes"),
    ("en", "clippings/en/abuiles-kintrospect__My Clippings.txt", 350, "kindle"),
    ("es", "eval/fortunes_es/es", 1250, "fortunes_es"),
    ("de", "eval/fortunes_de/zitate", 260, "sayings"),
    ("de", "eval/fortunes_de/sprueche", 70, "sayings"),
    ("de", "eval/fortunes_de/sprichworte", 40, "sayings"),
    ("pt", "eval/fortunes_pt/brasil", 160, "sayings"),
    ("pt", "clippings/pt-BR/mvaldetaro-myclippings__my-clippings-example.txt", 180, "kindle"),
    ("fr", "clippings/en/mattioofr-kcp__My Clippings.txt", 90, "kindle"),
    ("fr", "clippings/en/obruchez-k2md-old__My Clippings (old Kindle).txt", 90, "kindle"),
)
_ANTHOLOGY = {
    "en": "An Anthology of {topic}, vol. {volume}",
    "es": "Antología de {topic}, tomo {volume}",
    "de": "Zitatenschatz: {topic}, Band {volume}",
    "pt": "Almanaque de {topic}, vol. {volume}",
}
_OWN_BOOK = {
    "en": "Collected Sayings of {author}",
    "es": "Dichos y sentencias de {author}",
    "de": "Gedanken und Einfälle von {author}",
    "pt": "Pensamentos de {author}",
}
_NOTES = {
    "en": ("Compare with the chapter on habits.", "Yes!", "Use this in the talk.",
           "Not sure I agree.", "Reminds me of what Dad used to say.", "Reread."),
    "es": ("¡Qué verdad!", "Para el cuaderno.", "No estoy de acuerdo.", "Releer."),
    "de": ("Stimmt.", "Für den Vortrag.", "Nochmal lesen."),
    "pt": ("Verdade.", "Reler depois.", "Para a aula."),
    "fr": ("À relire.", "Très juste.", "Pour le cours."),
}  # fmt: skip
_NO_AUTHOR = {"", "anónimo", "anonymous", "refrán", "sprichwort", "www.frases.com"}
_PLACEHOLDER = re.compile(r"^\s*<.*>\s*$")


@dataclass(frozen=True)
class Library:
    books: list[LibraryBook]

    @property
    def passages(self) -> list[Passage]:
        return [e for book in self.books for e in book.entries if isinstance(e, Passage)]

    @property
    def lookups(self) -> int:
        return sum(1 for book in self.books for e in book.entries if isinstance(e, str))


def _author_name(attribution: str) -> str:
    """ "Séneca. (2 a.C-65) Filósofo" -> "Séneca"; "Goethe (Faust)" -> "Goethe"."""
    name = re.split(r"\.(?:\s|$)|\(|,\s", attribution, maxsplit=1)[0].strip()
    return "" if name.casefold() in _NO_AUTHOR else name


def _passage_like(entry: Entry) -> bool:
    text = entry.text
    return (
        MIN_CHARS <= len(text) <= MAX_CHARS
        and len(text.split()) >= MIN_WORDS
        and not _PLACEHOLDER.match(text)
        and "\n" not in text
    )


def _read_source(
    shared_dir: Path, language: str, source: str, kind: str
) -> list[tuple[Passage, str]]:
    """Every usable passage of a source, each with the book title its kind gives it ("" for
    a title made later from the author or topic)."""
    found: list[tuple[Passage, str]] = []
    if kind == "fortunes_es":
        folder = shared_dir / source
        if not folder.is_dir():
            raise LabelError(f"no folder {source} in {shared_dir}")
        for path in sorted(folder.glob("*.fortunes")):
            name = f"{source}/{path.name}"
            for entry in source_entries(shared_dir, name).values():
                if _passage_like(entry):
                    author = _author_name(entry.author)
                    passage = Passage(entry.text, author, language, path.stem, name, entry.locator)
                    found.append((passage, ""))
        return found
    titles = _kindle_titles(shared_dir, source) if kind == "kindle" else {}
    for entry in source_entries(shared_dir, source).values():
        if not _passage_like(entry):
            continue
        if kind == "kindle":
            if guess_language(entry.text) != language:
                continue
            title = titles[entry.locator]
            passage = Passage(entry.text, entry.author, language, "", source, entry.locator)
            found.append((passage, title))
        else:
            topic = Path(source).name if kind == "sayings" else ""
            author = entry.author.strip() if kind == "quotes" else _author_name(entry.author)
            found.append((Passage(entry.text, author, language, topic, source, entry.locator), ""))
    return found


def _kindle_titles(shared_dir: Path, source: str) -> dict[str, str]:
    """Each entry's title line as written (`Title (Author)`)."""
    content = (shared_dir / source).read_text(encoding="utf-8")
    titles: dict[str, str] = {}
    for chunk in re.split(r"^\s*==========\s*$", content, flags=re.M):
        lines = [line.lstrip("\ufeff").strip() for line in chunk.splitlines()]
        lines = [line for line in lines if line]
        if lines:
            titles[str(len(titles))] = lines[0]
    return titles


def read_library_passages(
    shared_dir: Path = SHARED_DATA, *, seed: int
) -> list[tuple[Passage, str]]:
    rng = random.Random(seed)
    seen: set[str] = set()
    chosen: list[tuple[Passage, str]] = []
    for language, source, count, kind in SOURCES:
        pool = _read_source(shared_dir, language, source, kind)
        rng.shuffle(pool)
        taken = 0
        for passage, title in pool:
            key = " ".join(passage.text.casefold().split())
            if taken >= count or key in seen:
                continue
            seen.add(key)
            chosen.append((passage, title))
            taken += 1
    return chosen


def make_books(passages: Sequence[tuple[Passage, str]], *, seed: int) -> list[LibraryBook]:
    """Kindle passages keep their real books; quotes and sayings go to a book of their
    author's when they have AUTHOR_BOOK_MIN or more, to anthologies by topic otherwise."""
    rng = random.Random(seed)
    books: dict[str, LibraryBook] = {}
    by_author: dict[tuple[str, str], list[Passage]] = defaultdict(list)
    for passage, title in passages:
        if title:
            book = books.setdefault(title, LibraryBook(title, "", passage.language))
            book.entries.append(passage)
        else:
            by_author[(passage.language, passage.author)].append(passage)
    rest: dict[tuple[str, str], list[Passage]] = defaultdict(list)
    for (language, author), own in sorted(by_author.items()):
        if author and len(own) >= AUTHOR_BOOK_MIN:
            title = _OWN_BOOK[language].format(author=author)
            books[title] = LibraryBook(title, author, language, list(own))
        else:
            for passage in own:
                rest[(language, passage.topic or "Sayings")].append(passage)
    for (language, topic), pool in sorted(rest.items()):
        rng.shuffle(pool)
        for volume, start in enumerate(range(0, len(pool), ANTHOLOGY_SIZE), start=1):
            title = _ANTHOLOGY[language].format(topic=topic.title(), volume=volume)
            editor = f"Editor {len(books) + 1}"
            books[title] = LibraryBook(
                title, editor, language, list(pool[start : start + ANTHOLOGY_SIZE])
            )
    return list(books.values())


def build_library(shared_dir: Path = SHARED_DATA, *, seed: int = 28) -> Library:
    books = make_books(read_library_passages(shared_dir, seed=seed), seed=seed)
    add_lookups(books, share=WORD_SHARE, seed=seed)
    return Library(books)


def _versions(text: str, rng: random.Random) -> list[str]:
    """Earlier, shorter selections of a passage, then the passage: 1 to 3 re-selections."""
    words = text.split()
    cuts = sorted(rng.sample(range(3, len(words)), min(rng.randint(1, 3), len(words) - 3)))
    return [" ".join(words[:cut]) for cut in cuts] + [text]


def clippings_file(library: Library, *, seed: int = 28) -> bytes:
    """The library as a Kindle writes `My Clippings.txt` (English UI, CRLF, BOM): books
    read one after another, re-selections appended after the first selection, notes just
    after their highlight."""
    rng = random.Random(seed)
    moment = datetime(2022, 9, 1, 7, 30, 0)
    entries: list[str] = []

    def write(title: str, kind: str, where: str, text: str) -> None:
        entries.append(clipping(title, kind, where, moment, text))

    for book in library.books:
        title = title_line(book)
        for position, entry in enumerate(book.entries):
            start = 100 + 40 * position
            moment += timedelta(minutes=rng.randint(2, 400))
            if isinstance(entry, str):
                write(title, "Highlight", f"Location {start}-{start + 1}", entry)
                continue
            length = max(1, len(entry.text) // 150)
            versions = [entry.text]
            if len(entry.text.split()) >= 8 and rng.random() < RESELECT_SHARE:
                versions = _versions(entry.text, rng)
            for number, text in enumerate(versions):
                if number:
                    moment += timedelta(seconds=rng.randint(5, 90))
                end = start + max(1, round(length * len(text) / len(entry.text)))
                write(title, "Highlight", f"Location {start}-{end}", text)
            if rng.random() < NOTE_SHARE:
                note = rng.choice(_NOTES[entry.language])
                write(title, "Note", f"Location {start + length}", note)
    return clippings_bytes(entries)


# Eleven real readers' Kindle files of the shared data, the largest in English, Spanish,
# German and Brazilian Portuguese (the Japanese one left out: no judge here reads it).
# Imported as one reader's library (`evaluate_library --shared-kindle`): real books'
# passages, as the quote-heavy realistic library is not.
KINDLE_SHELF = (
    "clippings/en/abuiles-kintrospect__My Clippings.txt",
    "clippings/en/obruchez-k2md-old__My Clippings (old Kindle).txt",
    "clippings/es/gmatheu-mkc__My Clippings.txt",
    "clippings/de/dapepe-kmc__My Clippings.txt",
    "clippings/en/mattioofr-kcp__My Clippings.txt",
    "clippings/en/baniol-kmc__My Clippings.txt",
    "clippings/pt-BR/alexferreira-merge__My Clippings.txt",
    "clippings/pt-BR/arturcp-kcr__My Clippings.txt",
    "clippings/es/andersonpozo-kc__clippings.txt",
    "clippings/en/samuelbalogh-cb__my_clippings.txt",
    "clippings/en/georgboe-kindleclippings__My Clippings.txt",
)
_BOM = "\ufeff".encode()


def shared_kindle_file(
    shared_dir: Path = SHARED_DATA, files: Sequence[str] = KINDLE_SHELF
) -> bytes:
    """The files one after another, as one `My Clippings.txt`: each without its byte-order
    mark, each ending its last line."""
    parts = []
    for name in files:
        path = shared_dir / name
        if not path.is_file():
            raise LabelError(f"no {name} under {shared_dir}")
        data = path.read_bytes().removeprefix(_BOM)
        parts.append(data if data.endswith(b"\n") else data + b"\r\n")
    return _BOM + b"".join(parts)
