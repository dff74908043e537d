"""What every management command that acts for one reader needs."""

from django.core.management.base import CommandError

from accounts.models import User


def reader_named(username: str) -> User:
    """The reader with this username; a CommandError that names it when there is none."""
    reader = User.objects.filter(username=username).first()
    if reader is None:
        raise CommandError(f"No reader named {username!r}.")
    return reader
