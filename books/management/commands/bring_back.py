from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db.models import Count

from accounts.commands import owned_row, reader_named
from books.models import Book, Deletion, Highlight, Import
from books.services import (
    book_bring_back,
    deletion_bring_back,
    highlight_bring_back,
    import_bring_back,
)
from exogram.counting import counted


class Command(BaseCommand):
    help = (
        "Bring back a reader's deleted highlights, as their Recently deleted list does: one "
        "highlight, every deleted one of a book or of an import, or one delete (--list shows them)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--highlight", metavar="CODE", help="one deleted highlight")
        what.add_argument("--book", metavar="CODE", help="every deleted highlight of a book")
        what.add_argument(
            "--import", dest="the_import", metavar="CODE",
            help="every deleted highlight an import added",
        )  # fmt: skip
        what.add_argument(
            "--deletion", metavar="CODE", help="what one delete of a book or import took"
        )
        what.add_argument(
            "--list", action="store_true", help="list the reader's deletes of books and imports"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        if options["list"]:
            self._list(reader.pk, reader.username)
            return
        if options["highlight"]:
            highlight = owned_row(
                reader, Highlight.objects.all(), options["highlight"], "highlight"
            )
            restored = highlight_bring_back(highlight=highlight)
        elif options["book"]:
            book = owned_row(reader, Book.objects.all(), options["book"], "book")
            restored = book_bring_back(book=book)
        elif options["the_import"]:
            the_import = owned_row(reader, Import.objects.all(), options["the_import"], "import")
            restored = import_bring_back(the_import=the_import)
        else:
            deletion = owned_row(reader, Deletion.objects.all(), options["deletion"], "deletion")
            restored = deletion_bring_back(deletion=deletion)
        notes = f" and {counted(restored.notes, 'standalone note')}" if restored.notes else ""
        self.stdout.write(f"Brought back {counted(restored.highlights, 'highlight')}{notes}.")

    def _list(self, reader_id: int, username: str) -> None:
        deletions = list(
            Deletion.objects.filter(reader_id=reader_id)
            .select_related("book", "source_import")
            .annotate(taken=Count("highlights"))
            .order_by("-at")
        )
        self.stdout.write(
            f"{username} has {counted(len(deletions), 'delete')} of books and imports."
        )
        for deletion in deletions:
            if deletion.book is not None:
                what = f"book “{deletion.book.title}”"
            elif deletion.source_import is not None:
                what = f"import {deletion.source_import.file_name}"
            else:
                what = deletion.get_kind_display()
            self.stdout.write(
                f"  {deletion.at:%Y-%m-%d %H:%M}  {what}: {counted(deletion.taken, 'highlight')}"
                f"  code {deletion.code}"
            )
