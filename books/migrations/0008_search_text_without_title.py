"""Title and authors leave the keyword text (they are fields now), and the GIN index adds
English and Spanish stems to the words as written."""

from typing import Any

import django.contrib.postgres.indexes
from django.db import migrations

from books.models import search_document, search_text_of

BATCH = 2000


def refresh_search_text(apps: Any, schema_editor: Any) -> None:
    Highlight = apps.get_model("books", "Highlight")
    rows = Highlight.objects.order_by("pk").only("pk", "text", "note", "search_text")
    changed = []
    for row in rows.iterator(chunk_size=BATCH):
        folded = search_text_of(row.text, row.note)
        if folded != row.search_text:
            row.search_text = folded
            changed.append(row)
        if len(changed) >= BATCH:
            Highlight.objects.bulk_update(changed, ["search_text"])
            changed = []
    Highlight.objects.bulk_update(changed, ["search_text"])


def restore_search_text(apps: Any, schema_editor: Any) -> None:
    Highlight = apps.get_model("books", "Highlight")
    changed = []
    for row in Highlight.objects.select_related("book").order_by("pk").iterator(chunk_size=BATCH):
        parts = [row.text, row.note, row.book.title, row.book.authors]
        row.search_text = search_text_of(" ".join(p for p in parts if p), "")
        changed.append(row)
        if len(changed) >= BATCH:
            Highlight.objects.bulk_update(changed, ["search_text"])
            changed = []
    Highlight.objects.bulk_update(changed, ["search_text"])


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0007_highlight_merges"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="highlight", name="highlight_search_gin"),
        migrations.RunPython(refresh_search_text, restore_search_text, elidable=True),
        migrations.AddIndex(
            model_name="highlight",
            index=django.contrib.postgres.indexes.GinIndex(
                search_document(), name="highlight_search_stems_gin"
            ),
        ),
    ]
