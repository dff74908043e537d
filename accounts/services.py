from django.db import transaction

from accounts.models import User


def reader_delete(*, reader: User) -> None:
    """Delete a reader and everything they own — books, highlights, notes, imports,
    connections, tags, map, centroid, sharing — in one transaction (the foreign keys
    cascade)."""
    with transaction.atomic():
        reader.delete()
