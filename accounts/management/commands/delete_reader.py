from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import reader_named
from accounts.services import reader_delete_request
from exogram.counting import counted


class Command(BaseCommand):
    help = (
        "Delete a reader's account and everything in it, as their own Delete account does: "
        "closed at once, then deleted in batches (by a worker for a large library)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="the reader's username")
        parser.add_argument(
            "--noinput", "--no-input", action="store_false", dest="interactive",
            help="do not ask for confirmation",
        )  # fmt: skip

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["username"])
        what = (
            f"{counted(reader.highlights.count(), 'highlight')} in "
            f"{counted(reader.books.count(), 'book')}"
        )
        if options["interactive"]:
            answer = input(f"Delete {reader.username} and {what}, for good? Type yes: ")
            if answer.strip() != "yes":
                raise CommandError("Nothing deleted.")
        if reader_delete_request(reader=reader):
            self.stdout.write(f"Deleted {reader.username} and {what}.")
        else:
            self.stdout.write(
                f"Closed {reader.username}'s account (no login from now); a worker deletes "
                f"{what} in batches, a few minutes for a large library."
            )
