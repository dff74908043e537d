from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from books.embedding.encoder import get_encoders
from books.embedding.pipeline import embeddings_switch_model, pending_highlight_ids
from books.library_cache import library_version_bump
from books.models import Highlight
from books.tasks import enqueue_embedding
from exogram.counting import counted


class Command(BaseCommand):
    help = (
        "Re-embed highlights whose vector came from another model (after a model change); "
        "with --all, every highlight."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--all", action="store_true", help="re-embed every highlight")

    def handle(self, *args: Any, **options: Any) -> None:
        model_id = get_encoders().model_id
        if embeddings_switch_model(model_id=model_id):
            # The old model's connections are gone, in every library.
            library_version_bump(
                reader_ids=Highlight.objects.values_list("reader_id", flat=True).distinct()
            )
        if options["all"]:
            # Pending, not erased: the old vectors stay readable until the new ones land.
            Highlight.objects.alive().filter(
                embedding_status=Highlight.EmbeddingStatus.DONE
            ).update(embedding_status=Highlight.EmbeddingStatus.PENDING)
        ids = pending_highlight_ids()
        enqueue_embedding(ids)
        self.stdout.write(
            self.style.SUCCESS(
                f"Enqueued {counted(len(ids), 'highlight')} for embedding with {model_id}."
            )
        )
