import getpass
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.email_verification import email_verification_send
from accounts.forms import SignupForm


class Command(BaseCommand):
    help = (
        "Make a reader's account (not staff) as the sign-up page does, with its rules for "
        "names and passwords; works when EXOGRAM_SIGNUP is closed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="the new reader's username")
        parser.add_argument("--email", default="", help="for password resets; a link confirms it")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password from the first line of standard input instead of asking",
        )

    def _password(self, from_stdin: bool) -> str:
        if from_stdin:
            return sys.stdin.readline().rstrip("\r\n")
        password = getpass.getpass("Password: ")
        if getpass.getpass("Password again: ") != password:
            raise CommandError("The two passwords differ; no account made.")
        return password

    def handle(self, *args: Any, **options: Any) -> None:
        password = self._password(options["password_stdin"])
        # The sign-up page's own form: the same username, look-alike and password rules.
        form = SignupForm(
            {
                "username": options["username"],
                "email": options["email"],
                "password1": password,
                "password2": password,
            }
        )
        if not form.is_valid():
            problems = [
                f"{field}: {error}" for field, errors in form.errors.items() for error in errors
            ]
            raise CommandError("No account made. " + " ".join(problems))
        reader = form.save()
        self.stdout.write(f"Made the reader {reader.username}.")
        if reader.email and email_verification_send(reader=reader):
            self.stdout.write(f"Mailed {reader.email} a link to confirm it.")
