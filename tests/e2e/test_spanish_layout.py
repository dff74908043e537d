"""The pages of a reader who chose Spanish, whose words are longer than English's. The
header: one line at 1280 px (the sections, the search box with its whole placeholder, the
reader's name, which opens "Ajustes" and "Cerrar sesión"), and at 390 px nothing wider
than the screen. The words page on a phone: each word on the screen's width."""

import pytest
from playwright.sync_api import Locator, Page, expect

from accounts.models import User
from books.importing.services import clippings_import
from tests.books.kindle import BORGES, Entry, clippings_file
from tests.e2e.pages import DESKTOP, PHONE, fits_the_screen, snapshot

# A long name of the kind readers choose: cut with an ellipsis, never wrapping the header.
READER = "lectora-de-borges"


def _box(locator: Locator) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None
    return box


def _inside(box: dict[str, float], width: int) -> bool:
    return box["x"] >= 0 and box["x"] + box["width"] <= width


def _placeholder_fits(search: Locator) -> bool:
    """The placeholder typed in as the value does not scroll the box: it is read whole."""
    return bool(
        search.evaluate(
            """input => {
                const before = input.value;
                input.value = input.placeholder;
                const fits = input.scrollWidth <= input.clientWidth;
                input.value = before;
                return fits;
            }"""
        )
    )


def _open_account_menu(page: Page, width: int) -> None:
    """The reader's name opens their settings and "Cerrar sesión", inside the window."""
    page.locator("header.site .account summary").click()
    for item in (
        page.get_by_role("link", name="Ajustes", exact=True),
        page.get_by_role("button", name="Cerrar sesión"),
    ):
        assert _inside(_box(item), width), item
    page.keyboard.press("Escape")
    assert not page.get_by_role("button", name="Cerrar sesión").is_visible()


def _middle(box: dict[str, float]) -> float:
    return box["y"] + box["height"] / 2


@pytest.fixture
def spanish_reader_page(page: Page, live_server: object) -> Page:
    User.objects.create_user(READER, password="una contraseña larga", language="es")
    base = str(live_server)
    page.goto(f"{base}/login/")
    page.locator("#id_username").fill(READER)
    page.locator("#id_password").fill("una contraseña larga")
    page.locator("#id_password").press("Enter")
    page.wait_for_url(f"{base}/")
    return page


@pytest.mark.django_db(transaction=True)
def test_the_spanish_header_is_one_line_at_1280_px(
    spanish_reader_page: Page, live_server: object
) -> None:
    page = spanish_reader_page
    page.set_viewport_size(DESKTOP)
    snapshot(page, "es-header")
    for path in ("/", "/words/", "/search/", "/settings/"):
        page.goto(f"{live_server}{path}")
        parts = {
            "brand": page.locator("header.site .brand"),
            "first section": page.locator("nav.main a").first,
            "last section": page.locator("nav.main a").last,
            "search": page.locator("#site-search-q"),
            "name": page.locator("header.site .account summary"),
        }
        middles = {name: _middle(_box(part)) for name, part in parts.items()}
        brand = middles["brand"]
        wrapped = {name: y for name, y in middles.items() if abs(y - brand) > 4}
        assert not wrapped, f"{path}: off the brand's line at y={brand}: {wrapped}"
        # The placeholder is read whole: the box is wider than the words it shows.
        assert _placeholder_fits(page.locator("#site-search-q")), path
    _open_account_menu(page, DESKTOP["width"])


@pytest.mark.django_db(transaction=True)
def test_the_spanish_header_fits_a_phone(spanish_reader_page: Page, live_server: object) -> None:
    page = spanish_reader_page
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server}/words/")
    assert fits_the_screen(page)
    header = _box(page.locator("header.site"))
    assert header["width"] <= PHONE["width"]
    for part in ("header.site .brand", "header.site .account summary", "#site-search-q"):
        assert _inside(_box(page.locator(part)), PHONE["width"]), part
    # The brand, the reader's name and "Menú" share the first row.
    first_row = [
        _middle(_box(page.locator(part)))
        for part in ("header.site .brand", "header.site .account summary", ".menu-toggle")
    ]
    assert max(first_row) - min(first_row) < 4, first_row
    assert _placeholder_fits(page.locator("#site-search-q"))
    _open_account_menu(page, PHONE["width"])
    page.get_by_role("button", name="Menú").click()
    assert fits_the_screen(page)


@pytest.mark.django_db(transaction=True)
def test_the_words_page_reads_on_a_phone(spanish_reader_page: Page, live_server: object) -> None:
    reader = User.objects.get(username=READER)
    entries = [
        Entry(BORGES, "palimpsesto", location="500"),
        Entry(BORGES, "Why Incentives Fail", location="510"),
        Entry(BORGES, "continue to", location="520"),
    ]
    clippings_import(reader=reader, data=clippings_file(*entries), file_name="c.txt")
    page = spanish_reader_page
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server}/words/")
    assert fits_the_screen(page)
    table = _box(page.locator(".words-table"))
    for row in page.locator(".words-table tbody tr").all():
        word = _box(row.locator("td").first)
        what_it_is = _box(row.locator("td").nth(1))
        # The word has the row's whole width; what it is and where sit on a line below.
        assert word["width"] >= table["width"] - 1
        assert what_it_is["y"] >= word["y"] + word["height"] - 1
    expect(page.get_by_text("un encabezado", exact=True)).to_be_visible()
    expect(page.get_by_text("un fragmento de frase", exact=True)).to_be_visible()
    snapshot(page, "es-words")
