"""Short sentences the rule filed as headings (docs/words.md, 2026-12-07): a saying in
sentence case opening on an article was a heading, so one of the reader's words, never
connected; now the import reads it as a passage, and migration 0045 turns stored ones into
passages pending for embedding. The sayings are a tester's realistic library's."""

from importlib import import_module

import pytest
from django.apps import apps

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.models import Connection, Highlight
from tests.books.kindle import BORGES, SACKS, Entry, clippings_file

# The same saying in two books, a word apart: as headings they could not connect.
SAYINGS = [
    Entry(BORGES, "Los programadores de música usan algoritmos", location="500"),
    Entry(SACKS, "Los programadores de música usan algoritmos nuevos", location="1500"),
]
SHORT_SAYING = Entry(BORGES, "El buen instrumento saca maestro", location="1180")
HEADING = Entry(BORGES, "Chapter 3: The Art of War", location="10")


def _import(reader: User, *entries: Entry) -> None:
    clippings_import(reader=reader, data=clippings_file(*entries), file_name="c.txt")


@pytest.mark.django_db
class ImportTests:
    def test_a_saying_is_a_passage_and_connects(self, alice: User) -> None:
        _import(alice, *SAYINGS, SHORT_SAYING, HEADING)
        highlights_embed(ids=list(Highlight.objects.values_list("pk", flat=True)))
        words = dict(Highlight.objects.values_list("text", "is_word"))
        assert words == {
            SAYINGS[0].text: False,
            SAYINGS[1].text: False,
            SHORT_SAYING.text: False,
            HEADING.text: True,
        }
        pairs = {
            frozenset((c.highlight_a.text, c.highlight_b.text))
            for c in Connection.objects.select_related("highlight_a", "highlight_b")
        }
        assert frozenset(entry.text for entry in SAYINGS) in pairs


@pytest.mark.django_db
class BackfillTests:
    def test_the_migration_turns_stored_sayings_into_pending_passages(self, alice: User) -> None:
        _import(alice, *SAYINGS, SHORT_SAYING, HEADING)
        # As the rule before stored them: words, with the vector a word keeps.
        Highlight.objects.update(embedding_status="done", embedding_model="test")
        Highlight.objects.exclude(location_start=1500).update(is_word=True)
        migration = import_module("books.migrations.0045_sentences_are_not_headings")
        migration.sentences_become_passages(apps, None)
        rows = set(Highlight.objects.values_list("location_start", "is_word", "embedding_status"))
        assert rows == {
            (10, True, "done"),
            (500, False, "pending"),
            (1180, False, "pending"),
            (1500, False, "done"),
        }
        Highlight.objects.update(embedding_status="done")
        migration.sentences_become_passages(apps, None)  # a second run changes nothing
        assert set(Highlight.objects.values_list("is_word", "embedding_status")) == {
            (True, "done"),
            (False, "done"),
        }
