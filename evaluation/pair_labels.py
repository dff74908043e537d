"""Label sets made from how the public data sets file their texts (not from any model).

- `stsb`: STS-B sentence pairs, English and Spanish, `same` at score ≥ 4 and `unrelated` at
  ≤ 2 (the middle left out); Spanish-English pairs by row alignment (the Spanish first
  sentence against the English second and the other way round); translations, row *i*'s
  English sentence against row *i*'s Spanish one, `same`.
- `quotable`: two quotes by different authors that share a specific tag (Friendship,
  Technology, …, not the generic Famous Quotes / Wisdom / …) are `related`; two that share
  no tag at all are `unrelated`; as many of each, at most RELATED_PAIRS_PER_TAG a tag
  and split.
- `fortunes_es`: two Spanish sayings by different authors in one subject's file (amistad,
  arte, ciencia, …) are `related`, two from different subjects' files `unrelated`; the
  files gathered by source, tone or author (refranes, famosos, nietzsche, …) are left out.

German and Portuguese sayings are filed by kind (last words, weather rules, Murphy's laws)
or not at all: a shared file says they share a joke's form, not an idea, so they get labels
only from blind judgement (evaluation.blind).

Splits: STS-B dev rows are `test`; everything else is dealt by a hash of a stable key
(an STS-B row, a quote's id, a saying's place) so that a text never sits in two splits.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluation.labels import (
    SHARED_DATA,
    LabelError,
    LabelRow,
    Side,
    fortune_entries,
    source_entries,
    stsb_scores,
    text_sha,
)

SAME_MIN_SCORE = 4.0
UNRELATED_MAX_SCORE = 2.0
# Shares of the non-test data: the rest is train.
CALIBRATE_SHARE = 0.15
TEST_SHARE = 0.15
SEED = 28
GENERIC_TAGS = frozenset(
    {"Famous Quotes", "Wisdom", "Inspirational", "Motivational", "Life", "Humorous",
     "Self Help", "Self", "Proverb", "Power Quotes"}
)  # fmt: skip
# Friendship alone has 189 quotes (17,000 pairs): uncapped, "related" would mean "about
# friendship".
RELATED_PAIRS_PER_TAG = 150
FORTUNES_SUBJECTS = (
    "amistad", "arte", "ciencia", "familia", "informatica", "libertad", "poder",
    "sentimientos", "verdad",
)  # fmt: skip
FORTUNES_PAIRS_PER_SUBJECT = 150
# Passages as a reader highlights them: not a word, not a page.
MIN_CHARS, MAX_CHARS = 20, 600
_NO_AUTHOR = {"", "anónimo", "refrán", "www.frases.com"}

STSB = "eval/stsb"
QUOTES = "eval/quotable/quotes.json"
FORTUNES_ES = "eval/fortunes_es/es"


def split_of(key: str) -> str:
    """`train`, `calibrate` or `test` for a stable key, the same on every machine."""
    digest = hashlib.sha256(f"{SEED}:{key}".encode()).digest()
    share = int.from_bytes(digest[:8], "big") / 2**64
    if share < TEST_SHARE:
        return "test"
    return "calibrate" if share < TEST_SHARE + CALIBRATE_SHARE else "train"


def _side(shared_dir: Path, source: str, locator: str) -> Side:
    entry = source_entries(shared_dir, source)[locator]
    return Side(source, locator, text_sha(entry.text))


# --- STS-B --------------------------------------------------------------------------------


def stsb_labels(shared_dir: Path = SHARED_DATA) -> dict[str, list[LabelRow]]:
    """{"stsb-en": …, "stsb-es": …, "stsb-es-en": …, "stsb-translations": …}."""
    sets: dict[str, list[LabelRow]] = defaultdict(list)
    for part in ("train", "dev"):
        en, es = f"{STSB}/stsb-en-{part}.csv", f"{STSB}/stsb-es-{part}.csv"
        en_scores = _scores(shared_dir, en)
        es_scores = _scores(shared_dir, es)
        if en_scores != es_scores:
            raise LabelError(f"{en} and {es} are not row-aligned (their scores differ)")
        for row, score in enumerate(en_scores):
            split = "test" if part == "dev" else split_of(f"stsb-{part}-{row}")
            # One column a row for translations: the other is mostly the same kind of
            # sentence, and the set stays the size of the others.
            column = row % 2
            sets["stsb-translations"].append(
                LabelRow(
                    _side(shared_dir, es, f"{row}:{column}"),
                    _side(shared_dir, en, f"{row}:{column}"),
                    "same",
                    "stsb-translation",
                    split,
                )
            )
            if score is None or UNRELATED_MAX_SCORE < score < SAME_MIN_SCORE:
                continue
            label = "same" if score >= SAME_MIN_SCORE else "unrelated"
            for name, first, second in (
                ("stsb-en", (en, 0), (en, 1)),
                ("stsb-es", (es, 0), (es, 1)),
                ("stsb-es-en", (es, 0), (en, 1)),
                ("stsb-es-en", (en, 0), (es, 1)),
            ):
                sets[name].append(
                    LabelRow(
                        _side(shared_dir, first[0], f"{row}:{first[1]}"),
                        _side(shared_dir, second[0], f"{row}:{second[1]}"),
                        label,
                        "stsb-score",
                        split,
                    )
                )
    return dict(sets)


def _scores(shared_dir: Path, source: str) -> list[float | None]:
    path = shared_dir / source
    if not path.is_file():
        raise LabelError(f"no file {source} in {shared_dir}")
    return stsb_scores(path.read_text(encoding="utf-8"))


# --- quotable -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Filed:
    """A passage and what its collection files it under."""

    source: str
    locator: str
    author: str
    subjects: frozenset[str]
    split: str


def quotable_labels(shared_dir: Path = SHARED_DATA) -> list[LabelRow]:
    path = shared_dir / QUOTES
    if not path.is_file():
        raise LabelError(f"no file {QUOTES} in {shared_dir}")
    rows = json.loads(path.read_text(encoding="utf-8"))
    seen: set[str] = set()
    quotes = []
    for row in rows:
        text = " ".join(str(row["content"]).split())
        tags = frozenset(row["tags"]) - GENERIC_TAGS
        if not tags or not MIN_CHARS <= len(text) <= MAX_CHARS or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        author = " ".join(str(row["author"]).split()).casefold()
        quotes.append(Filed(QUOTES, str(row["_id"]), author, tags, split_of(f"q-{row['_id']}")))
    return _balanced(shared_dir, quotes, "quotable-tags", RELATED_PAIRS_PER_TAG)


# --- Spanish sayings by subject -------------------------------------------------------------


def _attribution_name(attribution: str) -> str:
    """ "Marco Tulio Cicerón. (106-43 A.C.) Escritor…" -> "marco tulio cicerón"."""
    name = re.split(r"\.(?:\s|$)|\(", attribution, maxsplit=1)[0].strip().casefold()
    return "" if name in _NO_AUTHOR else name


def fortunes_es_labels(shared_dir: Path = SHARED_DATA) -> list[LabelRow]:
    sayings: list[Filed] = []
    first_place: dict[str, int] = {}
    subjects: dict[int, set[str]] = defaultdict(set)
    for subject in FORTUNES_SUBJECTS:
        source = f"{FORTUNES_ES}/{subject}.fortunes"
        path = shared_dir / source
        if not path.is_file():
            raise LabelError(f"no file {source} in {shared_dir}")
        for entry in fortune_entries(path.read_text(encoding="utf-8")):
            if not MIN_CHARS <= len(entry.text) <= MAX_CHARS:
                continue
            key = entry.text.casefold()
            if key in first_place:
                # A saying filed under two subjects is one saying with both.
                subjects[first_place[key]].add(subject)
                continue
            first_place[key] = len(sayings)
            subjects[len(sayings)].add(subject)
            author = _attribution_name(entry.author)
            split = split_of(f"es-{key}")
            sayings.append(Filed(source, entry.locator, author, frozenset(), split))
    filed = [
        Filed(s.source, s.locator, s.author, frozenset(subjects[i]), s.split)
        for i, s in enumerate(sayings)
    ]
    return _balanced(shared_dir, filed, "fortunes-subject", FORTUNES_PAIRS_PER_SUBJECT)


# --- pairs --------------------------------------------------------------------------------


def _different_authors(first: Filed, second: Filed) -> bool:
    # Two anonymous sayings are not known to be one author's.
    return not first.author or not second.author or first.author != second.author


def _key(first: Filed, second: Filed) -> tuple[str, ...]:
    return tuple(sorted([f"{first.source}#{first.locator}", f"{second.source}#{second.locator}"]))


def _pairs_within(items: Sequence[Filed]) -> Iterator[tuple[Filed, Filed]]:
    for index, first in enumerate(items):
        for second in items[index + 1 :]:
            yield first, second


def _balanced(
    shared_dir: Path, items: Sequence[Filed], origin: str, per_subject: int
) -> list[LabelRow]:
    """Related pairs (a shared subject, different authors, one split), at most
    `per_subject` a subject and split, and as many unrelated ones (no subject shared), all
    drawn with a fixed seed."""
    rng = random.Random(SEED)
    by_subject: dict[str, list[Filed]] = defaultdict(list)
    for item in items:
        for subject in item.subjects:
            by_subject[subject].append(item)
    related: dict[tuple[str, ...], tuple[Filed, Filed]] = {}
    for subject in sorted(by_subject):
        candidates: dict[str, list[tuple[Filed, Filed]]] = defaultdict(list)
        for a, b in _pairs_within(by_subject[subject]):
            if a.split == b.split and _different_authors(a, b):
                candidates[a.split].append((a, b))
        # Capped by split: a split's pairs grow as its square, so one cap for all would
        # leave calibrate and test a few pairs a subject.
        for split in sorted(candidates):
            rng.shuffle(candidates[split])
            for a, b in candidates[split][:per_subject]:
                related.setdefault(_key(a, b), (a, b))
    by_split: dict[str, list[Filed]] = defaultdict(list)
    for item in items:
        by_split[item.split].append(item)
    unrelated: dict[tuple[str, ...], tuple[Filed, Filed]] = {}
    wanted = {split: 0 for split in by_split}
    for a, _ in related.values():
        wanted[a.split] += 1
    for split in sorted(by_split):
        pool = by_split[split]
        tries = 0
        found = 0
        while found < wanted[split] and tries < 100 * wanted[split]:
            tries += 1
            a, b = rng.sample(pool, 2)
            if a.subjects & b.subjects or not _different_authors(a, b) or _key(a, b) in unrelated:
                continue
            unrelated[_key(a, b)] = (a, b)
            found += 1
    rows = []
    for label, pairs in (("related", related), ("unrelated", unrelated)):
        for a, b in pairs.values():
            rows.append(
                LabelRow(
                    _side(shared_dir, a.source, a.locator),
                    _side(shared_dir, b.source, b.locator),
                    label,
                    origin,
                    a.split,
                )
            )
    return rows


def build_label_sets(shared_dir: Path = SHARED_DATA) -> dict[str, list[LabelRow]]:
    """Every label set made from the data's own filing, by set name (the TSV's stem)."""
    sets = stsb_labels(shared_dir)
    sets["quotable-tags"] = quotable_labels(shared_dir)
    sets["fortunes-es-subjects"] = fortunes_es_labels(shared_dir)
    return sets
