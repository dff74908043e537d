"""Two things an import now does that a library imported before did not get.

Each highlight keeps the tags the last file that listed its tags named (a Readwise CSV's
column, an Exogram export's list): an import adds only the tags its file names anew, as
with a note's hashtags, so a tag the reader deleted or renamed stays so when the file comes
again (books.importing.enrich). A nullable column, added without rewriting a row; a
highlight imported before has none, and its next such file adds its tags once.

A hashtag written with the full-width `#` of Chinese and Japanese input methods (U+FF03)
is read as one now: the notes held that name one gain its tags, once, as migration 0043
gave the others (only those: a tag of a `#` hashtag the reader removed since stays
removed). A deleted highlight is left as it is."""

from typing import Any

from django.db import migrations, models
from django.db.models import Q

BATCH = 2000
FULL_WIDTH_HASH = "\uff03"


def full_width_hashtags_tagged(apps: Any, schema_editor: Any) -> None:
    from books.importing.hashtags import hashtag_names

    Highlight = apps.get_model("books", "Highlight")
    Tag = apps.get_model("books", "Tag")
    Tagging = Highlight.tags.through
    rows = (
        Highlight.objects.filter(deleted_at__isnull=True)
        .filter(Q(kind="note", text__contains=FULL_WIDTH_HASH) | Q(note__contains=FULL_WIDTH_HASH))
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
            words = text if kind == "note" else note
            # What 0043 read of the note (its `#` hashtags) is left as the reader has it.
            read_before = set(hashtag_names(words.replace(FULL_WIDTH_HASH, "_")))
            wanted.update(
                (pk, reader_id, name) for name in hashtag_names(words) if name not in read_before
            )
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
        ("books", "0043_note_hashtags_tagged"),
    ]

    operations = [
        migrations.AddField(
            model_name="highlight",
            name="file_tags",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(full_width_hashtags_tagged, migrations.RunPython.noop),
    ]
