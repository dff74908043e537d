"""A new reader's first minutes and the map, in a real browser at 1280 and 390 px: the
landing, the sign-up form, the menu on one line, the map laid out before it is asked for
(its card where the eye is, its region names apart and inside the canvas, no filler), a
book's "see pairs" and a progress page left open. Screenshots go to tests/e2e/artifacts/."""

import re
import time
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from books.library_map import services as map_services
from books.models import Book, Highlight, LibraryMap
from tests.books.kindle import Entry, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.pages import DESKTOP, PHONE, assert_accessible, snapshot
from tests.e2e.test_map import TOPICS

TIMEOUT = 120_000  # ms: a real worker loads the model before its first batch
# A French book whose filler once named a region ("pour · plus · comme", "elle · temps · tout").
MER = "La Mer et les jours (Duval, Claire)"
MER_TEXTS = [
    "Elle regardait la mer pour oublier le temps, comme tout le monde.",
    "La mer était plus grise que le ciel, et elle attendait les bateaux.",
    "Pour les pêcheurs, la marée compte plus que tout le reste.",
    "Elle disait que la mer rend tout ce qu'on lui donne, comme le temps.",
    "Les bateaux rentraient au port plus tôt, pour éviter la tempête.",
    "Tout le village vivait au rythme de la mer et des marées.",
    "La tempête de la nuit avait couché les bateaux sur la grève.",
    "Comme chaque matin, elle marchait sur la plage pour voir la mer.",
]
FRENCH_FILLER = {"pour", "plus", "comme", "elle", "temps", "tout", "les", "que"}
# The pages a reader's menu leads to.
MENU_PAGES = ["/", "/review/", "/library/", "/search/", "/connections/", "/readers/", "/map/"]
MENU_PAGES += ["/words/", "/tags/", "/import/", "/settings/"]


def _library() -> bytes:
    entries = [
        Entry(title, text, location=f"{100 + 10 * n}-{101 + 10 * n}")
        for title, texts in TOPICS.items()
        for n, text in enumerate(texts)
    ]
    entries += [
        Entry(MER, text, location=f"{300 + 10 * n}-{301 + 10 * n}")
        for n, text in enumerate(MER_TEXTS)
    ]
    return clippings_file(*entries)


def _log_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Your reading memory")).to_be_visible()


def _box(locator: Locator) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None
    return box


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


@pytest.mark.django_db(transaction=True)
def test_a_visitor_learns_what_exogram_is_and_signs_up(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{base}/")
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Your Kindle highlights, remembered and connected."
    )
    picture = page.get_by_role("img", name=re.compile("Highlights from many books"))
    expect(picture).to_be_visible()
    expect(page.get_by_role("link", name="Log in")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "30-landing")

    page.get_by_role("link", name="Create your account").click()
    expect(page).to_have_url(re.compile(r"/signup/$"))
    page.locator("#id_username").fill("new reader!")
    page.locator("#id_password1").fill("1234")
    page.locator("#id_password2").fill("12345")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_text("Enter a valid username")).to_be_visible()
    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size(viewport)
        # Each hint sits under its field, across the form's width, never squeezed beside it.
        for field in ("username", "password1"):
            field_box = _box(page.locator(f"#id_{field}"))
            hint_box = _box(page.locator(f"#id_{field}_helptext"))
            assert hint_box["y"] >= field_box["y"] + field_box["height"] - 1, field
            assert abs(hint_box["x"] - field_box["x"]) < 2, field
    assert_accessible(page, axe_source)
    snapshot(page, "31-signup-errors")

    page.set_viewport_size(DESKTOP)
    page.locator("#id_username").fill("a-reader-with-a-long-name")
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_text("Your library is empty.")).to_be_visible()

    # At 1280 px the top menu is one line on every page it leads to.
    for path in MENU_PAGES:
        page.goto(f"{base}{path}")
        tops = page.eval_on_selector_all(
            "nav.main a", "links => links.map(a => Math.round(a.getBoundingClientRect().top))"
        )
        assert len(tops) == 10, path
        assert len(set(tops)) == 1, f"{path}: the menu wraps ({tops})"
        header = _box(page.locator("header.site"))
        assert header["height"] < 80, path
    page.goto(f"{base}/library/")
    _shot(page, "32-menu-one-line-desktop")


