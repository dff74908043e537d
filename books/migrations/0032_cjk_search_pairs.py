"""Chinese and Japanese in the keyword text as pairs of characters (books.text.search_fold),
so that a word inside a run without spaces is found. Only the highlights whose text or note
has such a character change: PostgreSQL picks them out, Python folds them again."""

from collections.abc import Callable
from typing import Any

from django.db import connections, migrations
from django.db.models import Q

from books.models import search_text_of
from books.text import fold

BATCH = 2000
# The characters books.text.CJK_RUN pairs, as a PostgreSQL class (the embedded server's
# regular expressions read \u escapes), tried on the text and the note as written.
CJK_CLASS = (
    "[\\u3005-\\u3007\\u3041-\\u3096\\u309d-\\u309f\\u30a1-\\u30fa\\u30fc-\\u30ff"
    "\\u3400-\\u4dbf\\u4e00-\\u9fff\\uff66-\\uff9f]"
)


def _refold(apps: Any, schema_editor: Any, folded: Callable[[str, str], str]) -> None:
    Highlight = apps.get_model("books", "Highlight")
    table = Highlight._meta.db_table
    cjk = Q(text__regex=CJK_CLASS) | Q(note__regex=CJK_CLASS)
    rows = (
        Highlight.objects.filter(cjk)
        .order_by("pk")
        .values_list("pk", "text", "note", "search_text")
    )
    changed = [(pk, new) for pk, text, note, old in rows if (new := folded(text, note)) != old]
    connection = schema_editor.connection if schema_editor is not None else connections["default"]
    with connection.cursor() as cursor:
        for start in range(0, len(changed), BATCH):
            batch = changed[start : start + BATCH]
            # One UPDATE a batch from two arrays: bulk_update's CASE of 2,000 branches took
            # most of the time.
            cursor.execute(
                f"UPDATE {table} SET search_text = new.search_text "
                "FROM unnest(%s::bigint[], %s::text[]) AS new(id, search_text) "
                f"WHERE {table}.id = new.id",
                [[pk for pk, _ in batch], [text for _, text in batch]],
            )


def pair_search_text(apps: Any, schema_editor: Any) -> None:
    _refold(apps, schema_editor, search_text_of)


def unpair_search_text(apps: Any, schema_editor: Any) -> None:
    _refold(apps, schema_editor, lambda text, note: fold(" ".join(p for p in (text, note) if p)))


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0031_merge_contained"),
    ]

    operations = [
        migrations.RunPython(pair_search_text, unpair_search_text, elidable=True),
    ]
