"""Versions of one passage: when two highlights are one, and what the one kept takes.

A reader re-selects, extends or shortens a highlight, a page turn splits one in two, and
another device keeps its own copy: each is a version of one passage. `_combined` decides
whether two highlights are versions (`merging` says what their text then is; of two
devices, whose places do not compare, only the words decide: one holds the other, or they
overlap, over a long run). `_absorb` makes them one: the kept highlight takes the text
holding every word of both, both ranges, the earlier date, a dedupe key no other highlight
holds and, when its words changed, no vector (VECTORS_RESET); the entries it took in are
recorded for the import report.

An import merges each new highlight with every version of it nearby (`highlight_settle`);
a merge of two books joins two stored ones by the same rule (`stored_versions_merge`, for
books.importing.same_book).
"""

import hashlib

from books.importing.library_index import Library, page_span, position, reads_before
from books.importing.merging import How, long_run, merged, page_turn_joined
from books.importing.positions import decode, encode, union
from books.importing.work import ImportReport, ImportWork, Version
from books.models import Highlight
from books.text import fold_spacing_and_bom

# A highlight whose words changed loses its vectors, and with them the connections found
# by them: the embedding pipeline embeds it again. Set on the kept highlight in memory
# (`_absorb`), then in one statement on the import's rows (services._write_rows); a merge
# of two books resets them so too (same_book).
VECTORS_RESET = {
    "embedding": None, "english_embedding": None, "theme_embedding": None,
    "embedding_model": "", "embedding_status": Highlight.EmbeddingStatus.PENDING,
    "embedding_claimed_at": None, "embedding_error": "",
}  # fmt: skip


def highlight_settle(
    highlight: Highlight, library: Library, work: ImportWork, report: ImportReport
) -> None:
    """Merge a new highlight with every neighbour it is one passage with, until none is.

    A merge can make a highlight overlap one it did not before (A-B and C-D, then B-C),
    so the grown highlight is matched again. Two stored highlights are never merged with
    each other: each may carry its own note, tags and connections.
    """
    merging = True
    while merging:
        merging = False
        for neighbour in library.neighbours_of(highlight):
            if (neighbour.pk and highlight.pk) or not library.folded(neighbour):
                continue
            outcome = _combined(library, neighbour, highlight)
            if outcome is None:
                continue
            text, how = outcome
            # The stored one stays (the new one has no row yet); of two new ones, the older.
            if highlight.pk:
                kept, absorbed = highlight, neighbour
            else:
                kept, absorbed = neighbour, highlight
            _absorb(kept, absorbed, text, how, library, work, report)
            highlight = kept
            merging = True
            break


def _combined(library: Library, a: Highlight, b: Highlight) -> tuple[str, How] | None:
    """The text of one highlight holding both a and b, and how; None when they are two."""
    folded_a, folded_b = library.folded(a), library.folded(b)
    if _two_devices(a, b):
        return _combined_by_words(a, b, folded_a, folded_b)
    if folded_b in folded_a:
        return a.text, How.EXTENDED
    a_first = reads_before(a, b)
    outcome = merged(
        a.text, b.text, kept_first=a_first, folded_kept=folded_a, folded_other=folded_b
    )
    if outcome is not None:
        return outcome
    first, second = (a, b) if a_first else (b, a)
    if first.location_start is not None and second.location_start is not None:
        first_end = first.location_end or first.location_start
        second_start = second.location_start
    else:
        first_span, second_span = page_span(first.page), page_span(second.page)
        if first_span is None or second_span is None:
            return None
        # The two halves of a split at a page turn sit on two pages that follow each other.
        first_end, second_start = first_span[1] + 1, second_span[0]
    joined = page_turn_joined(
        first.text,
        second.text,
        first_end=first_end,
        second_start=second_start,
        first_added=first.added_at,
        second_added=second.added_at,
    )
    return (joined, How.PAGE_TURN) if joined is not None else None


def _two_devices(a: Highlight, b: Highlight) -> bool:
    """One placed by Kindle locations, the other by a device's position or page: where
    each is cannot be compared, only their words."""
    return (a.location_start is None) != (b.location_start is None)


def _combined_by_words(
    a: Highlight, b: Highlight, folded_a: str, folded_b: str
) -> tuple[str, How] | None:
    """Two devices' versions of one passage: one holds the other, or they overlap, over a
    long run of words (merging.SHARED_RUN_WORDS); never a page turn (their pages differ)."""
    if folded_b in folded_a:
        return (a.text, How.EXTENDED) if long_run(folded_b) else None
    if folded_a in folded_b:
        return (b.text, How.EXTENDED) if long_run(folded_a) else None
    outcome = merged(a.text, b.text, kept_first=True, folded_kept=folded_a, folded_other=folded_b)
    if outcome is None:
        return None
    folded_text = fold_spacing_and_bom(outcome[0])
    # The stitched run is the start of the text that comes second.
    second = folded_b if folded_text.startswith(folded_a) else folded_a
    shared = len(folded_a) + len(folded_b) - len(folded_text)
    return outcome if long_run(second[: max(shared, 0)]) else None


