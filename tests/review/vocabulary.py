"""A reader's looked-up words, built straight in the database like tests.books.library."""

from accounts.models import User
from books.models import Book, Highlight
from tests.books.library import book_of, highlight_in


def word_in(book: Book, text: str, *, location: int, note: str = "") -> Highlight:
    word = highlight_in(book, text, location=location)
    word.note = note
    word.refresh_is_word()
    word.refresh_search_text()
    word.save()
    assert word.is_word, f"{text!r} is a passage, not a word"
    return word


WORDS = ["allay", "ostensibly", "iota", "pyre", "sieve", "groves", "quell", "wane"]
WORDS += ["lucid", "fervid", "tacit", "vapid"]


def words_of(reader: User, count: int) -> list[Highlight]:
    """`count` different words in one book, with no sentence highlighted around them."""
    book = book_of(reader, "The Word Book", "Lexis, Ana")
    return [word_in(book, WORDS[i], location=100 * (i + 1)) for i in range(count)]
