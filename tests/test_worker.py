"""A real task through a real worker process, over Redis, RabbitMQ and the filesystem broker."""

import os
import re
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import psutil
import pytest
import redis
from django.utils.timezone import now

from accounts.models import User
from accounts.services import reader_delete_send
from affinity.models import ReaderCentroid
from affinity.services import centroids_mark_stale
from affinity.tasks import refresh_centroid
from books.embedding.encoder import active_model_id
from books.importing.background import import_queue
from books.models import Book, Highlight, Import
from books.tasks import embed_highlights, refresh_library_map, sweep_pending_imports
from exogram.queues import queued_tasks, task_queues
from tests.books.kindle import MEMORY_LIBRARY, clippings_file
from tests.worker import (
    RABBITMQ_URL,
    a_turn_waits_for_the_lock,
    celery_worker,
    embedding_turns_held,
    rabbitmq_queue,
    wait_for,
)

# A Redis database of its own, so a test never consumes another process's messages.
REDIS_URL = "redis://127.0.0.1:6379/13"


def _library(reader: User) -> np.ndarray:
    book = Book.objects.create(reader=reader, title="El Aleph", key="el aleph")
    vectors = np.random.default_rng(7).normal(size=(5, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    Highlight.objects.bulk_create(
        Highlight(
            reader=reader,
            book=book,
            text=f"line {i}",
            dedupe_key=f"k{i}",
            embedding=v.tolist(),
            # The model in use: the worker's start-up sweep hands any other model's vectors
            # over to re-embedding.
            embedding_model=active_model_id(),
            embedding_status=Highlight.EmbeddingStatus.DONE,
        )
        for i, v in enumerate(vectors)
    )
    mean = vectors.mean(axis=0)
    result: np.ndarray = mean / np.linalg.norm(mean)
    return result


def _send_and_check(reader: User, expected: np.ndarray) -> None:
    refresh_centroid.delay(reader.pk)
    centroid = wait_for(
        lambda: ReaderCentroid.objects.filter(reader=reader, highlight_count=5).first(),
        what="the worker to write the centroid",
    )
    assert centroid.embedding_model == active_model_id()
    assert np.allclose(np.asarray(centroid.vector), expected, atol=1e-5)


@pytest.mark.django_db(transaction=True)
class WorkerTests:
    def test_it_runs_a_task_sent_over_redis(self, alice: User, tmp_path: Path) -> None:
        redis.Redis.from_url(REDIS_URL).flushdb()
        expected = _library(alice)
        with celery_worker(broker_url=REDIS_URL, data_dir=tmp_path):
            _send_and_check(alice, expected)

    def test_it_runs_a_task_sent_over_the_filesystem_broker(
        self, alice: User, tmp_path: Path
    ) -> None:
        expected = _library(alice)
        with celery_worker(broker_url="filesystem://", data_dir=tmp_path):
            _send_and_check(alice, expected)
        # With no -Q it consumes every queue, in their order: nothing to warn of.
        log = (tmp_path / "worker.log").read_text()
        assert "ready." in log
        assert "this worker consumes" not in log


@pytest.mark.django_db(transaction=True)
class WorkerQueuesWarningTests:
    def test_a_worker_started_with_the_old_docs_queues_says_which_to_consume(
        self, alice: User, tmp_path: Path
    ) -> None:
        # The docs once said `-Q celery-imports,celery`: nothing consumed the refreshes,
        # and maps stayed "Laying out".
        log_path = tmp_path / "worker.log"
        with celery_worker(
            broker_url="filesystem://", data_dir=tmp_path, consume=["celery-imports", "celery"]
        ):
            wait_for(lambda: "ready." in log_path.read_text(), what="the worker to start")
        warned = [
            line
            for line in log_path.read_text().splitlines()
            if "this worker consumes nothing of celery-refresh:" in line
        ]
        assert len(warned) == 1
        assert ": WARNING/MainProcess] " in warned[0]
        assert "-Q celery-imports,celery-refresh,celery," in warned[0]

    def test_a_worker_taking_the_queues_out_of_order_says_so(
        self, alice: User, tmp_path: Path
    ) -> None:
        log_path = tmp_path / "worker.log"
        with celery_worker(
            broker_url="filesystem://",
            data_dir=tmp_path,
            consume=["celery", "celery-refresh", "celery-imports"],
        ):
            wait_for(lambda: "ready." in log_path.read_text(), what="the worker to start")
        log = log_path.read_text()
        assert "this worker consumes celery, celery-refresh, celery-imports in that order" in log
        assert "-Q celery-imports,celery-refresh,celery" in log, log


@pytest.mark.django_db(transaction=True)
class WorkerPriorityTests:
    def test_it_runs_tasks_at_a_lower_priority_than_the_pages(
        self, alice: User, tmp_path: Path
    ) -> None:
        expected = _library(alice)
        with celery_worker(broker_url="filesystem://", data_dir=tmp_path, concurrency=2) as worker:
            _send_and_check(alice, expected)
            pool = psutil.Process(worker.pid).children()
            assert pool
            started_at = os.getpriority(os.PRIO_PROCESS, 0)  # this process's, inherited
            assert {process.nice() for process in pool} == {max(10, started_at)}
            # The parent stays as it was started: it may be the one that starts the
            # embedded PostgreSQL.
            assert psutil.Process(worker.pid).nice() == started_at


def _embedding_backlog(reader: User, *, highlights: int) -> list[int]:
    book = Book.objects.create(reader=reader, title="Ficciones", key="ficciones")
    made = Highlight.objects.bulk_create(
        Highlight(
            reader=reader, book=book, text=f"Un pasaje de Ficciones, el {i}.", dedupe_key=f"f{i}"
        )
        for i in range(highlights)
    )
    return [highlight.pk for highlight in made]


def _succeeded(log: str, task: str) -> list[int]:
    """Where in the worker's log each run of `task` ended well: the solo worker runs one
    task at a time, so the log's order is the order they ran in."""
    lines = log.splitlines()
    return [n for n, line in enumerate(lines) if f"Task {task}[" in line and "succeeded" in line]


REFRESHES = ("affinity.tasks.refresh_centroid", "books.tasks.refresh_library_map")


def _ran(log: str) -> list[str]:
    """The tasks that ended well, in the order the solo worker ran them."""
    return re.findall(r"Task ([\w.]+)\[[^]]+\] succeeded", log)


def _queue_backlog(ids: list[int], *, turns: int, sweeps: int, refreshes: int) -> None:
    """Queue `turns` embedding turns of `ids`, `sweeps` sweeps, then `refreshes` refreshes."""
    for _ in range(turns):
        embed_highlights.delay(ids)
    for _ in range(sweeps):
        sweep_pending_imports.delay()
    # A backlog as several readers' embedding leaves it: a map's layout and a centroid's
    # refresh per reader, the centroids queued as production queues them
    # (centroids_mark_stale: a refresh sent with a countdown was taken off the broker at
    # once, held by the worker and, when due, run ahead of everything queued, an import too).
    for n in range(refreshes // 2):
        reader = User.objects.create_user(f"reader{n}")
        refresh_library_map.delay(reader.pk)
        centroids_mark_stale(reader_ids={reader.pk})


@pytest.mark.django_db(transaction=True)
class WorkerQueueTests:
    """A reader's import is taken before the embedding turns already queued (four Kobo
    files waited 5.5 minutes behind ~30 turns of other readers, for 1-4 s of work), and
    before the maps' and centroids' refreshes (an upload waited four minutes behind five
    of them, the worker taking by turns a refresh and a 100-195 s embedding turn)."""

    TURNS = 4

    def _behind_turns(
        self,
        bob: User,
        tmp_path: Path,
        broker: str,
        *,
        send: Callable[[], object],
        done: Callable[[], bool],
        what: str,
        refreshes: int = 0,
        sweeps: int = 0,
    ) -> str:
        ids = _embedding_backlog(bob, highlights=8)

        def queue_turns_then_the_readers_task() -> None:
            _queue_backlog(ids, turns=self.TURNS, sweeps=sweeps, refreshes=refreshes)
            send()

        with celery_worker(
            broker_url=broker, data_dir=tmp_path, queued_first=queue_turns_then_the_readers_task
        ):
            wait_for(done, timeout=120, what=what)
            wait_for(
                lambda: (
                    len(
                        _succeeded(
                            (tmp_path / "worker.log").read_text(), "books.tasks.embed_highlights"
                        )
                    )
                    >= self.TURNS
                ),
                timeout=120,
                what="the worker to run the queued embedding turns",
            )
        return (tmp_path / "worker.log").read_text()

    def _import_behind_turns(
        self, alice: User, bob: User, tmp_path: Path, broker: str, **backlog: int
    ) -> str:
        return self._behind_turns(
            bob,
            tmp_path,
            broker,
            send=lambda: import_queue(
                reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="a.txt"
            ),
            done=lambda: Import.objects.filter(reader=alice, status="done").exists(),
            what="the worker to import the file",
            **backlog,
        )

    def test_an_import_goes_before_the_embedding_turns_queued_ahead_of_it(
        self, alice: User, bob: User, tmp_path: Path
    ) -> None:
        log = self._import_behind_turns(alice, bob, tmp_path, "filesystem://")
        [imported] = _succeeded(log, "books.tasks.run_import")
        # The import goes to a queue of its own (exogram.queues), which the worker consumes
        # first. kombu's own file transport passes this too (it goes round the queues from
        # the first, and the worker starts with them full): the order of the file broker's
        # takes (exogram.broker) is tested with the refreshes below.
        assert all(imported < turn for turn in _succeeded(log, "books.tasks.embed_highlights"))

    @pytest.mark.parametrize("broker", ["filesystem://", REDIS_URL])
    def test_an_import_goes_before_the_refreshes_and_turns_queued_ahead_of_it(
        self, alice: User, bob: User, tmp_path: Path, broker: str
    ) -> None:
        refreshes = 8
        if broker == REDIS_URL:
            redis.Redis.from_url(REDIS_URL).flushdb()
        log = self._import_behind_turns(alice, bob, tmp_path, broker, refreshes=refreshes, sweeps=6)
        [imported] = _succeeded(log, "books.tasks.run_import")
        ran = {task: _succeeded(log, task) for task in (*REFRESHES, "books.tasks.embed_highlights")}
        ran["books.tasks.sweep_pending_imports"] = _succeeded(
            log, "books.tasks.sweep_pending_imports"
        )
        # The worker's first task, ahead of all eighteen.
        assert all(imported < n for runs in ran.values() for n in runs), log
        # Then the refreshes, each short, before any embedding turn or sweep: what tests
        # that the file broker takes the queues in their order (exogram.broker; kombu's
        # own goes round them and takes a turn or a sweep between two refreshes).
        first_of_the_rest = min(
            ran["books.tasks.embed_highlights"] + ran["books.tasks.sweep_pending_imports"]
        )
        refreshed_first = [n for task in REFRESHES for n in ran[task] if n < first_of_the_rest]
        assert len(refreshed_first) == refreshes, log

    def test_over_redis_an_import_goes_first(self, alice: User, bob: User, tmp_path: Path) -> None:
        redis.Redis.from_url(REDIS_URL).flushdb()
        log = self._import_behind_turns(alice, bob, tmp_path, REDIS_URL)
        [imported] = _succeeded(log, "books.tasks.run_import")
        assert all(imported < turn for turn in _succeeded(log, "books.tasks.embed_highlights"))

    def test_an_accounts_deletion_goes_before_the_embedding_turns_queued_ahead_of_it(
        self, alice: User, bob: User, tmp_path: Path
    ) -> None:
        # Settings says a large account is deleted within a minute or so, and its username
        # is free only then: behind ~100 embedding turns it took minutes.
        User.objects.filter(pk=alice.pk).update(is_active=False, deletion_requested_at=now())
        log = self._behind_turns(
            bob,
            tmp_path,
            "filesystem://",
            send=lambda: reader_delete_send(reader_id=alice.pk),
            done=lambda: not User.objects.filter(pk=alice.pk).exists(),
            what="the worker to delete the account",
        )
        [deleted] = _succeeded(log, "accounts.tasks.delete_reader")
        # Routed to the reader's queue, consumed first (as the import above: kombu's own
        # file transport passes this too).
        assert all(deleted < turn for turn in _succeeded(log, "books.tasks.embed_highlights"))

    def test_over_rabbitmq_an_import_waits_for_a_few_tasks_not_for_the_backlog(
        self, alice: User, bob: User, tmp_path: Path
    ) -> None:
        """RabbitMQ does not take the queues in their order. When a worker process is free,
        it is sent the next task of whichever queue RabbitMQ resumes first, chosen at random
        among those with tasks (rabbit_limiter's notify_queues; Celery sets the prefetch for
        the whole channel on RabbitMQ 3). An import sent while the worker was busy, behind
        8 refreshes and 13 or 23 turns and sweeps, had 0-11 tasks ahead of it in 30 runs (a
        median of 1; up to 7 refreshes and 5 of the rest): at every take a chance in three,
        not "at most one of each other queue", as the docs said."""
        ids = _embedding_backlog(bob, highlights=8)
        refreshes, sweeps = 8, 16
        worker_log = tmp_path / "worker.log"
        with (
            rabbitmq_queue() as queue,
            embedding_turns_held() as release,
            celery_worker(
                broker_url=RABBITMQ_URL,
                data_dir=tmp_path,
                queue=queue,
                queued_first=lambda: embed_highlights.delay(ids),
            ),
        ):
            # Busy: its first task, an embedding turn, waits for the lock, unacknowledged. It
            # loads the models first: slow on a loaded machine (a load average of 7 here).
            wait_for(a_turn_waits_for_the_lock, timeout=240, what="the turn to wait for the lock")
            _queue_backlog(ids, turns=self.TURNS, sweeps=sweeps, refreshes=refreshes)
            import_queue(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="a.txt")
            waiting = queued_tasks()
            release()
            wait_for(
                lambda: Import.objects.filter(reader=alice, status="done").exists(),
                timeout=120,
                what="the worker to import the file",
            )
            wait_for(
                lambda: (
                    _ran(worker_log.read_text()).count("books.tasks.embed_highlights") > self.TURNS
                ),
                timeout=120,
                what="the worker to run the queued embedding turns",
            )
        log = worker_log.read_text()
        assert "Connected to amqp://guest:**@127.0.0.1:5672//" in log, log
        # The worker holds nothing it is not running (one message a process, acks_late): the
        # import and the whole backlog wait on RabbitMQ, each in its queue, the rest behind
        # the worker's three start-up sweeps (books.tasks._sweep_on_start).
        imports, refresh, rest = (declared.name for declared in task_queues(queue))
        backlog = refreshes + self.TURNS + sweeps + 3
        assert waiting == {imports: 1, refresh: refreshes, rest: backlog - refreshes}
        ran = _ran(log)
        assert ran[0] == "books.tasks.embed_highlights", log  # the turn that waited
        assert "books.tasks.run_import" in ran, log
        ahead = ran[1 : ran.index("books.tasks.run_import")]
        # Taken before the backlog is done: at every take a chance in three (two, once the
        # refreshes or the rest run out), so it waits for all 31 about once in 10^7 runs.
        assert len(ahead) < backlog, log


def _turns_that_embedded(log: str) -> list[int]:
    """Where in the worker's log each embedding turn that embedded something ended."""
    found = re.compile(r"embedding turn: [1-9]\d* embedded")
    return [n for n, line in enumerate(log.splitlines()) if found.search(line)]


@pytest.mark.django_db(transaction=True)
class WorkerTurnTimeTests:
    """An embedding turn whose time is up leaves the rest to one more turn, so a worker is
    free for an upload between two turns of a library: an upload waited six minutes while
    both processes ran 450-540 s turns on a loaded machine. Turns of no time at all here
    (EXOGRAM_EMBEDDING_TURN_SECONDS=0: one group each), so the backlog is many turns."""

    @pytest.mark.parametrize("broker", ["filesystem://", REDIS_URL, RABBITMQ_URL])
    def test_an_upload_runs_between_two_turns_of_a_library(
        self, alice: User, bob: User, tmp_path: Path, broker: str
    ) -> None:
        ids = _embedding_backlog(bob, highlights=240)  # one task: 15 turns of 16
        embedded = Highlight.objects.filter(pk__in=ids, embedding_status="done")
        with ExitStack() as stack:
            queue = stack.enter_context(rabbitmq_queue()) if broker == RABBITMQ_URL else "celery"
            if broker == REDIS_URL:
                redis.Redis.from_url(REDIS_URL).flushdb()
            stack.enter_context(
                celery_worker(
                    broker_url=broker,
                    data_dir=tmp_path,
                    queue=queue,
                    env={"EXOGRAM_EMBEDDING_TURN_SECONDS": "0"},
                    queued_first=lambda: embed_highlights.delay(ids),
                )
            )
            # It loads the models first: slow on a loaded machine.
            wait_for(embedded.exists, timeout=240, what="the first turn to embed a group")
            import_queue(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="a.txt")
            wait_for(
                lambda: Import.objects.filter(reader=alice, status="done").exists(),
                timeout=240,
                what="the worker to import the file",
            )
            # The rest of the library goes on, turn after turn, with no sweep needed.
            wait_for(lambda: embedded.count() == len(ids), timeout=240, what="every vector")
        log = (tmp_path / "worker.log").read_text()
        [imported] = _succeeded(log, "books.tasks.run_import")
        # Turns embedded after the import: it did not wait for the whole library (over
        # RabbitMQ, which picks among the queues at random, for a few turns at most).
        assert [turn for turn in _turns_that_embedded(log) if turn > imported], log
        assert "left to the next turn" in log
