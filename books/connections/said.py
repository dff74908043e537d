"""What a highlight's page says of its connections, in words: one source for the page and
for the tools (the JSON API's and the MCP server's `state_said`), so that a tool is told
what the reader reads. They had drifted: the page said "ready for connections" and "yet"
only while something waited, the tools still "Read by the model … yet".

"Yet" only while passages of other books wait to be made ready (books.selectors.
other_books): with none waiting it promises a connection that is not coming, and with no
other book in the library a connection waits for another book, not for this one.
"""

from dataclasses import dataclass

from django.contrib.humanize.templatetags.humanize import intcomma
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext, ngettext

from books.connections.selectors import HighlightConnections
from books.models import Highlight
from books.selectors import OtherBooks, other_books

# The state a tool reads (books.library_api); the words are `ConnectionsSaid.text`.
WAITING = "waiting"  # not ready for connections yet (pending, being embedded, or failed)
READ = "read"  # ready: its connections, or with none the nearest passages, are listed
WORD = "word"  # a word, a short phrase, a heading or a short note: never connected


@dataclass(frozen=True)
class ConnectionsSaid:
    """Each sentence where the page shows it; "" where the page says nothing."""

    state: str
    same_idea: str = ""  # under "Same idea"
    related: str = ""  # under "Related"
    nearest: str = ""  # under "Nearest in your library"
    empty: str = ""  # the whole of what is said when nothing is listed
    # `empty` with its link to the book's words, for the page.
    empty_html: SafeString | str = ""

    @property
    def text(self) -> str:
        """All of it, in the page's order: what a tool is told."""
        return " ".join(s for s in (self.same_idea, self.related, self.nearest, self.empty) if s)


def _word_parts(highlight: Highlight) -> tuple[str, str, str] | None:
    """A word's sentence in three parts, the middle one the page's link to the book's words;
    None for a short note (a sentence with no link)."""
    if highlight.kind != Highlight.Kind.HIGHLIGHT:
        return None
    if highlight.word_kind == "heading":
        before = gettext("This is a heading of the book, listed with your")
        after = gettext(
            "from this book: it is kept and found by keyword search, but it is not connected "
            "to other passages."
        )
    else:
        before = gettext("This is one of your")
        after = gettext(
            "from this book: a word or short phrase is kept and found by keyword search, but "
            "it is not connected to other passages."
        )
    return before, gettext("words"), after


def _word_said(highlight: Highlight) -> ConnectionsSaid:
    if highlight.kind == Highlight.Kind.HIGHLIGHT and not highlight.text:
        # A Kindle image clipping: the file kept no text (books.importing.clippings).
        alone = gettext(
            "With no text, this highlight is not connected to other passages; its place, its "
            "date and any note of yours on it are kept."
        )
        return ConnectionsSaid(state=WORD, empty=alone, empty_html=alone)
    parts = _word_parts(highlight)
    if parts is None:
        note = gettext(
            "A note of a few words is kept and found by keyword search, but it is too short "
            "to connect to other passages."
        )
        return ConnectionsSaid(state=WORD, empty=note, empty_html=note)
    before, words, after = parts
    link = reverse("book_words", args=[highlight.book.code])
    return ConnectionsSaid(
        state=WORD,
        empty=f"{before} {words} {after}",
        empty_html=format_html('{} <a href="{}">{}</a> {}', before, link, words, after),
    )


def _alone() -> str:
    return gettext(
        "A connection joins passages from two different books, and your library has no other "
        "book with passages to compare it with."
    )


def _nothing_said(others: OtherBooks) -> str:
    if others.none:
        return _alone()
    if others.waiting:
        return ngettext(
            "No passage from another author connects to this one yet: %(shown)s passage of "
            "your other books is not ready for connections.",
            "No passage from another author connects to this one yet: %(shown)s passages of "
            "your other books are not ready for connections.",
            others.waiting,
        ) % {"shown": intcomma(others.waiting)}
    return gettext(
        "No passage from another author connects to this one: your other books have no "
        "passage to compare it with."
    )


def connections_said(
    highlight: Highlight, connections: HighlightConnections | None
) -> ConnectionsSaid:
    """What the page says of `highlight`'s connections (`connections`: highlight_connections
    of a highlight ready for them, else None), in the active language."""
    if highlight.is_word:
        return _word_said(highlight)
    if highlight.embedding_status != Highlight.EmbeddingStatus.DONE or connections is None:
        waiting = gettext("This highlight is not ready for connections yet.")
        if other_books(highlight.book).none:
            return ConnectionsSaid(state=WAITING, empty=f"{waiting} {_alone()}")
        waiting = gettext(
            "This highlight is not ready for connections yet; its connections appear once it is."
        )
        return ConnectionsSaid(state=WAITING, empty=waiting)
    same_idea = gettext("Passages from other authors that say much the same thing.")
    related = gettext("Passages from other authors on a shared theme, worth reading side by side.")
    said = ConnectionsSaid(
        state=READ,
        same_idea=same_idea if connections.same_idea else "",
        related=related if connections.related else "",
    )
    if connections.nearest:
        if connections.nearest_judged:
            nearest = gettext(
                "The closest passages from your other books. None is close enough to call a "
                "connection (that takes %(percent)s%% or more); beside each, how likely "
                "Exogram thinks a reader would call the two related."
            ) % {"percent": connections.connection_percent}
        else:
            nearest = gettext(
                "The closest passages from your other books by meaning; Exogram has not yet "
                "weighed how related they are."
            )
        return ConnectionsSaid(state=READ, nearest=nearest)
    if said.same_idea or said.related:
        return said
    return ConnectionsSaid(state=READ, empty=_nothing_said(other_books(highlight.book)))
