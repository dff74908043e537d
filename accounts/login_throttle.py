"""Count failed logins per account and per address, in the cache every web process shares.

Past EXOGRAM_LOGIN_FAILURES_PER_ACCOUNT failures for one username, or
EXOGRAM_LOGIN_FAILURES_PER_IP from one address, within EXOGRAM_LOGIN_LOCKOUT_MINUTES, no
password is checked for it until that window, counted from the first failure, has passed.
A success clears the account's count. The counts are approximate under concurrent
guesses on the database cache (its incr is a read and a write), exact on Redis; either way
a guesser gets a handful of tries per window, not thousands.
"""

import hashlib
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from django.utils.translation import gettext, ngettext


def client_address(request: HttpRequest | None) -> str:
    if request is None:
        return ""
    if settings.EXOGRAM_TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        hops = [hop.strip() for hop in str(forwarded).split(",") if hop.strip()]
        if hops:
            return hops[-1]
    return str(request.META.get("REMOTE_ADDR", ""))


def _keys(kind: str, value: str) -> tuple[str, str]:
    # Hashed: a username may hold anything, and cache keys must be short and plain.
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"login-failures:{kind}:{digest}", f"login-failures-since:{kind}:{digest}"


def _subjects(*, username: str, address: str) -> list[tuple[str, str, int]]:
    subjects = [("account", username.strip().lower(), settings.EXOGRAM_LOGIN_FAILURES_PER_ACCOUNT)]
    if address:
        subjects.append(("ip", address, settings.EXOGRAM_LOGIN_FAILURES_PER_IP))
    return subjects


def _window() -> int:
    minutes: int = settings.EXOGRAM_LOGIN_LOCKOUT_MINUTES
    return minutes * 60


def login_lockout(*, username: str, address: str) -> tuple[str, int] | None:
    """("account" or "ip", seconds left) when logins for these are refused; else None."""
    for kind, value, limit in _subjects(username=username, address=address):
        count_key, since_key = _keys(kind, value)
        if (cache.get(count_key) or 0) >= limit:
            since = cache.get(since_key) or time.time()
            return kind, max(1, int(since + _window() - time.time()))
    return None


def login_failure_record(*, username: str, address: str) -> None:
    for kind, value, _limit in _subjects(username=username, address=address):
        count_key, since_key = _keys(kind, value)
        cache.add(since_key, time.time(), _window())
        cache.add(count_key, 0, _window())
        try:
            cache.incr(count_key)
        except ValueError:  # expired between the add and the incr
            cache.set(count_key, 1, _window())


def login_success_record(*, username: str) -> None:
    cache.delete_many(_keys("account", username.strip().lower()))


def lockout_message(kind: str, seconds: int) -> str:
    minutes = max(1, round(seconds / 60))
    wait = ngettext("%(count)d minute", "%(count)d minutes", minutes) % {"count": minutes}
    if kind == "account":
        return gettext(
            "Too many failed logins for this account. To protect it, Exogram does not "
            "check its password again for %(wait)s."
        ) % {"wait": wait}
    return gettext("Too many failed logins from your network address. Try again in %(wait)s.") % {
        "wait": wait
    }
