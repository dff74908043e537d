import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import reader_named
from books.search.search import MODES, search
from books.search.spelling import suggestion_for


class Command(BaseCommand):
    help = "Search a reader's highlights by words and by meaning, as the search page does."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "query", help='words, a "quoted phrase", -excluded, or, author:NAME, book:TITLE'
        )
        parser.add_argument("--user", required=True, help="the reader's username")
        parser.add_argument("--mode", choices=MODES, default="auto")
        parser.add_argument("--limit", type=int, default=20, help="results to print (20)")
        parser.add_argument("--recent", action="store_true", help="favour recent highlights")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        if options["limit"] < 1:
            raise CommandError("--limit must be at least 1.")
        found = search(
            reader,
            options["query"],
            mode=options["mode"],
            recency_boost=options["recent"],
            limit=options["limit"],
        )
        if options["json"]:
            rows = [result.as_json() for result in found.results]
            self.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2))
            if found.notice:
                self.stderr.write(found.notice)
            return
        if found.notice:
            self.stdout.write(self.style.WARNING(found.notice))
        suggested = suggestion_for(reader.pk, found)
        if not found.results:
            self.stdout.write("No results." if found.mode_used else "Nothing to search for.")
            if suggested:
                self.stdout.write(f"Did you mean: {suggested}")
            return
        if suggested:
            self.stdout.write(f"Did you mean: {suggested}")
        how = {"hybrid": "words and meaning", "keyword": "words", "meaning": "meaning"}
        if found.named:
            self.stdout.write(f"Highlights from {'; '.join(found.named)} come first.")
        self.stdout.write(f"{found.count_label} by {how[found.mode_used]}:")
        for number, result in enumerate(found.results, start=1):
            highlight = result.highlight
            where = f", location {result.location()}" if result.location() else ""
            # Found by neither half: a listing (`book:"1984"`, an author or an emoji alone)
            # in reading order, whose score is only its place.
            how_found = (
                f"{' + '.join(result.halves)}, {result.score:.4f}"
                if result.halves
                else "in reading order"
            )
            authors = highlight.book.authors_display
            self.stdout.write(
                f"{number:>3}. {highlight.book.title}"
                f"{f' ({authors})' if authors else ''}{where}  [{how_found}]"
            )
            self.stdout.write(f"     {(highlight.text or highlight.note)[:200]}")
            if highlight.note and highlight.text:
                self.stdout.write(f"     note: {highlight.note[:200]}")
            self.stdout.write(f"     {highlight.code}")
