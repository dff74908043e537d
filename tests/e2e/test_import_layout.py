"""The import page and an import's report, in English and Spanish: on a 390 px phone
nothing is wider than the screen (the past imports, a long file name, the Apple Books
path, the file's fingerprint), and at 1280 px the Import button sits inside the drop
zone with the file it imports."""

import pytest
from playwright.sync_api import Locator, Page, expect

from accounts.models import User
from books.importing.services import IMPORT_FAILED, clippings_import
from books.importing.upload import FILE_BINARY, FORMATS_READ
from books.models import Highlight, Import, ImportSaving
from books.services import highlight_delete
from tests.books.kindle import SACKS, Entry, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.pages import DESKTOP, PHONE, assert_accessible, fits_the_screen, snapshot

LONG_NAME = "kobosyncy__aed08a3__metadata.epub.lua__My_Clippings_from_the_old_Kindle.txt"


def _box(locator: Locator) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None
    return box


def _library_of(reader: User) -> Import:
    """A few imports, one failed, and one whose report lists a long merged passage."""
    words = [f"remembering{i}" for i in range(90)]
    versions = clippings_file(
        Entry(SACKS, " ".join(words[:70]), location="100-110"),
        Entry(SACKS, " ".join(words[30:]), location="104-112"),
    )
    merged = clippings_import(reader=reader, data=versions, file_name=LONG_NAME)
    one_more = clippings_file(Entry(SACKS, "One more.", location="300-301"))
    clippings_import(reader=reader, data=one_more, file_name="My Clippings.txt")
    # Imported again after its highlight was deleted: left out, and both pages say so.
    highlight_delete(highlight=Highlight.objects.get(reader=reader, text="One more."))
    clippings_import(reader=reader, data=one_more, file_name="My Clippings.txt")
    Import.objects.create(
        reader=reader,
        file_name="My Clippings.txt",
        sha256="0" * 64,
        status=Import.Status.FAILED,
        error=IMPORT_FAILED % {"error": 'null value in column "title_sort"'},
    )
    return merged


def _log_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    page.locator("#id_password").press("Enter")
    page.wait_for_url(f"{base}/")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("language", ["en", "es"])
def test_the_import_page_and_report_fit_a_phone(
    page: Page, live_server: object, language: str, axe_source: str
) -> None:
    reader = User.objects.create_user(f"reader-{language}", password=PASSWORD, language=language)
    report = _library_of(reader)
    base = str(live_server)
    _log_in(page, base, reader.username)
    page.set_viewport_size(PHONE)

    page.goto(f"{base}/import/")
    assert fits_the_screen(page), page.evaluate("document.documentElement.scrollWidth")
    # Every past import is there to read, its status and count too, not cut off.
    for cell in page.locator("table.imports td").all():
        box = _box(cell)
        assert box["x"] >= 0, cell.inner_text()
        assert box["x"] + box["width"] <= PHONE["width"], cell.inner_text()
    assert_accessible(page, axe_source)
    snapshot(page, f"import-{language}")

    page.goto(f"{base}{report.get_absolute_url()}")
    page.locator("details.sha summary").click()  # the fingerprint shown
    assert page.locator("details.sha code").is_visible()
    assert fits_the_screen(page), page.evaluate("document.documentElement.scrollWidth")
    assert_accessible(page, axe_source)
    snapshot(page, f"import-report-{language}")

    # The report of the file imported again says what it left out, and fits too.
    page.goto(f"{base}/import/")
    page.locator("table.imports a[href$='#left-out']").click()
    page.wait_for_url("**/imports/*/#left-out")
    expect(page.locator("#left-out a[href='/deleted/']")).to_be_visible()
    assert fits_the_screen(page)
    assert_accessible(page, axe_source)
    snapshot(page, f"import-left-out-{language}")

    # The failed import's report says why, in the page's language, and fits too.
    page.goto(f"{base}/import/")
    page.locator("table.imports a[href$='#why']").click()
    page.wait_for_url("**/imports/*/#why")
    expect(page.locator("#why")).to_be_visible()
    assert "title_sort" not in page.content()
    assert fits_the_screen(page)
    assert_accessible(page, axe_source)


@pytest.mark.django_db(transaction=True)
def test_the_import_button_sits_inside_the_drop_zone(page: Page, live_server: object) -> None:
    reader = User.objects.create_user("reader", password=PASSWORD)
    base = str(live_server)
    _log_in(page, base, reader.username)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{base}/import/")

    zone = _box(page.locator("#dropzone"))
    button = _box(page.get_by_role("button", name="Import", exact=True))
    assert zone["x"] < button["x"]
    assert button["x"] + button["width"] < zone["x"] + zone["width"]
    assert zone["y"] < button["y"]
    assert button["y"] + button["height"] < zone["y"] + zone["height"]
    # Centred under the file it imports, as the rest of the zone is.
    middle = zone["x"] + zone["width"] / 2
    assert abs(button["x"] + button["width"] / 2 - middle) < 2
    assert "\u201cMy Clippings.txt\u201d" in page.locator("#dropzone .helptext").inner_text()


