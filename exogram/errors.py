"""The error pages: Django's for the pages, JSON for the API.

A tool reading /api/ parses every answer as JSON, and Django's HTML error page is not:
a server error came back as "Expecting value: line 1 column 1". Under /api/ an error
is `{"error": "…"}` with its status, as the API's own refusals are (api/views.py), and a
database that does not answer (down, restarting, restoring) is a 503 with Retry-After,
which tells a tool to wait rather than give up. With DEBUG on, Django's technical page
is shown instead, as for every page.
"""

import sys
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

API_PREFIX = "/api/"
# Seconds a tool is asked to wait when the database does not answer: about a restart of
# the embedded server (exogram/run.py starts it again within seconds).
RETRY_AFTER_SECONDS = 30


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def json_error(status: int, message: str) -> JsonResponse:
    """An API error as every API answer is: JSON, never cached."""
    response = JsonResponse({"error": message, "status": status}, status=status)
    response["Cache-Control"] = "no-store"
    return response


def service_unavailable() -> JsonResponse:
    response = json_error(
        503, "The database does not answer just now (restarting or under maintenance); try again."
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def server_error(request: HttpRequest, template_name: str = "500.html") -> HttpResponse:
    if not is_api(request):
        return defaults.server_error(request, template_name)
    # Django calls this handler while it handles the exception, so it is still current.
    error = sys.exc_info()[1]
    if isinstance(error, OperationalError | InterfaceError):
        return service_unavailable()
    return json_error(500, "Exogram hit an error it did not expect; it is logged. Try again.")


def _json_under_api(
    page: Callable[..., HttpResponse], status: int, message: str
) -> Callable[[HttpRequest, Exception], HttpResponse]:
    """Django's handler `page` for the pages; under /api/, `status` and `message` in JSON."""

    def handler(request: HttpRequest, exception: Exception) -> HttpResponse:
        if not is_api(request):
            return page(request, exception)
        return json_error(status, message)

    return handler


bad_request = _json_under_api(defaults.bad_request, 400, "Exogram could not read this request.")
permission_denied = _json_under_api(defaults.permission_denied, 403, "This request is not allowed.")
page_not_found = _json_under_api(
    defaults.page_not_found, 404, "No such address in the API: see /api/schema/."
)
