"""The library's books as the pages' filters offer them, kept once per version of the
library (books.library_cache): the library page's list, and the <option>s of the
connections and search pages' book and author filters."""

from collections import Counter
from uuid import UUID

from django.utils.safestring import SafeString
from django.utils.text import Truncator

from accounts.models import User
from books.library_cache import LibraryCache
from books.models import Book
from books.selectors import books_for

# A book filter's option shows at most this much of a title.
BOOK_OPTION_CHARS = 70


def books_cached(
    reader: User, shelf: LibraryCache, *, sort: str = "title", query: str = ""
) -> list[Book]:
    """books_for, computed once per version of the library: it counts every highlight of
    every book (76 ms of database on 20,000 highlights)."""
    return shelf.get("books", lambda: books_for(reader, sort=sort, query=query), sort, query)


def book_choices(reader: User, shelf: LibraryCache, *, selected: UUID | None) -> SafeString:
    """The <option>s of a page's book filter (connections, search), rendered once per
    version of the library: a library of hundreds of books was otherwise read (or
    unpickled) and rendered option by option at each page. `selected`: one of the
    reader's own books, already looked up through its ownership test."""

    def context() -> dict[str, object]:
        shown = [
            (book, Truncator(book.title).chars(BOOK_OPTION_CHARS))
            for book in books_cached(reader, shelf)
        ]
        # Two books shown with one title (two translations, two "Selected Essays") are told
        # apart by their authors; every other option is the title alone.
        counts = Counter(title for _book, title in shown)
        shared = {title for title, count in counts.items() if count > 1}
        return {"books": shown, "selected": selected, "shared_titles": shared}

    return shelf.html("book-options", "books/_book_options.html#books", context, selected or "")


def author_choices(reader: User, shelf: LibraryCache) -> SafeString:
    """The <option>s of the search page's author list, rendered once per version."""

    def context() -> dict[str, object]:
        return {
            "authors": sorted(
                {b.authors_display for b in books_cached(reader, shelf) if b.authors_display}
            )
        }

    return shelf.html("author-options", "books/_book_options.html#authors", context)
