from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from books.embedding.pipeline import highlights_embed, pending_highlight_ids
from books.library_cache import library_background_bump
from books.tasks import enqueue_embedding
from exogram.counting import counted


class Command(BaseCommand):
    help = "Enqueue every highlight that still needs a vector from the current model."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--now", action="store_true", help="embed in this process instead of enqueueing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ids = pending_highlight_ids()
        if not ids:
            self.stdout.write("Nothing to embed: every highlight has a vector.")
            return
        if not options["now"]:
            enqueue_embedding(ids)
            self.stdout.write(self.style.SUCCESS(f"Enqueued {counted(len(ids), 'highlight')}."))
            return
        done = 0
        for start in range(0, len(ids), 256):
            outcome = highlights_embed(ids=ids[start : start + 256])
            done += outcome.embedded
            library_background_bump(reader_ids=outcome.readers)
            self.stdout.write(f"  {min(start + 256, len(ids))}/{len(ids)} processed")
        self.stdout.write(self.style.SUCCESS(f"Embedded {counted(done, 'highlight')}."))
