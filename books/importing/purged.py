"""Highlights removed for good, known again: an import leaves out an entry that is one.

The daily purge (books.purging) removes a highlight deleted EXOGRAM_DELETED_DAYS ago, and
its dedupe key with it; a Kindle keeps every clipping in My Clippings.txt, so the reader's
next upload would add it back. Each one leaves a PurgedHighlight: hashes, never its words.
An entry of a later import that would be a new highlight (or a note of its own) is left out,
and counted as already deleted, when within the same book it has

- the purged highlight's dedupe key: the same entry, from the same file or a later copy;
- the hash of its folded text: the same words, or an entry that had been merged into the
  purged highlight (each merged entry's text is hashed too), or its note;
- every 4-word run among the purged highlight's runs, and at least SHARED_RUN_WORDS words:
  a shorter selection of it, such as the first version of a highlight a longer one
  extended, whose own text was not kept.

A highlight the reader deleted on the device leaves a trace too (`on_device`,
books.importing.device_deleted): an entry with its key or the hash of its words, made no
later than it, is left out and counted as deleted on the device; one made after it is new.

Not caught, and so imported again: a selection that reaches beyond the purged passage (an
extended or shifted re-selection that was never merged into it), a part of it shorter than
SHARED_RUN_WORDS words, and the passage under another title or author (another book).
"""

import hashlib
from collections import defaultdict
from datetime import datetime
from typing import Any

from books.importing.clippings import RemovedTrace
from books.importing.merging import long_run, stable_runs
from books.models import Highlight, HighlightMerge, PurgedHighlight
from books.text import fold_spacing_and_bom

_NOTE = "note:"


def text_hash(text: str) -> str:
    """A text's hash, folded as the import compares texts (spacing, case, byte order mark)."""
    return hashlib.blake2b(fold_spacing_and_bom(text).encode(), digest_size=16).hexdigest()


def note_hash(text: str) -> str:
    """A note's hash, as a trace holds it among its text_hashes."""
    return _NOTE + text_hash(text.strip())


def purged_traces(*, ids: list[int]) -> list[PurgedHighlight]:
    """What is kept of these highlights once they are removed (unsaved rows)."""
    merged: defaultdict[int, list[str]] = defaultdict(list)
    for highlight_id, text in HighlightMerge.objects.filter(highlight_id__in=ids).values_list(
        "highlight_id", "merged_text"
    ):
        merged[highlight_id].append(text)
    traces = []
    rows = Highlight.objects.filter(pk__in=ids).values_list(
        "pk", "reader_id", "kind", "dedupe_key", "text", "note", "book__key"
    )
    for pk, reader_id, kind, dedupe_key, text, note, book_key in rows:
        if kind == Highlight.Kind.NOTE:
            hashes = {note_hash(text or note)}
            runs: set[int] = set()
        else:
            hashes = {text_hash(version) for version in [text, *merged[pk]] if version.strip()}
            if note.strip():
                hashes.add(note_hash(note))
            runs = stable_runs(fold_spacing_and_bom(text))
        traces.append(
            PurgedHighlight(
                reader_id=reader_id,
                book_key=book_key,
                kind=kind,
                dedupe_key=dedupe_key,
                text_hashes=sorted(hashes),
                runs=sorted(runs),
            )
        )
    return traces


def traces_remember(*, reader_id: int, traces: list[RemovedTrace]) -> int:
    """Keep the traces an Exogram export brings of its reader's highlights removed for good
    or deleted on the device (a library moved to this account), those this reader does not
    hold yet; how many."""
    if not traces:
        return 0
    # A passage can have both: deleted on the device, then brought back, highlighted and
    # removed for good here.
    held = set(
        PurgedHighlight.objects.filter(
            reader_id=reader_id, dedupe_key__in={t.dedupe_key for t in traces}
        ).values_list("book_key", "dedupe_key", "on_device")
    )
    new = []
    for trace in traces:
        if (trace.book_key, trace.dedupe_key, trace.on_device) in held:
            continue
        held.add((trace.book_key, trace.dedupe_key, trace.on_device))
        new.append(
            PurgedHighlight(
                reader_id=reader_id,
                book_key=trace.book_key,
                kind=trace.kind,
                dedupe_key=trace.dedupe_key,
                text_hashes=list(trace.text_hashes),
                runs=list(trace.runs),
                on_device=trace.on_device,
                added_at=trace.added_at,
            )
        )
    PurgedHighlight.objects.bulk_create(new, batch_size=1000)
    return len(new)


