"""Pairs to judge blind, picked on an imported, embedded library by the app's own queries.

- candidates: a passage's nearest passage in another book (books.connections.selectors.
  nearest_in_library, what a highlight page shows when nothing connects), by kind: the
  two passages' languages, as evaluation.languages tells German, Portuguese and French too;
- controls: random pairs of passages from two books, in the same languages, mixed in so
  that a judge who calls everything related shows up.

Each passage is traced back to its place in the shared data (`SourceIndex`), so that a
verdict can be kept as a label row without its text. Django; never imported by the app.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from books.text import fold_spacing_and_bom
from evaluation.blind import BlindPair
from evaluation.labels import SHARED_DATA, LabelRow, Side, source_entries, text_sha
from evaluation.languages import guess_language

if TYPE_CHECKING:
    from accounts.models import User
    from books.models import Highlight


class SourceIndex:
    """Where a passage's text sits in the shared data: folded text -> (source, locator)."""

    def __init__(self, shared_dir: Path = SHARED_DATA) -> None:
        self.shared_dir = shared_dir
        self._places: dict[str, tuple[str, str]] = {}

    def add_source(self, source: str) -> None:
        for entry in source_entries(self.shared_dir, source).values():
            if entry.text.strip():
                self._places.setdefault(fold_spacing_and_bom(entry.text), (source, entry.locator))

    def add_sources(self, sources: Iterable[str]) -> None:
        for source in sources:
            self.add_source(source)

    def side(self, text: str) -> Side | None:
        place = self._places.get(fold_spacing_and_bom(text))
        if place is None:
            return None
        source, locator = place
        return Side(
            source, locator, text_sha(source_entries(self.shared_dir, source)[locator].text)
        )


def library_sources(shared_dir: Path = SHARED_DATA) -> list[str]:
    """The shared files the realistic library (evaluation.library) and the real Kindle
    readers measured beside it (its KINDLE_SHELF) come from."""
    from evaluation.library import KINDLE_SHELF, SOURCES

    sources = []
    for _, source, _, kind in SOURCES:
        if kind == "fortunes_es":
            folder = shared_dir / source
            sources += [f"{source}/{path.name}" for path in sorted(folder.glob("*.fortunes"))]
        else:
            sources.append(source)
    return list(dict.fromkeys([*sources, *KINDLE_SHELF]))


def traced(index: SourceIndex | None, first: Highlight, second: Highlight) -> dict[str, Any]:
    """The two sides' places in the shared data, where the index finds them."""
    meta: dict[str, Any] = {}
    if index is not None:
        for name, highlight in (("a", first), ("b", second)):
            side = index.side(highlight.text)
            if side is not None:
                meta[name] = [side.source, side.locator, side.sha]
    return meta


def language_of(highlight: Highlight) -> str:
    guessed = guess_language(highlight.text)
    if guessed == "unknown" and highlight.language in ("en", "es"):
        return str(highlight.language)
    return guessed


@dataclass(frozen=True)
class Picked:
    first: Highlight
    second: Highlight
    kind: str


def _meta(pair: Picked, index: SourceIndex | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"a_id": pair.first.pk, "b_id": pair.second.pk}
    return meta | traced(index, pair.first, pair.second)


def kind_of(first: str, second: str) -> str:
    return f"{first}-{second}" if first == second else "-".join(sorted((first, second)))


def nearest_candidates(
    reader: User,
    *,
    languages: Sequence[str],
    per_kind: int,
    seed: int,
    max_queries: int = 2000,
) -> list[Picked]:
    """For passages in `languages`, taken in a random order: the nearest passage of another
    book in the same language (kind "de-de"), and the nearest in any other language (kind
    "de-en", …), at most `per_kind` of each kind."""
    from books.connections.selectors import nearest_in_library
    from books.models import Highlight

    rng = random.Random(seed)
    passages = list(
        Highlight.objects.alive()
        .passages()
        .filter(reader=reader, embedding_status=Highlight.EmbeddingStatus.DONE)
        .select_related("book")
    )
    rng.shuffle(passages)
    counts: dict[str, int] = defaultdict(int)
    picked: list[Picked] = []
    queries = 0
    for passage in passages:
        language = language_of(passage)
        if language not in languages or queries >= max_queries:
            continue
        queries += 1
        found_same = found_other = False
        for neighbour in nearest_in_library(passage, limit=10):
            other_language = language_of(neighbour.highlight)
            same = other_language == language
            if (same and found_same) or (not same and found_other):
                continue
            kind = kind_of(language, other_language)
            found_same, found_other = found_same or same, found_other or not same
            if counts[kind] < per_kind and not neighbour.same_author:
                counts[kind] += 1
                picked.append(Picked(passage, neighbour.highlight, kind))
    return picked


def control_pairs(
    reader: User, *, kinds: dict[str, int], seed: int, tries: int = 20000
) -> list[Picked]:
    """Random pairs of passages of two books, `kinds[kind]` of each kind."""
    from books.models import Highlight

    rng = random.Random(seed)
    by_language: dict[str, list[Highlight]] = defaultdict(list)
    for passage in (
        Highlight.objects.alive()
        .passages()
        .filter(reader=reader, embedding_status=Highlight.EmbeddingStatus.DONE)
        .select_related("book")
    ):
        by_language[language_of(passage)].append(passage)
    picked: list[Picked] = []
    for kind, wanted in sorted(kinds.items()):
        first_language, _, second_language = kind.partition("-")
        firsts, seconds = by_language[first_language], by_language[second_language]
        found = 0
        for _ in range(tries):
            if found >= wanted or not firsts or not seconds:
                break
            first, second = rng.choice(firsts), rng.choice(seconds)
            if first.book_id != second.book_id:
                picked.append(Picked(first, second, kind))
                found += 1
    return picked


def blind_pairs(
    picked: Iterable[Picked], *, group: str, index: SourceIndex | None = None, **extra: Any
) -> list[BlindPair]:
    return [
        BlindPair(p.first.text, p.second.text, group, p.kind, _meta(p, index) | extra)
        for p in picked
    ]


def label_rows(
    key: Sequence[dict[str, Any]], verdicts: dict[int, str], *, origin: str
) -> list[LabelRow]:
    """A label row for each judged pair whose two sides were traced to the shared data
    (controls get `<origin>-control`); split by the pair, so a pair stays where it is."""
    from evaluation.pair_labels import split_of

    rows = []
    for item in key:
        meta = item["meta"]
        if "a" not in meta or "b" not in meta:
            continue
        a, b = Side(*meta["a"]), Side(*meta["b"])
        name = origin + ("-control" if item["group"] == "control" else "")
        pair_key = "|".join(sorted([f"{a.source}#{a.locator}", f"{b.source}#{b.locator}"]))
        rows.append(LabelRow(a, b, verdicts[int(item["number"])], name, split_of(pair_key)))
    return rows
