"""An import now stores what the reader highlighted and wrote without control characters
(books.importing.screening.without_control_characters: a bell, an escape, a C1 control, a
byte order mark, a stray zero-width space). A highlight or a note stored before with one
would not be known again by the next import of the same file (its dedupe key holds its
words) and came back beside itself, cleaned. Here those rows are cleaned as an import now
cleans them: their text and note, their search text, and their dedupe key when it is the
one their place and words give (not one stepped aside from another's) and no other row of
the reader holds the new one. Every other character stays; the vector stays (the model
reads no control character).

A book's title and author are cleaned too (and the title's sort key). Its key is left: the
key rule now drops those characters as well (books.importing.identity), and each import
re-keys its reader's books and their highlights first (book_merge.books_merge_duplicates),
joining a book the file names again without them, as `merge_duplicate_books` does for all.

Only rows the database finds holding such a character are read: a few, if any (none in the
shared corpus's Kindle files).
"""

from typing import Any

from django.db import migrations
from django.db.models import Q

# What without_control_characters removes or turns into a new line, as PostgreSQL's regular
# expressions write it (no NUL: PostgreSQL text holds none).
_CONTROL = "[\x01-\x08\x0b-\x0c\x0d\x0e-\x1f\x7f-\x9f\ufeff\u2060\u200b-\u200d]"


def highlight_texts_without_controls(apps: Any, schema_editor: Any) -> None:
    from books.importing.identity import highlight_dedupe_key
    from books.importing.screening import without_control_characters
    from books.models import search_text_of

    from books.text import title_sort_key

    Book = apps.get_model("books", "Book")
    books = Book.objects.filter(Q(title__regex=_CONTROL) | Q(authors__regex=_CONTROL))
    for book in books.order_by("pk").iterator():
        title = without_control_characters(book.title)
        authors = without_control_characters(book.authors)
        if (title, authors) != (book.title, book.authors) and title.strip():
            Book.objects.filter(pk=book.pk).update(
                title=title, authors=authors, title_sort=title_sort_key(title)
            )
    Highlight = apps.get_model("books", "Highlight")
    rows = Highlight.objects.filter(Q(text__regex=_CONTROL) | Q(note__regex=_CONTROL))
    for highlight in rows.select_related("book").order_by("pk").iterator():
        text = without_control_characters(highlight.text)
        note = without_control_characters(highlight.note)
        if (text, note) == (highlight.text, highlight.note):
            continue  # a zero-width character between two others: it means something
        fields = {"text": text, "note": note, "search_text": search_text_of(text, note)}
        place = {
            "book_key": highlight.book.key,
            "kind": highlight.kind,
            "page": highlight.page,
            "start": highlight.location_start,
            "end": highlight.location_end,
        }
        if highlight.dedupe_key == highlight_dedupe_key(**place, text=highlight.text):
            key = highlight_dedupe_key(**place, text=text)
            taken = Highlight.objects.filter(reader_id=highlight.reader_id, dedupe_key=key)
            if not taken.exclude(pk=highlight.pk).exists():
                fields["dedupe_key"] = key
        Highlight.objects.filter(pk=highlight.pk).update(**fields)


class Migration(migrations.Migration):
    dependencies = [("books", "0045_sentences_are_not_headings")]

    operations = [
        migrations.RunPython(highlight_texts_without_controls, migrations.RunPython.noop)
    ]
