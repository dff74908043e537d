from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from accounts.commands import reader_named
from books.library_map.services import library_map_refresh
from exogram.counting import counted


class Command(BaseCommand):
    help = (
        "Lay out a reader's library map again, now and in this process (what the map's "
        "background task does), whether or not it looks behind the library."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        the_map = library_map_refresh(reader=reader)
        placed = len(the_map.points.get("code", []))
        self.stdout.write(
            f"Drew {reader.username}'s map: {counted(placed, 'passage')} of "
            f"{counted(len(the_map.books), 'book')}, in {counted(len(the_map.regions), 'region')}."
        )
