"""A short sentence with a verb is a passage ("Knowledge is power.", "our struggles
determine our successes."), however few its words (books.vocabulary.is_vocabulary): stored
words that are such sentences become passages, and go through embedding again so that they
connect (the worker's sweep picks pending highlights up). The words deck only ever shows
look-ups (books.vocabulary.word_kind), decided when the deck is chosen: no column to fill.
"""

from typing import Any

from django.db import migrations

BATCH = 2000


def sentences_become_passages(apps: Any, schema_editor: Any) -> None:
    from books.vocabulary import is_vocabulary

    Highlight = apps.get_model("books", "Highlight")
    words = Highlight.objects.filter(is_word=True).values_list("pk", "text")
    passages = [pk for pk, text in words.iterator() if not is_vocabulary(text)]
    for start in range(0, len(passages), BATCH):
        Highlight.objects.filter(pk__in=passages[start : start + BATCH]).update(
            is_word=False,
            embedding=None,
            english_embedding=None,
            embedding_model="",
            embedding_status="pending",
            embedding_claimed_at=None,
            embedding_error="",
        )


class Migration(migrations.Migration):
    dependencies = [("books", "0020_import_attempts")]

    operations = [migrations.RunPython(sentences_become_passages, migrations.RunPython.noop)]
