"""A book's heading is one of the reader's words however long (books.vocabulary.is_heading):
"CHAPTER SEVEN: THE POWER OF HABIT AND THE BRAIN", "PARTE II. LA CONSTRUCCIÓN DEL YO EN LA
INFANCIA". Stored highlights that are such headings become words, as 0006 did for short
ones, and the connections they made go (heading to heading, on the shared corpus). Notes
are left alone: a note is the reader's, never a book's heading.
"""

from typing import Any

from django.db import migrations
from django.db.models import Q

BATCH = 2000


def headings_become_words(apps: Any, schema_editor: Any) -> None:
    from books.vocabulary import is_heading

    Highlight = apps.get_model("books", "Highlight")
    Connection = apps.get_model("books", "Connection")
    passages = Highlight.objects.filter(kind="highlight", is_word=False).order_by("pk")
    rows = passages.values_list("pk", "text")
    headings: list[int] = []
    last = 0
    while True:
        batch = list(rows.filter(pk__gt=last)[:BATCH])
        if not batch:
            break
        last = batch[-1][0]
        headings.extend(pk for pk, text in batch if is_heading(text))
    for start in range(0, len(headings), BATCH):
        chunk = headings[start : start + BATCH]
        Highlight.objects.filter(pk__in=chunk).update(is_word=True)
        Connection.objects.filter(Q(highlight_a_id__in=chunk) | Q(highlight_b_id__in=chunk)).delete()


class Migration(migrations.Migration):
    dependencies = [("books", "0028_book_title_sort")]

    operations = [migrations.RunPython(headings_become_words, migrations.RunPython.noop)]
