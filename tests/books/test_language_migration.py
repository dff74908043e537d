"""The migration that re-detects stored highlights' languages (German, Portuguese, French and
Italian were all *unknown*, Portuguese often Spanish): it writes only what changes."""

from importlib import import_module

import pytest
from django.apps import apps

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight
from tests.books.kindle import BORGES, Entry, clippings_file

GERMAN = "Wer nicht vergessen kann, der wird niemals wirklich glücklich sein."
PORTUGUESE = "Quem não consegue esquecer nunca será verdadeiramente feliz."
ENGLISH = "We read the world wrong and say that it deceives us."


@pytest.mark.django_db
def test_the_migration_detects_the_new_languages_and_keeps_the_rest(alice: User) -> None:
    entries = [Entry(BORGES, text, location=str(10 * i)) for i, text in
               enumerate((GERMAN, PORTUGUESE, ENGLISH), start=1)]  # fmt: skip
    clippings_import(reader=alice, data=clippings_file(*entries), file_name="c.txt")
    # As the detector before it stored them.
    Highlight.objects.filter(text=GERMAN).update(language="unknown")
    Highlight.objects.filter(text=PORTUGUESE).update(language="es")
    migration = import_module("books.migrations.0024_highlight_language_six")
    migration.detect_languages(apps, None)
    stored = dict(Highlight.objects.values_list("text", "language"))
    assert stored == {GERMAN: "de", PORTUGUESE: "pt", ENGLISH: "en"}
