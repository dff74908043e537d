from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import owned_row, reader_named
from books.importing.same_book import books_merge, merged_into
from books.models import Book
from exogram.counting import counted


class Command(BaseCommand):
    help = (
        "Make two of a reader's books one, as the book page's “Merge with another book…” "
        "does: every highlight of BOOK moves to INTO (a passage both held, word for word or "
        "in two versions, becomes one, keeping every note, tag and favourite), connections "
        "between the two go, INTO keeps its title and authors, and a later import of BOOK's "
        "title lands in INTO."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")
        parser.add_argument("book", metavar="BOOK_CODE", help="the book merged away")
        parser.add_argument("into", metavar="INTO_CODE", help="the book kept")

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        books = Book.objects.all()
        kept = owned_row(reader, books, options["into"], "book")
        try:
            earlier = merged_into(reader=reader, code=UUID(options["book"].strip()))
        except ValueError:
            earlier = None
        if earlier is not None and earlier.pk == kept.pk:
            self.stdout.write(f"{options['book']} is already part of “{kept.title}”.")
            return
        absorbed = owned_row(reader, books, options["book"], "book")
        if kept.pk == absorbed.pk:
            raise CommandError("BOOK and INTO are the same book.")
        done = books_merge(kept=kept, absorbed=absorbed)
        if done is None:
            self.stdout.write(f"“{absorbed.title}” is already part of “{kept.title}”.")
            return
        self.stdout.write(
            f"Merged “{absorbed.title}” into “{kept.title}”: "
            f"{counted(done.moved, 'highlight')} moved, "
            f"{counted(done.joined, 'passage')} both held joined "
            "(word for word or in two versions), "
            f"{counted(done.connections_dropped, 'connection')} between them dropped."
        )
