"""More of a book's headings are the reader's words (books.vocabulary.is_heading, 2026-12-06
in docs/words.md): numbered ones ("1 Reading From the Margins", "1. Start small"), steps
and exercises ("Step 3: Write it down", "Ejercicio: Dibujar el día"), a label's number
before it or in words ("Primera parte", "Capítulo tres"), Title Case of two capitals ("The
Power of Habit"), and Spanish-style sentence case opening on an article ("La regla de los
dos minutos"). Stored passages that are such headings become words and lose their
connections, as in 0029; their vector stays (search by meaning finds words), the English
and theme vectors go (a word has none, books.embedding.pipeline).

And the other way: the rule no longer takes for a heading a selection that goes on (a last
comma or dash, a possessive, "et al."). A stored word that is only such a heading, not a
short phrase (is_vocabulary), becomes a passage and goes through embedding again, as in
0021; none did on the shared corpus. Notes are left alone: a note is never a heading.
"""

from typing import Any

from django.db import migrations
from django.db.models import Q

BATCH = 2000


def _scan(rows: Any, keep: Any) -> list[int]:
    found: list[int] = []
    last = 0
    while True:
        batch = list(rows.filter(pk__gt=last).order_by("pk")[:BATCH])
        if not batch:
            return found
        last = batch[-1][0]
        found.extend(pk for pk, text in batch if keep(text))


def headings_reclassified(apps: Any, schema_editor: Any) -> None:
    from books.vocabulary import is_heading, is_vocabulary

    Highlight = apps.get_model("books", "Highlight")
    Connection = apps.get_model("books", "Connection")
    highlights = Highlight.objects.filter(kind="highlight")
    headings = _scan(highlights.filter(is_word=False).values_list("pk", "text"), is_heading)
    for start in range(0, len(headings), BATCH):
        chunk = headings[start : start + BATCH]
        Highlight.objects.filter(pk__in=chunk).update(
            is_word=True, english_embedding=None, theme_embedding=None
        )
        Connection.objects.filter(
            Q(highlight_a_id__in=chunk) | Q(highlight_b_id__in=chunk)
        ).delete()
    passages = _scan(
        highlights.filter(is_word=True).values_list("pk", "text"),
        lambda text: not is_heading(text) and not is_vocabulary(text),
    )
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
    dependencies = [("books", "0032_cjk_search_pairs")]

    operations = [migrations.RunPython(headings_reclassified, migrations.RunPython.noop)]
