"""A value read from the database and kept in the process for a while: PostgreSQL's own
statistics (pg_stats), which search reads to plan its statements, change only at ANALYZE."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Refreshed(Generic[T]):
    """`read()`'s value, read again once it is `ttl` seconds old, or after `forget()`."""

    def __init__(
        self, read: Callable[[], T], *, ttl: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._read = read
        self._ttl = ttl
        self._clock = clock
        self._kept: tuple[float, T] | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        now = self._clock()
        kept = self._kept
        if kept is not None and now - kept[0] < self._ttl:
            return kept[1]
        value = self._read()
        with self._lock:
            self._kept = (now, value)
        return value

    def forget(self) -> None:
        """Read afresh at the next get (after an ANALYZE, in tests)."""
        with self._lock:
            self._kept = None
