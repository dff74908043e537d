"""The results of a search: the page's highlights read in one query, the words to mark in
each, and the count as what it is (exact for words, "about" for meaning)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext

from books.models import Highlight
from books.search.fusion import Fused
from books.search.query import known_stems
from books.text import WORD, is_prefix, search_fold

PAGE_SIZE = 20
# A listing (a name with no other words) shows no more than this; a keyword count this
# large is "More than".
LISTING_MAX = 1000


@dataclass(frozen=True)
class SearchResult:
    highlight: Highlight
    score: float
    keyword_rank: int | None = None
    meaning_rank: int | None = None
    distance: float | None = None
    # The folded query words this highlight's text or note has, to mark: only when the
    # keyword half found it.
    marked_words: frozenset[str] = frozenset()
    # Found by meaning alone, farther than the model's close distance: shown apart.
    loose: bool = False

    @property
    def halves(self) -> tuple[str, ...]:
        found = []
        if self.keyword_rank is not None:
            found.append("keyword")
        if self.meaning_rank is not None:
            found.append("meaning")
        return tuple(found)

    @property
    def similarity_percent(self) -> int | None:
        return None if self.distance is None else round(100 * (1 - self.distance))

    def location(self) -> str:
        h = self.highlight
        if h.location_start is None:
            return ""
        if h.location_end is not None and h.location_end != h.location_start:
            return f"{h.location_start}-{h.location_end}"
        return str(h.location_start)

    def as_json(self) -> dict[str, Any]:
        """The shape the JSON endpoint, the command and the MCP server share."""
        h = self.highlight
        return {
            "code": str(h.code),
            "text": h.text,
            "note": h.note,
            "book": h.book.title,
            "book_code": str(h.book.code),
            "author": h.book.authors,
            "location": self.location(),
            "page": h.page,
            "added_at": h.added_at.isoformat() if h.added_at else None,
            "score": round(self.score, 6),
            "matched": list(self.halves),
            "distance": None if self.distance is None else round(self.distance, 4),
            "loosely_related": self.loose,
            "url": h.get_absolute_url(),
        }


@dataclass(frozen=True)
class SearchResults:
    query: str
    mode: str  # as asked: auto, keyword or meaning
    mode_used: str  # hybrid, keyword, meaning, or "" for an empty query
    results: list[SearchResult]  # the requested page
    total: int  # results over all pages
    offset: int
    limit: int
    # The folded words of the query (phrases split), for marking.
    words: frozenset[str] = frozenset()
    # "all" when every term matched, "any" when the any-term fallback ran, "" otherwise.
    keyword_pass: str = ""
    # The query joins terms with or: "every word" is not what it asked for.
    joins_or: bool = False
    # The highlights the words found (the keyword half), in a hybrid search as by words: a
    # hybrid count is mostly the meaning half's, and says nothing of a slip in the words.
    words_found: int = 0
    notice: str = ""
    ids: list[int] = field(default_factory=list, repr=False)  # all results' ids, in order
    # The books the query named among its words (their titles), whose highlights come first,
    # and how many of the results are theirs.
    named: tuple[str, ...] = ()
    named_words: frozenset[str] = frozenset()  # the folded query words that named them
    named_first: int = 0
    keyword_capped: bool = False  # more highlights have the words than were ranked
    meaning_capped: bool = False  # more highlights may be close than were read
    fusion: str = ""  # which rule weighted the halves (fusion_weights), in a hybrid search
    library_empty: bool = False  # nothing found, and the reader has no highlights at all
    # The last `loose` of all results (`ids`) are loosely related: found by meaning alone,
    # farther than the model's close distance (books.embedding.profiles).
    loose: int = 0
    # The results the model put within its close distance (e5's `search_close_distance`),
    # found by the words as well or not: it read the query as something (books.search.spelling).
    meaning_close: int = 0

    @property
    def total_capped(self) -> bool:
        """More highlights may match than `total` counts: a half read no further than its
        cap (a listing stops at LISTING_MAX), so `total` is a floor. The count label says
        it as "More than" or "About"."""
        listing_full = self.mode_used == "keyword" and self.total >= LISTING_MAX
        return self.keyword_capped or self.meaning_capped or listing_full

    @property
    def count_label(self) -> str:
        """The number of results as what it is: exact, unless a half read no further than
        its cap ("More than" for words, "About" for meaning). The number is grouped as the
        reader's language writes it ("1,234"; "1 234" in Spanish, with a no-break space);
        the plural is still chosen by the number itself."""
        if not self.total:
            return gettext("No results")
        close = self.total - self.loose
        if not self.loose:
            return self._close_label(close)
        loose = ngettext("%(count)s loosely related", "%(count)s loosely related", self.loose) % {
            "count": number_format(self.loose, force_grouping=True)
        }
        if not close:
            return gettext("No close matches; %(loose)s") % {"loose": loose}
        return gettext("%(close)s; %(loose)s") % {"close": self._close_label(close), "loose": loose}

    def _close_label(self, count: int) -> str:
        keyword = self.mode_used == "keyword"
        if keyword and (self.keyword_capped or count >= LISTING_MAX):
            text = ngettext(
                "More than %(count)s highlight", "More than %(count)s highlights", count
            )
        elif keyword:
            text = ngettext("%(count)s highlight", "%(count)s highlights", count)
        # The close matches are counted, not guessed: "About" only when the meaning half
        # stopped at DEPTH, or the words at theirs.
        elif self.meaning_capped or self.keyword_capped:
            text = ngettext("About %(count)s close match", "About %(count)s close matches", count)
        else:
            text = ngettext("%(count)s close match", "%(count)s close matches", count)
        return text % {"count": number_format(count, force_grouping=True)}

    @property
    def page(self) -> int:
        return self.offset // self.limit + 1 if self.limit else 1

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.limit)) if self.limit else 1

    @property
    def has_previous(self) -> bool:
        return self.offset > 0

    @property
    def has_next(self) -> bool:
        return self.offset + self.limit < self.total


def _words_of(highlight: Highlight) -> frozenset[str]:
    # As the keyword text has them: Chinese and Japanese as pairs (books.text.search_fold).
    return frozenset(WORD.findall(search_fold(f"{highlight.text} {highlight.note}")))


def _extended(query_words: frozenset[str]) -> re.Pattern[str] | None:
    """A word of the query or of its stems, with up to three letters more: "habit" marks
    "habits", "muerte" marks "muertes". Only on highlights the words found, so a near miss
    ("habitat" beside "habits") is rare and harmless. One pattern for the page: trying
    each root on each word in Python took more than reading the page."""
    roots = sorted(
        {root for word in query_words for root in (word, *known_stems(word)) if len(root) >= 3}
    )
    if not roots:
        return None
    return re.compile(f"(?:{'|'.join(re.escape(root) for root in roots)}).{{0,3}}", re.DOTALL)


def _marked(
    query_words: frozenset[str], extended: re.Pattern[str] | None, highlight: Highlight
) -> frozenset[str]:
    """The highlight's folded words that a query word or its stem (`extended`) found; a
    lone Chinese or Japanese character of the query, where it starts a pair."""
    words = _words_of(highlight)
    found = {
        word
        for word in words
        if word in query_words or (extended is not None and extended.fullmatch(word))
    }
    for lone in (word for word in query_words if is_prefix((word,), 0)):
        if any(word.startswith(lone) for word in words):
            found.add(lone)
    return frozenset(found)


def page_results(
    fused: dict[int, Fused],
    page_ids: Sequence[int],
    query_words: frozenset[str],
    loose: frozenset[int] = frozenset(),
) -> list[SearchResult]:
    """The page's results, in order, read in one query."""
    extended = _extended(query_words)
    # Not the vectors: turning 384 numbers into an array costs more than the rest of the row.
    highlights = (
        Highlight.objects.select_related("book")
        .listed()
        .order_by()  # read into a dict: the books' order would be a sort for nothing
        .in_bulk(page_ids)
    )
    return [
        SearchResult(
            highlight=highlights[pk],
            score=fused[pk].score,
            keyword_rank=fused[pk].keyword_rank,
            meaning_rank=fused[pk].meaning_rank,
            distance=fused[pk].distance,
            # Marked only where the words made the match: a result found by meaning alone
            # would otherwise light up every "is" and "the" it shares with the query.
            marked_words=(
                _marked(query_words, extended, highlights[pk])
                if fused[pk].keyword_rank is not None
                else frozenset()
            ),
            loose=pk in loose,
        )
        for pk in page_ids
        if pk in highlights
    ]
