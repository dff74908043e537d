"""Highlights without Kindle locations are ordered by `reading_key` (the device's position
step by step as numbers, else the page as a number), where the book page sorted them by
their page as text: 12, 125, 13, … (books.importing.positions.reading_key)."""

from typing import Any

from django.db import migrations, models

BATCH = 2000


def reading_keys_fill(apps: Any, schema_editor: Any) -> None:
    from books.importing.positions import reading_key

    Highlight = apps.get_model("books", "Highlight")
    rows = (
        Highlight.objects.filter(location_start__isnull=True)
        .exclude(position="", page="")
        .order_by("pk")
        .values_list("pk", "position", "page")
    )
    last = 0
    while True:
        batch = list(rows.filter(pk__gt=last)[:BATCH])
        if not batch:
            break
        last = batch[-1][0]
        keyed = [
            Highlight(pk=pk, reading_key=reading_key(position, page))
            for pk, position, page in batch
        ]
        Highlight.objects.bulk_update(keyed, ["reading_key"], batch_size=BATCH)


class Migration(migrations.Migration):
    dependencies = [("books", "0029_long_headings_are_words")]

    operations = [
        migrations.AddField(
            model_name="highlight",
            name="reading_key",
            field=models.CharField(
                blank=True, db_collation="C", db_default="", default="", max_length=300
            ),
        ),
        migrations.AlterModelOptions(
            name="highlight",
            options={"ordering": ["book", "location_start", "reading_key", "created"]},
        ),
        migrations.RunPython(reading_keys_fill, migrations.RunPython.noop),
    ]
