"""Does one import keep every highlight, and does a second one change nothing? Real files.

`python -m bench coverage` imports every clippings file of ../shared/data/clippings/ into an
empty library and measures, per file:
- coverage: the share of highlight entries whose text (whitespace, case and byte-order marks
  folded) is found inside a stored highlight of its book — 100 % means no word was lost;
- what a second import of the same file does (it must add, merge and change nothing);
- what importing the first half of the file and then the whole does (the same).

It then does the same for "the library": every corpus file rewritten as one device file,
plus versions of its highlights as a reader makes them (shortened, re-selected earlier and
later, split at a page turn, duplicated), over 5,000 entries of real text.

`python -m bench.bench_import_coverage FILE …` measures the given files instead.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.db import bench_database, setup_django
from bench.paths import EVAL_DIR

# Beside the evaluation data: ../shared/data/clippings.
CORPUS = EVAL_DIR.parent / "clippings"
_SOME_DAY = datetime(2020, 1, 1, tzinfo=UTC)
_SEPARATOR = re.compile(rb"^(?:\xef\xbb\xbf)?==========\s*$", flags=re.MULTILINE)


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*/*.txt"))


def first_entries(data: bytes, share: float) -> bytes:
    """The file as the Kindle had it earlier: its first entries, cut after a separator."""
    ends = [match.end() for match in _SEPARATOR.finditer(data)]
    if len(ends) < 2:
        return data
    return data[: ends[max(0, int(len(ends) * share) - 1)]]


def run(paths: list[Path] | None = None) -> dict[str, Any]:
    setup_django()
    from books.importing.clippings import parse_clippings
    from exogram.celery import app

    app.conf.update(broker_url="memory://")
    named = paths is not None
    files = {str(path): path.read_bytes() for path in (paths or corpus_files())}
    if not named:
        library = realistic_library([parse_clippings(data) for data in files.values()])
        files["library (all files + versions a reader makes)"] = library
    report: dict[str, Any] = {"files": {}}
    with bench_database("exogram_bench_coverage"):
        for number, (name, data) in enumerate(files.items()):
            figures = measure(data, number)
            label = name if named else name.removeprefix(str(CORPUS) + "/")
            report["files"][label] = figures
            print(label, json.dumps(figures), flush=True)
    rows = list(report["files"].values())
    report["highlight_entries"] = sum(row["highlight_entries"] for row in rows)
    report["entries_lost"] = sum(row["entries_lost"] for row in rows)
    report["files_not_at_fixpoint"] = [
        name
        for name, row in report["files"].items()
        if row["second_import"] != {"new": 0, "merged": 0, "rows_changed": 0}
        or row["prefix_then_whole_again"] != {"new": 0, "merged": 0, "rows_changed": 0}
        or row["prefix_then_whole_lost"]
    ]
    print(json.dumps({k: v for k, v in report.items() if k != "files"}))
    return report


def measure(data: bytes, number: int) -> dict[str, Any]:
    from accounts.models import User
    from books.importing.services import ImportRejected, clippings_import
    from books.models import Highlight

    reader = User.objects.create_user(f"coverage-{number}")
    started = time.perf_counter()
    first = clippings_import(reader=reader, data=data, file_name="clippings.txt")
    seconds = time.perf_counter() - started
    entries, lost = lost_entries(reader, data)
    again = _second_import(reader, data)
    # The Kindle only appends: a copy made earlier, then the whole file.
    later = User.objects.create_user(f"coverage-{number}-prefix")
    # The first half of a tiny file can hold no entry at all.
    with suppress(ImportRejected):
        clippings_import(reader=later, data=first_entries(data, 0.5), file_name="half.txt")
    clippings_import(reader=later, data=data, file_name="whole.txt")
    _, lost_later = lost_entries(later, data)
    return {
        "highlight_entries": entries,
        "highlights_stored": Highlight.objects.filter(reader=reader, kind="highlight").count(),
        "merged": first.counts["extended_merged"],
        "duplicates": first.counts["duplicates_skipped"],
        "entries_lost": lost,
        "coverage_percent": round(100 * (entries - lost) / entries, 3) if entries else 100.0,
        "import_seconds": round(seconds, 3),
        "second_import": again,
        "prefix_then_whole_lost": lost_later,
        "prefix_then_whole_again": _second_import(later, data),
    }


def _second_import(reader: Any, data: bytes) -> dict[str, int]:
    from books.importing.services import clippings_import
    from books.models import Highlight

    before = dict(Highlight.objects.filter(reader=reader).values_list("pk", "updated"))
    again = clippings_import(reader=reader, data=data, file_name="again.txt")
    after = dict(Highlight.objects.filter(reader=reader).values_list("pk", "updated"))
    return {
        "new": again.counts["new_highlights"],
        "merged": again.counts["extended_merged"],
        "rows_changed": sum(1 for pk, updated in after.items() if before.get(pk) != updated),
    }


def lost_entries(reader: Any, data: bytes) -> tuple[int, int]:
    """(highlight entries with text, those whose folded text no stored highlight holds)."""
    from books.importing.clippings import parse_clippings
    from books.importing.identity import book_key
    from books.importing.reader_books import clippings_orient, clippings_unify_authors
    from books.models import Book, Highlight

    books = {book.key: book.pk for book in Book.objects.filter(reader=reader)}
    texts: dict[int, list[str]] = {}
    for book_id, text in (
        Highlight.objects.alive().filter(reader=reader).values_list("book_id", "text")
    ):
        texts.setdefault(book_id, []).append(_fold(text))
    entries = lost = 0
    clippings = parse_clippings(data).clippings
    # As the import reads them: dashed title lines turned round by the library's authors, one
    # book's authors spelt one way.
    clippings_orient(reader=reader, clippings=clippings)
    clippings_unify_authors(reader=reader, clippings=clippings)
    for clipping in clippings:
        folded = _fold(clipping.text)
        if clipping.kind != "highlight" or clipping.truncated or not folded:
            continue
        entries += 1
        key = book_key(clipping.title, clipping.author)
        if not any(folded in text for text in texts.get(books.get(key, -1), [])):
            lost += 1
    return entries, lost


def _fold(text: str) -> str:
    # Written here again, not imported: the measure must not share the importer's mistakes.
    return " ".join(text.replace("\ufeff", "").split()).casefold()


def realistic_library(results: list[Any], *, seed: int = 13) -> bytes:
    """Every corpus entry as one device file, plus versions of its highlights."""
    rng = random.Random(seed)
    entries: list[tuple[Any, str]] = []
    for result in results:
        for clipping in result.clippings:
            if clipping.kind not in ("highlight", "note") or clipping.truncated:
                continue
            words = clipping.text.split()
            if clipping.kind != "highlight" or len(words) < 9 or rng.random() > 0.5:
                entries.append((clipping, clipping.text))
                continue
            keep_whole, versions = _versions(clipping, words, rng)
            if keep_whole:
                entries.append((clipping, clipping.text))
            entries.extend(versions)
    return b"\xef\xbb\xbf" + "".join(_entry(c, text) for c, text in entries).encode("utf-8")


def _versions(
    clipping: Any, words: list[str], rng: random.Random
) -> tuple[bool, list[tuple[Any, str]]]:
    """What a reader does to a highlight: shorten it, re-select it, split it, repeat it.

    Also says whether the whole highlight stays in the file: a page-turn split and two
    overlapping selections stand instead of it.
    """
    from dataclasses import replace

    third = len(words) // 3
    start = clipping.location_start
    end = clipping.location_end or start
    later = (clipping.added_at or _SOME_DAY) + timedelta(minutes=rng.randint(1, 600))
    kind = rng.choice(["shortened", "earlier", "later", "split", "duplicate"])
    if kind == "shortened":
        return True, [(replace(clipping, added_at=later), " ".join(words[third:-third]))]
    if kind == "earlier":
        # The first two thirds, selected again after the whole: a re-selection.
        return True, [(replace(clipping, added_at=later), " ".join(words[: 2 * third]))]
    if kind == "later":
        # Two overlapping selections that together make the whole.
        return False, [
            (replace(clipping, added_at=later), " ".join(words[third:])),
            (replace(clipping, added_at=later), " ".join(words[: 2 * third])),
        ]
    if kind == "split" and start is not None:
        middle = (start + end) // 2
        seconds = timedelta(seconds=rng.randint(2, 40))
        return False, [
            (replace(clipping, location_end=middle, added_at=later), " ".join(words[:third])),
            (
                replace(clipping, location_start=middle, added_at=later + seconds),
                " ".join(words[third:]),
            ),
        ]
    return True, [(replace(clipping, added_at=later), clipping.text)]


def _entry(clipping: Any, text: str) -> str:
    title = f"{clipping.title} ({clipping.author})" if clipping.author else clipping.title
    where = f"page {clipping.page} | " if clipping.page else ""
    if clipping.location_start is not None:
        end = clipping.location_end
        where += f"Location {clipping.location_start}" + (f"-{end}" if end else "") + " | "
    kind = "Highlight" if clipping.kind == "highlight" else "Note"
    added = (clipping.added_at or _SOME_DAY).strftime("%A, %d %B %Y %H:%M:%S")
    meta = f"- Your {kind} on {where}Added on {added}"
    return "\r\n".join([title, meta, "", text, "=========="]) + "\r\n"


if __name__ == "__main__":
    run([Path(arg) for arg in sys.argv[1:]] or None)
