from typing import Any

from django.db import connection, migrations, models


def measure_main_distances(apps: Any, schema_editor: Any) -> None:
    """The main model's distance of every pair of English passages stored before: both
    vectors are in the rows already."""
    database = schema_editor.connection if schema_editor is not None else connection
    with database.cursor() as cursor:
        cursor.execute(
            """
            UPDATE books_connection c SET main_distance = a.embedding <=> b.embedding
            FROM books_highlight a, books_highlight b
            WHERE a.id = c.highlight_a_id AND b.id = c.highlight_b_id
              AND a.language = 'en' AND b.language = 'en'
              AND a.english_embedding IS NOT NULL AND b.english_embedding IS NOT NULL
              AND a.embedding IS NOT NULL AND b.embedding IS NOT NULL
            """
        )


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0018_vectors_kept_in_the_row"),
    ]

    # Two English passages connected by the English model's vectors are the same idea only
    # when the main model agrees (books.connections.services.Thresholds.graded): its distance
    # is kept beside theirs.
    operations = [
        migrations.AddField(
            model_name="connection",
            name="main_distance",
            field=models.FloatField(
                blank=True,
                help_text="For two English passages: the cosine distance by the main model's "
                "vectors.",
                null=True,
            ),
        ),
        migrations.RunPython(measure_main_distances, migrations.RunPython.noop),
    ]