class Purged:
    """The traces of the reader's highlights removed for good, of the books of one file."""

    def __init__(self, *, reader_id: int, book_keys: list[str]) -> None:
        self._keys: set[str] = set()
        self._hashes: set[tuple[str, str]] = set()
        self._runs: list[frozenset[int]] = []
        # (book key, a run) -> the traces holding it: the candidates for a shorter selection.
        self._by_run: defaultdict[tuple[str, int], list[int]] = defaultdict(list)
        # Highlights deleted on the device (books.importing.device_deleted): by key and by
        # the hash of their words, when the device made them (None: it did not say).
        self._device_keys: dict[str, datetime | None] = {}
        self._device_hashes: dict[tuple[str, str], datetime | None] = {}
        rows = PurgedHighlight.objects.filter(reader_id=reader_id, book_key__in=book_keys)
        for book_key, dedupe_key, hashes, runs, on_device, added_at in rows.values_list(
            "book_key", "dedupe_key", "text_hashes", "runs", "on_device", "added_at"
        ):
            if on_device:
                _later(self._device_keys, dedupe_key, added_at)
                for h in hashes:
                    _later(self._device_hashes, (book_key, h), added_at)
                continue
            self._keys.add(dedupe_key)
            self._hashes.update((book_key, h) for h in hashes)
            if runs:
                self._runs.append(frozenset(runs))
                for run in runs:
                    self._by_run[(book_key, run)].append(len(self._runs) - 1)

    def __bool__(self) -> bool:
        return bool(self._keys) or bool(self._device_keys)

    def known_on_device(self, dedupe_key: str) -> bool:
        """Whether an entry deleted on the device was remembered already (by an import of
        this file, or of another copy that held it deleted)."""
        return dedupe_key in self._device_keys

    def deleted_on_device(
        self, *, book_key: str, dedupe_key: str, text: str, added_at: datetime | None
    ) -> bool:
        """Whether a live entry is a highlight the reader deleted on the device: its key or
        its words, made no later than the deleted one (one made after it is a new
        highlight of the same passage)."""
        if not self._device_keys:
            return False
        if dedupe_key in self._device_keys:
            made = self._device_keys[dedupe_key]
        elif (book_key, text_hash(text)) in self._device_hashes:
            made = self._device_hashes[(book_key, text_hash(text))]
        else:
            return False
        return added_at is None or made is None or added_at <= made

    def holds(self, *, book_key: str, dedupe_key: str, text: str) -> bool:
        """Whether a highlight entry is one removed for good (its key, its text, or a
        shorter selection of it)."""
        if not self._keys:
            return False
        if dedupe_key in self._keys or (book_key, text_hash(text)) in self._hashes:
            return True
        folded = fold_spacing_and_bom(text)
        if not long_run(folded):
            return False
        runs = stable_runs(folded)
        first = min(runs, default=None)
        if first is None:
            return False
        return any(runs <= self._runs[index] for index in self._by_run.get((book_key, first), []))

    def holds_note(self, *, book_key: str, dedupe_key: str, text: str) -> bool:
        """Whether a note entry is a standalone note, or the note of a highlight, removed
        for good."""
        if not self._keys:
            return False
        return dedupe_key in self._keys or (book_key, note_hash(text)) in self._hashes


def _later(seen: dict[Any, datetime | None], key: object, added_at: datetime | None) -> None:
    """Keep the later date of two traces of one passage; None (the device did not say)
    wins: an entry that matches it is always left out."""
    if key not in seen:
        seen[key] = added_at
    elif seen[key] is not None:
        seen[key] = None if added_at is None else max(added_at, seen[key])  # type: ignore[type-var]
