"""Regions of the map and the words that name them. Pure Python and numpy, no Django.

Regions are k-means clusters of the map's positions (what the reader sees as a clump is
what gets a name). Each is named by its most characteristic words, c-TF-IDF: a word's
frequency in the region, weighted by how rare it is across regions, so "habit · cue ·
reward" names a region rather than "the · and · of" naming every one. Stop words of the
languages readers highlight in are dropped first (books.library_map.stop_words), and a
word names one region only: "life" over four regions tells them apart no better than none.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from books.library_map.stop_words import language_by_filler, stop_words_for
from books.text import fold

# A region needs this many highlights before a name means anything.
MIN_REGION = 5
MAX_REGIONS = 24
MIN_REGIONS_LARGE = 8
LABEL_WORDS = 3
_WORD = re.compile(r"[^\W\d_]{3,}")


def words_of(text: str) -> list[str]:
    """The content words of a text, folded: the filler of the text's own language (and the
    unambiguous filler of every other) dropped."""
    folded = _WORD.findall(fold(text))
    stop = stop_words_for(language_by_filler(folded))
    return [word for word in folded if word not in stop]


def regions(positions: npt.NDArray[np.float32], *, seed: int = 0) -> npt.NDArray[np.int64]:
    """A region number per point: k-means on the map, k chosen by the silhouette.

    A large library gets at least MIN_REGIONS_LARGE regions: the silhouette alone favours
    two or three huge halves, which name nothing a reader can use.
    """
    n = len(positions)
    most = min(MAX_REGIONS, n // MIN_REGION)
    if most < 2:
        return np.zeros(n, dtype=np.int64)
    fewest = 2 if n < 1000 else min(most, MIN_REGIONS_LARGE)
    rng = np.random.default_rng(seed)
    sample = rng.choice(n, min(n, 1000), replace=False)
    best, best_score = np.zeros(n, dtype=np.int64), -2.0
    for k in range(fewest, most + 1):
        assignment = _kmeans(positions, k, rng)
        score = _silhouette(positions[sample], assignment[sample])
        if score > best_score:
            best, best_score = assignment, score
    return best


def _kmeans(positions: npt.NDArray[np.float32], k: int, rng: np.random.Generator) -> Any:
    n = len(positions)
    # k-means++ seeding, then Lloyd's iterations.
    centres = [positions[rng.integers(n)]]
    for _ in range(1, k):
        d2 = np.min([((positions - c) ** 2).sum(axis=1) for c in centres], axis=0)
        total = d2.sum()
        centres.append(positions[rng.choice(n, p=d2 / total) if total > 0 else rng.integers(n)])
    centre_array = np.array(centres, dtype=np.float64)
    assignment = np.full(n, -1, dtype=np.int64)
    for _ in range(60):
        d2 = ((positions[:, None, :] - centre_array[None, :, :]) ** 2).sum(axis=2)
        new_assignment = d2.argmin(axis=1)
        if np.array_equal(new_assignment, assignment):
            break
        assignment = new_assignment
        for region in range(k):
            members = positions[assignment == region]
            if len(members):
                centre_array[region] = members.mean(axis=0)
    return assignment


def _silhouette(points: npt.NDArray[np.float32], assignment: Any) -> float:
    """Mean silhouette: how much closer each point is to its own region than the next."""
    labels = np.unique(assignment)
    if len(labels) < 2:
        return -1.0
    distances = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2))
    by_region = np.stack([distances[:, assignment == label].mean(axis=1) for label in labels])
    own_index = np.searchsorted(labels, assignment)
    sizes = np.array([(assignment == label).sum() for label in labels])
    own = by_region[own_index, np.arange(len(points))]
    # The mean distance to one's own region counts oneself (a zero): undo that.
    own = own * sizes[own_index] / np.maximum(sizes[own_index] - 1, 1)
    by_region[own_index, np.arange(len(points))] = np.inf
    nearest_other = by_region.min(axis=0)
    score = (nearest_other - own) / np.maximum(np.maximum(own, nearest_other), 1e-12)
    return float(np.where(sizes[own_index] > 1, score, 0).mean())


@dataclass(frozen=True)
class Region:
    x: float
    y: float
    size: int
    words: tuple[str, ...]

    @property
    def label(self) -> str:
        return " · ".join(self.words)


def _plural_folded(word: str) -> str:
    # "gene · genes" names a region once: a word and its plural in -s count as one.
    return word[:-1] if word.endswith("s") and len(word) > 4 else word


def name_regions(
    texts: list[str], positions: npt.NDArray[np.float32], assignment: npt.NDArray[np.int64]
) -> list[Region]:
    """Each region of at least MIN_REGION highlights, named by its c-TF-IDF words and placed
    at its median point. A word goes to the region it names best, never to two."""
    counts: dict[int, Counter[str]] = {}
    forms: dict[str, Counter[str]] = {}
    for text, region in zip(texts, assignment.tolist(), strict=True):
        counts.setdefault(region, Counter()).update(words_of(text))
        for form in _WORD.findall(text.lower()):
            forms.setdefault(fold(form), Counter())[form] += 1
    everywhere: Counter[str] = Counter()
    for counter in counts.values():
        everywhere.update(counter)
    average_words = sum(everywhere.values()) / max(1, len(counts))
    sized = {
        region: positions[assignment == region]
        for region in counts
        if (assignment == region).sum() >= MIN_REGION
    }
    candidates: list[tuple[float, int, str]] = []
    for region in sized:
        counter = counts[region]
        total = sum(counter.values()) or 1
        candidates.extend(
            ((count / total) * math.log(1 + average_words / everywhere[word]), region, word)
            for word, count in counter.items()
            # A word once in a region says nothing about it.
            if count >= 2
        )
    chosen: dict[int, list[str]] = {region: [] for region in sized}
    taken: set[str] = set()
    for _, region, word in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        if _plural_folded(word) not in taken and len(chosen[region]) < LABEL_WORDS:
            chosen[region].append(word)
            taken.add(_plural_folded(word))
    named = []
    for region, members in sorted(sized.items()):
        if not chosen[region]:
            continue
        # Shown as the reader's texts spell it most often ("canción", not "cancion").
        words = tuple(forms[word].most_common(1)[0][0] if word in forms else word
                      for word in chosen[region])  # fmt: skip
        x, y = np.median(members, axis=0).tolist()
        named.append(Region(x=float(x), y=float(y), size=len(members), words=words))
    return named
