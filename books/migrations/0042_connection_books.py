"""Each connection keeps its two books (the lower id first), so that the library page reads
the best few pairs of each pair of books from an index instead of ranking every stored pair
(docs/evaluation.md, 2026-12-07: /connections/)."""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
UPDATE books_connection AS c
SET book_low_id = LEAST(a.book_id, b.book_id), book_high_id = GREATEST(a.book_id, b.book_id)
FROM books_highlight AS a, books_highlight AS b
WHERE a.id = c.highlight_a_id AND b.id = c.highlight_b_id
"""

# A pair whose two passages were made one book's before this (none should be) is no
# connection: the check below would refuse it.
WITHIN_ONE_BOOK = "DELETE FROM books_connection WHERE book_low_id = book_high_id"


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0041_book_alias"),
    ]

    operations = [
        migrations.AddField(
            model_name="connection",
            name="book_low",
            field=models.ForeignKey(
                null=True,
                db_index=False,  # made after the fill: a fill writing every index costs twice
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="books.book",
            ),
        ),
        migrations.AddField(
            model_name="connection",
            name="book_high",
            field=models.ForeignKey(
                null=True,
                db_index=False,  # made after the fill: a fill writing every index costs twice
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="books.book",
            ),
        ),
        migrations.RunSQL([FILL, WITHIN_ONE_BOOK], migrations.RunSQL.noop),
        migrations.AlterField(
            model_name="connection",
            name="book_low",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="books.book"
            ),
        ),
        migrations.AlterField(
            model_name="connection",
            name="book_high",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="books.book"
            ),
        ),
        migrations.AddConstraint(
            model_name="connection",
            constraint=models.CheckConstraint(
                condition=models.Q(("book_low__lt", models.F("book_high"))),
                name="connection_books_ordered",
            ),
        ),
        migrations.AddIndex(
            model_name="connection",
            index=models.Index(
                models.F("reader"),
                models.F("book_low"),
                models.F("book_high"),
                models.OrderBy(models.F("probability"), descending=True),
                models.F("id"),
                condition=models.Q(("strength__gte", 1)),
                name="connection_book_pair",
            ),
        ),
    ]
