"""The settings forms read like the site's other forms, at 1280 px and on a phone, in
English and in Spanish: inputs as wide as the other fields, each hint on its own line under
its field, a form's button clear of the next form's label, a checkbox beside its label."""

from typing import Any

import pytest
from playwright.sync_api import Locator, Page

from accounts.models import User
from tests.e2e.pages import DESKTOP, PHONE, fits_the_screen, snapshot

PASSWORD = "una contraseña larga"
PAGES = ("/settings/", "/review/settings/", "/settings/api-tokens/")


def _box(locator: Locator) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None, locator
    return box


def _check_fields(page: Page, path: str) -> None:
    # Every visible text-like input of a stacked form: not a browser's default tiny box.
    inputs = page.locator(
        "form.stacked input[type=email], form.stacked input[type=password], "
        "form.stacked input[type=text], form.stacked input[type=number], form.stacked select"
    )
    assert inputs.count() > 0, path
    for index in range(inputs.count()):
        field = inputs.nth(index)
        width = _box(field)["width"]
        wanted = 100 if field.get_attribute("type") == "number" else 240
        assert width >= wanted, (path, field.get_attribute("id"), width)
        # Its hint, if any, starts below the field, never beside it.
        hint_id = field.get_attribute("aria-describedby")
        if hint_id:
            hint = _box(page.locator(f"#{hint_id}"))
            assert hint["y"] >= _box(field)["y"] + _box(field)["height"] - 1, (path, hint_id)
    # A form's button leaves room before whatever follows the form.
    for form in page.locator("form.stacked").all():
        button = form.locator("button[type=submit]").last
        after: Any = form.evaluate(
            "f => f.nextElementSibling ? f.nextElementSibling.getBoundingClientRect().top : null"
        )
        if after is not None and button.count():
            bottom = _box(button)["y"] + _box(button)["height"]
            assert after - bottom >= 12, (path, form.get_attribute("action"), after - bottom)
    # A checkbox sits on its label's line.
    for box in page.locator("form.stacked input[type=checkbox]").all():
        label = page.locator(f"label[for='{box.get_attribute('id')}']")
        if label.count():
            middle = _box(box)["y"] + _box(box)["height"] / 2
            line = _box(label)
            assert line["y"] <= middle <= line["y"] + line["height"], (
                path,
                box.get_attribute("id"),
            )
    assert fits_the_screen(page), path


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("language", ["en", "es"])
def test_the_settings_forms_read_like_the_sites_forms(
    page: Page, live_server: object, language: str
) -> None:
    User.objects.create_user("lectora", password=PASSWORD, language=language)
    base = str(live_server)
    page.goto(f"{base}/login/")
    page.locator("#id_username").fill("lectora")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("#id_password").press("Enter")
    page.wait_for_url(f"{base}/")
    for path in PAGES:
        page.goto(f"{base}{path}")
        snapshot(page, f"settings-forms-{language}-{path.strip('/').replace('/', '-')}")
        for viewport in (DESKTOP, PHONE):
            page.set_viewport_size(viewport)
            _check_fields(page, f"{path} at {viewport['width']} px ({language})")
