"""Books whose title starts with a quote or a mark (`"Surely You're Joking…"`, `¿Quién…?`)
are filed under their first letter (books.text.title_sort_key): their stored key is
written again."""

from typing import Any

from django.db import migrations

BATCH = 2000


def refile(apps: Any, schema_editor: Any) -> None:
    from books.text import title_sort_key

    Book = apps.get_model("books", "Book")
    books = Book.objects.order_by("pk").only("pk", "title", "title_sort")
    last = 0
    while True:
        batch = list(books.filter(pk__gt=last)[:BATCH])
        if not batch:
            break
        last = batch[-1].pk
        changed = []
        for book in batch:
            key = title_sort_key(book.title)
            if key != book.title_sort:
                book.title_sort = key
                changed.append(book)
        Book.objects.bulk_update(changed, ["title_sort"])


class Migration(migrations.Migration):
    dependencies = [("books", "0036_deletion_groups_and_purged_highlights")]

    operations = [migrations.RunPython(refile, migrations.RunPython.noop)]
