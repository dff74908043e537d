"""The reader's books for a file's clippings: found by `identity.book_key`, created when
new, never created for a book that brings nothing to show.

A title line read the wrong way round (`Milan Kundera - La Fête de l'insignifiance`) is
turned round first, by the authors of the reader's other books, in the file and in the
library; and one book's title lines that name its authors two ways (`Richard P. Feynman and
Ralph Leighton`, `Richard Phillips Feynman; Edward Hutchings; Ralph Leighton`) take one
spelling; and a title line of a book the reader merged into another ("This is the same
book as…", books.importing.same_book) takes the kept book's title and authors; so every later
step (parts of a large file, notes, enrichment, purged traces) sees one book.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.utils.translation import gettext_noop

from accounts.models import User
from books.importing.clippings import Clipping
from books.importing.identity import (
    book_key,
    family_names,
    looks_like_a_file_name,
    may_name_a_known_author,
    normalize_author,
    normalize_title,
    oriented_title_author,
    same_author,
)
from books.models import Book, BookAlias
from exogram.wording import LIST_JOINED, plural_message, plural_noop


def book_key_of(clipping: Clipping) -> str:
    return book_key(clipping.title, clipping.author)


# Characters that take no room: a note of these alone (a zero-width space left by a
# phone's keyboard) shows as empty, and is as empty as one of spaces.
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def is_empty_note(clipping: Clipping) -> bool:
    """A note saved with nothing in it (a Kindle writes "- Your Note on Location 10" and no
    text when the reader closes the note box empty): nothing of the reader's to keep."""
    return clipping.kind == "note" and not clipping.text.translate(_ZERO_WIDTH).strip()


def clippings_orient(*, reader: User, clippings: list[Clipping]) -> int:
    """Turn round, in place, the title lines whose sides the reader's other books name.

    Returns how many clippings were turned. A name counts as an author when another
    book (another title) has it as its author: the swapped line's own "author" is only
    ever the author of itself.
    """
    titles_by_author: defaultdict[str, set[str]] = defaultdict(set)
    pairs = {(c.title, c.author) for c in clippings}
    for title, author in pairs:
        if author:
            titles_by_author[normalize_author(author)].add(normalize_title(title))
    for title, authors in Book.objects.filter(reader=reader).values_list("title", "authors"):
        if authors:
            titles_by_author[normalize_author(authors)].add(normalize_title(title))
    families = family_names(titles_by_author)
    turned: dict[tuple[str, str], tuple[str, str]] = {}
    for title, author in pairs:
        if not may_name_a_known_author(title, author, families):
            continue
        own = normalize_title(title)
        known = [name for name, titles in titles_by_author.items() if titles - {own}]
        oriented = oriented_title_author(title, author, known)
        if oriented != (title, author):
            turned[(title, author)] = oriented
    count = 0
    for clipping in clippings:
        new = turned.get((clipping.title, clipping.author))
        if new is not None:
            clipping.title, clipping.author = new
            count += 1
    return count


def clippings_unify_authors(*, reader: User, clippings: list[Clipping]) -> int:
    """Give one spelling of its authors, in place, to the title lines of one book: the same
    title (`identity.normalize_title`) with authors that share a person
    (`identity.same_author`: initials, "Last, First", co-authors). The library's book
    spelling comes first, then the file's first. Returns how many clippings changed.

    Two books of one title by different authors stay two (`Poems`); a line with no author
    joins nothing.
    """
    spellings: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    library = Book.objects.filter(reader=reader).order_by("pk").values_list("title", "authors")
    seen = [*library, *dict.fromkeys((c.title, c.author) for c in clippings)]
    for title, author in seen:
        if author:
            spellings[normalize_title(title)].append((author, normalize_author(author)))
    chosen: dict[tuple[str, str], str] = {}
    for title_key, found in spellings.items():
        canonical: list[tuple[str, str]] = []
        for author, normalized in found:
            first = next((c for c in canonical if same_author(c[1], normalized)), None)
            if first is None:
                canonical.append((author, normalized))
            elif first[1] != normalized:
                chosen[(title_key, normalized)] = first[0]
    count = 0
    if not chosen:
        return count
    for clipping in clippings:
        if not clipping.author:
            continue
        spelling = chosen.get((normalize_title(clipping.title), normalize_author(clipping.author)))
        if spelling is not None and spelling != clipping.author:
            clipping.author = spelling
            count += 1
    return count


