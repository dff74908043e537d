"""Highlights too short to carry an idea become the reader's words (books.vocabulary).

The backfill marks existing highlights by the rule and drops the connections a word had
made: on a real library they were four in five of all connections ("allay ↔ allay").
"""

from typing import Any

from django.conf import settings
from django.db import migrations, models
from django.db.models import Q

BATCH = 2000


def mark_words(apps: Any, schema_editor: Any) -> None:
    from books.vocabulary import is_vocabulary

    Highlight = apps.get_model("books", "Highlight")
    Connection = apps.get_model("books", "Connection")
    rows = Highlight.objects.filter(kind="highlight").order_by("pk").values_list("pk", "text")
    words: list[int] = []
    last = 0
    while True:
        batch = list(rows.filter(pk__gt=last)[:BATCH])
        if not batch:
            break
        last = batch[-1][0]
        words.extend(pk for pk, text in batch if is_vocabulary(text))
    for start in range(0, len(words), BATCH):
        chunk = words[start : start + BATCH]
        Highlight.objects.filter(pk__in=chunk).update(is_word=True)
        Connection.objects.filter(Q(highlight_a_id__in=chunk) | Q(highlight_b_id__in=chunk)).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0005_hnsw_ef_construction_128"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="highlight",
            name="is_word",
            field=models.BooleanField(default=False),
        ),
        migrations.AddIndex(
            model_name="highlight",
            index=models.Index(
                condition=models.Q(("is_word", True)),
                fields=["reader", "book", "location_start"],
                name="highlight_reader_words",
            ),
        ),
        migrations.RunPython(mark_words, migrations.RunPython.noop),
    ]
