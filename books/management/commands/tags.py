from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import owned_row, reader_named
from accounts.models import User
from books.forms import TagForm
from books.models import Highlight, Tag
from books.selectors import tags_for
from books.services import highlight_tag, highlight_untag, tag_delete, tag_merge, tag_rename
from exogram.counting import counted


def tag_named(reader: User, name: str) -> Tag:
    # Tags are kept case folded; the operator may type one as the pages show it.
    tag = Tag.objects.filter(reader=reader, name__iexact=name.strip()).first()
    if tag is None:
        raise CommandError(f"{reader.username} has no tag {name!r}.")
    return tag


def tag_name(name: str) -> str:
    """A new tag's name, as the pages' tag form checks it."""
    form = TagForm({"name": name})
    if not form.is_valid():
        raise CommandError("A tag needs a name of up to 64 characters; nothing changed.")
    cleaned: str = form.cleaned_data["name"]
    return cleaned


class Command(BaseCommand):
    help = (
        "List a reader's tags, tag or untag a highlight, or rename, merge or delete a tag, as "
        "their Tags pages do."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")
        parser.add_argument(
            "--highlight", metavar="CODE", help="the highlight to --add or --remove on"
        )
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--add", metavar="TAG", help="tag the --highlight")
        action.add_argument("--remove", metavar="TAG", help="untag the --highlight")
        action.add_argument(
            "--rename", nargs=2, metavar=("TAG", "NEW"), help="rename (an existing NEW: merge)"
        )
        action.add_argument(
            "--merge", nargs=2, metavar=("TAG", "INTO"), help="move TAG's highlights to INTO"
        )
        action.add_argument("--delete", metavar="TAG", help="remove a tag from every highlight")

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        if options["add"] is not None or options["remove"] is not None:
            if not options["highlight"]:
                raise CommandError("--add and --remove need --highlight CODE.")
            highlights = Highlight.objects.alive()
            highlight = owned_row(reader, highlights, options["highlight"], "highlight")
            if options["add"] is not None:
                tag = highlight_tag(highlight=highlight, name=tag_name(options["add"]))
                self.stdout.write(f"Tagged the highlight “{tag.name}”.")
            else:
                tag = tag_named(reader, options["remove"])
                highlight_untag(highlight=highlight, tag=tag)
                self.stdout.write(f"Removed the tag “{tag.name}” from the highlight.")
        elif options["rename"]:
            tag = tag_named(reader, options["rename"][0])
            old = tag.name
            renamed = tag_rename(tag=tag, name=tag_name(options["rename"][1]))
            verb = "Renamed" if renamed.pk == tag.pk else "Merged"
            self.stdout.write(
                f"{verb} “{old}” {'to' if verb == 'Renamed' else 'into'} “{renamed.name}”."
            )
        elif options["merge"]:
            source, target = (tag_named(reader, name) for name in options["merge"])
            if source.pk == target.pk:
                raise CommandError("A tag merges only into another tag; nothing changed.")
            moved = tag_merge(source=source, target=target)
            self.stdout.write(
                f"Merged “{source.name}” into “{target.name}”: {counted(moved, 'highlight')} moved."
            )
        elif options["delete"] is not None:
            tag = tag_named(reader, options["delete"])
            count = tag_delete(tag=tag)
            self.stdout.write(
                f"Deleted the tag “{tag.name}” from {counted(count, 'highlight')}; "
                "the highlights stay."
            )
        else:
            tags = tags_for(reader)
            self.stdout.write(f"{reader.username} has {counted(len(tags), 'tag')}.")
            for tag in tags:
                self.stdout.write(f"  {tag.name}  {counted(tag.count, 'highlight')}")  # type: ignore[attr-defined]
