"""The walk of 2026-12-06, by keyboard: Escape closes the phone's menu, and an answer in
the daily review hands the focus to the next card instead of dropping it on <body>."""

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from tests.books.library import library_of
from tests.conftest import PASSWORD
from tests.e2e.pages import PHONE, log_in


def _focused(page: Page) -> str:
    """What has the focus: a button's text with its card's id, or the element's tag."""
    return str(
        page.evaluate(
            "() => { const e = document.activeElement; const card = e.closest('article');"
            " return `${card ? card.id + ' ' : ''}${e.tagName} ${e.textContent.trim()}`; }"
        )
    )


@pytest.mark.django_db(transaction=True)
def test_escape_closes_the_phone_menu(page: Page, live_server: object) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    User.objects.create_user("alice", password=PASSWORD)
    log_in(page, base, "alice")
    page.set_viewport_size(PHONE)
    menu = page.get_by_role("button", name="Menu")
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Library").focus()
    page.keyboard.press("Escape")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("navigation", name="Main")).to_be_hidden()
    expect(menu).to_be_focused()


@pytest.mark.django_db(transaction=True)
def test_an_answer_in_the_review_hands_the_focus_to_the_next_card(
    page: Page, live_server: object
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    alice = User.objects.create_user("alice", password=PASSWORD)
    library_of(alice, 6)
    log_in(page, base, "alice")
    page.goto(f"{base}/review/")
    cards = page.locator("article.review-card")
    expect(cards.first).to_be_visible()
    ids = [cards.nth(i).get_attribute("id") for i in range(cards.count())]
    assert len(ids) >= 3

    first_keep = cards.nth(0).get_by_role("button", name="Keep", exact=True)
    first_keep.focus()
    page.keyboard.press("Enter")
    expect(cards.nth(0)).to_have_class("card review-card answered")
    expect(cards.nth(1).get_by_role("button", name="Keep", exact=True)).to_be_focused()

    # "Less often" moves on too; a favourite keeps the focus on its own card's button.
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(cards.nth(1)).to_have_class("card review-card answered")
    expect(cards.nth(2).get_by_role("button", name="Keep", exact=True)).to_be_focused()
    favourite = cards.nth(2).get_by_role("button", name="Favourite")
    favourite.focus()
    page.keyboard.press("Enter")
    expect(favourite).to_have_attribute("aria-pressed", "true")
    # The focus moves when htmx has settled the new card, a moment after it is swapped in.
    expect(cards.nth(2).get_by_role("button", name="Favourite")).to_be_focused()
    assert _focused(page).startswith(f"{ids[2]} BUTTON"), _focused(page)
