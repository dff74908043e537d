"""Each highlight's language (books.language), for the connection cut per language pair.

The backfill detects it for every existing highlight. Stored connections are graded by the
new cuts at once (they are read through them); `manage.py reconnect` finds them again under
the whole new rule (the best few a highlight, mutual across languages).
"""

from typing import Any

from django.db import migrations, models

BATCH = 2000


def detect_languages(apps: Any, schema_editor: Any) -> None:
    from books.language import UNKNOWN, language_of

    Highlight = apps.get_model("books", "Highlight")
    rows = Highlight.objects.order_by("pk").values_list("pk", "text")
    last = 0
    while True:
        batch = list(rows.filter(pk__gt=last)[:BATCH])
        if not batch:
            break
        last = batch[-1][0]
        by_language: dict[str, list[int]] = {}
        for pk, text in batch:
            language = language_of(text)
            if language != UNKNOWN:
                by_language.setdefault(language, []).append(pk)
        for language, pks in by_language.items():
            Highlight.objects.filter(pk__in=pks).update(language=language)


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0014_library_map_regions"),
    ]

    operations = [
        migrations.AddField(
            model_name="highlight",
            name="language",
            field=models.CharField(db_default="unknown", default="unknown", max_length=16),
        ),
        migrations.RunPython(detect_languages, migrations.RunPython.noop),
    ]
