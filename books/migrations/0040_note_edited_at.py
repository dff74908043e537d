"""When the reader edited a note here, so that an import's "Delete what this import added"
spares only the highlights whose note was edited after that import (an Exogram export's
own "edited" notes came with the file).

Notes edited before this was kept get the row's last change as the date, an upper bound of
the edit; a row unchanged since the import that made it finished was not edited after it
(its note came edited in the file), and gets none."""

from django.db import migrations, models

BACKFILL = """
UPDATE books_highlight AS h SET note_edited_at = h.updated
WHERE h.note_edited AND NOT EXISTS (
    SELECT 1 FROM books_import AS i
    WHERE i.id = h.source_import_id AND i.finished_at IS NOT NULL AND h.updated <= i.finished_at
)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0039_purged_highlights_deleted_on_device"),
    ]

    operations = [
        migrations.AddField(
            model_name="highlight",
            name="note_edited_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
