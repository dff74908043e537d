"""Half of a page-turn split whose words all sit in another entry merged into the same
highlight is "Contained in a longer highlight", not "Joined at a page turn" (the walk of
2026-12-06: "to help" joined at a page turn, then "to help younger people…" selected).
Stored rows are labelled again by that rule."""

from collections import defaultdict
from typing import Any

from django.db import migrations, models

BATCH = 2000


def contained_labelled(apps: Any, schema_editor: Any) -> None:
    from books.text import fold_spacing_and_bom

    HighlightMerge = apps.get_model("books", "HighlightMerge")
    by_highlight: defaultdict[int, list[tuple[int, str]]] = defaultdict(list)
    rows = HighlightMerge.objects.exclude(how="contained").order_by("pk")
    page_turns: set[int] = set(
        HighlightMerge.objects.filter(how="page_turn").values_list("pk", flat=True)
    )
    for pk, highlight_id, text in rows.values_list("pk", "highlight_id", "merged_text").iterator(
        chunk_size=BATCH
    ):
        by_highlight[highlight_id].append((pk, fold_spacing_and_bom(text)))
    contained = [
        pk
        for entries in by_highlight.values()
        if len(entries) > 1
        for pk, mine in entries
        if pk in page_turns
        and any(mine in other and mine != other for _, other in entries)
    ]
    for start in range(0, len(contained), BATCH):
        HighlightMerge.objects.filter(pk__in=contained[start : start + BATCH]).update(
            how="contained"
        )


class Migration(migrations.Migration):
    dependencies = [("books", "0030_highlight_reading_key")]

    operations = [
        migrations.AlterField(
            model_name="highlightmerge",
            name="how",
            field=models.CharField(
                choices=[
                    ("extended", "Extended"),
                    ("overlapped", "Re-selected"),
                    ("page_turn", "Joined at a page turn"),
                    ("contained", "Contained in a longer highlight"),
                ],
                max_length=16,
            ),
        ),
        migrations.RunPython(contained_labelled, migrations.RunPython.noop),
    ]
