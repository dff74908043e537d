"""What every management command that acts for one reader needs."""

from typing import TypeVar
from uuid import UUID

from django.core.management.base import CommandError
from django.db.models import Model, QuerySet

from accounts.models import User

Row = TypeVar("Row", bound=Model)


def reader_named(username: str) -> User:
    """The reader with this username; a CommandError that names it when there is none."""
    reader = User.objects.filter(username=username).first()
    if reader is None:
        raise CommandError(f"No reader named {username!r}.")
    return reader


def owned_row(reader: User, rows: QuerySet[Row], code: str, noun: str) -> Row:
    """The reader's row of `rows` with this code; a CommandError for a code that is not a
    code, or names nothing of this reader's (another reader's row is not found either)."""
    try:
        uuid = UUID(code.strip())
    except ValueError:
        raise CommandError(f"{code!r} is not a {noun}'s code.") from None
    row = rows.filter(code=uuid, reader=reader).first()
    if row is None:
        raise CommandError(f"{reader.username} has no {noun} {code}.")
    return row
