"""Parse a Bookcision JSON export (one book's Kindle highlights) into dataclasses.

Pure Python, no Django. The shape Bookcision writes:

    {"asin": "B00…", "title": "…", "authors": "…",
     "highlights": [{"text": "…", "isNoteOnly": false, "note": "…",
                     "location": {"url": "kindle://book?action=open&asin=…&location=123",
                                  "value": 123}}]}

A list of such books is read too. Bookcision's notes ride on their highlight; a note on its
own is `isNoteOnly`.
"""

from typing import Any

from books.importing.clippings import ParseResult, Problem
from books.importing.marks import gettext_noop
from books.importing.rich import NO_LINE, rich_clipping

NOT_BOOKCISION = gettext_noop("not a Bookcision export: no book with 'title' and 'highlights'")
NOT_AN_OBJECT = gettext_noop("'%(title)s', highlight %(number)s: not an object")
NO_TEXT = gettext_noop("'%(title)s', highlight %(number)s: no text")


def is_bookcision(document: Any) -> bool:
    books = document if isinstance(document, list) else [document]
    return bool(books) and all(
        isinstance(b, dict) and "title" in b and isinstance(b.get("highlights"), list)
        for b in books
    )


def parse_bookcision(document: Any) -> ParseResult:
    """Read an already-decoded Bookcision document. Never raises."""
    if not is_bookcision(document):
        return ParseResult([], [Problem(1, NOT_BOOKCISION)], 1)
    books = document if isinstance(document, list) else [document]
    result = ParseResult(clippings=[], problems=[], entries=0)
    for book in books:
        title = str(book.get("title") or "").strip() or "Untitled"
        authors = book.get("authors") or ""
        author = ", ".join(map(str, authors)) if isinstance(authors, list) else str(authors)
        for number, entry in enumerate(book["highlights"], start=1):
            result.entries += 1
            where = {"title": title[:60], "number": number}
            if not isinstance(entry, dict):
                result.problems.append(Problem(NO_LINE, NOT_AN_OBJECT % where))
                continue
            text = str(entry.get("text") or "").strip()
            note = str(entry.get("note") or "").strip()
            note_only = bool(entry.get("isNoteOnly"))
            if not text and not note_only:
                result.problems.append(Problem(NO_LINE, NO_TEXT % where))
                continue
            # A note with no words goes on, for the import to skip and count as a Kindle's.
            location = entry.get("location")
            value = location.get("value") if isinstance(location, dict) else location
            start = value if isinstance(value, int) and not isinstance(value, bool) else None
            if start is None and isinstance(value, str) and value.strip().isdigit():
                start = int(value)
            result.clippings.append(
                rich_clipping(
                    title=title,
                    author=author.strip(),
                    kind="note" if note_only else "highlight",
                    text=(note or text) if note_only else text,
                    note="" if note_only else note,
                    location_start=start,
                    line=number,
                )
            )
    return result