@pytest.mark.django_db(transaction=True)
def test_the_map_is_laid_out_before_it_is_asked_for(
    page: Page, browser: Browser, live_server: object, axe_source: str
) -> None:
    from accounts.models import User
    from books.importing.services import clippings_import

    cartographer = User.objects.create_user("cartographer", password=PASSWORD)
    # Tasks run in process here: the import embeds, and the last batch lays out the map.
    clippings_import(reader=cartographer, data=_library(), file_name="My Clippings.txt")
    placed = Highlight.objects.filter(reader=cartographer, embedding_status="done").count()
    assert placed == 32
    # Laid out in the background when the embedding finished, before anyone asked for it.
    the_map = LibraryMap.objects.get(reader=cartographer)
    assert len(the_map.points["code"]) == placed
    assert not map_services.library_map_state(cartographer, refresh=False).stale

    labels = [region["label"] for region in the_map.regions]
    words = [word for label in labels for word in label.split(" · ")]
    assert words, labels
    assert len(words) == len(set(words)), f"a word names two regions: {labels}"
    assert not FRENCH_FILLER & set(words), labels

    base = str(live_server)
    page.set_default_timeout(30_000)
    page.set_viewport_size(DESKTOP)
    _log_in(page, base, "cartographer")
    page.goto(f"{base}/map/")
    canvas = page.locator("#map-canvas")
    expect(canvas).to_have_attribute("data-points", str(placed))
    expect(page.locator("#map-summary")).to_contain_text("All your 32 highlights are on the map.")
    expect(page.locator("#map-summary")).not_to_contain_text("being embedded")
    _labels_apart_inside(canvas)
    assert_accessible(page, axe_source)

    # The point drawn lowest on the canvas: its card opens beside it, in the window.
    lowest = canvas.evaluate(
        "(c) => { let best = 0; for (let i = 0; i < Number(c.dataset.points); i++)"
        " if (c.pointPosition(i).y > c.pointPosition(best).y) best = i; return best; }"
    )
    where = canvas.evaluate(f"(c) => c.pointPosition({lowest})")
    canvas.click(position=where)
    card = page.locator("#map-card")
    expect(card.get_by_role("link", name="Read this highlight")).to_be_visible()
    _in_the_window(page, card)
    _in_the_window(page, card.get_by_role("link", name="Read this highlight"))
    card_box, canvas_box = _box(card), _box(canvas)
    point_y = canvas_box["y"] + where["y"]
    assert card_box["y"] - 40 <= point_y <= card_box["y"] + card_box["height"] + 40
    _shot(page, "33-map-card-desktop")
    snapshot(page, "34-map")

    # Zoomed in on a region, its name is there, and every name shown is still apart.
    page.locator(".map-regions button").first.click()
    _labels_apart_inside(canvas)

    # On a phone the card is a sheet at the window's foot, the point above it in sight.
    phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    phone.add_cookies(page.context.cookies())
    mobile = phone.new_page()
    mobile.goto(f"{base}/map/")
    phone_canvas = mobile.locator("#map-canvas")
    expect(phone_canvas).to_have_attribute("data-points", str(placed))
    _labels_apart_inside(phone_canvas)
    ARTIFACTS.mkdir(exist_ok=True)
    mobile.screenshot(path=str(ARTIFACTS / "35-map-labels-phone.png"))
    where = phone_canvas.evaluate(f"(c) => c.pointPosition({lowest})")
    # The reader scrolls the map's foot into the window, and taps its lowest point.
    mobile.evaluate("() => window.scrollBy(0, 120)")
    box = _box(phone_canvas)
    mobile.touchscreen.tap(box["x"] + where["x"], box["y"] + where["y"])
    phone_card = mobile.locator("#map-card")
    expect(phone_card.get_by_role("link", name="Read this highlight")).to_be_visible()
    _in_the_window(mobile, phone_card)
    point_y = _box(phone_canvas)["y"] + where["y"]
    assert 0 <= point_y < _box(phone_card)["y"], "the card covers the point read"
    mobile.screenshot(path=str(ARTIFACTS / "36-map-card-phone.png"))
    phone.close()

    # While a new map is laid out the page says so, never "0 highlights … being embedded".
    LibraryMap.objects.filter(reader=cartographer).delete()
    held: list[Any] = []
    page.route("**/map.json", lambda route: held.append(route))
    map_services_sync = map_services.SYNC_MAX_POINTS
    map_services.SYNC_MAX_POINTS = 0
    try:
        page.goto(f"{base}/map/")
        expect(page.get_by_role("status")).to_contain_text("Laying out your map")
        summary = page.locator("#map-summary")
        expect(summary).to_contain_text("32 embedded highlights are being laid out")
        expect(summary).not_to_contain_text("still being embedded")
        expect(summary).not_to_contain_text("0 highlights")
        snapshot(page, "37-map-being-laid-out")
    finally:
        map_services.SYNC_MAX_POINTS = map_services_sync
        page.unroute("**/map.json")  # lets the held requests go on
    page.goto(f"{base}/map/")
    expect(canvas).to_have_attribute("data-points", str(placed))


def _in_the_window(page: Page, locator: Locator) -> None:
    box = _box(locator)
    height = page.evaluate("() => window.innerHeight")
    width = page.evaluate("() => window.innerWidth")
    assert box["y"] >= 0, box
    assert box["y"] + box["height"] <= height + 1, box
    assert box["x"] >= 0, box
    assert box["x"] + box["width"] <= width + 1, box


