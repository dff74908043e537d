"""Exogram's URLs and three that fail, for tests/test_errors.py."""

from typing import Any

from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.db import connections
from django.db.backends.postgresql import base as postgresql
from django.http import HttpRequest, HttpResponse
from django.urls import path

from accounts.models import User
from api.views import token_required
from exogram.urls import handler400, handler403, handler404, handler500, urlpatterns

__all__ = ["handler400", "handler403", "handler404", "handler500", "urlpatterns"]


class Unexpected(RuntimeError):
    pass


@token_required
def api_raises(request: HttpRequest, reader: User) -> dict[str, Any]:
    raise Unexpected("a bug inside an API view")


@token_required
def api_database_down(request: HttpRequest, reader: User) -> dict[str, Any]:
    # A real connection attempt to a PostgreSQL that does not answer (nothing listens on
    # port 1), through Django's own wrapper: what a view meets while the server restarts.
    settings = {**connections["default"].settings_dict, "HOST": "127.0.0.1", "PORT": "1"}
    down = postgresql.DatabaseWrapper(settings, alias="down")
    try:
        down.ensure_connection()
    finally:
        down.close()
    return {}


@token_required
def api_suspicious(request: HttpRequest, reader: User) -> dict[str, Any]:
    raise SuspiciousOperation("a request Exogram cannot read")


@token_required
def api_denied(request: HttpRequest, reader: User) -> dict[str, Any]:
    raise PermissionDenied


def page_raises(request: HttpRequest) -> HttpResponse:
    raise Unexpected("a bug inside a page")


urlpatterns = [
    path("api/test/raises/", api_raises),
    path("api/test/database-down/", api_database_down),
    path("api/test/suspicious/", api_suspicious),
    path("api/test/denied/", api_denied),
    path("test/raises/", page_raises),
    *urlpatterns,
]
