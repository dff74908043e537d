from pathlib import Path
from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import reader_named
from books.exporting.services import FORMATS, library_export
from books.models import Book


class Command(BaseCommand):
    help = (
        "Write a reader's library (or one book) as Markdown (a zip of one file per book; one "
        ".md file with --book), Readwise-style CSV, or Exogram JSON (which re-imports)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("out", type=Path, help="the file to write")
        parser.add_argument("--user", required=True, help="the reader's username")
        parser.add_argument("--format", choices=FORMATS, required=True)
        parser.add_argument("--book", help="only this book (its code, as in its page's URL)")

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        book = None
        if options["book"]:
            book = Book.objects.filter(reader=reader, code=_uuid(options["book"])).first()
            if book is None:
                raise CommandError(
                    f"{reader.username} has no book with the code {options['book']}."
                )
        export = library_export(reader=reader, format=options["format"], book=book)
        out: Path = options["out"]
        try:
            out.write_bytes(export.data)
        except OSError as error:
            raise CommandError(f"Cannot write {out}: {error.strerror}") from None
        self.stdout.write(f"Wrote {out} ({len(export.data):,} bytes, {options['format']}).")


def _uuid(value: str) -> str:
    try:
        return str(UUID(value))
    except ValueError:
        raise CommandError(f"{value!r} is not a book code.") from None
