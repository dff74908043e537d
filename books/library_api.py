"""The reads (and the one write) that the MCP server and the HTTP API share.

Each function takes the reader and plain arguments (codes as strings, as a tool sends
them) and returns plain JSON-ready dicts. Every highlight in every answer carries its
book's title, its author and its location: a citation an assistant can quote. Another
reader's code, a deleted highlight and a malformed code are all the same `NotFound`, so
an answer never tells whether someone else's row exists.
"""

from typing import Any
from uuid import UUID

from django.db import transaction
from django.utils import translation

from accounts.models import User
from books.connections.said import connections_said
from books.connections.selectors import ConnectedHighlight, connections_for, highlight_connections
from books.models import NOTE_MAX_LENGTH, Book, Highlight
from books.search.search import MODES, QUERY_MAX_LENGTH
from books.search.search import search as search_library
from books.selectors import books_for
from books.services import highlight_note_update
from exogram.reader_slots import reader_slot, searches_at_once

SEARCH_MAX_LIMIT = 50
CONNECTIONS_MAX_LIMIT = 50
BOOK_HIGHLIGHTS_MAX_LIMIT = 200
# Beyond any library (PostgreSQL's bigint ends at 2**63 - 1: a larger offset was a 500).
OFFSET_MAX = 1_000_000_000


class NotFound(LookupError):
    """No such row in this reader's library (or not theirs: the same answer)."""


class BadArgument(ValueError):
    """An argument outside what the read accepts; the message says what is accepted."""


def _code(value: str, what: str) -> UUID:
    try:
        return UUID(str(value).strip())
    except ValueError:
        raise NotFound(f"No {what} with the code {value!r} in your library.") from None


def _highlight(reader: User, code: str) -> Highlight:
    found = (
        Highlight.objects.alive()
        .select_related("book")
        .defer("embedding", "english_embedding", "search_text")
        .filter(reader=reader, code=_code(code, "highlight"))
        .first()
    )
    if found is None:
        raise NotFound(f"No highlight with the code {code!r} in your library.")
    return found


def _book(reader: User, code: str) -> Book:
    found = Book.objects.filter(reader=reader, code=_code(code, "book")).first()
    if found is None:
        raise NotFound(f"No book with the code {code!r} in your library.")
    return found


def _limit(value: int, *, maximum: int, name: str = "limit") -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1 or value > maximum:
        raise BadArgument(f"{name} must be a whole number from 1 to {maximum}, not {value!r}.")
    return value


