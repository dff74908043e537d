"""A reader's library imported and embedded by the real pipeline, and its connections."""

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.models import Connection, Highlight
from tests.books.kindle import Entry, clippings_file


def embedded_library(reader: User, *entries: Entry) -> dict[str, Highlight]:
    """The entries imported as one clippings file and embedded (and so connected): the
    reader's highlights by their text."""
    clippings_import(reader=reader, data=clippings_file(*entries), file_name="c.txt")
    mine = Highlight.objects.filter(reader=reader)
    highlights_embed(ids=list(mine.values_list("pk", flat=True)))
    return {h.text: h for h in mine.select_related("book")}


def connection_between(a: Highlight, b: Highlight) -> Connection | None:
    """The stored connection of two highlights, whichever side each is on."""
    low, high = sorted((a.pk, b.pk))
    return Connection.objects.filter(highlight_a_id=low, highlight_b_id=high).first()
