from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from review.services import review_emails_send


class Command(BaseCommand):
    help = "E-mail the day's review cards to every reader who asked for them (once a day)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--date", help="the review day, YYYY-MM-DD (default: today)")

    def handle(self, *args: Any, **options: Any) -> None:
        today = timezone.localdate()
        if options["date"]:
            try:
                today = date.fromisoformat(options["date"])
            except ValueError as error:
                raise CommandError(f"--date must be YYYY-MM-DD, not {options['date']!r}") from error
        sent = review_emails_send(today=today)
        self.stdout.write(f"Sent {sent} daily review e-mail{'s' if sent != 1 else ''}.")
