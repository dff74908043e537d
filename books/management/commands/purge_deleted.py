from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from accounts.commands import reader_named
from accounts.models import User
from books.purging import PurgeCount, deleted_purge, purge_cutoff, purge_due, readers_with_due
from exogram.counting import counted


def _phrase(count: PurgeCount) -> str:
    """ "1,204 highlights, 3 notes and 2 books" """
    return (
        f"{counted(count.highlights, 'highlight')}, {counted(count.notes, 'note')} "
        f"and {counted(count.books, 'book')}"
    )


class Command(BaseCommand):
    help = (
        "Remove for good the highlights deleted more than EXOGRAM_DELETED_DAYS days ago "
        "(one by one, with their book, or with what an import added), with their "
        "connections, and the books left with no highlight, as the worker's beat does "
        "daily. --dry-run prints what would go and removes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", help="the reader's username (default: every reader)")
        parser.add_argument(
            "--dry-run", action="store_true", help="print what would go; remove nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        before = purge_cutoff(now=timezone.now())
        if before is None:
            self.stdout.write(
                "EXOGRAM_DELETED_DAYS is 0: deleted highlights are kept until their reader "
                "brings them back. Nothing to remove."
            )
            return
        if options["user"]:
            readers = [reader_named(options["user"])]
        else:
            readers = list(User.objects.filter(pk__in=readers_with_due(before=before)))
        dry_run = options["dry_run"]
        total, touched = PurgeCount(), 0
        for reader in sorted(readers, key=lambda r: r.pk):
            if dry_run:
                count = purge_due(reader_id=reader.pk, before=before)
            else:
                count = deleted_purge(reader_id=reader.pk, before=before)
            if not count.total:
                continue
            touched += 1
            total = total + count
            verb = "would remove" if dry_run else "removed"
            self.stdout.write(f"{reader}: {verb} {_phrase(count)}")
        days = counted(settings.EXOGRAM_DELETED_DAYS, "day")
        summary = "Would remove" if dry_run else "Removed"
        self.stdout.write(
            f"{summary} for good {_phrase(total)} of {counted(touched, 'reader')}, deleted "
            f"more than {days} ago (before {before:%Y-%m-%d %H:%M} UTC)."
            + (" Nothing was removed: a dry run." if dry_run else "")
        )
