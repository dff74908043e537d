"""The map in a real browser: every point drawn, zoom, tap to read, a book filter."""

import pytest
from playwright.sync_api import Browser, Page, expect

from books.library_map.services import library_map_refresh
from books.models import Highlight, LibraryMap
from tests.books.kindle import Entry, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.pages import PHONE, assert_accessible, snapshot

TIMEOUT = 120_000  # ms: the first embedding batch waits for the worker to load the model
TOPICS = {
    "The Tide Tables (Marlow, Ines)": [
        "The sea came in over the flats faster than a man could walk.",
        "At low tide the harbour smelled of salt and rope and diesel.",
        "Waves broke on the reef all night and the boats stayed in.",
        "The fishermen read the swell the way others read a newspaper.",
        "A storm out at sea sends its waves days ahead of its wind.",
        "The lighthouse keeper logged every ship that passed the cape.",
        "Salt water rusts everything the sailors ever loved.",
        "The ocean is deepest where the charts show nothing at all.",
    ],
    "Notes from a Kitchen Garden (Abernethy, Ruth)": [
        "Sow the beans when the soil is warm enough to sit on.",
        "Compost is patience that you can spread with a fork.",
        "Tomatoes want sun, water at the roots, and to be left alone.",
        "Prune the roses before the buds swell in early spring.",
        "Slugs come out after rain and eat the lettuce to the stalk.",
        "A garden bed that is dug too often loses its worms.",
        "Plant garlic in autumn and forget about it until summer.",
        "Water deeply and rarely rather than a little every day.",
    ],
    "The Ledger (Quist, Tomas)": [
        "Interest compounds quietly until it is the largest line in the budget.",
        "A loan is a promise the future makes on behalf of the present.",
        "Inflation taxes the savers who never voted for it.",
        "The bank raised its rates and the mortgages followed within a week.",
        "Cash flow kills more companies than losses do.",
        "Every balance sheet balances; that is not the same as being solvent.",
        "The market prices fear faster than it prices facts.",
        "Diversify, because nobody knows which stock will fall.",
    ],
}


def _library() -> bytes:
    entries = [
        Entry(title, text, location=f"{100 + 10 * n}-{101 + 10 * n}")
        for title, texts in TOPICS.items()
        for n, text in enumerate(texts)
    ]
    return clippings_file(*entries)


def _sign_in_and_import(page: Page, base: str) -> None:
    page.goto(f"{base}/signup/")
    page.locator("#id_username").fill("cartographer")
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    page.goto(f"{base}/import/")
    page.get_by_label("Drop your highlights files here, or choose them:").set_input_files(
        files=[{"name": "My Clippings.txt", "mimeType": "text/plain", "buffer": _library()}]
    )
    page.get_by_role("button", name="Import", exact=True).click()
    expect(
        page.get_by_text(
            "All 24 highlights ready: connections and search by meaning work on all of them."
        )
    ).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_role("progressbar")).to_have_count(0)


