import logging
import random
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from accounts.models import User
from accounts.services import reader_delete
from affinity.demo_library import (
    OPPOSITE_PAIRS,
    TWIN_PAIRS,
    USERNAME_PREFIX,
    DemoDataMissing,
    DemoReader,
    clippings_file,
    make_library,
)
from affinity.models import ReaderCentroid, SharingProfile
from affinity.services import centroid_refresh, sharing_update
from books.importing.services import clippings_import
from books.models import Highlight
from evaluation.affinity_data import CONSTRUCTIONS, read_construction

DEFAULT_DATA = settings.BASE_DIR.parent / "shared" / "data" / "eval"


class Command(BaseCommand):
    help = (
        "Build a demo library of sharing readers from the evaluation quotes (quotable/ and "
        "fortunes_es/; or another construction), with planted twin and opposite readers, "
        "through the app's own import and embedding pipeline."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--readers", type=int, default=60, help="how many readers (60)")
        parser.add_argument(
            "--data",
            type=Path,
            default=DEFAULT_DATA,
            help=f"the evaluation data folder, read in place (default {DEFAULT_DATA})",
        )
        parser.add_argument(
            "--construction",
            choices=CONSTRUCTIONS,
            default=CONSTRUCTIONS[0],
            help="what the readers read: quotes (quotable + Spanish sayings, the default), "
            "kindle (the shared Kindle files beside --data, one topic per book), languages "
            "(quotes + German and Portuguese sayings)",
        )
        parser.add_argument("--seed", type=int, default=7, help="random seed (7)")
        parser.add_argument(
            "--twins", type=int, default=TWIN_PAIRS, help=f"twin pairs ({TWIN_PAIRS})"
        )
        parser.add_argument(
            "--opposites",
            type=int,
            default=OPPOSITE_PAIRS,
            help=f"opposite pairs ({OPPOSITE_PAIRS})",
        )
        parser.add_argument(
            "--password",
            default="",
            help="a password for every demo reader, to log in as one (default: none can)",
        )
        parser.add_argument(
            "--reset", action="store_true", help="delete an existing demo library first"
        )
        parser.add_argument(
            "--queue",
            action="store_true",
            help="leave embedding to the Celery worker instead of running the tasks here",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            quotes = read_construction(options["construction"], options["data"])
            library = make_library(
                quotes,
                readers=options["readers"],
                seed=options["seed"],
                twin_pairs=options["twins"],
                opposite_pairs=options["opposites"],
            )
        except DemoDataMissing as error:
            raise CommandError(f"{error}. Pass --data with the evaluation data folder.") from None
        except ValueError as error:
            raise CommandError(str(error)) from None
        existing = User.objects.filter(username__startswith=USERNAME_PREFIX)
        if existing.exists():
            if not options["reset"]:
                raise CommandError(
                    f"A demo library exists ({existing.count()} readers named "
                    f"{USERNAME_PREFIX}…); pass --reset to replace it."
                )
            for reader in existing:
                reader_delete(reader_id=reader.pk)
        self.stdout.write(
            f"{len(library.readers)} readers ({options['twins']} twin pairs, "
            f"{options['opposites']} opposite pairs), {library.books} books, "
            f"{len(library.topics)} topics, from {options['data']}"
        )
        started = time.monotonic()
        from exogram.celery import app

        saved = (app.conf.task_always_eager, app.conf.task_eager_propagates)
        # Run the pipeline's tasks here, as a worker would run them: import, embed,
        # connect, refresh the centroid; a failure stops the seed rather than leaving a
        # half-embedded library. --queue leaves them to a real worker instead.
        app.conf.task_always_eager = not options["queue"]
        app.conf.task_eager_propagates = True
        # A line per task run here says nothing the progress lines do not.
        trace_logger = logging.getLogger("celery.app.trace")
        trace_level = trace_logger.level
        trace_logger.setLevel(logging.WARNING)
        try:
            rng = random.Random(options["seed"])
            for number, demo in enumerate(library.readers, start=1):
                self._seed_reader(demo, rng, options["password"])
                if number % 10 == 0 or number == len(library.readers):
                    self.stdout.write(
                        f"  {number} readers imported ({time.monotonic() - started:.0f} s)"
                    )
        finally:
            app.conf.task_always_eager, app.conf.task_eager_propagates = saved
            trace_logger.setLevel(trace_level)
        demo_highlights = Highlight.objects.filter(reader__username__startswith=USERNAME_PREFIX)
        if options["queue"]:
            self.stdout.write(
                f"{demo_highlights.count()} highlights queued for the worker; run "
                "evaluate_affinity once it has embedded them."
            )
            return
        # One last refresh each: the echo weights of the first readers changed as later
        # readers highlighted the same passages (in a running app the debounced refreshes
        # queued by the probes do this over time).
        for reader in User.objects.filter(username__startswith=USERNAME_PREFIX):
            centroid_refresh(reader=reader)
        ready = ReaderCentroid.objects.filter(
            reader__username__startswith=USERNAME_PREFIX, vector__isnull=False
        ).count()
        embedded = demo_highlights.filter(embedding_status=Highlight.EmbeddingStatus.DONE).count()
        self.stdout.write(
            self.style.SUCCESS(
                f"Done in {time.monotonic() - started:.0f} s: {embedded} of "
                f"{demo_highlights.count()} highlights embedded, {ready} centroids."
            )
        )

    def _seed_reader(self, demo: DemoReader, rng: random.Random, password: str) -> None:
        with transaction.atomic():
            reader = User.objects.create_user(demo.username, password=password or None)
            name = demo.display_name
            taken = SharingProfile.objects.filter(discoverable=True, display_name__iexact=name)
            if taken.exists():  # a real reader of this instance shares under it
                name = f"{name} (demo)"
            sharing_update(reader=reader, discoverable=True, display_name=name, excluded_books=[])
        # The app's own import path: a clippings file, parsed and imported in one
        # transaction; its embedding task is sent on commit.
        clippings_import(
            reader=reader, data=clippings_file(demo, rng), file_name="My Clippings.txt"
        )
