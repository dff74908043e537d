"""A new reader, start to finish, in a real browser; and a second reader kept out."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from books.library_map.services import map_version
from books.models import Highlight, LibraryMap
from tests.books.kindle import Entry, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.pages import assert_accessible, import_answered, open_account_menu, path_of, snapshot

BORGES = "Ficciones (Borges, Jorge Luis)"
SACKS = "The Man Who Mistook His Wife for a Hat (Sacks, Oliver)"
GARDEN = "The Well-Tempered Garden (Lloyd, Christopher)"
LIBRARY = [
    Entry(
        BORGES, "To think is to forget differences, to generalize, to abstract.", location="412-414"
    ),
    Entry(BORGES, "Memory is the treasury and guardian of all things.", location="380-381"),
    Entry(
        SACKS,
        "To think is to forget differences; to generalize; to make abstractions.",
        location="1520-1522",
    ),
    Entry(
        SACKS,
        "Our memory guards everything we have ever lived, like a treasury.",
        location="1530-1532",
    ),
    Entry(GARDEN, "Prune roses in early spring before the buds open.", location="77-78"),
    Entry(GARDEN, "Water deeply and rarely rather than a little every day.", location="90-91"),
]
TIMEOUT = 120_000  # ms: the first embedding batch waits for the worker to load the model


def _sign_up(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/signup/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_text("Your library is empty.")).to_be_visible()


@pytest.mark.usefixtures("worker")
def _wait_for_the_latest_map(page: Page) -> None:
    """Until the map the page shows is the library's last: the worker lays a map out again
    when vectors land during a layout, and on a loaded machine it may still be at it, so
    the stored map (where the test finds a point) could be newer than the page's."""
    for _ in range(60):
        status = page.locator("#map-status").inner_text().strip()
        summary = page.locator("#map-summary").inner_text()
        if not status and "embedded" not in summary and "laid out" not in summary:
            return
        page.wait_for_timeout(1000)
        page.reload()
    raise AssertionError(f"the map was still being laid out after 60 s: {status} {summary}")


def _tap_the_point_of(page: Page, highlight: Highlight) -> None:
    """Click the highlight's point on the map the page drew: found by its index in the
    stored layout, tapped again when a newer layout landed in between (the page says so
    and draws it, as a reader would see)."""
    canvas = page.locator("#map-canvas")
    card = page.locator("#map-card")
    for _ in range(3):
        expect(canvas).to_have_attribute("data-version", re.compile(r"^\w+$"))
        the_map = LibraryMap.objects.get(reader=highlight.reader)
        if canvas.get_attribute("data-version") != map_version(the_map):
            page.reload()  # the stored layout is newer than the page's
            continue
        index = the_map.points["code"].index(str(highlight.code))
        canvas.click(position=canvas.evaluate(f"(canvas) => canvas.pointPosition({index})"))
        expect(card).to_be_visible()
        expect(card).not_to_be_empty()
        if "drawn again" not in card.inner_text():
            return
    raise AssertionError("the map kept being drawn again while the test tapped it")


