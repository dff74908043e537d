"""The daily review under the site's Content-Security-Policy: an htmx answer must not make
the browser refuse an inline style (walk 3, finding 22)."""

import pytest
from playwright.sync_api import Browser, expect

from accounts.models import User
from tests.books.library import library_of
from tests.conftest import PASSWORD
from tests.e2e.pages import log_in

pytestmark = pytest.mark.browser


@pytest.mark.django_db(transaction=True)
def test_an_answer_on_the_review_logs_no_console_error(
    browser: Browser, live_server: object
) -> None:
    base = str(live_server)
    alice = User.objects.create_user("alice", password=PASSWORD)
    library_of(alice, 8)
    context = browser.new_context()  # the policy enforced
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on(
        "console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    log_in(page, base, "alice")
    page.goto(base + "/review/")
    first = page.locator("article.review-card").first
    # A style set through the CSSOM, as static/js/exogram.js paints bars and swatches (the
    # policy allows it): htmx's settle copies an element's old `style` attribute onto its
    # new self, an inline style the policy refuses.
    first.locator("blockquote").evaluate("element => { element.style.outline = '0' }")
    first.get_by_role("button", name="Keep").click()
    expect(first.locator(".review-status")).to_contain_text("Another answer changes it.")
    # As the walker did: the keyboard, focus on the button the answer replaces.
    page.locator("article.review-card").nth(1).get_by_role("button", name="Keep").focus()
    page.keyboard.press("Enter")
    expect(page.locator("article.review-card").nth(1).locator(".review-status")).to_contain_text(
        "Another answer changes it."
    )
    third = page.locator("article.review-card").nth(2)
    third.locator("summary").click()
    third.locator("textarea").fill("A note of mine.")
    third.get_by_role("button", name="Save note").click()
    expect(third.locator(".review-status")).not_to_be_empty()
    page.locator("article.review-card").nth(3).get_by_role("button", name="Favourite").click()
    expect(page.locator("article.review-card").nth(3).locator(".review-status")).not_to_be_empty()
    assert errors == []
    context.close()
