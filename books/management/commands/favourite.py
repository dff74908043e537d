from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import owned_row, reader_named
from books.models import Highlight
from books.selectors import favourites_for
from books.services import highlight_favourite_toggle
from exogram.counting import counted


class Command(BaseCommand):
    help = "List a reader's favourites, or mark a highlight a favourite (on) or not (off)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")
        parser.add_argument("--highlight", metavar="CODE", help="the highlight to mark")
        parser.add_argument("state", nargs="?", choices=["on", "off"], help="with --highlight")

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        if options["state"] is None:
            if options["highlight"]:
                raise CommandError("Say on or off for the highlight.")
            favourites = list(favourites_for(reader))
            self.stdout.write(f"{reader.username} has {counted(len(favourites), 'favourite')}.")
            for highlight in favourites:
                words = (highlight.text or highlight.note)[:80]
                self.stdout.write(f"  {highlight.code}  {highlight.book.title}: {words}")
            return
        if not options["highlight"]:
            raise CommandError("on and off need --highlight CODE.")
        highlight = owned_row(reader, Highlight.objects.alive(), options["highlight"], "highlight")
        wanted = options["state"] == "on"
        # The page's button toggles; here the operator says which they want.
        if highlight.favourite != wanted:
            highlight_favourite_toggle(highlight=highlight)
        self.stdout.write("A favourite." if wanted else "Not a favourite.")
