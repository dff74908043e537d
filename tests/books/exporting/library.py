"""A small library with every kind of thing an export must carry."""

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight
from books.services import highlight_favourite_toggle, highlight_note_update, highlight_tag
from tests.books.kindle import Entry, clippings_file

FUNES = "Ficciones (Borges, Jorge Luis)"
SACKS = "The Man Who Mistook His Wife for a Hat (Sacks, Oliver)"
PLAIN = "Untitled notebook"

ENTRIES = [
    Entry(
        FUNES, "To think is to forget differences, to generalize, to abstract.", location="412-414"
    ),
    Entry(FUNES, "He remembered every leaf of every tree of every wood.", location="380-381"),
    Entry(FUNES, "Read this twice.", kind="Note", location="414"),
    Entry(SACKS, '=HYPERLINK("http://evil.example", "click")', location="10-11", page="3"),
    Entry(SACKS, "We have each of us a life-story,\nan inner narrative.", location="1520-1522"),
    Entry(SACKS, "A note on its own, far from any highlight.", kind="Note", location="5000"),
    Entry(PLAIN, "«Accents», ünïcödé and 中文 survive.", location="1"),
]


def build_library(reader: User) -> dict[str, Highlight]:
    clippings_import(reader=reader, data=clippings_file(*ENTRIES), file_name="clippings.txt")
    rows = {h.text.split()[0].strip("=«,"): h for h in Highlight.objects.filter(reader=reader)}
    highlight_tag(highlight=rows["To"], name="Memory")
    highlight_tag(highlight=rows["To"], name="big ideas")
    highlight_tag(highlight=rows["We"], name="memory")
    highlight_favourite_toggle(highlight=rows["He"])
    highlight_note_update(highlight=rows["We"], note="Mine, edited here.")
    return rows
