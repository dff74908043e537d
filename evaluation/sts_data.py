"""Labelled sentence pairs of the public evaluation sets for `evaluate_connections`: STS-B
(English, Spanish, aligned translations), quotable's tagged quotes and the Spanish fortunes'
subjects. Pure Python, no Django; the texts are read from the shared data folder, never
copied into the repo."""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import CommandError

# STS scores run 0-5: 4 is "mostly equivalent, some unimportant details differ", 2 is "not
# equivalent, but share some details". What lies between is ambiguous and left out.
SAME_IDEA_MIN_SCORE = 4.0
DIFFERENT_MAX_SCORE = 2.0
SPLITS = ("train", "dev")
PAIR_SETS = ("en", "es", "es-en")

# quotable's tags that say how a quote is used, not what it is about: two "Famous Quotes"
# share nothing but fame.
GENERIC_TAGS = frozenset(
    {"Famous Quotes", "Wisdom", "Inspirational", "Motivational", "Life", "Humorous",
     "Self Help", "Self", "Proverb", "Power Quotes"}
)  # fmt: skip
RELATED_TARGET_PRECISION = 0.75
RELATED_GRID_STEP = 0.005
# Related pairs kept per tag: Friendship alone has 189 quotes (17,000 pairs), which would
# make "related" mean "about friendship" (and its pairs are the easy ones: with every pair,
# precision stays >= 0.75 up to 0.66).
RELATED_PAIRS_PER_TAG = 1500
RELATED_SEED = 15
# The fortunes_es files that gather sayings on one subject. The rest gather them by source
# (refranes, proverbios, pintadas, famosos), tone (deprimente, leydemurphy), one author
# (nietzsche, asimov, …) or nothing in particular (varios, sabiduria, humanos, filosofia,
# vida: as broad as quotable's generic Life and Wisdom).
FORTUNES_SUBJECTS = frozenset(
    {"amistad", "arte", "ciencia", "familia", "informatica", "libertad", "poder",
     "sentimientos", "verdad"}
)  # fmt: skip


@dataclass(frozen=True)
class StsRow:
    first: str
    second: str
    score: float


@dataclass(frozen=True)
class LabelledPair:
    first: str
    second: str
    same: bool


def _float_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def read_stsb(path: Path) -> list[StsRow]:
    """sentence1,sentence2,score rows; a header line, if any, is skipped."""
    rows = []
    with path.open(newline="", encoding="utf-8") as file:
        for fields in csv.reader(file):
            score = _float_or_none(fields[2]) if len(fields) >= 3 else None
            if score is not None:
                rows.append(StsRow(fields[0], fields[1], score))
    return rows


def read_sts_original(path: Path) -> list[StsRow]:
    """The original STS-B layout: genre, file, year, id, score, sentence1, sentence2[, …].

    Tab-separated with quotes as plain characters (sentences contain `"`), so no csv quoting.
    """
    rows = []
    with path.open(encoding="utf-8") as file:
        for line in file:
            fields = line.rstrip("\r\n").split("\t")
            score = _float_or_none(fields[4]) if len(fields) >= 7 else None
            if score is not None:
                rows.append(StsRow(fields[5].strip(), fields[6].strip(), score))
    return rows


def _labelled(rows: Iterable[tuple[str, str, float]]) -> list[LabelledPair]:
    pairs = []
    for first, second, score in rows:
        if score >= SAME_IDEA_MIN_SCORE:
            pairs.append(LabelledPair(first, second, True))
        elif score <= DIFFERENT_MAX_SCORE:
            pairs.append(LabelledPair(first, second, False))
    return pairs


def load_pair_sets(data_dir: Path) -> dict[tuple[str, str], list[LabelledPair]]:
    """(split, pair set) -> labelled pairs, for every split and language found in the folder."""
    if not data_dir.is_dir():
        raise CommandError(f"{data_dir} is not a folder. Pass --data with the STS-B folder.")
    found: dict[tuple[str, str], list[LabelledPair]] = {}
    for split in SPLITS:
        english: list[StsRow] | None = None
        if (data_dir / f"stsb-en-{split}.csv").is_file():
            english = read_stsb(data_dir / f"stsb-en-{split}.csv")
        elif (data_dir / f"sts-{split}.csv").is_file():
            english = read_sts_original(data_dir / f"sts-{split}.csv")
        spanish = None
        if (data_dir / f"stsb-es-{split}.csv").is_file():
            spanish = read_stsb(data_dir / f"stsb-es-{split}.csv")
        if english is not None:
            found[(split, "en")] = _labelled((r.first, r.second, r.score) for r in english)
        if spanish is not None:
            found[(split, "es")] = _labelled((r.first, r.second, r.score) for r in spanish)
        if english is not None and spanish is not None:
            _check_aligned(split, english, spanish)
            found[(split, "es-en")] = _labelled(
                [(s.first, e.second, e.score) for e, s in zip(english, spanish, strict=True)]
                + [(e.first, s.second, e.score) for e, s in zip(english, spanish, strict=True)]
            )
    if not found:
        raise CommandError(
            f"No STS-B files in {data_dir}: expected stsb-en-train.csv, stsb-en-dev.csv, "
            "stsb-es-train.csv, stsb-es-dev.csv (or sts-train.csv, sts-dev.csv)."
        )
    return found


