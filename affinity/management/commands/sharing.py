from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError

from accounts.commands import reader_named
from affinity.forms import SharingForm
from affinity.services import sharing_profile_for, sharing_update
from exogram.counting import counted


class Command(BaseCommand):
    help = (
        "Show, turn on or turn off a reader's sharing (kindred readers), as their Sharing page "
        "does; the books they keep to themselves stay kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")
        parser.add_argument("state", nargs="?", choices=["on", "off"], help="on or off; none: show")
        parser.add_argument("--name", help="the display name to share under (on)")

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        profile = sharing_profile_for(reader)
        kept = list(profile.excluded_books.values_list("pk", flat=True))
        if options["state"] is None:
            state = f"on, as “{profile.display_name}”" if profile.discoverable else "off"
            self.stdout.write(
                f"{reader.username}'s sharing is {state}; "
                f"{counted(len(kept), 'book')} kept to themselves."
            )
            return
        # The Sharing page's own form: a name to share under, not another sharer's.
        form = SharingForm(
            {
                "discoverable": options["state"] == "on",
                "display_name": options["name"]
                if options["name"] is not None
                else profile.display_name,
                "excluded_books": kept,
            },
            reader=reader,
        )
        if not form.is_valid():
            problems = [str(error) for errors in form.errors.values() for error in errors]
            raise CommandError("Nothing changed. " + " ".join(problems))
        try:
            profile = sharing_update(
                reader=reader,
                discoverable=form.cleaned_data["discoverable"],
                display_name=form.cleaned_data["display_name"],
                excluded_books=list(form.cleaned_data["excluded_books"]),
            )
        except IntegrityError:
            raise CommandError("Another reader shares under this name already.") from None
        if profile.discoverable:
            self.stdout.write(
                f"{reader.username} shares their reading as “{profile.display_name}”."
            )
        else:
            self.stdout.write(f"{reader.username}'s sharing is off: no other reader sees them.")
