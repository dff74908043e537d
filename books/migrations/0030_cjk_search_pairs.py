"""Chinese and Japanese in the keyword text as pairs of characters (books.text.search_fold),
so that a word inside a run without spaces is found. Only the highlights whose text or note
has such a character change: PostgreSQL picks them out, Python folds them again."""

from typing import Any

from django.db import migrations
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


def _refold(apps: Any, folded: Any) -> None:
    Highlight = apps.get_model("books", "Highlight")
    cjk = Q(text__regex=CJK_CLASS) | Q(note__regex=CJK_CLASS)
    ids = list(Highlight.objects.filter(cjk).order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), BATCH):
        batch = list(
            Highlight.objects.filter(pk__in=ids[start : start + BATCH]).only(
                "pk", "text", "note", "search_text"
            )
        )
        for row in batch:
            row.search_text = folded(row.text, row.note)
        Highlight.objects.bulk_update(batch, ["search_text"])


def pair_search_text(apps: Any, schema_editor: Any) -> None:
    _refold(apps, search_text_of)


def unpair_search_text(apps: Any, schema_editor: Any) -> None:
    _refold(apps, lambda text, note: fold(" ".join(part for part in (text, note) if part)))


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0029_long_headings_are_words"),
    ]

    operations = [
        migrations.RunPython(pair_search_text, unpair_search_text, elidable=True),
    ]