def _labels_apart_inside(canvas: Locator) -> None:
    shown = int(canvas.get_attribute("data-labels") or 0)
    assert shown >= 1
    boxes: list[dict[str, float]] = canvas.evaluate("(c) => c.labelBoxes")
    width, height = canvas.evaluate("(c) => [c.clientWidth, c.clientHeight]")
    assert len(boxes) == shown
    for box in boxes:
        assert box["left"] >= 0, box
        assert box["right"] <= width, (box, width)
        assert box["top"] >= 0, box
        assert box["bottom"] <= height, (box, height)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            apart = (
                a["right"] <= b["left"]
                or b["right"] <= a["left"]
                or a["bottom"] <= b["top"]
                or b["bottom"] <= a["top"]
            )
            assert apart, (a, b)


FICCIONES = "Ficciones (Borges, Jorge Luis)"
SACKS = "The Man Who Mistook His Wife for a Hat (Sacks, Oliver)"
GARDEN = "The Well-Tempered Garden (Lloyd, Christopher)"
MIND = "The Mind's Garden (Lloyd, Hannah)"


@pytest.mark.django_db(transaction=True)
def test_see_pairs_shows_the_pairs_between_two_books(
    page: Page, live_server: object, axe_source: str
) -> None:
    from accounts.models import User
    from books.importing.services import clippings_import

    reader = User.objects.create_user("pairs", password=PASSWORD)
    library = [
        Entry(FICCIONES, "To think is to forget differences, to generalize, to abstract.",
              location="412"),
        Entry(SACKS, "To think is to forget differences; to generalize; to make abstractions.",
              location="1520-1522"),
        Entry(GARDEN, "Prune roses in early spring before the buds open.", location="77-78"),
        Entry(MIND, "Roses are pruned in early spring, before their buds open.", location="9"),
        Entry(FICCIONES, "Roses should be pruned early in spring, before the buds open.",
              location="500"),
    ]  # fmt: skip
    clippings_import(reader=reader, data=clippings_file(*library), file_name="a.txt")
    ficciones = Book.objects.get(reader=reader, title="Ficciones")

    base = str(live_server)
    page.set_viewport_size(DESKTOP)
    page.set_default_timeout(30_000)
    _log_in(page, base, "pairs")
    page.goto(f"{base}{ficciones.get_absolute_url()}")
    connected = page.locator(".connected-books li").filter(has_text="The Man Who Mistook")
    expect(connected).to_have_count(1)
    connected.get_by_role("link", name="see pairs").click()
    sacks = Book.objects.get(reader=reader, title__startswith="The Man Who Mistook")
    expect(page).to_have_url(re.compile(rf"book={ficciones.code}&other={sacks.code}"))
    expect(page.get_by_text("Pairs between")).to_be_visible()
    pairs = page.locator("ol.pairs > li")
    expect(pairs.first).to_be_visible()
    for text in pairs.all_inner_texts():
        assert "Ficciones" in text, text
        assert "The Man Who Mistook" in text, text
    expect(page.get_by_text("Roses should be pruned")).to_have_count(0)
    assert_accessible(page, axe_source)
    snapshot(page, "38-see-pairs-between-two-books")


@pytest.mark.usefixtures("worker")
def test_a_progress_page_left_open_says_one_thing(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{base}/signup/")
    page.locator("#id_username").fill("patient")
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    page.goto(f"{base}/import/")
    page.get_by_label("Drop your highlights files here, or choose them:").set_input_files(
        files=[{"name": "My Clippings.txt", "mimeType": "text/plain", "buffer": _library()}]
    )
    page.get_by_role("button", name="Import", exact=True).click()
    status = page.locator("#import-status")
    bar = page.get_by_role("progressbar")
    expect(bar).to_be_visible(timeout=TIMEOUT)
    snapshot(page, "39-import-progress")
    # Left open, the page's header follows the bar: never "starting" beside a moving bar;
    # once all are ready for connections, one line takes the bar's place.
    expect(
        page.get_by_text(
            re.compile(r"All \d+ highlights ready: connections and search by meaning work")
        )
    ).to_be_visible(timeout=TIMEOUT)
    expect(bar).to_have_count(0)
    expect(status).to_have_text("Done")
    expect(page.get_by_text(re.compile(r"hours? left"))).to_have_count(0)
    assert_accessible(page, axe_source)
    snapshot(page, "40-import-done-left-open")
    # The map is laid out when the embedding finishes, with no one asking for it.
    for _ in range(120):
        the_map = LibraryMap.objects.filter(reader__username="patient").first()
        if the_map and len(the_map.points.get("code", [])) == 32:
            break
        time.sleep(0.5)
    else:
        pytest.fail("the worker did not lay out the map after the embedding finished")
    page.get_by_role("link", name="Map", exact=True).click()
    expect(page.locator("#map-canvas")).to_have_attribute("data-points", "32")
    expect(page.get_by_role("status")).not_to_contain_text("Laying out")
