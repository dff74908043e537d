"""A synthetic library of many readers, for the kindred-readers evaluation, demos and benchmarks.

Pure Python, no Django: quotes in (read at run time from the evaluation data folder, never
copied into the repository), one Kindle `My Clippings.txt` per reader out.

- **Books**: the English quotes of `quotable/` grouped by tag, the Spanish sayings of
  `fortunes_es/` by topic file; within a topic, an author with enough quotes gets a book
  of their own, the rest go into anthologies.
- **Readers**: each has a seeded *taste*, a few topics with weights, and highlights a
  handful of quotes in each of several books of those topics.
- **Twin readers**: two readers with the same taste and not one book in common. They read
  alike without sharing a single passage, so only meaning can bring them together.
- **Opposite readers**: a reader and another whose topics are all different (and in the
  other language).
- **Bestsellers**: a few books most readers read, whose popular passages many of them
  highlight, as on a Kindle. They are what makes everyone look alike if nothing is done.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from evaluation.kindle_books import clipping, clippings_bytes

# A topic needs this many quotes to fill books for several readers.
MIN_TOPIC_QUOTES = 30
# An author with this many quotes on one topic gets a book of their own.
AUTHOR_BOOK_MIN = 6
ANTHOLOGY_SIZE = 15
# Quotes a reader highlights in one book.
PER_BOOK = (3, 8)
# Highlights in one reader's library, bestsellers aside.
LIBRARY_SIZE = (120, 240)
TASTE_TOPICS = 3
TWIN_PAIRS = 10
OPPOSITE_PAIRS = 5
BESTSELLERS = 4
BESTSELLER_PASSAGES = 10
# The chance that a reader reads a given bestseller, and how many of its popular
# passages they highlight.
BESTSELLER_READ = 0.5
BESTSELLER_HIGHLIGHTS = (4, 8)
# quotable's own tag for "well known": it says nothing about a quote's subject.
META_TAGS = {"Famous Quotes"}

USERNAME_PREFIX = "demo-"
_TWIN = re.compile(r"^demo-twin(\d+)-([ab])$")
_OPPOSITE = re.compile(r"^demo-opposite(\d+)-([ab])$")

SPANISH_TOPICS = {
    "amistad": "la amistad",
    "arte": "el arte",
    "asimov": "Asimov",
    "ciencia": "la ciencia",
    "deprimente": "lo deprimente",
    "familia": "la familia",
    "famosos": "los famosos",
    "filosofia": "la filosofía",
    "humanos": "los humanos",
    "informatica": "la informática",
    "lao-tse": "Lao-Tse",
    "leydemurphy": "la ley de Murphy",
    "libertad": "la libertad",
    "nietzsche": "Nietzsche",
    "pintadas": "las pintadas",
    "poder": "el poder",
    "proverbios": "los proverbios",
    "refranes": "los refranes",
    "sabiduria": "la sabiduría",
    "schopenhauer": "Schopenhauer",
    "sentimientos": "los sentimientos",
    "varios": "asuntos varios",
    "verdad": "la verdad",
    "vida": "la vida",
}
_EN_TITLES = ("On {topic}", "Notes on {topic}", "The Art of {topic}", "{topic}: Essays")
_ES_TITLES = ("Cuaderno sobre {topic}", "Breviario de {topic}", "Sobre {topic}")
_FIRST_NAMES = (
    "Ada", "Ana", "Bea", "Carmen", "Dara", "Elif", "Farah", "Greta", "Hana", "Ines", "Jun", "Kofi",
    "Lars", "Mei", "Nadia", "Omar", "Paz", "Quinn", "Rosa", "Sami", "Tomas", "Uma", "Vera", "Wim",
    "Xochitl", "Yara", "Zeno", "Alba", "Bruno", "Cyra", "Duarte", "Edda", "Femi", "Gael", "Hugo",
    "Ilse",
    "Joao", "Kira", "Luca", "Marta", "Nico", "Olga", "Pablo", "Rhea", "Saul", "Tess", "Ugo", "Vito",
)  # fmt: skip


class DemoDataMissing(Exception):
    """The evaluation data folder is not where it was looked for."""


@dataclass(frozen=True)
class Quote:
    text: str
    author: str
    topic: str
    language: str  # "en", "es", … (books.language's codes where it has them)


@dataclass(frozen=True)
class DemoBook:
    title: str
    author: str
    topic: str
    language: str
    quotes: tuple[Quote, ...]


@dataclass
class DemoReader:
    username: str
    display_name: str
    taste: dict[str, float]
    # (book, indexes of the quotes highlighted in it)
    books: list[tuple[DemoBook, list[int]]] = field(default_factory=list)

    @property
    def highlight_count(self) -> int:
        return sum(len(picked) for _, picked in self.books)


@dataclass(frozen=True)
class DemoLibrary:
    readers: list[DemoReader]
    topics: dict[str, str]  # topic -> language
    books: int


# --- reading the data ------------------------------------------------------------------------


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def read_quotable(folder: Path) -> list[Quote]:
    """English quotes, each under its most specific tag (the rarest one it carries)."""
    path = folder / "quotes.json"
    if not path.is_file():
        raise DemoDataMissing(f"quotable's quotes.json is not at {path}")
    rows = json.loads(path.read_text(encoding="utf-8"))
    tag_sizes = Counter(tag for row in rows for tag in row["tags"] if tag not in META_TAGS)
    quotes = []
    for row in rows:
        tags = [tag for tag in row["tags"] if tag not in META_TAGS]
        text = _clean(row["content"])
        if not tags or not 20 <= len(text) <= 600:
            continue
        topic = min(tags, key=lambda tag: (tag_sizes[tag], tag))
        quotes.append(Quote(text, _clean(row["author"]) or "Anonymous", topic, "en"))
    return quotes


# "\t\t-- Séneca. (2 a.C-65) Filósofo latino." and, in asimov.fortunes, "   --- Isaac Asimov".
_ATTRIBUTION = re.compile(r"^\s+-{2,}\s*(.*)$")
# Attributions that name no author.
_NO_AUTHOR = {"www.frases.com", "anónimo", "refrán"}


def read_fortunes(folder: Path, *, language: str = "es") -> list[Quote]:
    """Sayings in strfile format: entries split by `%`, `\\t\\t-- Author. (…)` lines; one
    topic per file (`*.fortunes`, else every file but the licence)."""
    files = sorted(folder.glob("*.fortunes")) or sorted(folder.glob("*/*.fortunes"))
    if not files and folder.is_dir():
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.name != "copyright.debian")
    if not files:
        raise DemoDataMissing(f"no fortunes files under {folder}")
    quotes = []
    for path in files:
        topic = path.stem if language == "es" else f"{path.stem} ({language})"
        entries = re.split(r"^%\s*$", path.read_text(encoding="utf-8"), flags=re.M)
        for entry in entries:
            text_lines, author = [], ""
            for line in entry.splitlines():
                match = _ATTRIBUTION.match(line)
                if match:
                    # "Marco Tulio Cicerón. (106-43 A.C.) Escritor…": the name ends at the
                    # first full stop followed by a space or the line's end.
                    author = re.split(r"\.(?:\s|$)|\(", match.group(1), maxsplit=1)[0].strip()
                    break
                text_lines.append(line)
            text = _clean(" ".join(text_lines))
            if author.casefold() in _NO_AUTHOR:
                author = ""
            if 20 <= len(text) <= 600:
                quotes.append(Quote(text, author or "Anónimo", topic, language))
    return quotes


def read_quotes(data_dir: Path) -> list[Quote]:
    """Both collections, from the evaluation data folder (`quotable/` and `fortunes_es/`)."""
    if not data_dir.is_dir():
        raise DemoDataMissing(f"the evaluation data folder {data_dir} does not exist")
    return read_quotable(data_dir / "quotable") + read_fortunes(data_dir / "fortunes_es")


# --- books -----------------------------------------------------------------------------------


def _topic_name(topic: str, language: str) -> str:
    return SPANISH_TOPICS.get(topic, topic) if language == "es" else topic


def make_books(quotes: Sequence[Quote], rng: random.Random) -> dict[str, list[DemoBook]]:
    """Books by topic: one per prolific author, anthologies of the rest."""
    by_topic: dict[str, list[Quote]] = defaultdict(list)
    seen: set[str] = set()
    for quote in quotes:
        key = quote.text.casefold()
        if key not in seen:  # one passage, one book
            seen.add(key)
            by_topic[quote.topic].append(quote)
    books: dict[str, list[DemoBook]] = {}
    for topic, pool in sorted(by_topic.items()):
        if len(pool) < MIN_TOPIC_QUOTES:
            continue
        language = pool[0].language
        name = _topic_name(topic, language)
        titles = _ES_TITLES if language == "es" else _EN_TITLES
        by_author: dict[str, list[Quote]] = defaultdict(list)
        for quote in pool:
            by_author[quote.author].append(quote)
        topic_books: list[DemoBook] = []
        rest: list[Quote] = []
        for author, own in sorted(by_author.items()):
            if len(own) >= AUTHOR_BOOK_MIN and author not in ("Anónimo", "Anonymous"):
                title = titles[len(topic_books) % len(titles)].format(topic=name)
                topic_books.append(DemoBook(title, author, topic, language, tuple(own)))
            else:
                rest.extend(own)
        rng.shuffle(rest)
        various = "Varios" if language == "es" else "Various"
        for volume, start in enumerate(range(0, len(rest), ANTHOLOGY_SIZE), start=1):
            chunk = tuple(rest[start : start + ANTHOLOGY_SIZE])
            if len(chunk) >= PER_BOOK[0]:
                anthology = "Antología de" if language == "es" else "An Anthology of"
                title = f"{anthology} {name}, vol. {volume}"
                topic_books.append(DemoBook(title, various, topic, language, chunk))
        books[topic] = topic_books
    return books


def _bestsellers(books: dict[str, list[DemoBook]], rng: random.Random) -> list[DemoBook]:
    """Books outside every taste, read by most readers: their passages become famous."""
    titles = (
        ("The Quiet Habit", "Marlowe, Iris"),
        ("Everything Is a Story", "Okoye, Daniel"),
        ("The Long Afternoon", "Sand, Vivian"),
        ("Small Gods of the Kitchen", "Ferreira, Lu"),
        ("A Map Without Edges", "Holt, Brennan"),
        ("What the River Knows", "Achebe, Nora"),
    )
    pool = [quote for shelf in books.values() for book in shelf for quote in book.quotes]
    picked = rng.sample(pool, BESTSELLERS * BESTSELLER_PASSAGES)
    bestsellers = []
    for index in range(BESTSELLERS):
        title, author = titles[index % len(titles)]
        passages = tuple(picked[index * BESTSELLER_PASSAGES : (index + 1) * BESTSELLER_PASSAGES])
        bestsellers.append(DemoBook(title, author, "bestseller", "en", passages))
    return bestsellers


# --- readers ---------------------------------------------------------------------------------


def _taste(
    topics: dict[str, str], rng: random.Random, *, avoid: dict[str, float] | None = None
) -> dict[str, float]:
    """A few topics with weights. With `avoid`, only topics it lacks, in the language it
    reads least: an opposite taste."""
    pool = sorted(topics)
    if avoid:
        weight_by_language = {lang: 0.0 for lang in topics.values()}
        for topic, weight in avoid.items():
            weight_by_language[topics[topic]] += weight
        language = min(sorted(weight_by_language), key=weight_by_language.__getitem__)
        unread = [t for t in pool if t not in avoid]
        pool = [t for t in unread if topics[t] == language] or unread
    chosen = rng.sample(pool, min(TASTE_TOPICS, len(pool)))
    weights = [rng.gammavariate(2.0, 1.0) for _ in chosen]
    total = sum(weights)
    return {topic: weight / total for topic, weight in zip(chosen, weights, strict=True)}


def _fill(
    reader: DemoReader, shelves: dict[str, list[DemoBook]], rng: random.Random, size: int
) -> None:
    """About `size` highlights by taste: for each topic, quotes from books on its shelf."""
    for topic, weight in reader.taste.items():
        wanted = max(PER_BOOK[0], round(size * weight))
        candidates = list(shelves[topic])
        rng.shuffle(candidates)
        for book in candidates:
            if wanted <= 0:
                break
            take = min(rng.randint(*PER_BOOK), len(book.quotes), wanted)
            reader.books.append((book, sorted(rng.sample(range(len(book.quotes)), take))))
            wanted -= take


def _split(books: Sequence[DemoBook], rng: random.Random) -> tuple[list[DemoBook], list[DemoBook]]:
    """Two disjoint halves, dealt like cards, so each twin gets as much of a topic."""
    shuffled = list(books)
    rng.shuffle(shuffled)
    return shuffled[0::2], shuffled[1::2]


def _read_bestsellers(
    reader: DemoReader, bestsellers: Sequence[DemoBook], rng: random.Random
) -> None:
    for book in bestsellers:
        if rng.random() >= BESTSELLER_READ:
            continue
        count = rng.randint(*BESTSELLER_HIGHLIGHTS)
        # Popularity falls with rank, as on a Kindle: the first passage is everyone's.
        weights = [1.0 / (rank + 1) for rank in range(len(book.quotes))]
        picked: set[int] = set()
        while len(picked) < count:
            picked.add(rng.choices(range(len(book.quotes)), weights)[0])
        reader.books.append((book, sorted(picked)))


def make_library(
    quotes: Sequence[Quote],
    *,
    readers: int,
    seed: int = 7,
    twin_pairs: int = TWIN_PAIRS,
    opposite_pairs: int = OPPOSITE_PAIRS,
) -> DemoLibrary:
    """`readers` readers: twin pairs, opposite pairs, and the rest of random taste.
    Deterministic for a seed."""
    planted = 2 * (twin_pairs + opposite_pairs)
    if readers < planted:
        raise ValueError(f"at least {planted} readers are needed for the planted pairs")
    rng = random.Random(seed)
    books = make_books(quotes, rng)
    bestsellers = _bestsellers(books, rng)
    topics = {topic: topic_books[0].language for topic, topic_books in books.items()}
    names = _display_names(readers, rng)
    library: list[DemoReader] = []

    def new(username: str, taste: dict[str, float]) -> DemoReader:
        reader = DemoReader(USERNAME_PREFIX + username, names[len(library)], taste)
        library.append(reader)
        return reader

    for pair in range(1, twin_pairs + 1):
        taste = _taste(topics, rng)
        first = new(f"twin{pair:02d}-a", taste)
        second = new(f"twin{pair:02d}-b", dict(taste))
        # Same taste, not one book in common, bestsellers included.
        halves = {topic: _split(books[topic], rng) for topic in taste}
        size = rng.randint(*LIBRARY_SIZE)
        _fill(first, {topic: half[0] for topic, half in halves.items()}, rng, size)
        _fill(second, {topic: half[1] for topic, half in halves.items()}, rng, size)
        best_first, best_second = _split(bestsellers, rng)
        _read_bestsellers(first, best_first, rng)
        _read_bestsellers(second, best_second, rng)
    for pair in range(1, opposite_pairs + 1):
        anchor = new(f"opposite{pair:02d}-a", _taste(topics, rng))
        _fill(anchor, books, rng, rng.randint(*LIBRARY_SIZE))
        opposite = new(f"opposite{pair:02d}-b", _taste(topics, rng, avoid=anchor.taste))
        _fill(opposite, books, rng, rng.randint(*LIBRARY_SIZE))
        # Nothing in common at all, bestsellers included.
        best_anchor, best_opposite = _split(bestsellers, rng)
        _read_bestsellers(anchor, best_anchor, rng)
        _read_bestsellers(opposite, best_opposite, rng)
    for number in range(len(library) + 1, readers + 1):
        reader = new(f"reader{number:03d}", _taste(topics, rng))
        _fill(reader, books, rng, rng.randint(*LIBRARY_SIZE))
        _read_bestsellers(reader, bestsellers, rng)
    total_books = sum(len(b) for b in books.values()) + len(bestsellers)
    return DemoLibrary(library, topics, total_books)


def _display_names(count: int, rng: random.Random) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    letters = "ABCDEFGHIJKLMNOPRSTVWZ"
    while len(names) < count:
        name = f"{rng.choice(_FIRST_NAMES)} {rng.choice(letters)}."
        if name in seen:
            name = f"{name} {len(names) + 1}"
        seen.add(name)
        names.append(name)
    return names


# --- the planted pairs, read back from usernames ---------------------------------------------


def planted_pairs(usernames: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """{"twins": [(a, b), …], "opposites": [(a, b), …]} among the given usernames."""
    sides: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for username in usernames:
        for kind, pattern in (("twins", _TWIN), ("opposites", _OPPOSITE)):
            match = pattern.match(username)
            if match:
                sides[(kind, match.group(1))][match.group(2)] = username
    pairs: dict[str, list[tuple[str, str]]] = {"twins": [], "opposites": []}
    for (kind, _), pair in sorted(sides.items()):
        if set(pair) == {"a", "b"}:
            pairs[kind].append((pair["a"], pair["b"]))
    return pairs


# --- the clippings file ----------------------------------------------------------------------


def clippings_file(reader: DemoReader, rng: random.Random) -> bytes:
    """The reader's highlights as a Kindle would write them (English UI, CRLF, BOM)."""
    moment = datetime(2024, 1, 1, 8, 0, 0) + timedelta(minutes=rng.randint(0, 60 * 24 * 90))
    entries = []
    for book, picked in reader.books:
        for index in picked:
            # A passage sits at the same place in every reader's copy of the book.
            start = 100 + 20 * index
            moment += timedelta(minutes=rng.randint(3, 600))
            where = f"Location {start}-{start + 3}"
            text = book.quotes[index].text
            entries.append(
                clipping(f"{book.title} ({book.author})", "Highlight", where, moment, text)
            )
    return clippings_bytes(entries)
