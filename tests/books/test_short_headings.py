"""Headings the rule used to miss (docs/words.md, 2026-12-06): a step in sentence case with a
verb in it was a passage, embedded and connected, step to step; now the import marks it one of
the reader's words, a heading, and migration 0033 marks stored ones. Invented texts."""

from importlib import import_module

import pytest
from django.apps import apps

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.models import Connection, Highlight
from tests.books.kindle import BORGES, SACKS, Entry, clippings_file

# Two steps of two books that say nearly the same: as passages they connected.
STEPS = [
    Entry(BORGES, "Step 3: Write it down before you forget", location="300"),
    Entry(SACKS, "Step 4: Write it down before it is forgotten", location="1300"),
]
TWIN_PASSAGES = [
    Entry(BORGES, "To think is to forget differences, to generalize, to abstract.", location="412"),
    Entry(
        SACKS, "To think is to forget the differences, to generalise and abstract.", location="1520"
    ),
]
# Stored as a word by the rule before (Title Case, its comma not read): a title cited in a
# sentence that runs on, long enough to be a passage.
CITED_TITLE = Entry(
    BORGES, "As The Garden of Forking Paths and The Library of Babel Show,", location="700"
)


def _import(reader: User, *entries: Entry) -> None:
    clippings_import(reader=reader, data=clippings_file(*entries), file_name="c.txt")


@pytest.mark.django_db
class ImportTests:
    def test_a_step_is_a_heading_and_gets_no_connection(self, alice: User) -> None:
        _import(alice, *STEPS, *TWIN_PASSAGES)
        highlights_embed(ids=list(Highlight.objects.values_list("pk", flat=True)))
        pairs = {
            frozenset((c.highlight_a.text, c.highlight_b.text))
            for c in Connection.objects.select_related("highlight_a", "highlight_b")
        }
        assert pairs == {frozenset(entry.text for entry in TWIN_PASSAGES)}
        steps = Highlight.objects.filter(text__startswith="Step").order_by("location_start")
        assert [(h.is_word, h.word_kind) for h in steps] == [(True, "heading")] * 2

    def test_a_cited_title_that_runs_on_is_a_passage(self, alice: User) -> None:
        _import(alice, CITED_TITLE)
        assert not Highlight.objects.get().is_word


@pytest.mark.django_db
class BackfillTests:
    def test_the_migration_marks_steps_words_and_cited_titles_passages(self, alice: User) -> None:
        _import(alice, *STEPS, *TWIN_PASSAGES, CITED_TITLE)
        Highlight.objects.update(embedding_status="done", embedding_model="test")
        Highlight.objects.filter(text__startswith="Step").update(is_word=False)
        Highlight.objects.filter(location_start=700).update(is_word=True)
        step = Highlight.objects.get(location_start=300)
        passages = list(Highlight.objects.filter(location_start__in=(412, 1520)).order_by("pk"))
        for first, second in ((step, passages[1]), tuple(passages)):
            a, b = sorted((first.pk, second.pk))
            Connection.objects.create(
                reader=alice, highlight_a_id=a, highlight_b_id=b, distance=0.2,
                embedding_model="test",
            )  # fmt: skip
        migration = import_module("books.migrations.0033_more_headings_are_words")
        migration.headings_reclassified(apps, None)
        rows = set(Highlight.objects.values_list("location_start", "is_word", "embedding_status"))
        assert rows == {
            (300, True, "done"),
            (1300, True, "done"),
            (412, False, "done"),
            (1520, False, "done"),
            (700, False, "pending"),
        }
        assert Connection.objects.count() == 1
        migration.headings_reclassified(apps, None)  # a second run changes nothing
        assert Connection.objects.count() == 1
        assert Highlight.objects.filter(is_word=True).count() == 2