@pytest.mark.usefixtures("worker")
def test_a_reader_explores_the_map(
    page: Page, browser: Browser, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    _sign_in_and_import(page, base)

    page.get_by_role("link", name="Map", exact=True).click()
    canvas = page.locator("#map-canvas")
    expect(canvas).to_have_attribute("data-points", "24")
    expect(page.get_by_role("heading", name="Regions of your library")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "20-map")

    # Something is drawn: the canvas is not blank.
    painted = canvas.evaluate(
        "(c) => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }"
    )
    assert painted > 24 * 4

    the_map = LibraryMap.objects.get(reader__username="cartographer")
    sea = Highlight.objects.get(text__startswith="The sea came in")
    index = the_map.points["code"].index(str(sea.code))

    # Zoom with the wheel around the point: it stays put, its neighbours move away.
    before = canvas.evaluate(f"(c) => c.pointPosition({index})")
    other = canvas.evaluate(f"(c) => c.pointPosition({(index + 9) % 24})")
    canvas.hover(position=before)
    page.mouse.wheel(0, -600)
    after = canvas.evaluate(f"(c) => c.pointPosition({index})")
    other_after = canvas.evaluate(f"(c) => c.pointPosition({(index + 9) % 24})")
    assert abs(after["x"] - before["x"]) < 2
    assert abs(after["y"] - before["y"]) < 2
    spread_before = abs(other["x"] - before["x"]) + abs(other["y"] - before["y"])
    spread_after = abs(other_after["x"] - after["x"]) + abs(other_after["y"] - after["y"])
    assert spread_after > spread_before * 1.5

    # Click a point to read it.
    canvas.click(position=after)
    card = page.locator("#map-card")
    expect(card).to_contain_text("The sea came in over the flats")
    expect(card).to_contain_text("The Tide Tables")

    # Filter one book: the choice is shown, and the other books' points cannot be picked.
    page.get_by_label("Book", exact=True).select_option(label="Notes from a Kitchen Garden (8)")
    garden = [book["title"] for book in the_map.books].index("Notes from a Kitchen Garden")
    expect(canvas).to_have_attribute("data-book", str(garden))
    # The legend's buttons say which book is shown; the pressed one, pressed again, all.
    legend = page.locator("#map-legend")
    chosen = legend.get_by_role("button", name="Notes from a Kitchen Garden")
    expect(chosen).to_have_attribute("aria-pressed", "true")
    expect(legend.locator("button[aria-pressed=true]")).to_have_count(1)
    chosen.click()
    expect(canvas).to_have_attribute("data-book", "")
    expect(chosen).to_have_attribute("aria-pressed", "false")
    chosen.click()
    expect(canvas).to_have_attribute("data-book", str(garden))
    page.get_by_role("button", name="Whole map").click()
    assert_accessible(page, axe_source)

    # Open the highlight from the card.
    page.get_by_label("Book", exact=True).select_option(label="All books")
    canvas.click(position=canvas.evaluate(f"(c) => c.pointPosition({index})"))
    page.get_by_role("link", name="Read this highlight").click()
    expect(page.get_by_text("The sea came in over the flats")).to_be_visible()

    # On a phone, a tap reads a point too.
    cookies = page.context.cookies()
    phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    phone.add_cookies(cookies)
    mobile = phone.new_page()
    mobile.goto(f"{base}/map/")
    phone_canvas = mobile.locator("#map-canvas")
    expect(phone_canvas).to_have_attribute("data-points", "24")
    where = phone_canvas.evaluate(f"(c) => c.pointPosition({index})")
    box = phone_canvas.bounding_box()
    assert box is not None
    mobile.touchscreen.tap(box["x"] + where["x"], box["y"] + where["y"])
    expect(mobile.locator("#map-card")).to_contain_text("The sea came in over the flats")
    ARTIFACTS.mkdir(exist_ok=True)
    mobile.screenshot(path=str(ARTIFACTS / "21-map-tap-phone.png"))
    phone.close()

    # The map drawn again after the page loaded it (here a highlight deleted elsewhere):
    # a tap at the old layout's point is not read as another highlight; the page says so,
    # draws the new map, and the next tap reads the point.
    page.goto(f"{base}/map/")
    expect(canvas).to_have_attribute("data-points", "24")
    reader = sea.reader
    gone = Highlight.objects.get(text__startswith="Salt water rusts")
    gone.deleted_at = gone.updated
    gone.save(update_fields=["deleted_at", "updated"])
    redrawn = library_map_refresh(reader=reader)
    canvas.click(position=canvas.evaluate(f"(c) => c.pointPosition({index})"))
    expect(card).to_contain_text("drawn again")
    expect(canvas).to_have_attribute("data-points", "23")
    index = redrawn.points["code"].index(str(sea.code))
    canvas.click(position=canvas.evaluate(f"(c) => c.pointPosition({index})"))
    expect(card).to_contain_text("The sea came in over the flats")
