"""KOReader, Kobo and Apple Books files through the real upload page, in a real browser.

Each file is uploaded under a name that says nothing of its format; the content decides.
"""

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from books.models import Book, Highlight
from tests.books.importing.devices import (
    SIDECAR_OLD,
    apple_books_zip,
    hostile_sidecar,
    kobo_database,
)
from tests.e2e.pages import assert_accessible, import_answered, log_in, snapshot

LABEL = "Drop your highlights files here, or choose them:"


def _upload(page: Page, base: str, path: Path) -> None:
    page.goto(f"{base}/import/")
    page.get_by_label(LABEL).set_input_files(path)
    page.get_by_role("button", name="Import", exact=True).click()
    import_answered(page)


def _count(page: Page, row: str) -> str:
    return page.get_by_role("row", name=re.compile(f"^{row}")).locator("td").inner_text()


@pytest.mark.usefixtures("worker")
def test_a_reader_imports_from_koreader_kobo_and_apple_books(
    page: Page, live_server: object, tmp_path: Path, alice: User, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    log_in(page, base, "alice")
    page.goto(f"{base}/import/")
    expect(page.get_by_text("Keep every file of each folder, the -wal")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "readers-01-import")

    sidecar = tmp_path / "first"
    sidecar.write_text(SIDECAR_OLD)
    _upload(page, base, sidecar)
    expect(page.get_by_role("heading", name="Import of first")).to_be_visible()
    assert _count(page, "New highlights") == "3"
    assert _count(page, "Notes attached to highlights") == "1"
    assert _count(page, "Bookmarks skipped") == "1"

    kobo = tmp_path / "second"
    kobo.write_bytes(kobo_database(tmp_path / "KoboReader.sqlite"))
    _upload(page, base, kobo)
    expect(page.get_by_role("heading", name="Import of second")).to_be_visible()
    assert _count(page, "New highlights") == "4"
    assert _count(page, "Skipped in the file: hidden on the device") == "1"

    apple = tmp_path / "third"
    apple.write_bytes(apple_books_zip(tmp_path / "mac"))
    _upload(page, base, apple)
    expect(page.get_by_role("heading", name="Import of third")).to_be_visible()
    assert _count(page, "New highlights") == "3"
    assert _count(page, "Skipped in the file: deleted on the device") == "1"
    assert_accessible(page, axe_source)
    snapshot(page, "readers-02-apple-books-report")

    # The same database again: nothing new.
    _upload(page, base, kobo)
    expect(page.get_by_text("second was already in your library")).to_be_visible()

    # A sidecar that would run a command is read as data: its other highlight imported,
    # the command reported with its line and never run.
    marker = tmp_path / "ran"
    hostile = tmp_path / "fourth"
    hostile.write_text(hostile_sidecar(marker))
    _upload(page, base, hostile)
    expect(
        page.get_by_text("annotation 2: 'os' (only data is read, nothing is run)")
    ).to_be_visible()
    assert not marker.exists()

    # The KOReader book (Quist and Marrow) and the Apple Books one are the same book.
    book = Book.objects.get(reader=alice, title="Tidal Pools")
    # three KOReader highlights, three Apple Books ones and its note on its own
    assert Highlight.objects.filter(book=book).count() == 7
    page.goto(f"{base}{book.get_absolute_url()}")
    expect(page.get_by_role("link", name="Every harbour is a promise")).to_be_visible()
    snapshot(page, "readers-03-book")
    page.get_by_role("link", name="Salt is patient").click()
    expect(page.get_by_role("textbox", name="Your note")).to_have_value("My grandmother said this.")
