"""Refuse an oversized request from its declared length, before its body is read (and a
NUL in an address); keep a reader's pages out of shared and history caches.

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

from exogram.errors import is_api, json_error

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
            if is_api(request):
                return json_error(
                    413,
                    f"The request is larger than the {settings.EXOGRAM_MAX_UPLOAD_MB} MB limit.",
                )
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
            # Under /api/ in JSON, as every API answer (exogram/errors.py): this runs before
            # any view or error handler, which would have said it so.
            if is_api(request):
                return json_error(400, NUL_IN_ADDRESS)
            return HttpResponseBadRequest(NUL_IN_ADDRESS, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


NUL_IN_ADDRESS = "This address holds a NUL character, which nothing in Exogram can mean."
# What no page of Exogram uses: a page that an injected script or frame reached still
# cannot turn on the camera, the microphone or the reader's location.
PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"


class PrivatePagesMiddleware:
    """A signed-in reader's pages are `Cache-Control: private, no-store`, and every page
    says what it will never use (Permissions-Policy).

    A page of a reader's highlights had no Cache-Control: a shared cache could keep it, and
    after logging out the browser's Back button showed it again from its cache. `no-store`
    rather than `no-cache`: browsers show a `no-cache` page again from history without
    asking, and keep it on disk; these pages are rendered for each request anyway, so
    nothing is lost by not storing them (the API's answers say the same). A response
    that sets its own Cache-Control (an export, the health check, never_cache views) keeps
    it; static files never come here (WhiteNoise answers them first, with its own).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if "Cache-Control" not in response and user is not None and user.is_authenticated:
            response["Cache-Control"] = "private, no-store"
        response.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response
