"""Books sort by a stored key (books.text.title_sort_key): "Vol. 2" before "Vol. 10".

The embedded PostgreSQL is built without ICU, so no numeric collation is there to ask for;
the key, with its numbers padded, sorts by value in plain byte order ("C"). The backfill
writes it for the books already kept.
"""

from typing import Any

from django.db import migrations, models

BATCH = 2000


def fill_title_sort(apps: Any, schema_editor: Any) -> None:
    from books.text import title_sort_key

    Book = apps.get_model("books", "Book")
    books = Book.objects.order_by("pk").only("pk", "title")
    last = 0
    while True:
        batch = list(books.filter(pk__gt=last)[:BATCH])
        if not batch:
            break
        last = batch[-1].pk
        for book in batch:
            book.title_sort = title_sort_key(book.title)
        Book.objects.bulk_update(batch, ["title_sort"])


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0027_connection_wording_shared"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="book",
            options={"ordering": ["title_sort", "pk"]},
        ),
        migrations.AddField(
            model_name="book",
            name="title_sort",
            field=models.TextField(blank=True, db_collation="C", editable=False),
        ),
        migrations.RunPython(fill_title_sort, migrations.RunPython.noop),
    ]
