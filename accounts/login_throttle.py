"""Count failed logins per address, per (address, account) and per account, in the cache
every web process shares.

Who is refused (no password checked) within EXOGRAM_LOGIN_LOCKOUT_MINUTES, counted from
the first failure:
- an address after EXOGRAM_LOGIN_FAILURES_PER_IP failures, whatever the accounts;
- an address, for one account, after EXOGRAM_LOGIN_FAILURES_PER_ACCOUNT failures on it;
- once an account has that many failures from all addresses together (it is being
  guessed at), every address that has failed on it already: each further address gets one
  guess, not five, which slows a spread-out guesser down.
An address that has not failed on the account is never refused for the account's sake:
anyone who knows a username could otherwise lock its owner out (five wrong passwords
refused the owner's right one from anywhere for 15 minutes). A success clears the
account's count and that address's count for it. The counts are approximate under
concurrent guesses on the database cache (its incr is a read and a write), exact on Redis;
either way a guesser gets a handful of tries per window, not thousands.
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


def _account(username: str) -> str:
    return username.strip().lower()


def _window() -> int:
    minutes: int = settings.EXOGRAM_LOGIN_LOCKOUT_MINUTES
    return minutes * 60


def _count(kind: str, value: str) -> int:
    count_key, _ = _keys(kind, value)
    return int(cache.get(count_key) or 0)


def _seconds_left(kind: str, value: str) -> int:
    _, since_key = _keys(kind, value)
    since = cache.get(since_key) or time.time()
    return max(1, int(since + _window() - time.time()))


def login_lockout(*, username: str, address: str) -> tuple[str, int] | None:
    """("account" or "ip", seconds left) when logins for these are refused; else None."""
    account = _account(username)
    pair = f"{address}\n{account}"
    per_account: int = settings.EXOGRAM_LOGIN_FAILURES_PER_ACCOUNT
    per_ip: int = settings.EXOGRAM_LOGIN_FAILURES_PER_IP
    if address and _count("ip", address) >= per_ip:
        return "ip", _seconds_left("ip", address)
    failed_here = _count("pair", pair)
    if failed_here >= per_account:
        return "account", _seconds_left("pair", pair)
    if failed_here and _count("account", account) >= per_account:
        return "account", _seconds_left("account", account)
    return None


def _record(kind: str, value: str) -> None:
    count_key, since_key = _keys(kind, value)
    cache.add(since_key, time.time(), _window())
    cache.add(count_key, 0, _window())
    try:
        cache.incr(count_key)
    except ValueError:  # expired between the add and the incr
        cache.set(count_key, 1, _window())


def login_failure_record(*, username: str, address: str) -> None:
    account = _account(username)
    _record("account", account)
    _record("pair", f"{address}\n{account}")
    if address:
        _record("ip", address)


def login_success_record(*, username: str, address: str = "") -> None:
    # The owner proved who they are: the account is no longer under attack from here.
    account = _account(username)
    cache.delete_many([*_keys("pair", f"{address}\n{account}"), *_keys("account", account)])


def lockout_message(kind: str, seconds: int) -> str:
    minutes = max(1, round(seconds / 60))
    wait = ngettext("%(count)d minute", "%(count)d minutes", minutes) % {"count": minutes}
    if kind == "account":
        return gettext(
            "Too many failed logins for this account from your network address. To protect "
            "it, Exogram does not check its password from here again for %(wait)s."
        ) % {"wait": wait}
    return gettext("Too many failed logins from your network address. Try again in %(wait)s.") % {
        "wait": wait
    }
