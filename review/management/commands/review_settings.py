import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import reader_named
from accounts.email_verification import email_is_verified, email_verification_send
from accounts.models import User
from review.forms import ReviewSettingsForm
from review.services import review_settings_for

# The review settings form's fields, as this command's options name them.
OPTIONS = {
    "cards_per_day": "--cards-per-day",
    "words_per_day": "--words-per-day",
    "daily_email": "--daily-email",
    "email": "--email",
    "password": "--password-stdin",
}


class Command(BaseCommand):
    help = (
        "Show a reader's daily review settings, or change them as their Review settings page "
        "does, by its form's rules: highlights a day, words a day (0 turns the words deck "
        "off), the daily e-mail and the address it goes to (a new one needs the reader's "
        "password, and is confirmed by a link mailed to it)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")
        # Strings, not argparse's int: the form says what is wrong with a number, as on the page.
        parser.add_argument("--cards-per-day", metavar="N", help="highlights a day")
        parser.add_argument("--words-per-day", metavar="N", help="words a day; 0: no words deck")
        parser.add_argument("--daily-email", choices=["on", "off"], help="the morning e-mail")
        parser.add_argument("--email", metavar="ADDRESS", help="where it goes; '' for none")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the reader's password (to change --email) from stdin's first line",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        current = review_settings_for(reader)
        changes = {
            field: options[field]
            for field in ("cards_per_day", "words_per_day", "email")
            if options[field] is not None
        }
        if options["daily_email"] is not None:
            changes["daily_email"] = options["daily_email"] == "on"
        if not changes:
            if options["password_stdin"]:
                raise CommandError("--password-stdin goes with --email; nothing changed.")
            self._show(reader)
            return
        password = sys.stdin.readline().rstrip("\r\n") if options["password_stdin"] else ""
        # The page's own form, given what is kept for every field not changed here.
        form = ReviewSettingsForm(
            {
                "cards_per_day": current.cards_per_day,
                "words_per_day": current.words_per_day,
                "daily_email": current.daily_email,
                "email": reader.email,
                **changes,
                "password": password,
            },
            reader=reader,
        )
        if not form.is_valid():
            problems = [
                f"{OPTIONS.get(field, field)}: {error}"
                for field, errors in form.errors.items()
                for error in errors
            ]
            raise CommandError("Nothing changed. " + " ".join(problems))
        form.save()
        self.stdout.write(f"Saved {reader.username}'s review settings.")
        self._show(reader)
        # As the page: an address not yet confirmed is sent its link.
        if (
            reader.email
            and not email_is_verified(reader)
            and email_verification_send(reader=reader)
        ):
            self.stdout.write(f"Mailed {reader.email} a link to confirm it.")

    def _show(self, reader: User) -> None:
        current = review_settings_for(reader)
        words = str(current.words_per_day) if current.words_per_day else "0 (the deck is off)"
        if not reader.email:
            address = "none"
        elif email_is_verified(reader):
            address = reader.email
        else:
            address = f"{reader.email} (not confirmed yet: nothing is mailed to it)"
        self.stdout.write(f"{reader.username}'s daily review:")
        self.stdout.write(f"  highlights a day  {current.cards_per_day}")
        self.stdout.write(f"  words a day       {words}")
        self.stdout.write(f"  daily e-mail      {'on' if current.daily_email else 'off'}")
        self.stdout.write(f"  e-mail address    {address}")
