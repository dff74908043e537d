"""The file broker (`filesystem://`, what `make run` uses with no CELERY_BROKER_URL), taking
the queues in the order the worker consumes them.

kombu's file transport goes round the queues a worker consumes: with the embedding turns
in one queue and the refreshes in another, a reader's import waited for the worker's next
turn at that queue, one embedding turn of 100-195 s on a loaded machine, and a second one
when a refresh came first. This one asks the queues in their order at every take (the
reader's, the refreshes, the rest: exogram.queues.task_queues), as Redis does with
`queue_order_strategy: priority`; each queue is still first in, first out.

It replaces kombu's under the name "filesystem" (register, called by exogram.celery before
any connection), so every URL and test that names the file broker gets it. It uses kombu's
internals, so pyproject.toml pins kombu to the minor tested (tests/test_worker.py's
test_an_import_goes_before_the_refreshes_and_turns_queued_ahead_of_it fails without it).
"""

from collections.abc import Callable
from queue import Empty
from typing import Any

from kombu.transport import TRANSPORT_ALIASES, filesystem


class Channel(filesystem.Channel):
    def _poll(self, cycle: Any, callback: Callable[..., Any], timeout: float | None = None) -> Any:
        """The first message of the first queue that has one (kombu's: of the next queue
        round the cycle)."""
        for queue in list(self._active_queues):
            try:
                return self._get_and_deliver(queue, callback)
            except Empty:
                continue
        raise Empty()


class Transport(filesystem.Transport):
    Channel = Channel


def register() -> None:
    TRANSPORT_ALIASES["filesystem"] = f"{__name__}:Transport"
