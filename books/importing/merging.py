"""When two clippings are one highlight, and what its text then is. Pure, no Django.

The Kindle appends a new entry whenever a reader extends, shortens or re-selects a
highlight, and the old entry stays in the file. Two entries become one highlight only when
the merged text keeps every word of both, in reading order:

- one folded text contains the other: the longer one is the highlight (`EXTENDED`);
- a suffix of one is a prefix of the other over a real stretch of text (at least
  `MIN_OVERLAP_WORDS` words and `MIN_OVERLAP_CHARS` characters, or `LONG_OVERLAP_CHARS`
  characters in scripts without spaces): the two are stitched (`OVERLAPPED`),
  `loc 1012-1014 "or, as is too often the case, die. Sometimes the blood clot"` and
  `loc 1013-1015 "Sometimes the blood clot … develops."`;
- a highlight split at a page turn: two entries whose ranges share a location, written
  within `PAGE_TURN_SECONDS`, the first not ending a sentence and the second starting in
  lower case, are joined in location order (`PAGE_TURN`): `"If you are tempted to return
  null from a"` + `"method, consider throwing an exception…"`.

Anything else stays two highlights: sharing words ("the, of, to, is") is never enough.
Every merge is checked after the fact: if the result does not contain both folded texts,
there is no merge.
"""

from __future__ import annotations

import enum
import hashlib
import re
from datetime import datetime

from books.text import BYTE_ORDER_MARK, fold_spacing_and_bom

__all__ = [
    "LONG_OVERLAP_CHARS",
    "MIN_OVERLAP_CHARS",
    "MIN_OVERLAP_WORDS",
    "PAGE_TURN_SECONDS",
    "SHARED_RUN_WORDS",
    "How",
    "long_run",
    "merged",
    "page_turn_joined",
    "shingles",
    "stable_runs",
]

# A real stretch of shared text, not a stop word: "Sometimes the blood clot" qualifies,
# "of the" does not. Measured on the shared corpus: every overlap between touching
# highlights of one book that passes this is the same passage selected twice.
MIN_OVERLAP_WORDS = 3
MIN_OVERLAP_CHARS = 12
# Chinese and Japanese have no spaces: a run of this many characters is a real stretch.
LONG_OVERLAP_CHARS = 20
# The two halves of a highlight split at a page turn are written seconds apart (18 s in the
# issue's example); on the shared corpus 42 pairs pass this rule and, read one by one, they
# are continuations ("who had been" + "persecuted under Francisco Franco's dictatorship").
PAGE_TURN_SECONDS = 60
# The first half of a page-turn split is at least this many words, the second at least two:
# two looked-up words side by side ("bingeing", "purging") are two highlights.
PAGE_TURN_MIN_FIRST_WORDS = 3
PAGE_TURN_MIN_SECOND_WORDS = 2

# Two devices (a Kindle's locations, a KOReader's xpointer) place one passage in ways that
# cannot be compared, so their versions of it are found by their words alone: they must
# share a run of this many words (a character of a script without spaces counts as half a
# word). Measured on the shared Kindle files (12,170 highlights, 2026-12-06): pairs of
# highlights of one book at least 5 locations apart, so two highlights, that one contains
# or that stitch over such a run: 21 at 4 words, 11 at 6, 6 at 8, 2 at 12.
SHARED_RUN_WORDS = 8

_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]|\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# A sentence ends with its punctuation, maybe a closing quote or bracket, maybe a footnote
# number ("…punished like that.”1"); a colon or semicolon introduces what follows on purpose.
_SENTENCE_END = re.compile("[.!?…:;。\uff01\uff1f؟][\"'”\u2019»)\\]]*\\d*$")


class How(enum.StrEnum):
    # Half of a page-turn split whose every word a longer selection of it then held.
    CONTAINED = "contained"
    EXTENDED = "extended"
    OVERLAPPED = "overlapped"
    PAGE_TURN = "page_turn"


def _weight(folded: str) -> float:
    tokens = _TOKEN.findall(folded)
    cjk = sum(1 for token in tokens if _CJK.fullmatch(token))
    return len(tokens) - cjk / 2


def long_run(folded: str) -> bool:
    """Whether a folded text is a long enough run of words to tell one passage by itself."""
    return _weight(folded) >= SHARED_RUN_WORDS


def shingles(folded: str) -> set[int]:
    """Hashes of every run of SHARED_RUN_WORDS // 2 tokens (a CJK character is a token):
    two texts that share a long run share one of them."""
    tokens = _TOKEN.findall(folded)
    size = SHARED_RUN_WORDS // 2
    return {hash(tuple(tokens[i : i + size])) for i in range(len(tokens) - size + 1)}


