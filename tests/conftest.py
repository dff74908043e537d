"""The cast: alice owns things, bob is another reader, `client` is anonymous.

Django is imported inside the fixtures so that the pure tests (the clippings parser) also
run without it: `pytest -p no:django tests/books/test_clippings.py`.
"""

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from django.test import Client

    from accounts.models import User

PASSWORD = "a long and unguessable passphrase"


def _reader(username: str) -> "User":
    from accounts.models import User

    return User.objects.create_user(username, password=PASSWORD)


def _client_for(user: "User") -> "Client":
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice(db: None) -> "User":
    return _reader("alice")


@pytest.fixture
def bob(db: None) -> "User":
    return _reader("bob")


@pytest.fixture
def alice_client(alice: "User") -> "Client":
    return _client_for(alice)


@pytest.fixture
def bob_client(bob: "User") -> "Client":
    return _client_for(bob)
