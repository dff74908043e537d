"""A KOReader book sorted by location reads in the book's order: by the device's position,
step by step as numbers, else by the page as a number, never the page as text (12, 125, 13)."""

from importlib import import_module

import pytest
from django.apps import apps

from accounts.models import User
from books.importing.positions import reading_key
from books.importing.services import clippings_import
from books.models import Book, Highlight
from books.selectors import book_highlights

# In the book's order, with the pages a small font gave. The xpointers have steps of
# different lengths: /p[3]/span[2]/text().4 is [1, 1, 3, 2, 1, 4], /p[22]/text().0 is
# [1, 1, 22, 1, 0].
ENTRIES = [
    (12, "/body/DocFragment[5]/body/div/p[3]/span[2]/text().4", "First, in a span."),
    (13, "/body/DocFragment[5]/body/div/p[22]/text().0", "Second, later in that part."),
    (31, "/body/DocFragment[10]/body/div/p[3]/text().0", "Third, in the next part."),
    (125, "/body/DocFragment[12]/body/p[1]/text().9", "Fourth, further on."),
]


def _sidecar() -> bytes:
    # Written out of order, as KOReader keeps them in the order they were made.
    annotations = "".join(
        f"""        [{index}] = {{
            ["datetime"] = "2026-02-2{index} 10:00:00",
            ["drawer"] = "lighten",
            ["pageno"] = {page},
            ["pos0"] = "{pos}",
            ["pos1"] = "{pos[: pos.rindex(".")]}.90",
            ["text"] = "{text}",
        }},
"""
        for index, (page, pos, text) in enumerate(reversed(ENTRIES), start=1)
    )
    return (
        'return {\n    ["annotations"] = {\n'
        + annotations
        + '    },\n    ["doc_props"] = '
        + '{ ["authors"] = "Chidi Okonkwo", ["title"] = "The Quiet Engine" },\n}\n'
    ).encode()


def _texts(book: Book) -> list[str]:
    return [h.text for h in book_highlights(book, sort="location")]


@pytest.mark.django_db
class ReadingOrderTests:
    def test_it_sorts_a_koreader_book_by_its_positions(self, alice: User) -> None:
        clippings_import(reader=alice, data=_sidecar(), file_name="metadata.epub.lua")
        book = Book.objects.get(reader=alice)
        assert _texts(book) == [text for _, _, text in ENTRIES]

    def test_it_sorts_highlights_without_a_position_by_their_page_as_a_number(
        self, alice: User
    ) -> None:
        clippings_import(reader=alice, data=_sidecar(), file_name="metadata.epub.lua")
        Highlight.objects.update(position="")
        for highlight in Highlight.objects.all():
            highlight.refresh_reading_key()
            highlight.save(update_fields=["reading_key"])
        book = Book.objects.get(reader=alice)
        assert _texts(book) == [text for _, _, text in ENTRIES]

    def test_the_migration_keys_the_highlights_already_stored(self, alice: User) -> None:
        clippings_import(reader=alice, data=_sidecar(), file_name="metadata.epub.lua")
        Highlight.objects.update(reading_key="")
        migration = import_module("books.migrations.0030_highlight_reading_key")
        migration.reading_keys_fill(apps, None)
        assert not Highlight.objects.filter(reading_key="").exists()
        book = Book.objects.get(reader=alice)
        assert _texts(book) == [text for _, _, text in ENTRIES]


def test_a_position_key_compares_steps_as_numbers() -> None:
    short = '[["000000005",[1,1,22,1,0]],["000000005",[1,1,22,1,9]]]'
    long = '[["000000005",[1,1,3,2,1,4]],["000000005",[1,1,3,2,1,9]]]'
    assert reading_key(long, "40") < reading_key(short, "12")
    assert reading_key("", "13") < reading_key("", "125")
    assert reading_key("", "xix") == ""
