"""Each highlight's language again, now that books.language tells German, Portuguese, French
and Italian apart (they were all *unknown*, and many Portuguese passages read as Spanish):
the pair judge (v2) weighs a pair by its two languages. Only highlights whose language
changes are written; the judge's new version re-judges the stored pairs in the background
(`rejudge_connections`).
"""

from typing import Any

from django.db import migrations

BATCH = 2000


def detect_languages(apps: Any, schema_editor: Any) -> None:
    from books.language import language_of

    Highlight = apps.get_model("books", "Highlight")
    rows = Highlight.objects.order_by("pk").values_list("pk", "text", "language")
    last = 0
    while True:
        batch = list(rows.filter(pk__gt=last)[:BATCH])
        if not batch:
            break
        last = batch[-1][0]
        by_language: dict[str, list[int]] = {}
        for pk, text, stored in batch:
            language = language_of(text)
            if language != stored:
                by_language.setdefault(language, []).append(pk)
        for language, pks in by_language.items():
            Highlight.objects.filter(pk__in=pks).update(language=language)


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0023_highlight_position"),
    ]

    operations = [
        migrations.RunPython(detect_languages, migrations.RunPython.noop),
    ]
