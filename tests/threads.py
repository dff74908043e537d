"""Running one piece of work in several threads at once, for the race tests."""

import threading
from collections.abc import Callable

from django.db import connection

# Bounded wait for the threads to finish; not a timing assertion.
JOIN_SECONDS = 300


def run_in_threads(work: Callable[[], None], count: int = 2) -> None:
    """Run `work` in `count` threads at once and wait for them all; each thread closes its
    own database connection when its work ends."""

    def run() -> None:
        try:
            work()
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=JOIN_SECONDS)
