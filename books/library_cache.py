"""Reads of a large library that are costly and stable between its changes, kept per web
process under a version of the reader's library that changes replace.

On a 20,000-highlight library the library page counted every highlight per book (76 ms):
it does not change until the library does, so it is computed once per version. (The
connections page needs no such cache: each pair's verdict is stored, so it is an indexed
filter; books.connections.selectors.)

The versions live in Django's default cache, the one every process shares (the database
table, or Redis): a change made anywhere, in a web request or in the worker, is seen by
every process at its next read. What is computed under a version may then stay in one
process's memory (the `local` cache), since a new version makes it unusable. A version that
vanished (culled, Redis restarted) is simply a new one.

Two kinds of change:
- the reader's own (an edit, a delete, an import): `library_version_bump`, by
  books.services and books.importing.services. The next request shows it.
- the worker's (new vectors and their connections): `library_background_bump`, by
  books.tasks. Shown within BACKGROUND_LAG: an import's embedding ends a task every few
  seconds, and recounting 280,000 pairs after each one cost more than the pages served.

A change of model is in the keys themselves, and nothing is kept longer than
ENTRY_SECONDS, in case a writer forgets.
"""

import hashlib
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, TypeVar
from uuid import uuid4

from django.core.cache import cache, caches
from django.db import models, transaction
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

T = TypeVar("T")
M = TypeVar("M", bound=models.Model)

# The longest a computed read is kept, whatever the versions say.
ENTRY_SECONDS = 10 * 60
# How long a read may lag behind the worker's changes (never the reader's own).
BACKGROUND_LAG = 30.0


class _KeyLock:
    """A lock per cache key, gone once no thread holds or waits for it (weakly kept)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()


# One computation at a time per key and process: twenty requests that find a read out of
# date wait for the first one's result instead of all counting the pairs at once. One lock
# per key, not a pool: a read computed inside another (a page's HTML, then its rows) must
# never wait for a lock its own thread holds.
_KEY_LOCKS: "weakref.WeakValueDictionary[str, _KeyLock]" = weakref.WeakValueDictionary()
_KEY_LOCKS_GUARD = threading.Lock()


def _key_lock(key: str) -> _KeyLock:
    with _KEY_LOCKS_GUARD:
        found = _KEY_LOCKS.get(key)
        if found is None:
            found = _KEY_LOCKS[key] = _KeyLock()
        return found


def _keys(reader_id: int) -> tuple[str, str]:
    return f"library-version:{reader_id}", f"library-background:{reader_id}"


def library_versions(reader_id: int) -> tuple[str, str]:
    """The reader's current versions (own changes, worker's changes), made on first use."""
    keys = _keys(reader_id)
    found = cache.get_many(keys)
    for key in keys:
        if key not in found:
            # add, not set: of two processes racing here, the first one's version stands.
            cache.add(key, uuid4().hex, timeout=None)
            found[key] = cache.get(key) or uuid4().hex
    return str(found[keys[0]]), str(found[keys[1]])


def library_version_bump(*, reader_ids: Iterable[int]) -> None:
    """The reader changed their library: no cached read of it from before is used again.

    Bumped at once and again after the caller's transaction commits. At once: on the
    database cache the new version commits with the change itself, and the rest of the
    transaction sees it. After commit: on Redis the first bump is visible before the change
    is, so a request in between could store the old state under the new version; the second
    bump makes that entry unusable.
    """
    _bump(reader_ids, kind=0)


def library_background_bump(*, reader_ids: Iterable[int]) -> None:
    """The worker changed these libraries (vectors, connections): reads catch up within
    BACKGROUND_LAG. Call it after the change has committed."""
    _bump(reader_ids, kind=1)


def _bump(reader_ids: Iterable[int], *, kind: int) -> None:
    for reader_id in set(reader_ids):
        key = _keys(reader_id)[kind]
        _set_new_version(key)
        transaction.on_commit(partial(_set_new_version, key))


def _set_new_version(key: str) -> None:
    cache.set(key, uuid4().hex, timeout=None)


class LibraryCache:
    """One request's view of a reader's cached reads: the versions are read once, at the
    first read, and every read of the request is checked against them."""

    def __init__(self, reader_id: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.reader_id = reader_id
        self.clock = clock
        self._versions: tuple[str, str] | None = None

    def get(self, name: str, compute: Callable[[], T], *parts: object) -> T:
        """`compute()`, or what it returned for this reader, read and parts, if still
        current. `parts` must name every input of the read besides the library (filters,
        sort, page)."""
        if self._versions is None:
            self._versions = library_versions(self.reader_id)
        versions = self._versions
        described = "\x1f".join([name, *map(str, parts)])
        # Hashed: parts may hold a reader's query, and cache keys must be short and plain.
        key = f"library:{self.reader_id}:{hashlib.sha256(described.encode()).hexdigest()}"
        local = caches["local"]
        found = _current(local.get(key), versions, self.clock())
        if found is not None:
            return found  # type: ignore[no-any-return]
        key_lock = _key_lock(key)  # held by this frame while it waits and computes
        with key_lock.lock:
            # Another thread of this process may have computed it while this one waited.
            found = _current(local.get(key), versions, self.clock())
            if found is not None:
                return found  # type: ignore[no-any-return]
            value = compute()
            local.set(key, (versions, self.clock(), value), timeout=ENTRY_SECONDS)
            return value

    def html(
        self, name: str, template: str, context: Callable[[], dict[str, Any]], *parts: object
    ) -> SafeString:
        """`template` rendered with `context()`, kept as `get` keeps a value. Only for a
        partial that holds nothing of the request (no form, no CSRF token); the template
        escaped what it shows, so the kept HTML is marked safe. Kept per language: the
        page is rendered in the reader's, and a reader may switch."""
        rendered = self.get(
            name, lambda: render_to_string(template, context()), get_language() or "", *parts
        )
        return mark_safe(rendered)


def _current(entry: Any, versions: tuple[str, str], now: float) -> Any:
    """The entry's value if it may still be shown: made under the reader's current own
    version, and under the worker's current one or less than BACKGROUND_LAG ago."""
    if entry is None:
        return None
    (own, background), computed_at, value = entry
    if own != versions[0]:
        return None
    if background != versions[1] and now - computed_at >= BACKGROUND_LAG:
        return None
    return value
