"""Which queue each task is sent to: the tasks a reader waits for go to `<queue>-imports`,
consumed before the embedding turns (exogram/queues.py; tests/test_worker.py proves the
order with a real worker)."""

import pytest

from exogram.celery import app
from exogram.queues import READER_WAITS


def _queue_of(task_name: str) -> str:
    route = app.amqp.router.route({}, task_name, args=(1,), kwargs={})
    return str(route["queue"].name)


class TaskRoutingTests:
    def test_every_task_it_names_exists(self) -> None:
        app.loader.import_default_modules()
        assert set(app.tasks) >= READER_WAITS

    @pytest.mark.parametrize(
        "task",
        [
            "books.tasks.run_import",
            # Settings says a large account is deleted within a minute or so: behind ~100
            # embedding turns it took minutes, and its username stayed taken.
            "accounts.tasks.delete_reader",
            # The map page says "Laying out your map… a few seconds".
            "books.tasks.refresh_library_map",
            "affinity.tasks.refresh_centroid",
        ],
    )
    def test_a_task_a_reader_waits_for_goes_to_the_imports_queue(self, task: str) -> None:
        assert _queue_of(task) == f"{app.conf.task_default_queue}-imports"

    @pytest.mark.parametrize(
        "task",
        [
            "books.tasks.embed_highlights",
            "books.tasks.rejudge_connections",
            "backups.tasks.nightly_backup",
        ],
    )
    def test_everything_else_goes_to_the_default_queue(self, task: str) -> None:
        assert _queue_of(task) == app.conf.task_default_queue
