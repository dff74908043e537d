"""New highlights written with COPY: an import of thousands of rows in one statement."""

from operator import attrgetter

from django.db import connection
from django.utils import timezone

from books.models import Highlight

# The columns an import fills, as the model names them; `created` and `updated` last (now).
_FIELDS = (
    "reader_id", "book_id", "source_import_id", "code", "kind", "text", "note", "note_edited",
    "note_added_at", "page", "location_start", "location_end", "position", "reading_key",
    "added_at", "added_raw", "dedupe_key", "favourite", "is_word", "language", "search_text",
    "embedding_model", "embedding_status", "embedding_error", "chapter", "colour",
    "note_edited_at", "deleted_at",
)  # fmt: skip
_values = attrgetter(*_FIELDS)


def highlights_copy(highlights: list[Highlight]) -> None:
    """Insert new highlights with COPY. Their ids are read back by import afterwards."""
    if not highlights:
        return
    now = timezone.now()
    columns = ", ".join((*_FIELDS, "created", "updated"))
    copy_sql = f"COPY {Highlight._meta.db_table} ({columns}) FROM STDIN"
    # wrap_database_errors: psycopg's errors become Django's, as with any ORM call.
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(copy_sql) as copy,
    ):
        for highlight in highlights:
            copy.write_row((*_values(highlight), now, now))
