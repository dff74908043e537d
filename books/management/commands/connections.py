import json
from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import reader_named
from books.connections.selectors import connections_for
from books.models import Highlight


class Command(BaseCommand):
    help = (
        "Print a highlight's connections: passages of other books with the same idea or a "
        "related one, other authors first."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("code", help="the highlight's code (the UUID in its URL)")
        parser.add_argument("--user", required=True, help="the reader's username")
        parser.add_argument("--other-authors", action="store_true", help="skip the same author")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        try:
            code = UUID(options["code"])
        except ValueError:
            raise CommandError(f"{options['code']!r} is not a highlight code.") from None
        highlight = (
            Highlight.objects.alive()
            .select_related("book")
            .filter(reader=reader, code=code)
            .first()
        )
        if highlight is None:
            raise CommandError(f"{options['user']} has no highlight {code}.")
        found = connections_for(highlight, other_authors_only=options["other_authors"])
        rows: list[dict[str, Any]] = [
            {
                "code": str(c.highlight.code),
                "book": c.highlight.book.title,
                "author": c.highlight.book.authors_display,
                "text": c.highlight.text,
                "distance": round(c.distance, 4),
                "strength": str(c.strength),
                "probability": None if c.probability is None else round(c.probability, 3),
                "same_author": c.same_author,
            }
            for c in found
        ]
        if options["json"]:
            self.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2))
            return
        if not rows:
            self.stdout.write("No connections.")
        for row in rows:
            self.stdout.write(f"{row['strength']:<10}  {row['book']} ({row['author']})")
            self.stdout.write(f"      {row['text'][:200]}")