def _offset(value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= OFFSET_MAX:
        shown = value if not isinstance(value, int) or value < 10**12 else "a larger number"
        raise BadArgument(f"offset must be a whole number from 0 to {OFFSET_MAX:,}, not {shown!r}.")
    return value


def _next_offset(offset: int, limit: int, total: int) -> int | None:
    return offset + limit if offset + limit < total else None


def location_of(highlight: Highlight) -> str:
    """ "Location 120-124", "page 12", "page 12, location 120" or "" for neither."""
    parts = []
    if highlight.page:
        parts.append(f"page {highlight.page}")
    if highlight.location_start is not None:
        where = str(highlight.location_start)
        if (
            highlight.location_end is not None
            and highlight.location_end != highlight.location_start
        ):
            where += f"-{highlight.location_end}"
        parts.append(f"location {where}")
    text = ", ".join(parts)
    return text[:1].upper() + text[1:]


def highlight_json(highlight: Highlight) -> dict[str, Any]:
    """One highlight with its citation: book, author, location."""
    book = highlight.book
    return {
        "code": str(highlight.code),
        "kind": highlight.kind,
        "text": highlight.text,
        "note": highlight.note,
        "book": book.title,
        "book_code": str(book.code),
        "author": book.authors,
        "location": location_of(highlight),
        "chapter": highlight.chapter,
        "page": highlight.page,
        "location_start": highlight.location_start,
        "location_end": highlight.location_end,
        "added_at": highlight.added_at.isoformat() if highlight.added_at else None,
        "favourite": highlight.favourite,
        "url": highlight.get_absolute_url(),
    }


def book_json(book: Book) -> dict[str, Any]:
    # highlight_count and last_added are books_for()'s annotations.
    last_added = getattr(book, "last_added", None)
    return {
        "code": str(book.code),
        "title": book.title,
        "author": book.authors,
        "highlights": getattr(book, "highlight_count", None),
        "last_added_at": last_added.isoformat() if last_added else None,
        "url": book.get_absolute_url(),
    }


def library_search(
    reader: User,
    *,
    query: str,
    mode: str = "auto",
    limit: int = 10,
    offset: int = 0,
    book: str | None = None,
    query_name: str = "query",
) -> dict[str, Any]:
    """The reader's highlights for a query, best first (hybrid words + meaning), a page at
    a time. `query_name` is what the caller's client calls the query (the API's `q`), for
    the messages.

    `total` counts the results there are pages of. A search ranks only the first few
    hundred highlights its words find (books.search.keyword) and the closest by meaning:
    `total_capped` says more highlights match than were ranked, so `total` is a floor."""
    if mode not in MODES:
        raise BadArgument(f"mode must be one of {', '.join(MODES)}, not {mode!r}.")
    if not isinstance(query, str) or not query.strip():
        raise BadArgument(f"{query_name} must be some words to search for.")
    if len(query) > QUERY_MAX_LENGTH:
        raise BadArgument(f"{query_name} must be at most {QUERY_MAX_LENGTH} characters.")
    limit = _limit(limit, maximum=SEARCH_MAX_LIMIT)
    offset = _offset(offset)
    the_book = _book(reader, book) if book else None
    with reader_slot(kind="search", reader_id=reader.pk, limit=searches_at_once()):
        found = search_library(reader, query, mode=mode, book=the_book, limit=limit, offset=offset)
    results = []
    for result in found.results:
        row = highlight_json(result.highlight)
        row["score"] = round(result.score, 6)
        row["matched"] = list(result.halves)
        results.append(row)
    return {
        "query": query,
        "mode": mode,
        "mode_used": found.mode_used,
        "notice": found.notice,
        "total": found.total,
        "total_capped": found.total_capped,
        "offset": offset,
        "limit": limit,
        "next_offset": _next_offset(offset, limit, found.total),
        "results": results,
    }


def _connections(highlight: Highlight, limit: int) -> list[dict[str, Any]]:
    rows = []
    for connected in connections_for(highlight, limit=limit):
        row = highlight_json(connected.highlight)
        # The reader's words for it ("same idea", "related"), and the judge's percentage as
        # the pages show it ("73% likely related"); null for a pair it never judged.
        row["strength"] = str(connected.strength) if connected.strength else "nearest"
        row["likely_related_percent"] = connected.percent
        row["same_author"] = connected.same_author
        rows.append(row)
    return rows


def _nearest_json(nearest: ConnectedHighlight) -> dict[str, Any]:
    row = highlight_json(nearest.highlight)
    row["strength"] = "nearest"
    # The judge's percentage, as the page shows it beside each; null when it never weighed
    # the pair (then the passage is only the closest by the vectors).
    row["likely_related_percent"] = nearest.percent
    row["same_author"] = nearest.same_author
    row["connection"] = False
    return row


def _connections_state(highlight: Highlight, connections: list[dict[str, Any]]) -> dict[str, Any]:
    """`state`, `state_said`, and the nearest passages the highlight page shows when no
    other author's passage connects: its own selector (highlight_connections) and its own
    words (books.connections.said, in English as the rest of the API), so a tool and the
    page never disagree. A tool that got only "connections": [] could not tell a highlight
    still waiting to be made ready, or a word, from one ready and found alone."""
    shown = None
    if not highlight.is_word and highlight.embedding_status == Highlight.EmbeddingStatus.DONE:
        shown = highlight_connections(highlight)
    with translation.override("en"):
        said = connections_said(highlight, shown)
    nearest = [_nearest_json(c) for c in shown.nearest] if shown else []
    connection_percent = shown.connection_percent if shown and shown.nearest_judged else None
    state_said = said.text
    if connections and shown and not (shown.same_idea or shown.related):
        state_said += " The connections listed are to the same author's other books."
    return {
        "state": said.state,
        "state_said": state_said,
        "nearest": nearest,
        "connection_percent": connection_percent,
    }


def library_highlight(reader: User, *, code: str) -> dict[str, Any]:
    """One highlight in full, with its tags and its connections to the reader's other books."""
    highlight = _highlight(reader, code)
    row = highlight_json(highlight)
    row["tags"] = sorted(highlight.tags.values_list("name", flat=True))
    row["connections"] = _connections(highlight, 10)
    row.update(_connections_state(highlight, row["connections"]))
    return row


def library_connections_of(reader: User, *, code: str, limit: int = 10) -> dict[str, Any]:
    """Highlights from the reader's other books that carry the same idea, closest first;
    the highlight's state, and with no connection from another author, the nearest
    passages the highlight page shows (never connections: `connection` false)."""
    limit = _limit(limit, maximum=CONNECTIONS_MAX_LIMIT)
    highlight = _highlight(reader, code)
    connections = _connections(highlight, limit)
    return {
        "highlight": highlight_json(highlight),
        "connections": connections,
        **_connections_state(highlight, connections),
    }


def library_books(reader: User, *, query: str | None = None) -> dict[str, Any]:
    """The reader's books by title, with how many highlights each holds."""
    books = books_for(reader, query=(query or "").strip())
    return {"query": query or "", "books": [book_json(book) for book in books]}


def library_book_highlights(
    reader: User, *, book_code: str, offset: int = 0, limit: int = 50
) -> dict[str, Any]:
    """A book's highlights in reading order (by location, then page), a page at a time."""
    limit = _limit(limit, maximum=BOOK_HIGHLIGHTS_MAX_LIMIT)
    offset = _offset(offset)
    book = _book(reader, book_code)
    highlights = (
        book.highlights.alive()
        .select_related("book")
        .listed()
        .order_by("location_start", "reading_key", "page", "created", "pk")
    )
    total = highlights.count()
    page = highlights[offset : offset + limit]
    return {
        "book": {"code": str(book.code), "title": book.title, "author": book.authors},
        "total": total,
        "offset": offset,
        "limit": limit,
        "highlights": [highlight_json(h) for h in page],
        "next_offset": _next_offset(offset, limit, total),
    }


def library_note_add(reader: User, *, code: str, text: str) -> dict[str, Any]:
    """Add the reader's words to a highlight's note (after any note already there).

    Never touches the highlight's text; the note is marked as the reader's own, so a
    re-import never overwrites it. The answer is the highlight, and `tags_added`: the tags
    the note's new hashtags gave it (books.services.highlight_note_update).
    """
    if not isinstance(text, str) or not text.strip():
        raise BadArgument("text must be the words of the note.")
    with transaction.atomic():
        highlight = _highlight(reader, code)
        # The note as it stands, its row locked: two additions at once keep both words.
        before = Highlight.objects.select_for_update().values_list("note", flat=True)
        highlight.note = before.get(pk=highlight.pk)
        note = f"{highlight.note}\n\n{text.strip()}" if highlight.note.strip() else text.strip()
        if len(note) > NOTE_MAX_LENGTH:
            raise BadArgument(f"The note would be longer than {NOTE_MAX_LENGTH} characters.")
        tagged = highlight_note_update(highlight=highlight, note=note)
    return {**highlight_json(highlight), "tags_added": tagged}
