"""Helpers for the browser tests: screenshots at two widths and the accessibility check."""

import re
from typing import Any

from playwright.sync_api import Page, expect

from tests.conftest import PASSWORD
from tests.e2e.conftest import ARTIFACTS

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def snapshot(page: Page, name: str) -> None:
    """Save the page at desktop and phone width under tests/e2e/artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)
    size = page.viewport_size or DESKTOP
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.screenshot(path=str(ARTIFACTS / f"{name}-{label}.png"), full_page=True)
    page.set_viewport_size(size)


def assert_accessible(page: Page, axe_source: str) -> None:
    """axe-core's WCAG 2 A/AA rules on the page as it stands: no violation at all."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source)
    result: dict[str, Any] = page.evaluate(
        "() => axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})"
    )
    problems = [
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(node["target"][0] for node in v["nodes"][:3])
        for v in result["violations"]
    ]
    assert not problems, f"{page.url}: " + " | ".join(problems)


def path_of(page: Page) -> str:
    return re.sub(r"^https?://[^/]+", "", page.url)


def log_in(page: Page, base: str, username: str, password: str = PASSWORD) -> None:
    page.goto(f"{base}/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Your reading memory")).to_be_visible()


def open_account_menu(page: Page) -> None:
    """The reader's name in the header opens their menu: their settings and "Log out"."""
    page.locator("header.site details.account summary").click()


def import_answered(page: Page) -> None:
    """After the import form's button: htmx sends the file and swaps the server's answer in
    (static/js/upload.js), so no navigation holds the click until the file is read, which
    takes seconds on a busy machine. The answer has come when the upload's status is gone."""
    expect(page.locator("#upload-status")).to_be_hidden(timeout=60_000)


def fits_the_screen(page: Page) -> bool:
    return bool(
        page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
    )
