"""A short sentence is not a heading (books.vocabulary, 2026-12-07 in docs/words.md): a
saying in sentence case opening on an article ("Los programadores de música usan
algorritmos"), a list's sentence after its number ("3. Handling problems your outsourcers or
co-workers can handle"), an exclamation, and four or five words opening on a capital with
three in lower case ("El buen instrumento saca maestro") were stored as words, so never
embedded as passages nor connected. They become passages and go through embedding again
(the worker's sweep picks pending highlights up), as in 0021 and 0033: a word kept its
vector, but not the English and theme vectors a passage's connections are found by.

The rule only turns words into passages, never the other way, so only words are read. A
note is never a heading: only the short-phrase rule (is_vocabulary) is asked of one, as at
import (Highlight.refresh_is_word).
"""

from typing import Any

from django.db import migrations

BATCH = 2000


def _still_a_word(kind: str, text: str) -> bool:
    from books.vocabulary import is_heading, is_vocabulary

    return (kind == "highlight" and is_heading(text)) or is_vocabulary(text)


def sentences_become_passages(apps: Any, schema_editor: Any) -> None:
    Highlight = apps.get_model("books", "Highlight")
    words = Highlight.objects.filter(is_word=True).values_list("pk", "kind", "text")
    passages: list[int] = []
    last = 0
    while True:
        batch = list(words.filter(pk__gt=last).order_by("pk")[:BATCH])
        if not batch:
            break
        last = batch[-1][0]
        passages.extend(pk for pk, kind, text in batch if not _still_a_word(kind, text))
    for start in range(0, len(passages), BATCH):
        Highlight.objects.filter(pk__in=passages[start : start + BATCH]).update(
            is_word=False,
            embedding=None,
            english_embedding=None,
            theme_embedding=None,
            embedding_model="",
            embedding_status="pending",
            embedding_claimed_at=None,
            embedding_claimed_by="",
            embedding_enqueued_at=None,
            embedding_error="",
        )


class Migration(migrations.Migration):
    dependencies = [("books", "0044_highlight_file_tags")]

    operations = [migrations.RunPython(sentences_become_passages, migrations.RunPython.noop)]
