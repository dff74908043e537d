"""Labelled pairs of passages, kept as references into the shared data, never as texts.

A label file (`evaluation/labels/<set>.tsv`) is UTF-8, tab-separated, with one header line:

    a_source  a_locator  a_sha  b_source  b_locator  b_sha  label  origin  split

- `*_source`: a path relative to the shared data folder (`../shared/data` beside the
  repository), e.g. `eval/stsb/stsb-en-train.csv`, `eval/fortunes_de/zitate`,
  `clippings/en/xyz.txt`.
- `*_locator`: where the text is inside that file, by the file's kind (`source_kind`):
  - STS-B CSV (`*.csv`): `row:col`, the 0-based CSV record and the sentence column (0 or 1);
  - quotable (`*.json`): the quote's `_id`; the text is its `content`;
  - strfile fortunes (any other file under `eval/`): the 0-based index among the file's
    entries (chunks between `%` lines that hold any text); the text is the entry without
    its attribution line (`\\t\\t-- Author`) and what follows it, whitespace collapsed;
  - Kindle clippings (under `clippings/`): the 0-based index among the file's entries
    (chunks between `==========` lines that hold any text); the text is the body, the lines
    after the title and metadata lines.
- `*_sha`: the first 16 hex digits of sha256 of the text, NFC-normalized and stripped
  (`text_sha`), so a changed source file is detected instead of silently mislabelled.
- `label`: `same`, `related` or `unrelated`. `origin`: how the label was made.
  `split`: `train`, `calibrate` or `test`.

Pure Python, no Django: the trainer, the evaluation and the tests read it alike.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

COLUMNS = (
    "a_source",
    "a_locator",
    "a_sha",
    "b_source",
    "b_locator",
    "b_sha",
    "label",
    "origin",
    "split",
)
LABELS = ("same", "related", "unrelated")
SPLITS = ("train", "calibrate", "test")
LABELS_DIR = Path(__file__).resolve().parent / "labels"
# Beside the repository, as the tests and commands find it: never an absolute path.
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

_SHA = re.compile(r"^[0-9a-f]{16}$")
# "\t\t-- Séneca. (…)", "\t-- Henrique (hmh)", "   --- Isaac Asimov": an attribution line.
_ATTRIBUTION = re.compile(r"^\s+-{2,}\s*(.*)$")
_FORTUNE_SEPARATOR = re.compile(r"^%\s*$", re.M)
_CLIPPING_SEPARATOR = "=========="


class LabelError(Exception):
    """A label file, or a source it points at, is not what it should be."""


@dataclass(frozen=True)
class Side:
    source: str
    locator: str
    sha: str


@dataclass(frozen=True)
class LabelRow:
    a: Side
    b: Side
    label: str
    origin: str
    split: str
    # Where the row was read from, for error messages ("" for rows made in code).
    where: str = field(default="", compare=False)

    def fields(self) -> list[str]:
        """The row's values in COLUMNS order."""
        a, b = self.a, self.b
        values = [a.source, a.locator, a.sha, b.source, b.locator, b.sha]
        return [*values, self.label, self.origin, self.split]


@dataclass(frozen=True)
class LabelledTexts:
    """A label row with both of its texts read from the shared data."""

    row: LabelRow
    a_text: str
    b_text: str

    @property
    def label(self) -> str:
        return self.row.label


@dataclass(frozen=True)
class Entry:
    """One passage in a source file: its locator, its text and, where the file has one, its
    attribution as written (`Séneca. (2 a.C-65) Filósofo latino.`, a quote's author, the
    author in a Kindle title)."""

    locator: str
    text: str
    author: str = ""


def normalize(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def text_sha(text: str) -> str:
    """The first 16 hex digits of sha256 of the NFC-normalized, stripped text."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()[:16]


def _collapse(text: str) -> str:
    return " ".join(text.split())


# --- reading label files ------------------------------------------------------------------


def read_labels(path: Path) -> list[LabelRow]:
    """Every row of a label file; a bad header or row raises LabelError naming the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise LabelError(f"no label file at {path}") from None
    except UnicodeDecodeError as error:
        raise LabelError(f"{path} is not UTF-8: {error}") from None
    if not lines or lines[0].split("\t") != list(COLUMNS):
        raise LabelError(f"{path}:1: the header must be the columns {' '.join(COLUMNS)}")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        values = line.split("\t")
        if len(values) != len(COLUMNS):
            raise LabelError(f"{where}: {len(values)} fields, expected {len(COLUMNS)}")
        a_source, a_locator, a_sha, b_source, b_locator, b_sha, label, origin, split = values
        for name, sha in (("a_sha", a_sha), ("b_sha", b_sha)):
            if not _SHA.match(sha):
                raise LabelError(f"{where}: {name} {sha!r} is not 16 lowercase hex digits")
        for name, source in (("a_source", a_source), ("b_source", b_source)):
            if not source or source.startswith("/") or ".." in Path(source).parts:
                raise LabelError(f"{where}: {name} {source!r} is not a path inside the data")
        if label not in LABELS:
            raise LabelError(f"{where}: label {label!r} is not one of {', '.join(LABELS)}")
        if split not in SPLITS:
            raise LabelError(f"{where}: split {split!r} is not one of {', '.join(SPLITS)}")
        if not origin:
            raise LabelError(f"{where}: the origin is empty")
        rows.append(
            LabelRow(
                Side(a_source, a_locator, a_sha),
                Side(b_source, b_locator, b_sha),
                label,
                origin,
                split,
                where,
            )
        )
    return rows


def read_all_labels(folder: Path = LABELS_DIR) -> list[LabelRow]:
    """Every row of every `*.tsv` in the folder, in file name order."""
    return [row for path in sorted(folder.glob("*.tsv")) for row in read_labels(path)]


def write_labels(path: Path, rows: Iterable[LabelRow]) -> int:
    """Write rows under the header (LF line ends, UTF-8); returns how many."""
    lines = ["\t".join(COLUMNS)]
    for row in rows:
        values = row.fields()
        if any("\t" in value or "\n" in value for value in values):
            raise LabelError(f"a field holds a tab or a line break: {values}")
        lines.append("\t".join(values))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines) - 1


