from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from accounts.commands import owned_row, reader_named
from books.models import Book, Highlight, Import
from books.services import DeleteCount, book_delete, deletion_at, highlight_delete, import_delete
from exogram.counting import counted


def went(counts: DeleteCount) -> str:
    """As the pages say it (books.deleting.deleted_phrase): a note on a highlight goes with
    it, and standalone notes are named only when there are some."""
    said = counted(counts.highlights, "highlight")
    if counts.with_notes:
        said += f" ({counted(counts.with_notes, 'with its note', 'with their notes')})"
    if counts.notes:
        said += f" and {counted(counts.notes, 'standalone note')}"
    return said


class Command(BaseCommand):
    help = (
        "Delete a reader's highlight, book or what an import added, as their pages do: it goes "
        "to their Recently deleted list, from which bring_back (or they) can bring it back."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--highlight", metavar="CODE", help="one highlight")
        what.add_argument("--book", metavar="CODE", help="everything of a book")
        what.add_argument(
            "--import", dest="the_import", metavar="CODE",
            help="what an import added and the reader has not changed since",
        )  # fmt: skip

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        user = reader.username
        if options["highlight"]:
            highlights = Highlight.objects.alive().select_related("book")
            highlight = owned_row(reader, highlights, options["highlight"], "highlight")
            highlight_delete(highlight=highlight)
            self.stdout.write(f"Deleted a highlight of “{highlight.book.title}”.")
            self.stdout.write(
                f"Bring it back with: bring_back --user {user} --highlight {highlight.code}"
            )
            return
        if options["book"]:
            book = owned_row(reader, Book.objects.all(), options["book"], "book")
            counts, at = book_delete(book=book)
            self.stdout.write(f"Deleted “{book.title}”: {went(counts)}.")
        else:
            the_import = owned_row(reader, Import.objects.all(), options["the_import"], "import")
            counts, at = import_delete(the_import=the_import)
            self.stdout.write(f"Deleted what {the_import.file_name} added: {went(counts)}.")
        deletion = deletion_at(reader_id=reader.pk, at=at)
        if deletion is not None:
            self.stdout.write(
                f"Bring it back with: bring_back --user {user} --deletion {deletion.code}"
            )