def stable_runs(folded: str) -> set[int]:
    """The runs `shingles` hashes, hashed the same in every process (Python's `hash` of a
    string is not): kept in the database for what was removed for good."""
    tokens = _TOKEN.findall(folded)
    size = SHARED_RUN_WORDS // 2
    return {
        int.from_bytes(
            hashlib.blake2b("\x1f".join(tokens[i : i + size]).encode(), digest_size=8).digest(),
            "big",
            signed=True,
        )
        for i in range(len(tokens) - size + 1)
    }


def _folded_offsets(text: str) -> list[int]:
    """For each character of fold_spacing_and_bom(text), the index in `text` of the
    character it came from."""
    offsets: list[int] = []
    pending_space = -1
    for index, char in enumerate(text):
        if char == BYTE_ORDER_MARK:
            continue
        if char.isspace():
            if offsets and pending_space < 0:
                pending_space = index
            continue
        if pending_space >= 0:
            offsets.append(pending_space)
            pending_space = -1
        offsets.extend([index] * len(char.casefold()))
    return offsets


def _real_stretch(shared: str) -> bool:
    if len(shared) >= LONG_OVERLAP_CHARS:
        return True
    return len(shared) >= MIN_OVERLAP_CHARS and len(_WORD.findall(shared)) >= MIN_OVERLAP_WORDS


def _overlap(first: str, second: str) -> int:
    """The length of the longest suffix of `first` that is a prefix of `second` (folded)."""
    probe = second[:MIN_OVERLAP_CHARS]
    if len(probe) < MIN_OVERLAP_CHARS:
        return 0
    # The overlap starts where `first` holds the probe; the earliest such start that
    # matches to the end is the longest overlap. str.find keeps this in C.
    at = first.find(probe, max(0, len(first) - len(second)))
    while at >= 0:
        if second.startswith(first[at:]):
            return len(first) - at
        at = first.find(probe, at + 1)
    return 0


def _stitched(first: str, second: str, folded_first: str, folded_second: str) -> str | None:
    shared = _overlap(folded_first, folded_second)
    if not shared or not _real_stretch(folded_first[len(folded_first) - shared :]):
        return None
    offsets = _folded_offsets(second)
    return first.rstrip() + second[offsets[shared] :]


def merged(
    kept: str, other: str, *, kept_first: bool, folded_kept: str = "", folded_other: str = ""
) -> tuple[str, How] | None:
    """The text of one highlight holding both texts, and how; None when they are two.

    `kept_first` says which comes first in the book, for texts that overlap both ways. A
    `kept` that already contains `other` is no merge: nothing would change.
    """
    folded_kept = folded_kept or fold_spacing_and_bom(kept)
    folded_other = folded_other or fold_spacing_and_bom(other)
    if not folded_kept or not folded_other or folded_other in folded_kept:
        return None
    if folded_kept in folded_other:
        return other, How.EXTENDED
    orders = [(kept, other), (other, kept)]
    if not kept_first:
        orders.reverse()
    for first, second in orders:
        folded_first, folded_second = (
            (folded_kept, folded_other) if first is kept else (folded_other, folded_kept)
        )
        text = _stitched(first, second, folded_first, folded_second)
        if text is not None and _keeps_both(text, folded_kept, folded_other):
            return text, How.OVERLAPPED
    return None


def page_turn_joined(
    first: str,
    second: str,
    *,
    first_end: int,
    second_start: int,
    first_added: datetime | None,
    second_added: datetime | None,
) -> str | None:
    """The joined text when `second` continues `first` across a page turn, else None."""
    if second_start != first_end or first_added is None or second_added is None:
        return None
    if abs((second_added - first_added).total_seconds()) > PAGE_TURN_SECONDS:
        return None
    head, tail = first.strip(), second.strip()
    if len(head.split()) < PAGE_TURN_MIN_FIRST_WORDS:
        return None
    if len(tail.split()) < PAGE_TURN_MIN_SECOND_WORDS or not tail[0].islower():
        return None
    if _SENTENCE_END.search(head):
        return None
    text = f"{head} {tail}"
    return (
        text
        if _keeps_both(text, fold_spacing_and_bom(first), fold_spacing_and_bom(second))
        else None
    )


def _keeps_both(text: str, folded_a: str, folded_b: str) -> bool:
    folded = fold_spacing_and_bom(text)
    return folded_a in folded and folded_b in folded
