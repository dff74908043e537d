"""In a real browser: a Kindle notebook imported, the library downloaded, an API token made,
used and revoked."""

import json
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from accounts.models import User
from tests.conftest import PASSWORD
from tests.e2e.pages import assert_accessible, snapshot

NOTEBOOK = Path(__file__).resolve().parent.parent / "books" / "importing" / "fixtures"


def _log_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


@pytest.mark.django_db(transaction=True)
def test_a_reader_imports_a_notebook_exports_it_and_reads_it_with_a_token(
    page: Page, live_server: object, tmp_path: Path, axe_source: str
) -> None:
    base = str(live_server)
    User.objects.create_user("alice", password=PASSWORD)
    page.set_default_timeout(60_000)
    _log_in(page, base, "alice")

    page.goto(f"{base}/import/")
    page.locator("input[type=file]").set_input_files(str(NOTEBOOK / "notebook_desktop.html"))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("row", name="New highlights 3")).to_be_visible()

    page.goto(f"{base}/library/")
    assert_accessible(page, axe_source)
    with page.expect_download() as download_info:
        page.get_by_role("link", name="JSON (re-imports into Exogram)").click()
    download = download_info.value
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    document = json.loads(saved.read_text())
    assert [b["title"] for b in document["books"]] == ["The Quiet Engine"]
    assert download.suggested_filename.endswith(".json")

    page.get_by_role("link", name="The Quiet Engine").click()
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Markdown", exact=True).click()
    day = timezone.localdate().isoformat()
    name = f"exogram-{day}-The Quiet Engine - Okonkwo, Chidi.md"
    assert download_info.value.suggested_filename == name

    page.goto(f"{base}/settings/")
    page.get_by_role("link", name="API tokens").click()
    page.get_by_label("Name").fill("my scripts")
    page.get_by_role("button", name="Create token").click()
    token = page.get_by_role("textbox", name="Token", exact=True).input_value()
    assert token.startswith("exo_")
    # Shown whole, and copied whole by its button.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_role("button", name="Copy token").click()
    expect(page.locator(".copy-status")).to_have_text("Token copied.")
    assert page.evaluate("navigator.clipboard.readText()") == token
    assert_accessible(page, axe_source)
    snapshot(page, "20-api-tokens")

    # The browser's own session never opens the API; the token does.
    assert page.request.get(f"{base}/api/books/").status == 401
    answer = page.request.get(f"{base}/api/books/", headers={"Authorization": f"Bearer {token}"})
    assert answer.status == 200
    assert [b["title"] for b in answer.json()["books"]] == ["The Quiet Engine"]

    page.reload()  # shown once: not again, and no second token made
    expect(page.get_by_role("textbox", name="Token", exact=True)).to_have_count(0)
    expect(page.get_by_role("button", name="Revoke")).to_have_count(1)
    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("Revoked “my scripts”")).to_be_visible()
    revoked = page.request.get(f"{base}/api/books/", headers={"Authorization": f"Bearer {token}"})
    assert revoked.status == 401
