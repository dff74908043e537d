"""Refuse an oversized request from its declared length, before its body is read.

Django reads a POST body lazily, but the first reader comes early: CsrfViewMiddleware
parses the form to find the token, which for a multipart upload means the whole file.
This middleware runs before any view is resolved (the CSRF check reads the form in its
process_view, after every middleware's request half), so a 60 MB POST to a 50 MB limit is
answered with a 413 while its body is still unread on the socket. It comes after the
locale, authentication and reader-language middlewares: the page is in the reader's
language, with the site's navigation. A body without a Content-Length is never read at
all (Django treats its length as 0).
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.template.loader import render_to_string

# Room for the multipart framing and the form's other fields around the file itself.
MULTIPART_OVERHEAD = 64 * 1024


def request_size_limit() -> int:
    limit_mb: int = settings.EXOGRAM_MAX_UPLOAD_MB
    return limit_mb * 1024 * 1024 + MULTIPART_OVERHEAD


class RequestSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0  # Django reads such a body as empty
        if declared > request_size_limit():
            page = render_to_string(
                "413.html", {"limit_mb": settings.EXOGRAM_MAX_UPLOAD_MB}, request=request
            )
            # The unread body stays on the socket; gunicorn's sync workers close every
            # connection after its response, so it is never mistaken for a next request.
            return HttpResponse(page, status=413)
        return self.get_response(request)


class NulCharacterMiddleware:
    """A NUL in the path or the query string is a 400, never a 500.

    PostgreSQL refuses NUL in any text value, so `/library/?q=%00` or `/tags/%00/` failed
    deep in a query. No URL or search of Exogram has a use for one; forms refuse them in
    POSTed fields already (Django's CharField validator).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = str(request.META.get("QUERY_STRING", ""))
        if "\x00" in request.path or "%00" in query or "\x00" in query:
            return HttpResponseBadRequest(
                "This address holds a NUL character, which nothing in Exogram can mean.",
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)