def test_a_new_reader_imports_explores_and_leaves(
    page: Page, live_server: object, tmp_path: Path, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    page.goto(f"{base}/")
    # A visitor learns what Exogram is before being asked for anything.
    expect(page.get_by_role("heading", level=1)).to_contain_text("Your Kindle highlights")
    assert_accessible(page, axe_source)
    snapshot(page, "01-landing")

    page.get_by_role("link", name="Create your account").click()
    expect(page).to_have_url(re.compile(r"/signup/$"))
    assert_accessible(page, axe_source)
    snapshot(page, "02-signup")
    _sign_up(page, base, "reader")
    assert_accessible(page, axe_source)
    snapshot(page, "03-home-empty")

    clippings = tmp_path / "My Clippings.txt"
    clippings.write_bytes(clippings_file(*LIBRARY))
    page.get_by_role("link", name="Import", exact=True).click()
    assert_accessible(page, axe_source)
    snapshot(page, "04-import")
    page.get_by_label("Drop your highlights files here, or choose them:").set_input_files(clippings)
    page.get_by_role("button", name="Import", exact=True).click()
    import_answered(page)
    expect(page.get_by_role("heading", name="Import of My Clippings.txt")).to_be_visible()
    # the progress bar polls until every highlight has its vector, then gives way to one line
    expect(
        page.get_by_text(
            "All 6 highlights ready: connections and search by meaning work on all of them."
        )
    ).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_role("progressbar")).to_have_count(0)
    expect(page.get_by_text(re.compile(r"This import made \d+ connection"))).to_be_visible(
        timeout=TIMEOUT
    )
    assert_accessible(page, axe_source)
    snapshot(page, "05-import-report")

    page.get_by_role("link", name="Library", exact=True).click()
    assert_accessible(page, axe_source)
    snapshot(page, "06-library")
    page.get_by_role("link", name="Ficciones").click()
    assert_accessible(page, axe_source)
    snapshot(page, "07-book")

    think = Highlight.objects.get(text__startswith="To think is to forget differences,")
    page.goto(f"{base}{think.get_absolute_url()}")
    connections = page.locator("section.connections")
    expect(connections.get_by_text("to generalize; to make abstractions")).to_be_visible()
    expect(
        connections.get_by_role("link", name="The Man Who Mistook His Wife for a Hat")
    ).to_be_visible()
    expect(page.get_by_text("Prune roses")).to_have_count(0)
    assert_accessible(page, axe_source)
    snapshot(page, "08-highlight")

    page.get_by_role("textbox", name="Your note").fill(
        "Funes could not think: he could not forget."
    )
    page.get_by_role("button", name="Save note").click()
    expect(page.get_by_text("Note saved.")).to_be_visible()
    page.get_by_label("Add a tag").fill("memory")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_text("Tagged “memory”.")).to_be_visible()
    think.refresh_from_db()
    assert think.note == "Funes could not think: he could not forget."
    assert [t.name for t in think.tags.all()] == ["memory"]
    page.reload()
    expect(page.get_by_role("textbox", name="Your note")).to_have_value(
        "Funes could not think: he could not forget."
    )
    snapshot(page, "09-highlight-edited")

    # search by meaning: no word of the query is in the answer
    page.goto(f"{base}/search/?q=why+forgetting+is+needed+for+abstraction&mode=meaning")
    results = page.locator("#results")
    expect(results.get_by_text("To think is to forget differences,")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "10-search")
    page.get_by_role("searchbox", name="Search your highlights").first.fill("treasury")
    page.keyboard.press("Enter")
    expect(page.locator("#results").get_by_text("guardian of all things")).to_be_visible()

    page.get_by_role("link", name="Connections", exact=True).click()
    expect(page.locator("li.pair").first).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "11-connections")

    page.get_by_role("link", name="Tags", exact=True).click()
    assert_accessible(page, axe_source)
    page.get_by_role("link", name="memory").click()
    expect(page.get_by_text("To think is to forget")).to_be_visible()
    snapshot(page, "12-tag")

    page.get_by_role("link", name="Map", exact=True).click()
    _wait_for_the_latest_map(page)
    canvas = page.locator("#map-canvas")
    expect(canvas).to_have_attribute("data-points", "6")
    assert_accessible(page, axe_source)
    snapshot(page, "13-map")
    _tap_the_point_of(page, think)
    page.get_by_role("link", name="Read this highlight").click()
    expect(page).to_have_url(re.compile(re.escape(think.get_absolute_url()) + "$"))

    open_account_menu(page)
    page.get_by_role("link", name="Settings", exact=True).click()
    assert_accessible(page, axe_source)
    snapshot(page, "14-settings")

    open_account_menu(page)
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(re.compile(r"/login/$"))
    page.goto(f"{base}{think.get_absolute_url()}")
    assert path_of(page).startswith("/login/")


@pytest.mark.django_db(transaction=True)
def test_another_reader_cannot_open_the_first_readers_highlight(
    page: Page, live_server: object, axe_source: str
) -> None:
    from accounts.models import User
    from books.importing.services import clippings_import

    alice = User.objects.create_user("alice", password=PASSWORD)
    clippings_import(reader=alice, data=clippings_file(*LIBRARY), file_name="a.txt")
    highlight = Highlight.objects.filter(reader=alice).first()
    assert highlight is not None

    base = str(live_server)
    _sign_up(page, base, "mallory")
    response = page.goto(f"{base}{highlight.get_absolute_url()}")
    assert response is not None
    assert response.status == 404
    expect(page.get_by_role("heading", name="Nothing here")).to_be_visible()
    expect(page.get_by_text("Memory is the treasury")).to_have_count(0)
    assert_accessible(page, axe_source)
    snapshot(page, "15-not-found")
