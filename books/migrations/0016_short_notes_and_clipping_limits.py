"""Two things a real library showed at the top of /connections/, fixed in stored rows too.

- **Notes of a few words** ("tutaj", "tu koniec", "aaa") follow the vocabulary rule, as
  highlights do: they stop connecting and being ranked by meaning (Highlight.is_word).
- **A clipping-limit placeholder after the first words** ("We tend <You have reached the
  clipping limit for this item>") is cut off the text: the placeholder made every such
  highlight "the same idea" as every other. The words before it are kept, embedded again
  (the worker's sweep picks pending highlights up) and found by keyword as before.

Both drop the connections the rows had made.
"""

from typing import Any

from django.db import migrations
from django.db.models import Q

BATCH = 2000


def _forget_connections(Connection: Any, ids: list[int]) -> None:
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        Connection.objects.filter(
            Q(highlight_a_id__in=chunk) | Q(highlight_b_id__in=chunk)
        ).delete()


def mark_short_notes(apps: Any, schema_editor: Any) -> None:
    from books.vocabulary import is_vocabulary

    Highlight = apps.get_model("books", "Highlight")
    Connection = apps.get_model("books", "Connection")
    notes = Highlight.objects.exclude(kind="highlight").filter(is_word=False)
    short = [pk for pk, text in notes.values_list("pk", "text").iterator() if is_vocabulary(text)]
    for start in range(0, len(short), BATCH):
        Highlight.objects.filter(pk__in=short[start : start + BATCH]).update(is_word=True)
    _forget_connections(Connection, short)


def cut_clipping_limits(apps: Any, schema_editor: Any) -> None:
    from books.importing.clippings import CLIPPING_LIMIT_PLACEHOLDERS, without_clipping_limit
    from books.importing.identity import highlight_dedupe_key
    from books.language import language_of
    from books.models import search_text_of
    from books.vocabulary import is_vocabulary

    Highlight = apps.get_model("books", "Highlight")
    Connection = apps.get_model("books", "Connection")
    ends = Q()
    for placeholder in CLIPPING_LIMIT_PLACEHOLDERS:
        ends |= Q(text__endswith=placeholder)
    changed: list[int] = []
    for highlight in Highlight.objects.filter(ends).select_related("book").iterator():
        text, cut = without_clipping_limit(highlight.text.strip())
        if not cut:
            continue
        key = highlight_dedupe_key(
            book_key=highlight.book.key,
            kind=highlight.kind,
            page=highlight.page,
            start=highlight.location_start,
            end=highlight.location_end,
            text=text,
        )
        taken = Highlight.objects.filter(reader_id=highlight.reader_id, dedupe_key=key).exists()
        Highlight.objects.filter(pk=highlight.pk).update(
            text=text,
            # The old key stays if another highlight already holds the new one.
            dedupe_key=highlight.dedupe_key if taken else key,
            search_text=search_text_of(text, highlight.note),
            is_word=is_vocabulary(text),
            language=language_of(text),
            embedding=None,
            embedding_model="",
            embedding_status="pending",
            embedding_claimed_at=None,
            embedding_error="",
        )
        changed.append(highlight.pk)
    _forget_connections(Connection, changed)


class Migration(migrations.Migration):
    dependencies = [("books", "0015_highlight_language")]

    operations = [
        migrations.RunPython(mark_short_notes, migrations.RunPython.noop, elidable=True),
        migrations.RunPython(cut_clipping_limits, migrations.RunPython.noop, elidable=True),
    ]
