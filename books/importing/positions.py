"""Where a device says a highlight is: a range that can be compared, to find versions of one
passage. Pure, no Django.

The Kindle writes locations; the other readers write a place in the book's markup:

- Apple Books an EPUB CFI, `epubcfi(/6/24[c_Split3]!/4/2/296/2,/1:0,/7:257)`;
- Kobo a container path, `OEBPS/Text/Unknown_split_001.html#point(/1/4/770/1:550)` (a
  kepub's `span#kobo\\.12\\.3` with its offset column);
- KOReader an xpointer, `/body/DocFragment[11]/body/div/section/p[24]/em/text().3`, or a
  PDF's `{page, x, y}`.

Each end becomes a `Point`: the part of the book it is in (the spine item, file or PDF page,
as text) and the steps down the markup to a character, as numbers. Element names are left
out, so the order is exact within one text and close across elements: it only decides which
highlights are compared, and merging still needs their words to agree (`merging.merged`).
Stored on the highlight as `encode()`'s JSON, so that a later upload finds it.
"""

from __future__ import annotations

import json
import math
import re

__all__ = [
    "Point",
    "Span",
    "cfi_span",
    "decode",
    "encode",
    "kobo_span",
    "overlaps",
    "reading_key",
    "sort_key",
    "union",
    "xpointer_span",
]

Point = tuple[str, tuple[int, ...]]
Span = tuple[Point, Point]

# Bounds that keep a stored position short (the column holds 500 characters).
_MAX_STEPS = 16
_MAX_PART = 120
_MAX_NUMBER = 10**9 - 1

_CFI_ASSERTION = re.compile(r"\[(?:\^.|[^\]^])*\]")
_CFI_TOKEN = re.compile(r"/(\d+)|:(\d+)|(!)")
_KEPUB_SPAN = re.compile(r"kobo\\?\.(\d+)\\?\.(\d+)")
_XPOINTER_STEP = re.compile(r"[^\[\]/.]+(?:\[(\d+)\])?(?:\.(\d+))?")
_DOC_FRAGMENT = re.compile(r"^/body/DocFragment(?:\[(\d+)\])?")


def _number(text: str | int) -> int:
    return min(int(text), _MAX_NUMBER)


def _point(part: str, steps: list[int]) -> Point:
    return part[:_MAX_PART], tuple(steps[:_MAX_STEPS])


def _spine(number: int) -> str:
    """A spine item or page as text that sorts like its number."""
    return f"{number:09d}"


def _cfi_steps(text: str) -> tuple[list[int], list[int]] | None:
    """The steps before and after the indirection (`!`); None when a token is unreadable."""
    before: list[int] = []
    after: list[int] = []
    current = before
    position = 0
    for token in _CFI_TOKEN.finditer(text):
        if token.start() != position:
            return None
        position = token.end()
        step, offset, bang = token.groups()
        if bang:
            current = after
        else:
            current.append(_number(step or offset))
    if position != len(text):
        return None
    return before, after


def cfi_span(cfi: str) -> Span | None:
    """An EPUB CFI, a range (`parent,start,end`) or a point; None when it cannot be read."""
    inner = cfi.strip()
    if not (inner.startswith("epubcfi(") and inner.endswith(")")):
        return None
    inner = _CFI_ASSERTION.sub("", inner[len("epubcfi(") : -1])
    # Temporal and spatial offsets (`~`, `@`) place media, not text.
    inner = re.sub(r"[~@][\d.:]*", "", inner)
    pieces = inner.split(",")
    if len(pieces) not in (1, 3):
        return None
    parent = _cfi_steps(pieces[0])
    if parent is None:
        return None
    ends = []
    for relative in pieces[1:] or [""]:
        steps = _cfi_steps(relative)
        if steps is None or steps[1]:
            return None
        before, after = parent
        if after:
            # /6/24!/4/2/…: the spine item, then the steps inside its document.
            part, inner_steps = _spine(before[1] if len(before) > 1 else 0), after + steps[0]
        else:
            part, inner_steps = "", before + steps[0]
        ends.append(_point(part, inner_steps))
    return ends[0], ends[-1]


