"""Exogram's two task queues: the one a reader waits on, and the one for everything else.

A reader's upload waited "for a worker" more than five minutes behind about 30 embedding
turns of other readers, for an import that took 1-4 s. The tasks a reader is waiting for
go to a queue of their own, named after EXOGRAM_TASK_QUEUE (so that instances sharing a
broker still keep apart), and the worker consumes it before the other: with Redis always
first (`queue_order_strategy`), with the file broker and RabbitMQ at its next turn or
the one after (both go round the queues), never behind the whole backlog.
"""

import contextlib
import logging
from typing import Any

from kombu import Queue

logger = logging.getLogger(__name__)

# The tasks a reader watches a page for, or is told are done soon: the import of a file
# (its report polls until it is done), the deletion of a large account (Settings says it is
# done within a minute or so, and the username is free only after it: behind ~100 embedding
# turns it took minutes), the layout of a library's map (the map page says "a few
# seconds"), and a reader's place among kindred readers (its centroid: a reader who turned
# sharing on, and every sharing reader's page, waited about eight minutes for it; one scan
# of the reader's rows and a probe for echoes that stops after a few seconds,
# affinity.services.ECHO_BUDGET_SECONDS). Short, each one reader's and at most one at a time
# per reader (a map's layout is claimed, library_map_request_refresh), so they never starve
# the embedding turns. The queue keeps its name "-imports": workers started with -Q name it.
READER_WAITS = frozenset(
    {
        "books.tasks.run_import",
        "accounts.tasks.delete_reader",
        "books.tasks.refresh_library_map",
        "affinity.tasks.refresh_centroid",
    }
)


def reader_queue_name(default_queue: str) -> str:
    return f"{default_queue}-imports"


def task_queues(default_queue: str) -> tuple[Queue, Queue]:
    """What a worker consumes, in the order it prefers them."""
    return (Queue(reader_queue_name(default_queue)), Queue(default_queue))


def route(
    name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **rest: Any
) -> dict[str, str] | None:
    """Celery's router (CELERY_TASK_ROUTES): the reader's tasks to the reader's queue,
    named from the default queue the app sends to now (the tests change it)."""
    if name not in READER_WAITS:
        return None
    from exogram.celery import app

    return {"queue": reader_queue_name(app.conf.task_default_queue)}


def queued_tasks(*, timeout: int = 3) -> dict[str, int] | None:
    """How many tasks wait in each of the instance's queues, the reader's first; None when
    the broker does not answer. Tasks a worker has taken (running, or prefetched) are not
    counted. The file broker counts its files, Redis the lengths of its lists, RabbitMQ
    the queue's ready messages: each says it cheaply and exactly."""
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
