"""A highlight with no text (an image highlighted on a Kindle, a clipping it kept empty):
kept for its place, its date and its note, and every page says it as what it is."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.exporting.services import library_export
from books.importing.services import clippings_import
from books.models import Book, Highlight, Import
from tests.books.kindle import Entry, clippings_file

WANDA = "Notes Only Book (Writer, Wanda)"
SAID = "No text: the file kept none for this highlight (an image, perhaps)."
FILE = clippings_file(
    Entry(WANDA, "A standalone note with no highlight.", kind="Note", location="50"),
    Entry(WANDA, "", location="60-61"),
    Entry(WANDA, "The figure shows the tide tables.", kind="Note", location="61"),
    Entry(WANDA, "The sea keeps its own time, whatever the harbour clock says.", location="70-71"),
)


@pytest.fixture
def imported(alice: User) -> Import:
    return clippings_import(reader=alice, data=FILE, file_name="My Clippings.txt")


def _image(alice: User) -> Highlight:
    return Highlight.objects.get(reader=alice, kind=Highlight.Kind.HIGHLIGHT, text="")


@pytest.mark.django_db
class TextlessHighlightTests:
    def test_it_keeps_the_note_on_it(self, alice: User, imported: Import) -> None:
        assert _image(alice).note == "The figure shows the tide tables."

    def test_the_book_page_lists_every_highlight_its_header_counts(
        self, alice: User, alice_client: Client, imported: Import
    ) -> None:
        book = Book.objects.get(reader=alice, title="Notes Only Book")
        response = alice_client.get(book.get_absolute_url())
        content = response.content.decode()
        listed = list(response.context["page"].object_list)
        assert '<span class="highlight-count">3 highlights</span>' in content
        assert len(listed) == 3
        assert _image(alice) in listed
        assert f'<a href="{_image(alice).get_absolute_url()}">{SAID}</a>' in content

    def test_a_textless_highlight_without_a_note_is_listed_too(
        self, alice: User, alice_client: Client
    ) -> None:
        clippings_import(
            reader=alice, data=clippings_file(Entry(WANDA, "", location="80-81")), file_name="c"
        )
        book = Book.objects.get(reader=alice, title="Notes Only Book")
        response = alice_client.get(book.get_absolute_url())
        assert '<span class="highlight-count">1 highlight</span>' in response.content.decode()
        assert [h.text for h in response.context["page"].object_list] == [""]

    def test_its_page_says_it_has_no_text_not_that_it_is_a_word(
        self, alice: User, alice_client: Client, imported: Import
    ) -> None:
        content = alice_client.get(_image(alice).get_absolute_url()).content.decode()
        assert f'<p class="no-text" id="highlight-text">{SAID}</p>' in content
        assert "one of your" not in content
        assert "With no text, this highlight is not connected to other passages" in content
        assert "The figure shows the tide tables." in content
        spanish = alice_client.get(_image(alice).get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es")
        assert "Sin texto: el archivo no guardó ninguno" in spanish.content.decode()

    def test_the_markdown_export_says_it_rather_than_an_empty_quote(
        self, alice: User, imported: Import
    ) -> None:
        book = Book.objects.get(reader=alice, title="Notes Only Book")
        text = library_export(reader=alice, format="md", book=book).data.decode()
        assert not re.search(r"^>\s*$", text, re.MULTILINE), text
        assert f"> *{SAID}*\n> — Location 60-61" in text
        assert "**Note:** The figure shows the tide tables." in text

    def test_the_report_and_home_count_it_apart_from_what_waits(
        self, alice: User, alice_client: Client, imported: Import
    ) -> None:
        said = "1 highlight has no text (an image, perhaps): kept on its book\u2019s page"
        report = alice_client.get(imported.get_absolute_url()).content.decode()
        assert said in report
        # The note on it is kept, but with no text it is never made ready: nothing waits.
        Highlight.objects.exclude(text="").update(embedding_status=Highlight.EmbeddingStatus.DONE)
        home = alice_client.get(reverse("home")).content.decode()
        assert said in home
        assert " of 3</strong>" not in home
        assert "All 2 highlights and notes ready" in home
