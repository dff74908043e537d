"""`manage.py rejudge_connections`: re-judge the stored pairs an older version of the pair
judge judged (or stored before their shared wording was measured), in the background (or
--now, here), or show how many are left (--status)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from accounts.commands import reader_named
from exogram.counting import counted


class Command(BaseCommand):
    help = (
        "Re-judge stored connections judged by another version of the pair judge, or stored "
        "before their shared wording was measured: sent to the worker (default), done here "
        "(--now), or counted (--status)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", help="the reader's username (default: every reader)")
        parser.add_argument("--now", action="store_true", help="re-judge here, not in the worker")
        parser.add_argument("--status", action="store_true", help="count the pairs left")

    def handle(self, *args: Any, **options: Any) -> None:
        from books.connections.judge import judge_version
        from books.connections.services import connections_rejudge, stale_connections
        from books.tasks import rejudge_connections

        reader_id = reader_named(options["user"]).pk if options["user"] else None
        left = stale_connections(reader_id=reader_id).count()
        if options["status"]:
            self.stdout.write(
                f"{counted(left, 'stored pair')} left to re-judge by judge v{judge_version()}."
            )
            return
        if not options["now"]:
            rejudge_connections.delay(reader_id)
            self.stdout.write(
                f"Sent: {counted(left, 'stored pair')} to re-judge in the background."
            )
            return
        while left:
            left = connections_rejudge(reader_id=reader_id)
            self.stdout.write(f"{left} left")
        self.stdout.write(self.style.SUCCESS(f"Every stored pair is judged by v{judge_version()}."))
