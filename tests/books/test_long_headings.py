"""A book's long headings are the reader's words (books.vocabulary.is_heading): marked at
import, listed under the book's headings, never connected; the migration's backfill."""

from importlib import import_module

import pytest
from django.apps import apps
from django.test import Client

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.models import Book, Connection, Highlight
from tests.books.kindle import BORGES, SACKS, Entry, clippings_file

# Two headings of two books that say nearly the same: as passages they connected.
HEADINGS = [
    Entry(BORGES, "CHAPTER ONE: THE MEMORY OF FUNES AND THE ART OF FORGETTING", location="300"),
    Entry(SACKS, "CHAPTER TWO: THE MEMORY OF PATIENTS AND THE ART OF FORGETTING", location="1300"),
]
TWIN_PASSAGES = [
    Entry(BORGES, "To think is to forget differences, to generalize, to abstract.", location="412"),
    Entry(
        SACKS, "To think is to forget the differences, to generalise and abstract.", location="1520"
    ),
]
# The reader's own note, typed in capitals: their thought, not a book's heading.
SHOUTED_NOTE = Entry(
    SACKS, "THIS IS WHAT BORGES SAYS ABOUT FUNES AND HIS MEMORY", kind="Note", location="2500"
)


def _import(reader: User, *entries: Entry) -> None:
    clippings_import(reader=reader, data=clippings_file(*entries), file_name="c.txt")


def _pairs() -> set[frozenset[str]]:
    return {
        frozenset((c.highlight_a.text, c.highlight_b.text))
        for c in Connection.objects.select_related("highlight_a", "highlight_b")
    }


@pytest.mark.django_db
class LongHeadingTests:
    def test_a_long_heading_gets_no_connection(self, alice: User) -> None:
        _import(alice, *HEADINGS, *TWIN_PASSAGES)
        highlights_embed(ids=list(Highlight.objects.values_list("pk", flat=True)))
        assert _pairs() == {frozenset(entry.text for entry in TWIN_PASSAGES)}
        headings = Highlight.objects.filter(text__startswith="CHAPTER")
        assert [(h.is_word, h.word_kind) for h in headings] == [(True, "heading")] * 2

    def test_a_note_in_capitals_stays_a_passage(self, alice: User) -> None:
        _import(alice, SHOUTED_NOTE)
        assert not Highlight.objects.get().is_word

    def test_the_book_lists_it_under_its_headings(self, alice: User, alice_client: Client) -> None:
        _import(alice, *HEADINGS, *TWIN_PASSAGES)
        borges = Book.objects.get(title="Ficciones")
        response = alice_client.get(borges.get_absolute_url())
        groups = [
            (kind, [w.text for w in shown]) for kind, _, shown, _ in response.context["word_groups"]
        ]
        assert groups == [("heading", [HEADINGS[0].text])]

    def test_its_page_says_why_it_has_no_connections(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *HEADINGS)
        heading = Highlight.objects.filter(book__title="Ficciones").get()
        content = alice_client.get(heading.get_absolute_url()).content.decode()
        assert "This is a heading of the book" in content
        spanish = alice_client.get(heading.get_absolute_url(), headers={"Accept-Language": "es"})
        assert "Este es un encabezado del libro" in spanish.content.decode()


@pytest.mark.django_db
class BackfillTests:
    def test_the_migration_makes_headings_words_and_drops_their_connections(
        self, alice: User
    ) -> None:
        _import(alice, *HEADINGS, *TWIN_PASSAGES, SHOUTED_NOTE)
        Highlight.objects.update(is_word=False)
        heading = Highlight.objects.get(location_start=300)
        passages = Highlight.objects.filter(location_start__in=(412, 1520)).order_by("pk")
        note = Highlight.objects.get(kind="note")
        for first, second in ((heading, passages[1]), tuple(passages), (note, passages[0])):
            a, b = sorted((first.pk, second.pk))
            Connection.objects.create(
                reader=alice, highlight_a_id=a, highlight_b_id=b, distance=0.2,
                embedding_model="test",
            )  # fmt: skip
        migration = import_module("books.migrations.0029_long_headings_are_words")
        migration.headings_become_words(apps, None)
        words = set(Highlight.objects.filter(is_word=True).values_list("text", flat=True))
        assert words == {entry.text for entry in HEADINGS}
        assert Connection.objects.count() == 2
        migration.headings_become_words(apps, None)  # a second run changes nothing
        assert Connection.objects.count() == 2
