"""The hashtags of the notes a library held before hashtags were read (`#artist #being`,
books.importing.hashtags) become tags of their highlights, once: an import now reads a
note's hashtags only when the note arrives or changes (books.importing.enrich), so this is
how a library imported before gets them. Every alive highlight gains the tags its note (a
note of its own: its text) names, as an import would have given them; a tag it has stays,
and running it again adds nothing. A deleted highlight is left as it is.

An Exogram export lists its tags, and an import of one reads no hashtag; imported before
this, it came from a library that read none either, so its notes are read here as any."""

from typing import Any

from django.db import migrations
from django.db.models import Q

BATCH = 2000


def note_hashtags_tagged(apps: Any, schema_editor: Any) -> None:
    from books.importing.hashtags import note_hashtags
    from books.text import tag_name

    Highlight = apps.get_model("books", "Highlight")
    Tag = apps.get_model("books", "Tag")
    Tagging = Highlight.tags.through
    rows = (
        Highlight.objects.filter(deleted_at__isnull=True)
        .filter(Q(kind="note", text__contains="#") | Q(note__contains="#"))
        .values_list("pk", "reader_id", "kind", "text", "note")
    )
    last = 0
    while True:
        batch = list(rows.filter(pk__gt=last).order_by("pk")[:BATCH])
        if not batch:
            return
        last = batch[-1][0]
        wanted: set[tuple[int, int, str]] = set()
        for pk, reader_id, kind, text, note in batch:
            words = note_hashtags(text if kind == "note" else note)
            wanted.update((pk, reader_id, name) for name in map(tag_name, words) if name)
        if not wanted:
            continue
        names = {(reader_id, name) for _, reader_id, name in wanted}
        Tag.objects.bulk_create(
            [Tag(reader_id=reader_id, name=name) for reader_id, name in names],
            ignore_conflicts=True,
        )
        tags = {
            (reader_id, name): pk
            for reader_id, name, pk in Tag.objects.filter(
                reader_id__in={reader_id for reader_id, _ in names},
                name__in={name for _, name in names},
            ).values_list("reader_id", "name", "pk")
        }
        Tagging.objects.bulk_create(
            [
                Tagging(highlight_id=pk, tag_id=tags[reader_id, name])
                for pk, reader_id, name in wanted
            ],
            ignore_conflicts=True,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0042_connection_books"),
    ]

    operations = [migrations.RunPython(note_hashtags_tagged, migrations.RunPython.noop)]