def _absorb(
    kept: Highlight,
    absorbed: Highlight,
    text: str,
    how: How,
    library: Library,
    work: ImportWork,
    report: ImportReport,
) -> None:
    """`kept` takes the merged text, both ranges and the earlier date; `absorbed` goes."""
    kept_before = library.folded(kept)
    library.remove(kept)
    library.remove(absorbed)
    text_changed = fold_spacing_and_bom(text) != library.folded(kept)
    kept.text = text
    kept.refresh_is_word()
    kept.refresh_language()
    if _two_devices(kept, absorbed):
        # Pages of two devices do not compare: the kept one's stays. The Kindle's locations
        # (its notes find their highlight by them) and the device's range (for its next
        # upload) are both kept.
        if kept.location_start is None:
            kept.location_start, kept.location_end = (
                absorbed.location_start,
                absorbed.location_end,
            )
        if not kept.position and decode(absorbed.position) is not None:
            kept.position = absorbed.position
    elif kept.location_start is not None and absorbed.location_start is not None:
        start = min(kept.location_start, absorbed.location_start)
        end = max(position(kept)[1], position(absorbed)[1])
        if absorbed.location_start < kept.location_start and absorbed.page:
            kept.page = absorbed.page
        kept.location_start, kept.location_end = start, (end if end != start else None)
    else:
        spans = [page_span(kept.page), page_span(absorbed.page)]
        if spans[0] is not None and spans[1] is not None:
            low, high = min(spans[0][0], spans[1][0]), max(spans[0][1], spans[1][1])
            kept.page = f"{low}" if low == high else f"{low}-{high}"
        # A device's ranges: the merged highlight covers both.
        kept_span, absorbed_span = decode(kept.position), decode(absorbed.position)
        if kept_span is not None and absorbed_span is not None:
            kept.position = encode(union(kept_span, absorbed_span))
        elif absorbed_span is not None:
            kept.position = absorbed.position
    # The highlight is as old as its first version: the earliest date, as the Kindle wrote it.
    if absorbed.added_at is not None and (
        kept.added_at is None or absorbed.added_at < kept.added_at
    ):
        kept.added_at, kept.added_raw = absorbed.added_at, absorbed.added_raw
    kept.dedupe_key = _free_key(library, kept)
    if text_changed and kept.pk:
        # New words mean a new vector: the embedding pipeline picks it up again.
        for name, value in VECTORS_RESET.items():
            setattr(kept, name, value)
        work.reembed.add(kept.pk)
    work.change(kept)
    library.add(kept)
    work.created.pop(id(absorbed), None)
    version = work.origins.pop(id(absorbed))
    if (
        not kept.pk
        and text_changed
        and fold_spacing_and_bom(version.text) == fold_spacing_and_bom(text)
    ):
        # Two entries of this file, the one matched second (in reading order) holding every
        # word: the shorter one is the version the report lists, not the text as it now reads.
        work.origins[id(kept)], version = version, work.origins[id(kept)]
    versions = [*work.merges.pop(id(absorbed), []), (how, version)]
    if kept.deleted_at is not None:
        # A version of a highlight the reader deleted: it stays deleted, with its words.
        report.extended_merged -= len(versions) - 1
        report.deleted_skipped += len(versions)
        return
    report.extended_merged += 1
    recorded = work.merges.setdefault(id(kept), [])
    recorded.extend(versions)
    # The single entries the highlight was: the stored text, or this file's first entry.
    origin = work.origins.get(id(kept))
    single = kept_before if kept.pk else (origin.text if origin else "")
    _label_contained(recorded, [single] if single else [])


def stored_versions_merge(*, library: Library, kept: Highlight, other: Highlight) -> bool:
    """Whether two stored highlights are versions of one passage by the import's rule
    (`_combined`: a re-selection, an extension, another device's copy); if they are,
    `kept` takes in memory what an import's merge gives the highlight it keeps (`_absorb`:
    the text holding every word of both, both ranges, the earlier date, no vector when its
    words changed) and `other` leaves `library`. The import itself never joins two stored
    highlights (`highlight_settle`); a merge of two books does (books.importing.same_book),
    and writes both rows and moves what the reader added to `other`."""
    outcome = _combined(library, kept, other)
    if outcome is None:
        return False
    work = ImportWork()
    work.origins[id(other)] = Version(other.text, "", other.added_at)
    _absorb(kept, other, *outcome, library, work, ImportReport())
    return True


def _label_contained(recorded: list[tuple[How, Version]], entries: list[str]) -> None:
    """Half of a page-turn split whose words all sit in another single entry of the
    highlight is contained in it: "to help" joined at a page turn, then "to help younger
    people" selected, is contained in the second; the page turn did not make it. (A part
    that a longer selection extended stays "Extended".)"""
    folded = [fold_spacing_and_bom(v.text) for _, v in recorded]
    others = [fold_spacing_and_bom(text) for text in entries]
    for index, (how, version) in enumerate(recorded):
        if how != How.PAGE_TURN:
            continue
        mine = folded[index]
        if any(
            mine in other and mine != other
            for other in [*others, *folded[:index], *folded[index + 1 :]]
        ):
            recorded[index] = (How.CONTAINED, version)


def _free_key(library: Library, highlight: Highlight) -> str:
    key = highlight.dedupe_key_from_fields()
    # Two highlights with one key would be one passage and merge; this only keeps the
    # unique constraint safe if a stored pair ever says otherwise.
    while library.keys.get(key, highlight) is not highlight:
        key = hashlib.sha256(f"{key}+".encode()).hexdigest()
    return key
