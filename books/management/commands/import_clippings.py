import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError
from django.urls import reverse

from accounts.commands import reader_named
from books.importing.rich import NO_LINE
from books.importing.selectors import import_nothing_else_new
from books.importing.services import (
    ImportFailed,
    ImportRejected,
    clippings_import,
    refusal_record,
)
from books.importing.upload import check_size
from books.models import Import


class Command(BaseCommand):
    help = (
        "Import highlights into a reader's library: a Kindle 'My Clippings.txt', a Kindle "
        "notebook export (HTML), a Readwise CSV, a Bookcision JSON, an Exogram JSON export, a "
        "KOReader sidecar (metadata.<ext>.lua), a KOReader JSON export, a Kobo "
        "KoboReader.sqlite, or a zip of KOReader .sdr folders or of Apple Books' AEAnnotation "
        "and BKLibrary folders (the format is read from the content)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--user", required=True, help="the reader's username")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        reader = reader_named(options["user"])
        try:
            the_import = clippings_import(reader=reader, data=_file_read(path), file_name=path.name)
        except ImportRejected as rejection:
            # Kept in the reader's Past imports with its reason, as the page keeps it.
            refused = refusal_record(reader=reader, file_name=path.name, reason=str(rejection))
            if options["json"]:
                self.stdout.write(json.dumps(import_report_json(refused), ensure_ascii=False))
            raise CommandError(f"{path}: {rejection}") from None
        except (ImportFailed, DatabaseError) as failure:
            # The database's failure is said plainly, without a traceback: the failed import
            # is recorded with the reason (unless the database went away before that too).
            cause = failure.__cause__ if isinstance(failure, ImportFailed) else failure
            if not isinstance(cause, DatabaseError):
                raise  # a bug: its traceback is what the operator needs
            message = f"{path}: the import failed and nothing was saved: {cause}"
            raise CommandError(message) from None
        if options["json"]:
            self.stdout.write(json.dumps(import_report_json(the_import), ensure_ascii=False))
        else:
            self._print_report(the_import)

    def _print_report(self, the_import: Import) -> None:
        counts = the_import.counts
        self.stdout.write(f"Imported {the_import.file_name} (import {the_import.code})")
        for key in [
            "books_touched",
            "new_books",
            "books_changed",
            "new_highlights",
            "duplicates_skipped",
            "extended_merged",
            "notes_attached",
            "standalone_notes",
            "bookmarks_skipped",
            "empty_notes_skipped",
            "deleted_skipped",
            "already_deleted",
        ]:
            self.stdout.write(f"  {key.replace('_', ' '):<22} {counts.get(key, 0):>7}")
        for line in [*_left_out_lines(the_import), *_untitled_lines(the_import)]:
            self.stdout.write(f"  {line}")
        for reason, count in counts.get("skipped_in_file", {}).items():
            self.stdout.write(f"  skipped in the file, {reason}: {count}")
        for title, count in counts.get("truncated_by_book", {}).items():
            self.stdout.write(f"  cut short by the publisher: {title}: {count}")
        for title, why in counts.get("books_with_nothing", {}).items():
            self.stdout.write(f"  not added as a book: {title}: {why}")
        for problem in the_import.problems:
            # A problem with no line (rich.NO_LINE) says where it is: printed as the report does.
            where = f"line {problem['line']}: " if problem["line"] != NO_LINE else ""
            self.stdout.write(self.style.WARNING(f"  {where}{problem['message']}"))


def _file_read(path: Path) -> bytes:
    try:
        # A file past the upload limit is refused from its size, never read (as the page).
        check_size(path.stat().st_size)
        return path.read_bytes()
    except OSError as error:
        raise CommandError(f"Cannot read {path}: {error.strerror}") from None


def _untitled_lines(the_import: Import) -> list[str]:
    """What the report page says of highlights an earlier import had put in "Untitled"
    (books.importing.untitled), in plain lines."""
    counts = the_import.counts
    moved, joined = counts.get("untitled_moved", 0), counts.get("untitled_joined", 0)
    lines = []
    if moved:
        lines.append(
            f"{moved:,} highlight{'s' if moved != 1 else ''} that an earlier import had put in "
            f"“Untitled” {'are' if moved != 1 else 'is'} now in "
            f"{'their own books' if moved != 1 else 'its own book'}, with everything you added "
            f"to {'them' if moved != 1 else 'it'}: Exogram did not read this file's book "
            "titles then."
        )
    if joined:
        lines.append(
            "1 highlight in “Untitled” was in its own book as well: the two are now one "
            "there, with the notes and tags of both."
            if joined == 1
            else f"{joined:,} highlights in “Untitled” were in their own books as well: each "
            "is now one there, with the notes and tags of both."
        )
    if counts.get("untitled_removed"):
        lines.append("“Untitled” had nothing else in it, and is gone.")
    return lines


def _left_out_lines(the_import: Import) -> list[str]:
    """What the report page says of entries left out because the reader had deleted them,
    of hashtags past the cap on new tags, and of a file with nothing else new
    (books/import_report.html), in plain lines."""
    left_out = the_import.left_out
    deleted = f"Recently deleted ({reverse('deleted')})"
    lines = [
        _left_out(
            left_out.deleted,
            f"you deleted it, and it is in {deleted}",
            f"you deleted them, and they are in {deleted}",
        ),
        _left_out(
            left_out.removed,
            "you deleted it, and it has since been removed for good",
            "you deleted them, and they have since been removed for good",
        ),
        _left_out(
            left_out.on_device,
            "you deleted it on your device",
            "you deleted them on your device",
        ),
    ]
    hashtags = the_import.counts.get("hashtags_left_out", 0)
    if hashtags:
        cap = f"at most {the_import.counts['hashtag_tags_cap']:,} new tags from one file"
        lines.append(
            f"1 hashtag in this file was not made a tag: {cap}."
            if hashtags == 1
            else f"{hashtags:,} hashtags in this file were not made tags: {cap}."
        )
    if import_nothing_else_new(the_import):
        lines.append("Nothing new in this file: everything else in it is already in your library.")
    return [line for line in lines if line]


def _left_out(count: int, one: str, many: str) -> str:
    if count == 0:
        return ""
    if count == 1:
        return f"1 entry in this file was left out: {one}."
    return f"{count} entries in this file were left out: {many}."


def import_report_json(the_import: Import) -> dict[str, Any]:
    return {
        "code": str(the_import.code),
        "file_name": the_import.file_name,
        "sha256": the_import.sha256,
        "status": the_import.status,
        # Why a refused or failed import added nothing (in English, as it is kept).
        "error": the_import.error,
        **the_import.counts,
        "problems": the_import.problems,
    }
