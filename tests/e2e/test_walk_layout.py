"""Two layout faults a new reader's walk found (2026-12-06), in a real browser at 1280 px
and at 375 px, in English and in Spanish: a long API token name pushed the whole page
sideways on a phone, and the first statistics card on the home page sat 16 px higher and
taller than the others."""

import pytest
from django.utils import timezone
from playwright.sync_api import Locator, Page, expect

from accounts.models import User
from api.models import ApiToken
from tests.books.library import book_of, highlight_in
from tests.conftest import PASSWORD
from tests.e2e.pages import DESKTOP, assert_accessible, fits_the_screen, snapshot

NARROW = {"width": 375, "height": 800}
TABLET = {"width": 660, "height": 800}  # just past the phone layout: the table's five columns
# The longest name the form takes, with no space to break at.
LONG_NAME = "backup-script-" + "x" * 86


def _log_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    page.locator("#id_password").press("Enter")
    page.wait_for_url(f"{base}/")


def _box(locator: Locator) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None, locator
    return box


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("language", "create", "revoke"),
    [("en", "Create token", "Revoke"), ("es", "Crear token", "Revocar")],
)
def test_a_long_token_name_wraps_and_the_page_never_scrolls_sideways(
    page: Page, live_server: object, axe_source: str, language: str, create: str, revoke: str
) -> None:
    User.objects.create_user("lectora", password=PASSWORD, language=language)
    base = str(live_server)
    _log_in(page, base, "lectora")
    page.goto(f"{base}/settings/api-tokens/")
    page.locator("#id_name").fill(LONG_NAME)
    page.get_by_role("button", name=create).click()
    # Used since: its longest date and time, Spanish's "6 de diciembre de 2026 a las 06:41".
    ApiToken.objects.update(last_used_at=timezone.now())
    page.goto(f"{base}/settings/api-tokens/")  # the list as it is on any later visit
    name = page.get_by_role("cell", name=LONG_NAME)
    expect(name).to_be_visible()
    for viewport in (NARROW, TABLET, DESKTOP):
        page.set_viewport_size(viewport)
        where = f"{viewport['width']} px ({language})"
        assert fits_the_screen(page), where
        # The name wraps inside the screen, whole; the revoke button is within reach.
        assert _box(name)["x"] + _box(name)["width"] <= viewport["width"], where
        button = page.get_by_role("button", name=revoke)
        assert _box(button)["x"] + _box(button)["width"] <= viewport["width"], where
    page.set_viewport_size(NARROW)
    assert_accessible(page, axe_source)
    snapshot(page, f"walk-api-tokens-long-name-{language}")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("language", ["en", "es"])
def test_the_home_pages_statistics_cards_line_up(
    page: Page, live_server: object, language: str
) -> None:
    reader = User.objects.create_user("lectora", password=PASSWORD, language=language)
    walden = book_of(reader, "Walden", "Thoreau, Henry David")
    for n in range(3):
        highlight_in(walden, f"Sentence number {n} says something of its own.", location=n + 1)
    base = str(live_server)
    _log_in(page, base, "lectora")
    cards = page.locator("#library-counts > .card")
    expect(cards).to_have_count(4)
    for viewport in (DESKTOP, NARROW):
        page.set_viewport_size(viewport)
        boxes = [_box(cards.nth(i)) for i in range(4)]
        rows: dict[int, list[dict[str, float]]] = {}
        for box in boxes:
            rows.setdefault(round(box["y"]), []).append(box)
        where = f"{viewport['width']} px ({language})"
        # Every card starts on a row another card starts on (no card pushed down on its
        # own), and cards of one row are as tall as each other.
        assert all(len(row) > 1 for row in rows.values()), (where, boxes)
        assert len({round(box["height"]) for box in boxes}) == 1, (where, boxes)
        assert fits_the_screen(page), where


@pytest.mark.django_db(transaction=True)
def test_a_phone_shows_one_search_box_on_the_search_page(page: Page, live_server: object) -> None:
    """At phone width the search page showed the header's box above its own: two search
    boxes on one screen. Elsewhere the header's box stays: it is the way to search."""
    reader = User.objects.create_user("lectora", password=PASSWORD, language="es")
    highlight_in(book_of(reader, "Ficciones"), "To think is to forget differences.", location=1)
    base = str(live_server)
    _log_in(page, base, "lectora")
    page.set_viewport_size(NARROW)
    page.goto(f"{base}/search/?q=forget")
    boxes = page.locator("input[type=search]")
    assert [box.get_attribute("id") for box in boxes.all() if box.is_visible()] == ["search-q"]
    assert fits_the_screen(page)
    page.goto(f"{base}/library/")
    expect(page.locator("#site-search-q")).to_be_visible()
    page.set_viewport_size(DESKTOP)
    page.goto(f"{base}/search/?q=forget")
    expect(page.locator("#site-search-q")).to_be_visible()
