"""The reader's highlights of the books an import touches, indexed by position: where the
import looks for versions of a passage (to merge) and for the highlight a note belongs to.

Highlights are held by identity: new ones have no primary key until they are written.
"""

import re
from bisect import bisect_right, insort

from accounts.models import User
from books.importing.clippings import Clipping
from books.importing.merging import long_run, shingles
from books.importing.positions import Span, decode, overlaps, sort_key
from books.models import Book, Highlight
from books.text import fold_spacing_and_bom

# Versions of one highlight are looked for among ranges that overlap or touch: 120-125 and
# 126-130; in a page-only file, on the same or the next page.
ADJACENT = 1
# A merged page-only highlight is indexed on at most this many pages.
_PAGE_SPAN_LIMIT = 50

_PAGE_SPAN = re.compile(r"^(\d{1,7})(?:-(\d{1,7}))?$")


def page_span(page: str) -> tuple[int, int] | None:
    """Pages "12" and "13-14" as numbers; None for "xix" and other pages without numbers."""
    found = _PAGE_SPAN.match(page)
    if found is None:
        return None
    low, high = int(found.group(1)), int(found.group(2) or found.group(1))
    return (low, high) if low <= high else (high, low)


def _page_keys(page: str, *, reach: int = 0) -> list[str]:
    span = page_span(page)
    if span is None:
        return [page]
    low, high = span
    high = min(high, low + _PAGE_SPAN_LIMIT)
    return [str(number) for number in range(max(0, low - reach), high + reach + 1)]


