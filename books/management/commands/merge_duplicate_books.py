import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from accounts.commands import reader_named
from accounts.models import User
from books.importing.book_merge import books_merge_duplicates, highlights_join_two_devices
from books.library_cache import library_version_bump


class Command(BaseCommand):
    help = (
        "Re-read every book of one reader (--user) or of every reader under the current "
        "book and author identity rule: books that are one book become one (highlights, "
        "notes, tags, favourites, review state and connections move to the kept book), "
        "title lines read the wrong way round are turned, authors are normalized again, "
        "and books with no highlight at all go; a passage kept twice, from a Kindle and from "
        "another device (imports before 2026-12-06), becomes one. Run it once after an "
        "upgrade; each import also does the books' part for its reader."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", help="the reader's username (default: every reader)")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        readers = (
            [reader_named(options["user"])] if options["user"] else User.objects.order_by("pk")
        )
        changed = set()
        for reader in readers:
            report = books_merge_duplicates(reader=reader)
            joined = highlights_join_two_devices(reader=reader)
            if joined:
                changed.add(reader.pk)
                self.stdout.write(
                    f"{reader}: {joined} highlights kept twice, from a Kindle and from "
                    "another device, are now one"
                )
            if not report.changed:
                continue
            changed.add(reader.pk)
            for kept, absorbed in report.merged.items():
                for title in absorbed:
                    self.stdout.write(f"{reader}: merged {title!r} into {kept!r}")
            for title in report.turned:
                self.stdout.write(f"{reader}: title and author turned round: {title!r}")
            for title in report.empty_removed:
                self.stdout.write(f"{reader}: removed {title!r}, a book with no highlight")
            if report.highlights_joined:
                self.stdout.write(
                    f"{reader}: {report.highlights_joined} highlights held by both copies "
                    "of a book are now one"
                )
            if report.authors_renormalized:
                self.stdout.write(
                    f"{reader}: authors of {report.authors_renormalized} books normalized again"
                )
        if changed:
            library_version_bump(reader_ids=changed)
        self.stdout.write(
            f"{len(changed)} librar{'y' if len(changed) == 1 else 'ies'} changed, "
            f"in {time.monotonic() - started:.1f} s."
        )
