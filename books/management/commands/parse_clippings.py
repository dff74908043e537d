import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from books.importing.clippings import Clipping, ParseResult, parse_clippings
from books.importing.rich import NO_LINE


class Command(BaseCommand):
    help = "Parse a Kindle 'My Clippings.txt' file and report what it holds; nothing is saved."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--json", action="store_true", help="print every clipping and problem as JSON"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}") from None
        result = parse_clippings(data)
        if options["json"]:
            self.stdout.write(json.dumps(result_json(result), ensure_ascii=False, indent=2))
        else:
            self._print_summary(path, result)

    def _print_summary(self, path: Path, result: ParseResult) -> None:
        self.stdout.write(
            f"{path.name}: entries {result.entries}, clippings {len(result.clippings)}, "
            f"problems {len(result.problems)}"
        )
        for heading, counts in [
            ("kinds", Counter(clipping.kind for clipping in result.clippings)),
            ("languages", Counter(clipping.language for clipping in result.clippings)),
        ]:
            if counts:
                listed = ", ".join(f"{name} {count}" for name, count in counts.most_common())
                self.stdout.write(f"  {heading}: {listed}")
        truncated = sum(clipping.truncated for clipping in result.clippings)
        if truncated:
            self.stdout.write(f"  cut short by the publisher's clipping limit: {truncated}")
        undated = sum(clipping.added_at is None for clipping in result.clippings)
        if undated:
            self.stdout.write(f"  dates that could not be read: {undated}")
        for problem in result.problems:
            # A problem with no line (rich.NO_LINE) says where it is: printed as the report does.
            where = f"line {problem.line}: " if problem.line != NO_LINE else ""
            self.stdout.write(self.style.WARNING(f"  {where}{problem.message}"))


def result_json(result: ParseResult) -> dict[str, list[dict[str, Any]]]:
    return {
        "clippings": [_clipping_json(clipping) for clipping in result.clippings],
        "problems": [dataclasses.asdict(problem) for problem in result.problems],
    }


def _clipping_json(clipping: Clipping) -> dict[str, Any]:
    fields = dataclasses.asdict(clipping)
    fields["added_at"] = clipping.added_at.isoformat() if clipping.added_at else None
    return fields