def _check_aligned(split: str, english: Sequence[StsRow], spanish: Sequence[StsRow]) -> None:
    # Cross-language pairs are only meaningful if row i is the same pair in both files.
    if len(english) != len(spanish) or any(
        e.score != s.score for e, s in zip(english, spanish, strict=True)
    ):
        raise CommandError(
            f"The English and Spanish {split} files are not aligned (their rows or scores "
            "differ), so Spanish↔English pairs cannot be formed."
        )


@dataclass(frozen=True)
class TaggedQuote:
    text: str
    author: str
    tags: frozenset[str]


def read_quotable(folder: Path) -> list[TaggedQuote]:
    path = folder / "quotes.json"
    if not path.is_file():
        raise CommandError(f"No quotes.json in {folder}. Pass --quotable with the quotable folder.")
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        return [
            TaggedQuote(row["content"].strip(), row["author"].strip(), frozenset(row["tags"]))
            for row in rows
            if row.get("content", "").strip()
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise CommandError(f"{path} is not a quotable quotes file: {error}") from None


def read_fortunes_subjects(folder: Path) -> list[TaggedQuote]:
    """The sayings of fortunes_es's subject files, each tagged with its file's subject."""
    from affinity.demo_library import DemoDataMissing, read_fortunes

    try:
        sayings = read_fortunes(folder)
    except DemoDataMissing as error:
        raise CommandError(
            f"No Spanish sayings in {folder} ({error}). "
            "Pass --fortunes with the fortunes_es folder."
        ) from None
    # A saying filed under two subjects is one quote with both, never two that disagree.
    subjects: dict[tuple[str, str], set[str]] = {}
    for saying in sayings:
        if saying.topic in FORTUNES_SUBJECTS:
            subjects.setdefault((saying.text, saying.author), set()).add(saying.topic)
    return [TaggedQuote(text, author, frozenset(tags)) for (text, author), tags in subjects.items()]


def related_or_fail(quotes: Sequence[TaggedQuote], source: Path) -> list[LabelledPair]:
    pairs = related_pairs(quotes)
    if not any(p.same for p in pairs) or all(p.same for p in pairs):
        raise CommandError(
            f"{source} gives no related or no unrelated pairs: it needs quotes by different "
            "authors that share a specific subject, and quotes that share none."
        )
    return pairs


def related_pairs(quotes: Sequence[TaggedQuote], *, seed: int = RELATED_SEED) -> list[LabelledPair]:
    """Labelled pairs of quotes by different authors, each quote with a specific tag.

    Related: a shared specific tag, at most RELATED_PAIRS_PER_TAG a tag. Unrelated: no tag
    shared, drawn so that they stand to the related ones as they do among all the pairs
    (about 6 to 1 in quotable), as in a library. A quote with only generic tags has no
    known subject and is left out: counted as "unrelated" it made most of the false
    positives, which on reading were related ("Happiness is not something ready-made" ↔
    "There is only one way to happiness"). Drawn with a fixed seed.
    """
    rng = random.Random(seed)
    topical = [q for q in quotes if q.tags - GENERIC_TAGS]
    by_tag: dict[str, list[tuple[int, int]]] = {}
    unrelated_all: list[tuple[int, int]] = []
    related_count = 0
    for a, first in enumerate(topical):
        for b in range(a + 1, len(topical)):
            second = topical[b]
            if first.author == second.author:
                continue
            shared = (first.tags & second.tags) - GENERIC_TAGS
            if shared:
                related_count += 1
                for tag in shared:
                    by_tag.setdefault(tag, []).append((a, b))
            elif not first.tags & second.tags:
                unrelated_all.append((a, b))
    related: set[tuple[int, int]] = set()
    for tag in sorted(by_tag):
        pairs = by_tag[tag]
        rng.shuffle(pairs)
        related.update(pairs[:RELATED_PAIRS_PER_TAG])
    wanted = round(len(related) * len(unrelated_all) / related_count) if related_count else 0
    unrelated = rng.sample(unrelated_all, min(wanted, len(unrelated_all)))
    labelled = [LabelledPair(topical[a].text, topical[b].text, True) for a, b in sorted(related)]
    labelled += [
        LabelledPair(topical[a].text, topical[b].text, False) for a, b in sorted(unrelated)
    ]
    return labelled


def load_translations(data_dir: Path) -> dict[str, list[tuple[str, str]]]:
    """split -> distinct (Spanish, English) sentence pairs of the aligned STS-B files."""
    found: dict[str, list[tuple[str, str]]] = {}
    for split in SPLITS:
        english_path, spanish_path = (
            data_dir / f"stsb-{lang}-{split}.csv" for lang in ["en", "es"]
        )
        if not (english_path.is_file() and spanish_path.is_file()):
            continue
        english, spanish = read_stsb(english_path), read_stsb(spanish_path)
        _check_aligned(split, english, spanish)
        pairs = {
            pair
            for e, s in zip(english, spanish, strict=True)
            for pair in ((s.first, e.first), (s.second, e.second))
        }
        found[split] = sorted(pairs)
    return found
