"""Work for the worker, announced by the services that notice it; books.tasks sends it.

An import saves highlights that wait for vectors, a large upload waits for a worker, a
library's map falls behind. The services that notice these must not import books.tasks:
the tasks import those services to run them, and the imports inside functions that did it
hid a cycle (importing.services ↔ background ↔ tasks ↔ library_map). So a service
announces here and books.tasks, imported in every process by BooksConfig.ready, answers by
sending the task. A receiver only sends a task, never decides anything
(../shared/STYLE.md: no business logic in signals).
"""

from typing import Any

from django.dispatch import Signal

# ids: list[int], highlights saved or changed whose vectors are to be computed. Announced
# after commit; the answer is whether every task was sent (books.tasks.enqueue_embedding).
highlights_to_embed = Signal()
# import_id: int, a queued import to run; a broker that is down raises out of announce().
import_queued = Signal()
# reader_id: int, a map to lay out again; the task is sent when the transaction commits.
library_map_behind = Signal()


class NobodyListens(RuntimeError):
    pass


def announce(signal: Signal, **facts: Any) -> list[Any]:
    """Send the signal and return its receivers' answers. Work must not vanish without a
    word because books.tasks was never imported, so nobody listening is an error."""
    if not signal.has_listeners():
        raise NobodyListens(f"nothing sends the work announced with {sorted(facts)}")
    return [answer for _receiver, answer in signal.send(sender=None, **facts)]
