import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from accounts.commands import reader_named
from books.connections.services import connections_rebuild


class Command(BaseCommand):
    help = (
        "Forget and find again the connections of one reader (--user) or of every reader, "
        "under the current rule and cuts: run it once after an upgrade changes them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", help="the reader's username (default: every reader)")

    def handle(self, *args: Any, **options: Any) -> None:
        reader_id = reader_named(options["user"]).pk if options["user"] else None
        started = time.monotonic()
        stored = connections_rebuild(reader_id=reader_id)
        who = options["user"] or "every reader"
        self.stdout.write(
            f"{stored} connections for {who}, found again in {time.monotonic() - started:.0f} s."
        )
