"""Which queue each task is sent to: the tasks a reader waits for go to `<queue>-imports`,
the refreshes to `<queue>-refresh`, consumed in that order before the embedding turns
(exogram/queues.py; tests/test_worker.py proves the order with a real worker)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accounts.models import User
from affinity.services import centroids_mark_stale
from books.library_map.services import library_map_request_refresh
from exogram.celery import app
from exogram.queues import READER_WAITS, REFRESHES, consumed_queues_warning, queued_tasks
from tests.worker import tasks_kept_in


def _queue_of(task_name: str) -> str:
    route = app.amqp.router.route({}, task_name, args=(1,), kwargs={})
    return str(route["queue"].name)


class TaskRoutingTests:
    def test_every_task_it_names_exists(self) -> None:
        app.loader.import_default_modules()
        assert set(app.tasks) >= READER_WAITS | REFRESHES

    @pytest.mark.parametrize(
        "task",
        [
            "books.tasks.run_import",
            # Settings says a large account is deleted within a minute or so: behind ~100
            # embedding turns it took minutes, and its username stayed taken.
            "accounts.tasks.delete_reader",
        ],
    )
    def test_a_task_a_reader_waits_for_goes_to_the_imports_queue(self, task: str) -> None:
        assert _queue_of(task) == f"{app.conf.task_default_queue}-imports"

    @pytest.mark.parametrize(
        "task",
        [
            # The map page says "Laying out your map… a few seconds"; every embedding turn
            # queues these, and an upload waited four minutes behind them on the imports
            # queue.
            "books.tasks.refresh_library_map",
            "affinity.tasks.refresh_centroid",
        ],
    )
    def test_a_refresh_goes_to_the_refresh_queue(self, task: str) -> None:
        assert _queue_of(task) == f"{app.conf.task_default_queue}-refresh"

    def test_a_worker_takes_the_imports_then_the_refreshes_then_the_rest(self) -> None:
        default = app.conf.task_default_queue
        assert [queue.name for queue in app.conf.task_queues] == [
            f"{default}-imports",
            f"{default}-refresh",
            default,
        ]

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


class ConsumedQueuesWarningTests:
    """A real worker logs it (tests/test_worker.py); here, which -Q it is for."""

    @pytest.mark.parametrize(
        "consumed",
        [
            ["q-imports", "q-refresh", "q"],
            # Another instance's or another program's queue beside them is not Exogram's
            # business.
            ["q-imports", "other", "q-refresh", "q"],
        ],
    )
    def test_every_queue_in_order_is_right(self, consumed: list[str]) -> None:
        assert consumed_queues_warning(consumed, "q") is None

    @pytest.mark.parametrize(
        ("consumed", "says"),
        [
            (["q-imports", "q"], "consumes nothing of q-refresh:"),
            (["q"], "consumes nothing of q-imports, q-refresh:"),
            (["q-refresh", "q-imports", "q"], "consumes q-refresh, q-imports, q in that order:"),
            # Another instance's queues: none of this one's.
            (["celery-imports", "celery-refresh", "celery"], "nothing of q-imports, q-refresh, q:"),
        ],
    )
    def test_a_queue_left_out_or_out_of_order_is_named(
        self, consumed: list[str], says: str
    ) -> None:
        warning = consumed_queues_warning(consumed, "q")
        assert warning is not None
        assert says in warning
        assert warning.endswith("start it with -Q q-imports,q-refresh,q, or with no -Q.")


@pytest.mark.django_db
class RefreshBacklogTests:
    """Every embedding turn asks for its readers' centroids and maps: a reader embedding for
    minutes leaves one refresh of each waiting, not one a turn (the claims, ReaderCentroid.
    refresh_queued_at and LibraryMap.refreshing_since), so the refresh queue holds at most
    two tasks a reader."""

    def test_requests_while_one_waits_queue_nothing_more(
        self,
        alice: User,
        bob: User,
        tmp_path: Path,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        default = app.conf.task_default_queue
        with tasks_kept_in(tmp_path):
            for _ in range(5):
                with django_capture_on_commit_callbacks(execute=True):
                    centroids_mark_stale(reader_ids={alice.pk})
                    library_map_request_refresh(reader=alice)
            with django_capture_on_commit_callbacks(execute=True):
                centroids_mark_stale(reader_ids={bob.pk})
            assert queued_tasks() == {
                f"{default}-imports": 0,
                f"{default}-refresh": 3,
                default: 0,
            }