class Library:
    """The reader's highlights of the touched books, indexed by position for merging and notes."""

    def __init__(self, reader: User, books: dict[str, Book]) -> None:
        self.keys: dict[str, Highlight] = {}
        self._folded: dict[int, str] = {}
        # First-seen order: a tie-break that makes every choice the same on every run.
        self._order: dict[int, int] = {}
        # per book: sorted (location start, serial); a highlight that moves gets a new
        # serial, and the old entry is skipped from then on
        self._starts: dict[int, list[tuple[int, int]]] = {}
        self._at_serial: dict[int, Highlight] = {}
        self._serial_of: dict[int, int] = {}
        self._pages: dict[int, dict[str, list[Highlight]]] = {}
        # per book, per part of the book (spine item, file, PDF page): the highlights a device
        # placed there (a range across two parts is under both), and each one's range
        self._parts: dict[int, dict[str, list[Highlight]]] = {}
        self._span_of: dict[int, Span] = {}
        # The longest range per book bounds how far back an overlapping one can start.
        self._longest: dict[int, int] = {}
        # per book and way of placing (Kindle locations or not), per run of words
        # (merging.shingles): the highlights holding it, where a version from a device that
        # places passages the other way is looked for. Built for a book when first asked:
        # a library from one device never pays for it.
        self._of_book: dict[int, dict[int, Highlight]] = {}
        self._runs: dict[tuple[int, bool], dict[int, list[Highlight]]] = {}
        self._runs_of: dict[int, set[int]] = {}
        self._serial = 0
        by_pk = {book.pk: book for book in books.values()}
        # Only what merging and notes read: not the vectors (384 floats a row), not the
        # search copy, and fewer timestamps to parse.
        existing = Highlight.objects.filter(reader=reader, book__in=list(by_pk)).only(
            "reader_id", "book_id", "kind", "text", "note", "note_edited", "note_added_at",
            "page", "location_start", "location_end", "position", "added_at", "added_raw",
            "dedupe_key", "deleted_at", "embedding_status", "is_word", "language",
        ).order_by("pk")  # fmt: skip
        for highlight in existing:
            # The book is at hand: refresh_search_text() must not fetch it row by row.
            highlight.book = by_pk[highlight.book_id]
            self.add(highlight)

    def folded(self, highlight: Highlight) -> str:
        return self._folded[id(highlight)]

    def add(self, highlight: Highlight) -> None:
        self.keys[highlight.dedupe_key] = highlight
        if highlight.kind != Highlight.Kind.HIGHLIGHT:
            return
        self._folded[id(highlight)] = folded = fold_spacing_and_bom(highlight.text)
        self._order.setdefault(id(highlight), len(self._order))
        self._of_book.setdefault(highlight.book_id, {})[id(highlight)] = highlight
        runs = self._runs.get((highlight.book_id, highlight.location_start is not None))
        if runs is not None:
            self._index_words(runs, highlight, folded)
        if highlight.location_start is not None:
            self._serial += 1
            self._at_serial[self._serial] = highlight
            self._serial_of[id(highlight)] = self._serial
            starts = self._starts.setdefault(highlight.book_id, [])
            insort(starts, (highlight.location_start, self._serial))
            length = (highlight.location_end or highlight.location_start) - highlight.location_start
            self._longest[highlight.book_id] = max(self._longest.get(highlight.book_id, 0), length)
        # A device's range; a Kindle highlight has one too when another device's version of
        # it merged in, so that device's next upload finds it where it put it.
        span = decode(highlight.position)
        if span is not None:
            self._span_of[id(highlight)] = span
            parts = self._parts.setdefault(highlight.book_id, {})
            for part in {span[0][0], span[1][0]}:
                parts.setdefault(part, []).append(highlight)
        if highlight.location_start is not None:
            return
        # A KOReader highlight has a page too: a version from before positions were kept
        # (or from KOReader's JSON export, which has none) finds it by its page.
        if highlight.page:
            pages = self._pages.setdefault(highlight.book_id, {})
            for page in _page_keys(highlight.page):
                pages.setdefault(page, []).append(highlight)

    def remove(self, highlight: Highlight) -> None:
        """Take a highlight out of the indexes, before it moves or when it is merged away."""
        if self.keys.get(highlight.dedupe_key) is highlight:
            del self.keys[highlight.dedupe_key]
        if highlight.kind != Highlight.Kind.HIGHLIGHT:
            return
        self._of_book.get(highlight.book_id, {}).pop(id(highlight), None)
        runs = self._runs.get((highlight.book_id, highlight.location_start is not None), {})
        for key in self._runs_of.pop(id(highlight), set()):
            runs[key] = [h for h in runs.get(key, []) if h is not highlight]
        serial = self._serial_of.pop(id(highlight), None)
        if serial is not None:
            del self._at_serial[serial]
        span = self._span_of.pop(id(highlight), None)
        if span is not None:
            parts = self._parts.get(highlight.book_id, {})
            for part in {span[0][0], span[1][0]}:
                parts[part] = [h for h in parts.get(part, []) if h is not highlight]
        if serial is not None:
            return
        if highlight.page:
            pages = self._pages.get(highlight.book_id, {})
            for page in _page_keys(highlight.page):
                pages[page] = [h for h in pages.get(page, []) if h is not highlight]

    def near(self, book_id: int, start: int, end: int, reach_before: int = 0) -> list[Highlight]:
        """Highlights of a book whose range overlaps [start - reach_before, end]."""
        starts = self._starts.get(book_id, [])
        index = bisect_right(starts, (end, 1 << 62))
        found = []
        while index > 0:
            index -= 1
            cand_start, serial = starts[index]
            if cand_start < start - reach_before - self._longest.get(book_id, 0):
                break
            cand = self._at_serial.get(serial)
            if cand is None:
                continue
            cand_end = cand.location_end or cand_start
            if cand_end >= start - reach_before:
                found.append(cand)
        return found

    def on_page(self, book_id: int, page: str, *, reach: int = 0) -> list[Highlight]:
        """Page-only highlights of a book on this page (and `reach` pages either side)."""
        pages = self._pages.get(book_id, {})
        found: dict[int, Highlight] = {}
        for key in _page_keys(page, reach=reach):
            for highlight in pages.get(key, []):
                found.setdefault(id(highlight), highlight)
        return list(found.values())

    def at_position(self, book_id: int, span: Span) -> list[Highlight]:
        """Highlights of a book a device placed in a range that overlaps this one."""
        parts = self._parts.get(book_id, {})
        found: dict[int, Highlight] = {}
        for part in {span[0][0], span[1][0]}:
            for highlight in parts.get(part, []):
                if overlaps(self._span_of[id(highlight)], span):
                    found.setdefault(id(highlight), highlight)
        return list(found.values())

    def sharing_words(self, book_id: int, folded: str, *, located: bool) -> list[Highlight]:
        """Highlights of a book placed the other way (by a device when `located`, by Kindle
        locations when not) that share a run of words with this text."""
        runs = self._runs.get((book_id, not located))
        if runs is None:
            runs = self._runs[(book_id, not located)] = {}
            for highlight in self._of_book.get(book_id, {}).values():
                if (highlight.location_start is not None) != located:
                    self._index_words(runs, highlight, self._folded[id(highlight)])
        if not runs:
            return []
        found: dict[int, Highlight] = {}
        for key in shingles(folded):
            for highlight in runs.get(key, []):
                found.setdefault(id(highlight), highlight)
        return list(found.values())

    def _index_words(
        self, runs: dict[int, list[Highlight]], highlight: Highlight, folded: str
    ) -> None:
        self._runs_of[id(highlight)] = keys = shingles(folded)
        for key in keys:
            runs.setdefault(key, []).append(highlight)

    def neighbours(
        self,
        book_id: int,
        start: int | None,
        end: int | None,
        page: str | None,
        where: str = "",
        folded: str = "",
    ) -> list[Highlight]:
        """Highlights that could be versions of one here: alive first, in reading order.

        `where` is a device's position (`positions.encode`): the highlights placed in an
        overlapping range, and those on the same or the next page that have no position.
        `folded`, the text: the highlights another device placed (a Kindle's locations and
        a KOReader's positions do not compare) that share a run of its words.
        """
        found = self._placed_near(book_id, start, end, page, where)
        if folded:
            seen = {id(h) for h in found}
            found += [
                h
                for h in self.sharing_words(book_id, folded, located=start is not None)
                if id(h) not in seen
            ]
        if len(found) < 2:
            return found
        return sorted(
            found,
            key=lambda h: (
                h.deleted_at is not None,
                sort_key(h.position),
                position(h),
                self._order[id(h)],
            ),
        )

    def _placed_near(
        self, book_id: int, start: int | None, end: int | None, page: str | None, where: str
    ) -> list[Highlight]:
        span = decode(where) if start is None else None
        if start is not None:
            found = self.near(book_id, start - ADJACENT, (end or start) + ADJACENT)
        elif span is not None:
            found = self.at_position(book_id, span)
            if page:
                found += [
                    h
                    for h in self.on_page(book_id, page, reach=ADJACENT)
                    if id(h) not in self._span_of
                ]
        elif page:
            found = self.on_page(book_id, page, reach=ADJACENT)
        else:
            return []
        return found

    def neighbours_of(self, highlight: Highlight) -> list[Highlight]:
        found = self.neighbours(
            highlight.book_id,
            highlight.location_start,
            highlight.location_end,
            highlight.page,
            highlight.position,
            self._folded.get(id(highlight), ""),
        )
        return [h for h in found if h is not highlight]