def _lines_of(cell: Locator) -> int:
    """How many lines a cell's text takes on the screen."""
    return int(
        cell.evaluate(
            "el => { const r = document.createRange(); r.selectNodeContents(el);"
            " return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; }"
        )
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("language", ["en", "es"])
def test_a_past_imports_count_stays_on_one_line(
    page: Page, live_server: object, language: str
) -> None:
    """A file of a whole Kindle touches a couple of hundred books: its titles fill the
    file's cell, and the count of new highlights beside it once broke into "8,41" over "6"."""
    reader = User.objects.create_user(f"reader-{language}", password=PASSWORD, language=language)
    titles = [f"A Long Book Title Number {i}: With a Subtitle That Goes On" for i in range(40)]
    Import.objects.create(
        reader=reader,
        file_name="My Clippings.txt",
        sha256="1" * 64,
        status=Import.Status.DONE,
        counts={"new_highlights": 8416, "books_touched": 209, "book_titles": titles},
    )
    base = str(live_server)
    _log_in(page, base, reader.username)
    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size({"width": viewport["width"], "height": viewport["height"]})
        page.goto(f"{base}/import/")
        count = page.locator("table.imports td.n")
        expect(count).to_contain_text("416")
        assert _lines_of(count) == 1, (viewport, count.inner_text())


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("language", ["en", "es"])
def test_a_saving_import_shows_how_far_in_a_bar_that_moves(
    page: Page, live_server: object, language: str, axe_source: str
) -> None:
    """A large file saving on a worker: its report shows the share of its highlights gone
    through, as a bar and a percentage, and the bar moves on as the count is written."""
    reader = User.objects.create_user(f"reader-{language}", password=PASSWORD, language=language)
    saving = Import.objects.create(
        reader=reader,
        file_name=LONG_NAME,
        sha256="2" * 64,
        status=Import.Status.SAVING,
        counts={"saving_highlights": 40_000, "saving_notes": 1_200},
    )
    ImportSaving.objects.create(
        the_import=saving, done=12_000, total=40_000, updated_at=saving.started_at
    )
    base = str(live_server)
    _log_in(page, base, reader.username)
    page.set_viewport_size(PHONE)
    page.goto(f"{base}{saving.get_absolute_url()}")
    bar = page.get_by_role("progressbar")
    expect(bar).to_have_attribute("aria-valuenow", "30")
    filled = _box(bar.locator("span"))["width"] / _box(bar)["width"]
    assert 0.28 < filled < 0.32, filled
    snapshot(page, f"import-saving-{language}")
    assert fits_the_screen(page), page.evaluate("document.documentElement.scrollWidth")
    assert_accessible(page, axe_source)
    snapshot(page, f"import-saving-{language}")
    # The worker writes its next count; the page's poll (every 2 s) shows it.
    ImportSaving.objects.filter(the_import=saving).update(done=24_000)
    expect(page.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "60")
    filled = _box(page.get_by_role("progressbar").locator("span"))["width"] / _box(bar)["width"]
    assert 0.58 < filled < 0.62, filled


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("language", ["en", "es"])
def test_a_reading_import_shows_how_far_in_a_bar_that_moves(
    page: Page, live_server: object, language: str, axe_source: str
) -> None:
    """A large Kindle file read on a worker in pieces: its report shows the share of the
    file read, as a bar and a percentage, and the bar moves on as the count is written."""
    reader = User.objects.create_user(f"reader-{language}", password=PASSWORD, language=language)
    reading = Import.objects.create(
        reader=reader,
        file_name=LONG_NAME,
        sha256="3" * 64,
        status=Import.Status.READING,
        counts={"reading_done": 4_000_000, "reading_size": 10_000_000, "reading_entries": 9_000},
    )
    base = str(live_server)
    _log_in(page, base, reader.username)
    page.set_viewport_size(PHONE)
    page.goto(f"{base}{reading.get_absolute_url()}")
    bar = page.get_by_role("progressbar")
    expect(bar).to_have_attribute("aria-valuenow", "40")
    filled = _box(bar.locator("span"))["width"] / _box(bar)["width"]
    assert 0.38 < filled < 0.42, filled
    assert fits_the_screen(page), page.evaluate("document.documentElement.scrollWidth")
    assert_accessible(page, axe_source)
    # The worker reads its next pieces; the page's poll (every 2 s) shows it.
    Import.objects.filter(pk=reading.pk).update(
        counts={"reading_done": 6_000_000, "reading_size": 10_000_000, "reading_entries": 13_500}
    )
    expect(page.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "60")
    filled = _box(page.get_by_role("progressbar").locator("span"))["width"] / _box(bar)["width"]
    assert 0.58 < filled < 0.62, filled


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("language", ["en", "es"])
def test_a_past_imports_file_name_stays_whole_beside_a_refusal(
    page: Page, live_server: object, language: str
) -> None:
    """Beside a long refusal the file column was squeezed to the width of a few letters:
    "realistic_clippings.tx" over "t". The name keeps one line (a very long one is cut,
    whole in its title); on a phone it wraps, nothing wider than the screen."""
    reader = User.objects.create_user(f"reader-{language}", password=PASSWORD, language=language)
    Import.objects.create(
        reader=reader,
        file_name="realistic_clippings.txt",
        sha256="1" * 64,
        status=Import.Status.DONE,
        counts={
            "new_highlights": 5485,
            "books_touched": 294,
            "book_titles": ["A arte de ter razão", "A boa sorte", "A coragem de não agradar"],
        },
    )
    Import.objects.create(
        reader=reader,
        file_name="My Clippings.txt",
        sha256="2" * 64,
        status=Import.Status.REFUSED,
        error=FILE_BINARY % {"what": FORMATS_READ},
    )
    Import.objects.create(
        reader=reader, file_name=LONG_NAME, sha256="3" * 64, status=Import.Status.REFUSED
    )
    base = str(live_server)
    _log_in(page, base, reader.username)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{base}/import/")
    name = page.locator("table.imports .file-name", has_text="realistic_clippings.txt")
    assert _lines_of(name) == 1, name.inner_text()
    long_one = page.locator(f"table.imports .file-name[title='{LONG_NAME}']")
    assert _lines_of(long_one) == 1
    page.set_viewport_size(PHONE)
    page.goto(f"{base}/import/")
    assert fits_the_screen(page), page.evaluate("document.documentElement.scrollWidth")
    assert _lines_of(name) == 1, name.inner_text()