# --- resolving references -----------------------------------------------------------------


def labelled_texts(
    pairs: Sequence[LabelRow], shared_dir: Path = SHARED_DATA
) -> list[LabelledTexts]:
    """Each row with its two texts read from `shared_dir`. A missing file or entry, or a
    text whose hash is not the row's, raises LabelError naming the row."""
    resolved = []
    for row in pairs:
        texts = []
        for name, side in (("a", row.a), ("b", row.b)):
            where = row.where or "a label row"
            try:
                text = entry_text(shared_dir, side.source, side.locator)
            except LabelError as error:
                raise LabelError(f"{where}: side {name}: {error}") from None
            if text_sha(text) != side.sha:
                raise LabelError(
                    f"{where}: side {name} ({side.source} at {side.locator}) has changed: its "
                    f"text hashes to {text_sha(text)}, the label says {side.sha}"
                )
            texts.append(normalize(text))
        resolved.append(LabelledTexts(row, texts[0], texts[1]))
    return resolved


def side_for(shared_dir: Path, source: str, locator: str) -> Side:
    """A reference to one passage, with the hash of its text as it reads now."""
    return Side(source, locator, text_sha(entry_text(shared_dir, source, locator)))


def entry_text(shared_dir: Path, source: str, locator: str) -> str:
    entries = source_entries(shared_dir, source)
    entry = entries.get(locator)
    if entry is None:
        raise LabelError(f"{source} has no entry at {locator!r}")
    return entry.text


def source_kind(source: str) -> str:
    """`stsb`, `quotable`, `clippings` or `fortunes`, from the source's path."""
    parts = Path(source).parts
    if parts and parts[0] == "clippings":
        return "clippings"
    if source.endswith(".csv"):
        return "stsb"
    if source.endswith(".json"):
        return "quotable"
    return "fortunes"


def source_entries(shared_dir: Path, source: str) -> dict[str, Entry]:
    """Every passage of a source file by locator (read once per process)."""
    return _entries(shared_dir.resolve(), source)


@cache
def _entries(shared_dir: Path, source: str) -> dict[str, Entry]:
    path = shared_dir / source
    if not path.is_file():
        raise LabelError(f"no file {source} in {shared_dir}")
    try:
        content = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise LabelError(f"{source} is not UTF-8: {error}") from None
    kind = source_kind(source)
    if kind == "stsb":
        entries = stsb_entries(content)
    elif kind == "quotable":
        entries = quotable_entries(content, source)
    elif kind == "clippings":
        entries = clippings_entries(content)
    else:
        entries = fortune_entries(content)
    return {entry.locator: entry for entry in entries}


def stsb_entries(content: str) -> list[Entry]:
    """`row:0` and `row:1` for each CSV record (sentence1, sentence2, score)."""
    entries: list[Entry] = []
    for row, fields in enumerate(csv.reader(content.splitlines())):
        for column in (0, 1):
            if len(fields) > column:
                entries.append(Entry(f"{row}:{column}", fields[column]))
    return entries


def stsb_scores(content: str) -> list[float | None]:
    """Each CSV record's score (None where it is not a number)."""
    scores: list[float | None] = []
    for fields in csv.reader(content.splitlines()):
        try:
            scores.append(float(fields[2]))
        except (IndexError, ValueError):
            scores.append(None)
    return scores


def quotable_entries(content: str, source: str = "quotes.json") -> list[Entry]:
    try:
        rows = json.loads(content)
    except json.JSONDecodeError as error:
        raise LabelError(f"{source} is not JSON: {error}") from None
    return [
        Entry(str(row["_id"]), str(row["content"]), str(row.get("author", "")))
        for row in rows
        if isinstance(row, dict) and "_id" in row and "content" in row
    ]


def fortune_entries(content: str) -> list[Entry]:
    """strfile entries: chunks between `%` lines that hold any text, numbered from 0."""
    entries: list[Entry] = []
    for chunk in _FORTUNE_SEPARATOR.split(content):
        if not chunk.strip():
            continue
        text_lines, author = [], ""
        for line in chunk.splitlines():
            match = _ATTRIBUTION.match(line)
            if match:
                author = match.group(1).strip()
                break
            text_lines.append(line)
        entries.append(Entry(str(len(entries)), _collapse("\n".join(text_lines)), author))
    return entries


def clippings_entries(content: str) -> list[Entry]:
    """Kindle entries: chunks between `==========` lines that hold any text, numbered from
    0; the text is the body under the title and metadata lines, the author the title's."""
    entries: list[Entry] = []
    lines = [line.lstrip("\ufeff").rstrip("\r") for line in content.split("\n")]
    chunk: list[str] = []
    for line in [*lines, _CLIPPING_SEPARATOR]:
        if line.strip() != _CLIPPING_SEPARATOR:
            chunk.append(line)
            continue
        if any(part.strip() for part in chunk):
            while chunk and not chunk[0].strip():
                chunk.pop(0)
            title = chunk[0].strip()
            body = "\n".join(chunk[2:]).strip()
            author = title.rsplit("(", 1)[1].rstrip(")").strip() if title.endswith(")") else ""
            entries.append(Entry(str(len(entries)), body, author))
        chunk = []
    return entries
