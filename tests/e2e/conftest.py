"""Real-browser tests: Playwright drives Debian's Chromium against a live server on the
embedded database, with a real Celery worker embedding in the background."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.worker import celery_worker

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
# between browser steps are still plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path("/usr/bin/chromium")
HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is needed: apt-get install -y chromium (see .ci/run)")
    return {
        **browser_type_launch_args,
        "executable_path": str(CHROMIUM),
        # Without the background-networking flags Chromium keeps dialling Google's hosts,
        # which this closed network refuses.
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    # The tests inject axe-core as an inline script, which the site's Content-Security-
    # Policy forbids; with the policy bypassed, escaping alone must also keep hostile text
    # inert (tests/e2e/test_hostile_input.py). One test checks the policy itself.
    return {**browser_context_args, "bypass_csp": True}


@pytest.fixture(autouse=True)
def _no_throttle_counts_from_earlier_flows(transactional_db: None) -> None:
    """Each flow starts with no throttle counts. The cache is a database table, which the
    flush after a transactional test does not empty: the sign-ups of earlier flows, all
    from 127.0.0.1, would otherwise count against this one's (5 an hour an address)."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def worker(transactional_db: None, tmp_path: Path) -> Iterator[None]:
    with celery_worker(broker_url="filesystem://", data_dir=tmp_path):
        yield


@pytest.fixture(scope="session")
def axe_source() -> str:
    if not AXE.exists():
        pytest.fail(f"axe-core is missing at {AXE}: run `npm install --prefix tests/e2e`")
    return AXE.read_text()
