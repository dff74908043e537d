import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import owned_row, reader_named
from books.forms import NoteForm
from books.models import Highlight
from books.services import highlight_note_update


class Command(BaseCommand):
    help = (
        "Print, write or clear the reader's note on a highlight, as the highlight page does "
        "(a note written so is the reader's own: no re-import overwrites it)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")
        parser.add_argument("--highlight", metavar="CODE", required=True, help="the highlight")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--set", metavar="TEXT", help="the note's new words")
        action.add_argument("--stdin", action="store_true", help="the note's new words from stdin")
        action.add_argument("--clear", action="store_true", help="remove the note")

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        highlight = owned_row(reader, Highlight.objects.alive(), options["highlight"], "highlight")
        if options["set"] is not None:
            typed = options["set"]
        elif options["stdin"]:
            typed = sys.stdin.read()
        elif options["clear"]:
            typed = ""
        else:
            self.stdout.write(highlight.note or "(no note)")
            return
        form = NoteForm({"note": typed})
        if not form.is_valid():
            raise CommandError(f"Nothing changed: {form.errors['note'][0]}")
        highlight_note_update(highlight=highlight, note=form.cleaned_data["note"])
        self.stdout.write("Note saved." if highlight.note else "Note cleared.")
