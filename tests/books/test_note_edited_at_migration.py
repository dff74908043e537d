"""books 0040 dates the notes edited before their edit date was kept: the row's last
change, except on a row unchanged since the import that made it finished (its note came
edited in its file, an Exogram export's), which gets none."""

from datetime import timedelta
from importlib import import_module

import pytest
from django.db import connection
from django.utils import timezone

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight
from tests.books.kindle import MEMORY_LIBRARY, clippings_file

BACKFILL = import_module("books.migrations.0040_note_edited_at").BACKFILL


@pytest.mark.django_db
class NoteEditedAtBackfillTests:
    def test_it_dates_edits_made_after_the_import_and_not_notes_that_came_edited(
        self, alice: User
    ) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt"
        )
        assert the_import.finished_at is not None
        came_edited, edited_later, not_edited = Highlight.objects.filter(
            reader=alice, kind="highlight"
        ).order_by("pk")[:3]
        later = the_import.finished_at + timedelta(minutes=5)
        Highlight.objects.filter(pk=came_edited.pk).update(
            note_edited=True, updated=the_import.finished_at - timedelta(seconds=1)
        )
        Highlight.objects.filter(pk=edited_later.pk).update(note_edited=True, updated=later)
        Highlight.objects.filter(pk=not_edited.pk).update(updated=timezone.now())

        with connection.cursor() as cursor:
            cursor.execute(BACKFILL)

        dates = dict(
            Highlight.objects.filter(
                pk__in=[came_edited.pk, edited_later.pk, not_edited.pk]
            ).values_list("pk", "note_edited_at")
        )
        assert dates == {came_edited.pk: None, edited_later.pk: later, not_edited.pk: None}
