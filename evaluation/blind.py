"""Blind judgement of pairs of passages: a shuffled file for a judge, a key kept apart.

The judge sees only numbered pairs of texts: not which were picked by the app, which are
controls (random pairs), which kind or model they come from. The key (JSON, beside the
sample) says, for each number, what the pair was; the judge's verdicts (one a line,
`<number> <same|related|unrelated>`, or `s`/`r`/`u`) are scored against it. Pure Python.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VERDICTS = {"same": "same", "s": "same", "related": "related", "r": "related"}
VERDICTS |= {"unrelated": "unrelated", "u": "unrelated"}
_VERDICT_LINE = re.compile(r"^\s*(\d+)\s*[.:)\t ]\s*([A-Za-z]+)\s*(?:#.*)?$")
# Long passages are cut for the judge as a reader's eye would: the rest rarely changes
# what they are about.
SHOWN_CHARS = 700

INSTRUCTIONS = """\
# Blind judgement. For each numbered pair, would a reader call the two passages
#   same       - one idea, said twice (a paraphrase or a translation counts);
#   related    - one theme, or one idea seen two ways;
#   unrelated  - anything else (sharing a word or a tone is not enough).
# Write one verdict a line to {verdicts}: "<number> <same|related|unrelated>" (or s/r/u).
"""


class BlindError(Exception):
    """A sample, key or verdict file is not what it should be."""


@dataclass(frozen=True)
class BlindPair:
    """A pair to judge: its two texts and what it is (kept in the key only)."""

    a_text: str
    b_text: str
    # "candidate", "control", "connection", "page", …: how the pair was picked.
    group: str
    kind: str  # e.g. "es-es", "de-en": the languages, or any grouping to report by
    meta: dict[str, Any] = field(default_factory=dict)


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS].rsplit(" ", 1)[0] + " …"


def write_sample(
    pairs: Sequence[BlindPair],
    sample_path: Path,
    *,
    seed: int,
    notes: dict[str, Any] | None = None,
) -> tuple[Path, Path]:
    """The shuffled numbered pairs (texts only) at `sample_path`, the key beside it
    (`<name>.key.json`). Each pair's sides are swapped at random too, so that which side
    was the passage the app started from says nothing. `notes`: what the scoring needs
    beside the pairs (kept in the key). Returns (key, verdicts) paths."""
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    rng.shuffle(order)
    key_path = sample_path.with_name(sample_path.stem + ".key.json")
    verdicts_path = sample_path.with_name(sample_path.stem + ".verdicts.txt")
    lines = [INSTRUCTIONS.format(verdicts=verdicts_path.name)]
    key: list[dict[str, Any]] = []
    for number, index in enumerate(order, start=1):
        pair = pairs[index]
        first, second = pair.a_text, pair.b_text
        swapped = rng.random() < 0.5
        if swapped:
            first, second = second, first
        lines += [f"[{number}]", f"A: {_shown(first)}", f"B: {_shown(second)}", ""]
        key.append(
            {
                "number": number,
                "group": pair.group,
                "kind": pair.kind,
                "swapped": swapped,
                "meta": pair.meta,
            }
        )
    sample_path.parent.mkdir(parents=True, exist_ok=True)
    sample_path.write_text("\n".join(lines), encoding="utf-8")
    kept = {"pairs": key, "notes": notes or {}}
    key_path.write_text(json.dumps(kept, ensure_ascii=False, indent=1), encoding="utf-8")
    return key_path, verdicts_path


def read_key(path: Path) -> list[dict[str, Any]]:
    """The key's pairs: number, group, kind, whether the sides were swapped, meta."""
    pairs: list[dict[str, Any]] = _read_key(path)["pairs"]
    return pairs


def read_key_notes(path: Path) -> dict[str, Any]:
    notes: dict[str, Any] = _read_key(path)["notes"]
    return notes


def _read_key(path: Path) -> dict[str, Any]:
    try:
        key = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BlindError(f"no key at {path}: write the sample first") from None
    except json.JSONDecodeError as error:
        raise BlindError(f"{path} is not a sample's key: {error}") from None
    pairs = key.get("pairs") if isinstance(key, dict) else None
    if not isinstance(pairs, list) or not all(isinstance(item, dict) for item in pairs):
        raise BlindError(f"{path} is not a sample's key")
    return {"pairs": pairs, "notes": key.get("notes") or {}}


def read_verdicts(path: Path, *, expected: int) -> dict[int, str]:
    """number -> verdict for numbers 1..expected, every one judged exactly once; anything
    else raises BlindError naming the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise BlindError(f"no verdicts at {path}") from None
    verdicts: dict[int, str] = {}
    for line_number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _VERDICT_LINE.match(line)
        word = match.group(2).lower() if match else ""
        if match is None or word not in VERDICTS:
            raise BlindError(
                f"{path}:{line_number}: {line.strip()!r} is not '<number> <same|related|unrelated>'"
            )
        number = int(match.group(1))
        if not 1 <= number <= expected:
            raise BlindError(f"{path}:{line_number}: no pair {number} (1-{expected})")
        if number in verdicts:
            raise BlindError(f"{path}:{line_number}: pair {number} is judged twice")
        verdicts[number] = VERDICTS[word]
    missing = sorted(set(range(1, expected + 1)) - set(verdicts))
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
        raise BlindError(f"{path}: {len(missing)} pairs have no verdict: {shown}")
    return verdicts


@dataclass(frozen=True)
class Tally:
    same: int = 0
    related: int = 0
    unrelated: int = 0

    @property
    def total(self) -> int:
        return self.same + self.related + self.unrelated

    @property
    def related_share(self) -> float:
        """Judged related or same: what a connection promises at least."""
        return (self.same + self.related) / self.total if self.total else 0.0

    def __str__(self) -> str:
        return (
            f"{self.same + self.related}/{self.total} related ({self.related_share:.0%}; "
            f"{self.same} same, {self.related} related, {self.unrelated} unrelated)"
        )


def tally(verdicts: Iterable[str]) -> Tally:
    counts = Counter(verdicts)
    return Tally(counts["same"], counts["related"], counts["unrelated"])


def scored(key: Sequence[dict[str, Any]], verdicts: dict[int, str]) -> dict[tuple[str, str], Tally]:
    """(group, kind) -> the verdicts' tally; kind "all" sums a group."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for item in key:
        verdict = verdicts[int(item["number"])]
        found[(item["group"], item["kind"])].append(verdict)
        found[(item["group"], "all")].append(verdict)
    return {group: tally(values) for group, values in sorted(found.items())}
