"""A book split in two by a device, made one by its reader in a real browser: the book
page's "Merge with another book…", the likely book first among many, what the merge does
said before, the title the reader chose kept; a later import adds nothing. At 1280 and
390 px."""

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Book
from tests.books.kindle import Entry, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.pages import PHONE, assert_accessible, fits_the_screen, log_in, snapshot

SHORT = "The San Francisco Fallacy (Siegel, Jonathan)"
LONG = "The San Francisco Fallacy: The Ten Fallacies That San Francisco Makes (Jonathan Siegel)"
LONG_TITLE = "The San Francisco Fallacy: The Ten Fallacies That San Francisco Makes"
SHARED = "A city that forbids building forbids its own future."
ONLY_SHORT = "Rent is what the permit office charges, passed on."
ONLY_LONG = "Every fallacy is a kindness to someone already housed."


@pytest.mark.django_db(transaction=True)
def test_a_reader_merges_a_book_split_in_two(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(60_000)
    alice = User.objects.create_user("alice", password=PASSWORD)
    kindle = clippings_file(
        Entry(SHORT, SHARED, location="100-101"), Entry(SHORT, ONLY_SHORT, location="200-202")
    )
    clippings_import(reader=alice, data=kindle, file_name="kindle.txt")
    others = [Entry(f"Shelf Book {n} (Writer {n})", f"Line {n}.", location="5") for n in range(40)]
    kobo = clippings_file(
        Entry(LONG, SHARED, location="100-101"), Entry(LONG, ONLY_LONG, location="300-302"), *others
    )
    clippings_import(reader=alice, data=kobo, file_name="kobo.txt")
    short = Book.objects.get(reader=alice, title="The San Francisco Fallacy")
    log_in(page, base, "alice")

    page.goto(f"{base}{short.get_absolute_url()}")
    page.get_by_role("link", name="Merge with another book…").click()
    expect(page.get_by_role("heading", name="Likely the same book")).to_be_visible()
    likely = page.locator("ul.suggestions")
    expect(likely.get_by_role("link")).to_have_count(1)
    # The whole list is long; the filter finds a book by any word of its title or author.
    every = page.locator("#book-pick-all")
    expect(every.locator("li:visible")).to_have_count(41)
    page.get_by_label("Find a book").fill("writer 37")
    expect(every.locator("li:visible")).to_have_count(1)
    expect(every.locator("li:visible")).to_contain_text("Shelf Book 37")
    page.get_by_label("Find a book").fill("")
    assert_accessible(page, axe_source)
    snapshot(page, "book-merge-01-choose")

    likely.get_by_role("link", name=LONG_TITLE).click()
    expect(page.get_by_role("heading", name="Merge two books into one")).to_be_visible()
    expect(
        page.get_by_text("1 passage both books hold, word for word or in two versions")
    ).to_be_visible()
    assert_accessible(page, axe_source)
    page.set_viewport_size(PHONE)
    assert fits_the_screen(page), "the merge page is wider than a phone"
    snapshot(page, "book-merge-02-confirm-phone")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("radio", name=LONG_TITLE).check()
    page.get_by_role("button", name="Merge the two books").click()

    expect(page.get_by_role("heading", name=LONG_TITLE, exact=True)).to_be_visible()
    expect(page.get_by_text("is now part of")).to_be_visible()
    for text in (SHARED, ONLY_SHORT, ONLY_LONG):
        expect(page.get_by_text(text, exact=True)).to_have_count(1)
    assert_accessible(page, axe_source)
    snapshot(page, "book-merge-03-merged")
    # The Kindle's file again, and a new highlight under its short title: one book still.
    later = clippings_file(Entry(SHORT, "A line read later.", location="400-401"))
    clippings_import(reader=alice, data=kindle + later, file_name="kindle2.txt")
    assert not Book.objects.filter(reader=alice, title="The San Francisco Fallacy").exists()
    page.reload()
    expect(page.get_by_text("A line read later.", exact=True)).to_be_visible()
