"""books 0046: a highlight or a note stored with control characters before imports dropped
them is cleaned as an import now cleans it, so the same file imported again knows it and
adds nothing beside it."""

import uuid
from importlib import import_module

import pytest
from django.apps import apps

from accounts.models import User
from books.importing.identity import book_key
from books.importing.services import clippings_import
from books.models import Book, Highlight
from tests.books.kindle import BORGES, Entry, clippings_file

highlight_texts_without_controls = import_module(
    "books.migrations.0046_highlight_texts_without_controls"
).highlight_texts_without_controls

RAW = "Funes\x07 remembered\x1b[2J every\u200b leaf."
CLEAN = "Funes remembered[2J every leaf."
THAI = "\u0e04\u0e33\u200b\u0e04\u0e33 and a scientist \U0001f469\u200d\U0001f52c"


def _stored_as_before(highlight: Highlight, text: str, note: str = "") -> None:
    """As an import before this one stored it: the text as the file held it, and the dedupe
    key its words gave."""
    highlight.text, highlight.note = text, note
    highlight.dedupe_key = highlight.dedupe_key_from_fields()
    highlight.refresh_search_text()
    highlight.save()


@pytest.mark.django_db
class TextsWithoutControlsTests:
    def test_a_stored_highlight_is_cleaned_and_known_again(self, alice: User) -> None:
        data = clippings_file(
            Entry(BORGES, RAW, location="10"),
            Entry(BORGES, THAI, location="20"),
            Entry(BORGES, "Another passage, with a note.", location="30"),
            Entry(BORGES, "Line one\r\nline two\x0bthree\x07", kind="Note", location="30"),
        )
        clippings_import(reader=alice, data=data, file_name="c.txt")
        rows = {h.location_start: h for h in Highlight.objects.filter(reader=alice)}
        _stored_as_before(rows[10], RAW)
        _stored_as_before(rows[30], rows[30].text, "Line one\r\nline two\x0bthree\x07")
        thai_key = rows[20].dedupe_key

        highlight_texts_without_controls(apps, None)

        cleaned = {h.location_start: h for h in Highlight.objects.filter(reader=alice)}
        assert cleaned[10].text == CLEAN
        assert cleaned[10].dedupe_key == cleaned[10].dedupe_key_from_fields()
        assert "remembered" in cleaned[10].search_text
        assert cleaned[30].note == "Line one\nline two\nthree"
        assert (cleaned[20].text, cleaned[20].dedupe_key) == (THAI, thai_key)
        again = clippings_import(reader=alice, data=data, file_name="c.txt")
        assert again.counts["new_highlights"] == 0
        assert Highlight.objects.filter(reader=alice).count() == 3

        highlight_texts_without_controls(apps, None)  # a second run changes nothing
        assert Highlight.objects.get(pk=cleaned[10].pk).text == CLEAN

    def test_a_key_another_row_holds_is_left_to_its_row(self, alice: User) -> None:
        # The same passage stored twice, once with a bell: cleaned, but its key stays its
        # own (two rows of one reader never share one).
        data = clippings_file(Entry(BORGES, CLEAN, location="10"))
        clippings_import(reader=alice, data=data, file_name="c.txt")
        kept = Highlight.objects.get(reader=alice)
        twin = Highlight.objects.get(pk=kept.pk)
        twin.pk = None
        twin.code = uuid.uuid4()
        twin.dedupe_key = "stepped-aside"
        twin.save()
        _stored_as_before(twin, RAW)
        highlight_texts_without_controls(apps, None)
        twin.refresh_from_db()
        assert twin.text == CLEAN
        assert twin.dedupe_key != kept.dedupe_key

    def test_a_book_titled_with_one_is_the_book_the_file_names_again(self, alice: User) -> None:
        # Its key, as the rule before read a control character: a space between words.
        data = clippings_file(Entry("Fic\x08ciones (Borges\x07, Jorge Luis)", RAW))
        clippings_import(reader=alice, data=data, file_name="c.txt")
        book = Book.objects.get(reader=alice)
        assert (book.title, book.authors) == ("Ficciones", "Borges, Jorge Luis")
        book.title, book.authors = "Fic\x08ciones", "Borges\x07, Jorge Luis"
        book.key = book_key("Fic ciones", "Borges , Jorge Luis")
        book.save()
        highlight = Highlight.objects.get(reader=alice)
        _stored_as_before(highlight, RAW)

        highlight_texts_without_controls(apps, None)
        again = clippings_import(reader=alice, data=data, file_name="c.txt")

        assert (again.counts["new_books"], again.counts["new_highlights"]) == (0, 0)
        book.refresh_from_db()
        assert (book.title, book.authors) == ("Ficciones", "Borges, Jorge Luis")
        assert Book.objects.get(reader=alice).key == book_key("Ficciones", "Borges, Jorge Luis")
        assert list(Highlight.objects.filter(reader=alice).values_list("text", flat=True)) == [
            CLEAN
        ]
