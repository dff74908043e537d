"""Exogram's three task queues: the one a reader waits on, the refreshes, everything else.

A reader's upload waited "for a worker" more than five minutes behind about 30 embedding
turns of other readers, for an import that took 1-4 s. The tasks a reader is waiting for
go to a queue of their own, named after EXOGRAM_TASK_QUEUE (so that instances sharing a
broker still keep apart), and the worker consumes it before the others. Later an upload
waited four minutes again, behind the maps' layouts and kindred centroids queued with it
(the embedding turns of every reader queue them): those now have a queue of their own,
consumed after the reader's and before the embedding turns. With Redis
(`queue_order_strategy`) and the file broker (exogram.broker) always in that order. RabbitMQ
knows no order between queues: when a process is free it sends the next task of a queue chosen
at random among those with tasks, so an import waits for a few tasks (0-11, a median of 1, in
tests/test_worker.py's runs), not for the backlog; a worker consuming only the imports queue
takes them first (docs/operations.md).
"""

import contextlib
import logging
from typing import Any

from celery.signals import worker_ready
from kombu import Queue

logger = logging.getLogger(__name__)

# The tasks a reader watches a page for: the import of a file (its report polls until it is
# done) and the deletion of a large account (Settings says it is done within a minute or
# so, and the username is free only after it: behind ~100 embedding turns it took minutes).
# Nothing else, so that an upload waits for a free worker process and at most for other
# uploads and deletions. The queue keeps its name "-imports": workers started with -Q name it.
READER_WAITS = frozenset({"books.tasks.run_import", "accounts.tasks.delete_reader"})

# Refreshes of what a reader reads: the layout of a library's map (the map page says "a
# few seconds") and a reader's place among kindred readers (its centroid: a reader who
# turned sharing on, and every sharing reader's page, waited about eight minutes for it
# behind the embedding turns). Embedding turns queue them for their readers (a centroid
# every turn, a map at the last), so with several readers embedding a few always wait: an
# upload queued behind them waited four minutes (the file broker took, by turns, a refresh
# and a 100-195 s embedding turn). Each is claimed in the database until it runs, so at
# most one of each kind waits per reader (ReaderCentroid.refresh_queued_at,
# LibraryMap.refreshing_since), and each is short, so they go before the embedding turns
# without starving them.
REFRESHES = frozenset({"books.tasks.refresh_library_map", "affinity.tasks.refresh_centroid"})


def reader_queue_name(default_queue: str) -> str:
    return f"{default_queue}-imports"


def refresh_queue_name(default_queue: str) -> str:
    return f"{default_queue}-refresh"


def task_queues(default_queue: str) -> tuple[Queue, Queue, Queue]:
    """What a worker consumes, in the order it prefers them."""
    return (
        Queue(reader_queue_name(default_queue)),
        Queue(refresh_queue_name(default_queue)),
        Queue(default_queue),
    )


def consumed_queues_warning(consumed: list[str], default_queue: str) -> str | None:
    """What is wrong with a worker that consumes `consumed` (its -Q, in its order), or None.

    The docs once said `-Q <queue>-imports,<queue>`: a worker started so consumes nothing
    of `<queue>-refresh`, and the maps stay "Laying out", the centroids never change."""
    wanted = [queue.name for queue in task_queues(default_queue)]
    ours = [name for name in consumed if name in wanted]
    if ours == wanted:
        return None
    missing = [name for name in wanted if name not in ours]
    problem = (
        f"consumes nothing of {', '.join(missing)}"
        if missing
        else f"consumes {', '.join(ours)} in that order"
    )
    return (
        f"this worker {problem}: Exogram sends its tasks to {', '.join(wanted)}, to be "
        f"consumed in that order (the reader's imports and deletions, then the maps' and "
        f"centroids' refreshes, then the rest). Unless other workers consume the rest, "
        f'maps stay "Laying out", kindred readers never change or imports wait behind '
        f"embedding turns: start it with -Q {','.join(wanted)}, or with no -Q."
    )


@worker_ready.connect
def _check_the_consumed_queues(sender: Any = None, **kwargs: Any) -> None:
    # Workers started with the -Q of older docs consume no refresh: said in the worker's
    # log, with the -Q to use. Connected here, which the settings import in every process
    # (exogram.celery imports nothing of this module: tests/test_import_cycles.py).
    consumer = getattr(sender, "task_consumer", None)
    if consumer is None:
        return
    consumed = [queue.name for queue in consumer.queues]
    warning = consumed_queues_warning(consumed, sender.app.conf.task_default_queue)
    if warning:
        logger.warning("%s", warning)


def route(
    name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **rest: Any
) -> dict[str, str] | None:
    """Celery's router (CELERY_TASK_ROUTES): the reader's tasks to the reader's queue, the
    refreshes to theirs, named from the default queue the app sends to now (the tests
    change it)."""
    if name in READER_WAITS:
        queue = reader_queue_name
    elif name in REFRESHES:
        queue = refresh_queue_name
    else:
        return None
    from exogram.celery import app

    return {"queue": queue(app.conf.task_default_queue)}


def queued_tasks(*, timeout: int = 3) -> dict[str, int] | None:
    """How many tasks wait in each of the instance's queues, in the order a worker takes
    them; None when the broker does not answer. Tasks a worker has taken (running, or
    prefetched) are not counted. The file broker counts its files, Redis the lengths of its
    lists, RabbitMQ the queue's ready messages: each says it cheaply and exactly."""
    from exogram.celery import app

    counts: dict[str, int] = {}
    try:
        with app.connection_for_read() as broker:
            broker.ensure_connection(max_retries=1, timeout=timeout)
            for queue in task_queues(app.conf.task_default_queue):
                channel: Any = broker.channel()  # the transport's, typed as the base
                try:
                    declared = channel.queue_declare(queue=queue.name, passive=True)
                    counts[queue.name] = declared.message_count
                except broker.channel_errors:  # never declared: nothing was ever sent to it
                    counts[queue.name] = 0
                finally:
                    with contextlib.suppress(Exception):
                        channel.close()
    except Exception as error:  # kombu raises transport-specific errors
        logger.warning("status: the broker does not answer: %s", error)
        return None
    return counts
