"""How often something may happen per key (an address, an e-mail) within a window, counted
in the cache every web process shares. For what costs a stranger nothing and someone else
something: a mail sent to an address, an account made."""

import hashlib

from django.core.cache import cache


def rate_limited(*, kind: str, key: str, limit: int, window_seconds: int) -> bool:
    """Count one more; True when that makes more than `limit` within the window (which
    starts at the first)."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    cache_key = f"rate:{kind}:{digest}"
    cache.add(cache_key, 0, window_seconds)
    try:
        count = cache.incr(cache_key)
    except ValueError:  # expired between the add and the incr
        cache.set(cache_key, 1, window_seconds)
        count = 1
    return count > limit