def clippings_follow_merges(*, reader: User, clippings: list[Clipping]) -> int:
    """Give, in place, the kept book's title and authors to the title lines of a book the
    reader merged into it; returns how many clippings changed. A line whose key a book of
    the library holds stays that book's."""
    if not clippings:
        return 0
    keys = {book_key_of(c) for c in clippings}
    aliases = dict(
        BookAlias.objects.filter(reader=reader, key__in=list(keys))
        .exclude(key__in=Book.objects.filter(reader=reader, key__in=list(keys)).values("key"))
        .values_list("key", "book_id")
    )
    if not aliases:
        return 0
    kept = Book.objects.in_bulk(set(aliases.values()))
    count = 0
    for clipping in clippings:
        book_id = aliases.get(book_key_of(clipping))
        if book_id is not None:
            clipping.title, clipping.author = kept[book_id].title, kept[book_id].authors
            count += 1
    return count


@dataclass
class FileBooks:
    """The file's books by key, how many of them are new to the library, and the books it
    named but brought nothing of."""

    books: dict[str, Book]
    # title -> why nothing was kept ("48 entries, all at the publisher's clipping limit")
    empty: dict[str, str] = field(default_factory=dict)
    created: int = 0


def books_for_file(*, reader: User, clippings: Iterable[Clipping]) -> FileBooks:
    """The reader's Book for each key among the clippings, created when missing; none for
    a book whose every entry is a bookmark, a clipping-limit placeholder or an empty note."""
    wanted: dict[str, Clipping] = {}
    kept: set[str] = set()
    entries: defaultdict[str, list[Clipping]] = defaultdict(list)
    for clipping in clippings:
        key = book_key_of(clipping)
        first = wanted.setdefault(key, clipping)
        if looks_like_a_file_name(first.title) and not looks_like_a_file_name(clipping.title):
            wanted[key] = clipping  # the book's own title, not its file's name
        entries[key].append(clipping)
        # What the import keeps: highlights (an image highlight has no text but a place
        # and a date) and notes; not bookmarks, not a placeholder with nothing before it,
        # not an empty note.
        if (
            clipping.kind != "bookmark"
            and not (clipping.truncated and not clipping.text)
            and not is_empty_note(clipping)
        ):
            kept.add(key)
    books = {b.key: b for b in Book.objects.filter(reader=reader, key__in=list(wanted))}
    retitled = [
        book
        for key, book in books.items()
        if looks_like_a_file_name(book.title) and not looks_like_a_file_name(wanted[key].title)
    ]
    for book in retitled:
        book.title = wanted[book.key].title.strip()[:1000]  # its own title, not its file's
    Book.objects.bulk_update(retitled, ["title"])
    empty = {
        wanted[key].title.strip() or "Untitled": _why_empty(entries[key])
        for key in wanted
        if key not in kept and key not in books
    }
    missing = [
        Book(
            reader=reader,
            key=key,
            title=c.title.strip()[:1000] or "Untitled",
            authors=c.author.strip()[:1000],
            authors_normalized=normalize_author(c.author)[:1000],
        )
        for key, c in wanted.items()
        if key not in books and key in kept
    ]
    for book in Book.objects.bulk_create(missing):
        books[book.key] = book
    return FileBooks(books=books, empty=empty, created=len(missing))


# Why the file's entries of a book made no book: stored in English in the import's counts,
# said in the reader's language on its report (books.wording), each reason on its own.
NOTHING_TO_KEEP = gettext_noop("%(reasons)s: no highlight or note to keep")
AT_CLIPPING_LIMIT = plural_noop(
    "%(count)s entry at the publisher's clipping limit",
    "%(count)s entries at the publisher's clipping limit",
)
BOOKMARKS = plural_noop("%(count)s bookmark", "%(count)s bookmarks")
EMPTY_NOTES = plural_noop("%(count)s empty note", "%(count)s empty notes")
# Stored by imports before empty notes were told apart; never built since.
WITHOUT_TEXT = plural_noop("%(count)s entry with no text", "%(count)s entries with no text")


def _why_empty(entries: list[Clipping]) -> str:
    counted = [
        (AT_CLIPPING_LIMIT, sum(1 for c in entries if c.truncated)),
        (BOOKMARKS, sum(1 for c in entries if c.kind == "bookmark")),
        (EMPTY_NOTES, sum(1 for c in entries if is_empty_note(c))),
    ]
    reasons = [plural_message(pair, count) for pair, count in counted if count]
    return NOTHING_TO_KEEP % {"reasons": LIST_JOINED.join(reasons)}
