"""How many of one reader's costly requests run at once, counted in the shared cache.

An export reads the whole library and a search runs the model and two index scans: eight
exports of a 28,000-highlight library at once took every web thread for 39 s. Each reader
gets `limit` slots of a kind; a request past them is refused (429) instead of queued. The
count lives in the cache every web process shares (Redis, or the database table), with a
lifetime so that a process killed mid-request cannot keep a slot for ever. On the database
cache an increment is a read and a write, so two requests in the same instant may both get
the last slot: a limit of a few, not an exact one.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import cache

EXPORTS_AT_ONCE = 1
# Longer than any export or search runs (the web server ends a request after WEB_TIMEOUT,
# 60 s, and an export of 100,000 highlights streams in well under a minute).
SLOT_LIFETIME_SECONDS = 10 * 60


def searches_at_once() -> int:
    limit: int = settings.EXOGRAM_SEARCHES_PER_READER
    return limit


class ReaderBusy(Exception):
    """The reader already runs as many requests of this kind as allowed."""


def _key(kind: str, reader_id: int) -> str:
    return f"reader-slots:{kind}:{reader_id}"


def reader_slot_take(*, kind: str, reader_id: int, limit: int) -> None:
    """Take one of the reader's slots of this kind, or raise ReaderBusy."""
    key = _key(kind, reader_id)
    cache.add(key, 0, SLOT_LIFETIME_SECONDS)
    try:
        taken = cache.incr(key)
    except ValueError:  # expired between the add and the incr
        cache.set(key, 1, SLOT_LIFETIME_SECONDS)
        taken = 1
    if taken > limit:
        reader_slot_release(kind=kind, reader_id=reader_id)
        raise ReaderBusy(kind)


def reader_slot_release(*, kind: str, reader_id: int) -> None:
    key = _key(kind, reader_id)
    try:
        if cache.decr(key) < 0:
            cache.delete(key)
    except ValueError:  # expired meanwhile: nothing to give back
        pass


@contextmanager
def reader_slot(*, kind: str, reader_id: int, limit: int) -> Iterator[None]:
    reader_slot_take(kind=kind, reader_id=reader_id, limit=limit)
    try:
        yield
    finally:
        reader_slot_release(kind=kind, reader_id=reader_id)
