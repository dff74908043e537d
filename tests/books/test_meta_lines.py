"""A highlight's details on one line (book, author, where, when): separated in the text
itself, so a screen reader and a copy-paste read "Ficciones · Borges, Jorge Luis · location
412", never "Borges, Jorge Luislocation 412" (separators drawn by CSS alone)."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight
from books.services import highlight_favourite_toggle
from tests.books.kindle import BORGES, MEMORY_LIBRARY, Entry, clippings_file


def _meta_lines(page: str) -> list[str]:
    """Each meta line's text as a copy of it reads: tags out, spaces as a browser shows them."""
    blocks = re.findall(r'<div class="meta">(.*?)</div>', page, flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", "", block).split()) for block in blocks]


@pytest.fixture
def think(alice: User) -> Highlight:
    clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
    return Highlight.objects.get(reader=alice, location_start=412, kind="highlight")


@pytest.mark.django_db
class MetaLineTests:
    def test_a_list_with_the_book_separates_book_author_location_and_date(
        self, think: Highlight, alice_client: Client
    ) -> None:
        highlight_favourite_toggle(highlight=think)
        page = alice_client.get(reverse("library"), {"favourite": "1"}).content.decode()
        assert "Ficciones · Borges, Jorge Luis · location 412\u2013414 · 3 Mar 2025" in _meta_lines(
            page
        )

    def test_a_book_page_separates_location_and_date_and_starts_with_no_separator(
        self, think: Highlight, alice_client: Client
    ) -> None:
        alone = Entry(BORGES, "A note on no passage.", kind="Note", location="999")
        clippings_import(reader=think.reader, data=clippings_file(alone), file_name="n.txt")
        page = alice_client.get(think.book.get_absolute_url()).content.decode()
        lines = _meta_lines(page)
        assert "location 412\u2013414 · added 3 Mar 2025" in lines
        assert "note · location 999 · added 3 Mar 2025" in lines
        assert not [line for line in lines if line.startswith("·")]

    def test_the_highlight_page_ends_its_line_without_a_separator_when_it_has_no_date(
        self, think: Highlight, alice_client: Client
    ) -> None:
        # A notebook export gives no date: the line ended "location 412-414 · ".
        Highlight.objects.filter(pk=think.pk).update(added_at=None, page="12")
        page = alice_client.get(think.get_absolute_url()).content.decode()
        assert "page 12 · location 412\u2013414" in _meta_lines(page)