def _kobo_point(path: str, offset: object, chapter: str) -> Point | None:
    file, _, where = path.partition("#")
    if where.startswith("point(") and where.endswith(")"):
        steps = _cfi_steps(where[len("point(") : -1])
        if steps is None or steps[1]:
            return None
        return _point(file, steps[0])
    found = _KEPUB_SPAN.search(path)
    if found is None:
        return None
    number = offset if isinstance(offset, int) and not isinstance(offset, bool) else 0
    # A kepub's span ids are numbered within the chapter's file, named by the ContentID.
    return _point(chapter, [_number(found.group(1)), _number(found.group(2)), _number(number)])


def kobo_span(
    start: object, end: object, *, start_offset: object, end_offset: object, chapter: str
) -> Span | None:
    """Kobo's StartContainerPath and EndContainerPath (with their offsets) as a range."""
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    first = _kobo_point(start, start_offset, chapter)
    last = _kobo_point(end, end_offset, chapter)
    if first is None or last is None:
        return None
    return (first, last) if first <= last else (last, first)


def _xpointer_point(value: object) -> Point | None:
    if isinstance(value, dict):  # a PDF: page coordinates
        page, x, y = value.get("page"), value.get("x"), value.get("y")
        numbers = [
            v
            for v in (page, y, x)
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        ]
        if len(numbers) != 3:
            return None
        page_number, down, across = (_number(max(round(v), 0)) for v in numbers)
        return _point(_spine(page_number), [down, across])
    if not isinstance(value, str) or not value.startswith("/"):
        return None
    part = ""
    rest = value
    fragment = _DOC_FRAGMENT.match(value)
    if fragment is not None:
        part = _spine(_number(fragment.group(1) or 1))
        rest = value[fragment.end() :]
    steps: list[int] = []
    for segment in rest.strip("/").split("/"):
        found = _XPOINTER_STEP.fullmatch(segment)
        if found is None:
            return None
        steps.append(_number(found.group(1) or 1))
        if found.group(2) is not None:
            steps.append(_number(found.group(2)))
    return _point(part, steps)


def xpointer_span(pos0: object, pos1: object) -> Span | None:
    """KOReader's pos0 and pos1 as a range; pos0 alone is a point."""
    first = _xpointer_point(pos0)
    last = _xpointer_point(pos1) if pos1 is not None else first
    if first is None or last is None:
        return None
    return (first, last) if first <= last else (last, first)


def overlaps(a: Span, b: Span) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def union(a: Span, b: Span) -> Span:
    return min(a[0], b[0]), max(a[1], b[1])


def encode(span: Span | None) -> str:
    if span is None:
        return ""
    return json.dumps([[part, list(steps)] for part, steps in span], separators=(",", ":"))


def decode(text: str) -> Span | None:
    """A stored position; None for none (a Kindle's highlight) or one that cannot be read."""
    if not text:
        return None
    try:
        raw = json.loads(text)
        (first_part, first_steps), (last_part, last_steps) = raw
        first = (str(first_part), tuple(int(n) for n in first_steps))
        last = (str(last_part), tuple(int(n) for n in last_steps))
    except (ValueError, TypeError):
        return None
    return first, last


def sort_key(text: str) -> str:
    """A stored position as text that sorts in reading order, for ordering one file's entries."""
    span = decode(text)
    if span is None:
        return ""
    part, steps = span[0]
    return part + "\x00" + ".".join(f"{n:09d}" for n in steps)


_PAGE_NUMBER = re.compile(r"^\s*(\d{1,9})")
# Stored in Highlight.reading_key (300 characters).
_READING_KEY_LENGTH = 300


def reading_key(position: str, page: str) -> str:
    """Where a highlight without Kindle locations is, as text that sorts in reading order:
    its device's position, compared step by step as numbers ([1, 1, 22, …] before
    [1, 1, 34], a spine item before the next), else its page as a number ("13" before
    "125"), else "". A font change moves KOReader's pages, not its positions."""
    span = decode(position)
    if span is not None:
        part, steps = span[0]
        # Compared byte by byte (the column's collation is "C"); no NUL, which PostgreSQL
        # refuses in text.
        return f"{part} {'.'.join(f'{n:09d}' for n in steps)}"[:_READING_KEY_LENGTH]
    found = _PAGE_NUMBER.match(page)
    return f"~{int(found.group(1)):09d}" if found else ""
