"""Absolute links for e-mails, built in one place.

A mail has no request to take a host from (the worker sends the review e-mails), and a
link built from a request's Host header points wherever the client chose. So every link
in a mail is `EXOGRAM_BASE_URL` followed by the page's path. Only while that setting is
unset, and a request is at hand, does the request's host (which ALLOWED_HOSTS checked)
stand in: a fresh `make run` reached on its loopback address then mails links that work
there.
"""

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.urls import get_script_prefix, reverse


def site_address(request: HttpRequest | None = None) -> str:
    """The address the pages are served at, without a trailing slash:
    `https://books.example.org`, or `https://example.org/exogram` under a path."""
    if settings.EXOGRAM_BASE_URL_SET or request is None:
        base: str = settings.EXOGRAM_BASE_URL
        return base.rstrip("/")
    return request.build_absolute_uri("/").rstrip("/")


def site_link(path: str, *, request: HttpRequest | None = None) -> str:
    """The absolute link of `path`, a path as reverse() or get_absolute_url() gives it."""
    if not path.startswith("/"):
        raise ValueError(f"a link's path starts with a slash: {path!r}")
    if settings.EXOGRAM_BASE_URL_SET or request is None:
        # Inside a request served under a path (SCRIPT_NAME), reverse() puts that path in
        # front; the configured address already ends with it.
        prefix = get_script_prefix().rstrip("/")
        if prefix and path.startswith(prefix + "/"):
            path = path.removeprefix(prefix)
        return site_address() + path
    return request.build_absolute_uri(path)


def site_link_to(
    viewname: str,
    *,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    request: HttpRequest | None = None,
) -> str:
    """The absolute link of a named page: `site_link_to("review")`."""
    return site_link(reverse(viewname, args=args, kwargs=kwargs), request=request)
