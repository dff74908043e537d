"""Exogram's URLs and three that fail, for tests/test_errors.py."""

from typing import Any

from django.db import connections
from django.db.backends.postgresql import base as postgresql
from django.http import HttpRequest, HttpResponse
from django.urls import path

from accounts.models import User
from api.views import token_required
from exogram.urls import handler404, handler500, urlpatterns

__all__ = ["handler404", "handler500", "urlpatterns"]


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


def page_raises(request: HttpRequest) -> HttpResponse:
    raise Unexpected("a bug inside a page")


urlpatterns = [
    path("api/test/raises/", api_raises),
    path("api/test/database-down/", api_database_down),
    path("test/raises/", page_raises),
    *urlpatterns,
]
