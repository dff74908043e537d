"""The cast: alice owns things, bob is another reader, `client` is anonymous.

Django is imported inside the fixtures so that the pure tests (the clippings parser) also
run without it: `pytest -p no:django tests/books/importing/test_clippings.py`.
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings as hypothesis_settings

if TYPE_CHECKING:
    from django.test import Client

    from accounts.models import User

PASSWORD = "a long and unguessable passphrase"

TESTS = Path(__file__).resolve().parent

# The suite is reproducible: Hypothesis draws the same examples on every run, so what passed
# here passes in CI. `make fuzz` explores, with new examples every run (HYPOTHESIS_PROFILE).
hypothesis_settings.register_profile("suite", derandomize=True)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

# Modules left out of `make test-fast` (the edit loop) besides the browser tests: each
# starts real worker processes, servers or whole libraries, or builds the quantised model.
# A single heavy test elsewhere carries `@pytest.mark.slow` itself (thousands of rows
# written into an HNSW index). `make test` runs everything (docs/testing.md).
SLOW_MODULES = {
    "test_run.py",
    "test_serving.py",
    "books/test_mcp_server.py",
    "books/embedding/test_quantize.py",
    "test_faults.py",
    "test_worker.py",
    "test_embedded_postgres.py",
    "test_deploy.py",
    "books/embedding/test_pipeline.py",
    "books/embedding/test_pipeline_bounds.py",
    "books/importing/test_background.py",
    "books/importing/test_fuzz.py",
    "books/importing/test_device_fuzz.py",
    "books/importing/test_import_properties.py",
    "books/importing/test_clippings_properties.py",
    "books/test_evaluate_library.py",
    "books/connections/test_evaluate_connections.py",
    "books/connections/test_evaluate_related.py",
    "affinity/test_demo_library.py",
    "affinity/test_commands.py",
    "accounts/test_services.py",
    "backups/test_drill.py",
    "test_embedded_postgres_versions.py",
    "test_two_nodes.py",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test `browser` (tests/e2e), `slow` (SLOW_MODULES) or neither; a single
    heavy test marks itself `slow`, and `corpus` tests mark themselves where they read
    ../shared (tests/corpus.py)."""
    for item in items:
        module = item.path.relative_to(TESTS).as_posix()
        if module.startswith("e2e/"):
            item.add_marker(pytest.mark.browser)
        elif module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


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


@pytest.fixture(autouse=True)
def _tasks_run_in_process(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tasks sent by the code under test run here, at once (Celery's eager mode).

    Without it they would land in the development broker under var/ and a `make run`
    worker would later pick them up against the wrong database. Tests whose flow crosses
    the queue start a real worker with `tests.worker.celery_worker`, which turns this off.
    """
    if not request.config.pluginmanager.hasplugin("django"):
        yield  # the pure tests, run with -p no:django
        return
    from django.conf import settings

    from exogram.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    # Nor is an embedding turn bounded in time here: a turn whose time is up sends the next,
    # which would run inside it, and what a turn embeds would depend on the machine's speed.
    # Tests of the bound set EXOGRAM_EMBEDDING_TURN_SECONDS themselves.
    turn_seconds = settings.EXOGRAM_EMBEDDING_TURN_SECONDS
    settings.EXOGRAM_EMBEDDING_TURN_SECONDS = None
    yield
    settings.EXOGRAM_EMBEDDING_TURN_SECONDS = turn_seconds
    app.conf.task_always_eager = False


@pytest.fixture(autouse=True)
def _language_left_as_it_was(request: pytest.FixtureRequest) -> Iterator[None]:
    """A request through the test client leaves its language (a Spanish reader's "es")
    active in the thread; the next test starts in the default language, whatever ran
    before it."""
    yield
    if request.config.pluginmanager.hasplugin("django"):
        from django.utils import translation

        translation.deactivate()


@pytest.fixture(autouse=True, scope="session")
def _static_files_from_the_source(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests run with DEBUG off, as `make run` does, but never run collectstatic: pages
    link the static files by their plain names, served from static/ as `make dev` does."""
    if not request.config.pluginmanager.hasplugin("django"):
        yield
        return
    from django.conf import settings
    from django.test import override_settings

    storages = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    with override_settings(STORAGES=storages):
        yield


@pytest.fixture(autouse=True, scope="session")
def _passwords_hashed_once(request: pytest.FixtureRequest) -> Iterator[None]:
    """Readers' passwords hashed with one PBKDF2 iteration, not a million (tests/hashers.py):
    the cast alone would otherwise cost half a CPU-second a test."""
    if not request.config.pluginmanager.hasplugin("django"):
        yield
        return
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["tests.hashers.OneIterationPBKDF2PasswordHasher"]):
        yield
