from typing import Any

from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from accounts.login_throttle import (
    client_address,
    login_failure_record,
    login_lockout,
    login_success_record,
)
from accounts.models import User


class ThrottledModelBackend(ModelBackend):
    """Django's own backend, behind the login throttle (every login form goes through it:
    the reader's, the admin's)."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        if username is None or password is None:
            return None
        address = client_address(request)
        if login_lockout(username=username, address=address):
            # Stops authenticate() for every backend: no password hash is computed.
            raise PermissionDenied
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            login_failure_record(username=username, address=address)
        else:
            login_success_record(username=username, address=address)
        return user