def holder_near(library: Library, book_id: int, clipping: Clipping) -> Highlight | None:
    """A highlight of the book, placed near the entry, that holds every word of it (alive
    ones first): the passage selected again, as the import finds one. Another device's
    holds it only when its words are a long run (merging.SHARED_RUN_WORDS)."""
    folded = fold_spacing_and_bom(clipping.text)
    if not folded:
        return None
    located = clipping.location_start is not None
    return next(
        (
            neighbour
            for neighbour in library.neighbours(
                book_id,
                clipping.location_start,
                clipping.location_end,
                clipping.page,
                clipping.position,
                folded,
            )
            if folded in library.folded(neighbour)
            and ((neighbour.location_start is not None) == located or long_run(folded))
        ),
        None,
    )


def reads_before(a: Highlight, b: Highlight) -> bool:
    """Whether `a` starts no later than `b` in the book: by a device's positions when both
    have one, else by locations or pages."""
    a_span, b_span = decode(a.position), decode(b.position)
    if a.location_start is None and a_span is not None and b_span is not None:
        return a_span[0] <= b_span[0]
    return position(a) <= position(b)


def position(highlight: Highlight) -> tuple[int, int]:
    """Where a highlight starts and ends in the book: its locations, else its pages."""
    if highlight.location_start is not None:
        return highlight.location_start, highlight.location_end or highlight.location_start
    return page_span(highlight.page) or (0, 0)
