"""While a file uploads, the import page says so (the walk of 2026-12-06: a 30 MB file took
ten seconds on the machine itself, the button stayed enabled and nothing changed): the
button is disabled and "Uploading…" shows; the report follows as after the form's own post,
and without JS the form posts as ever."""

import re
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from accounts.models import User
from books.models import Highlight
from tests.books.kindle import SACKS, Entry, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.pages import log_in


def _clippings(tmp_path: Any) -> Any:
    path = tmp_path / "My Clippings.txt"
    path.write_bytes(clippings_file(Entry(SACKS, "To be ourselves we must have ourselves.")))
    return path


@pytest.mark.django_db(transaction=True)
def test_the_page_says_the_file_is_uploading_until_the_report(
    page: Page, live_server: object, tmp_path: Any
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    User.objects.create_user("alice", password=PASSWORD)
    log_in(page, base, "alice")
    page.goto(f"{base}/import/")
    page.get_by_label("Drop your highlights files here, or choose them:").set_input_files(
        _clippings(tmp_path)
    )
    # What the page shows while the file goes, recorded as it changes: on this machine the
    # upload may be over before a test could look, so the page keeps its own account.
    page.evaluate(
        "() => { window.said = []; const status = document.getElementById('upload-status');"
        " const button = document.querySelector('#import-form button[type=submit]');"
        " new MutationObserver(() => window.said.push([status.hidden ? '' : status.innerText"
        ".trim(), button.disabled])).observe(status, {subtree: true, childList: true,"
        " characterData: true, attributes: true}); }"
    )
    page.get_by_role("button", name="Import", exact=True).click()
    # The first import of a server can take seconds (it loads what reading needs).
    expect(page.get_by_text("Imported My Clippings.txt: 1 new highlight.")).to_be_visible(
        timeout=60_000
    )
    expect(page).to_have_url(re.compile(r".*/imports/[0-9a-f-]+/$"))
    said = page.evaluate("() => window.said")
    assert said, "the status never changed"
    assert said[0][0].startswith("Uploading…"), said
    # Disabled from the first word to the last.
    assert all(disabled for text, disabled in said if text), said
    assert Highlight.objects.filter(text__startswith="To be ourselves").count() == 1


@pytest.mark.django_db(transaction=True)
def test_without_javascript_the_form_posts_as_ever(
    browser: Browser, live_server: object, tmp_path: Any
) -> None:
    base = str(live_server)
    User.objects.create_user("alice", password=PASSWORD)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{base}/login/")
    page.locator("#id_username").fill("alice")
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{base}/import/")
    expect(page.locator("#upload-status")).to_be_hidden()
    page.get_by_label("Drop your highlights files here, or choose them:").set_input_files(
        _clippings(tmp_path)
    )
    page.get_by_role("button", name="Import", exact=True).click()
    # The first import of a server can take seconds (it loads what reading needs).
    expect(page.get_by_text("Imported My Clippings.txt: 1 new highlight.")).to_be_visible(
        timeout=60_000
    )
    context.close()
