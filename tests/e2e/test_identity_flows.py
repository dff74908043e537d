"""Issue 29 in a real browser: one book is one book, a book with nothing to show is not a
book, and words are words (look-ups in the deck, headings and fragments apart), at 1280
and 390 px."""

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Book
from tests.books.importing.test_book_merge import CALM, HOURS, _old_rule_twin
from tests.books.kindle import Entry, clippings_file
from tests.books.library import book_of, highlight_in
from tests.conftest import PASSWORD
from tests.e2e.pages import (
    PHONE,
    assert_accessible,
    fits_the_screen,
    import_answered,
    log_in,
    snapshot,
)
from tests.review.vocabulary import word_in

TIMEOUT = 120_000
STRAIGHT = "It Doesn't Have to Be Crazy at Work (Jason Fried)"
CURLY = "It Doesn\u2019t Have to Be Crazy at Work (Jason Fried)"
KUNDERA = "Milan Kundera"
LIMIT = "<You have reached the clipping limit for this item>"


@pytest.mark.django_db(transaction=True)
def test_a_reader_re_imports_and_finds_one_book_and_no_empty_ones(
    page: Page, live_server: object, axe_source: str, tmp_path: Path
) -> None:
    base = str(live_server)
    page.set_default_timeout(TIMEOUT)
    alice = User.objects.create_user("alice", password=PASSWORD)
    # A library imported under the older rule: the same book twice, by two apostrophes.
    clippings_import(
        reader=alice,
        data=clippings_file(
            Entry(STRAIGHT, CALM, location="100-101"),
            Entry(
                f"La Plaisanterie ({KUNDERA})", "Un optimiste est opium du peuple.", location="9"
            ),
        ),
        file_name="old.txt",
    )
    _old_rule_twin(alice)
    log_in(page, base, "alice")
    page.get_by_role("link", name="Library", exact=True).click()
    expect(
        page.get_by_role("link", name="It Doesn\u2019t Have to Be Crazy at Work")
    ).to_be_visible()
    snapshot(page, "29-identity-01-twins-before")

    upload = tmp_path / "My Clippings.txt"
    fete = Entry(f"{KUNDERA} - La Fête de l'insignifiance", "L'insignifiance.", location="30")
    locked = [Entry(f"Le Livre verrouillé ({KUNDERA})", LIMIT, location=f"{n}0") for n in (1, 2, 3)]
    bookmark = Entry("A Book Only Bookmarked (Noor Saleh)", "", kind="Bookmark", location="55")
    upload.write_bytes(
        clippings_file(Entry(CURLY, HOURS, location="200-202"), fete, *locked, bookmark)
    )
    page.get_by_role("link", name="Import", exact=True).click()
    page.get_by_label("Drop your highlights files here, or choose them:").set_input_files(upload)
    page.get_by_role("button", name="Import", exact=True).click()
    import_answered(page)
    expect(page.get_by_role("heading", name="Import of My Clippings.txt")).to_be_visible()
    not_books = page.locator("ul.books-with-nothing")
    expect(page.get_by_role("heading", name="Not added as books")).to_be_visible()
    expect(not_books).to_contain_text("Le Livre verrouillé")
    expect(not_books).to_contain_text("3 entries at the publisher's clipping limit")
    expect(not_books).to_contain_text("A Book Only Bookmarked: 1 bookmark")
    assert_accessible(page, axe_source)
    snapshot(page, "29-identity-02-empty-books-line")

    page.get_by_role("link", name="Library", exact=True).click()
    books = page.locator("main")
    expect(books.get_by_role("link", name="It Doesn't Have to Be Crazy at Work")).to_have_count(1)
    expect(
        books.get_by_role("link", name="It Doesn\u2019t Have to Be Crazy at Work")
    ).to_have_count(0)
    expect(books.get_by_role("link", name="La Fête de l'insignifiance")).to_be_visible()
    expect(books.get_by_role("link", name="Le Livre verrouillé")).to_have_count(0)
    expect(books.get_by_role("link", name=KUNDERA, exact=True)).to_have_count(0)
    assert_accessible(page, axe_source)
    snapshot(page, "29-identity-03-library-after")

    books.get_by_role("link", name="It Doesn't Have to Be Crazy at Work").click()
    expect(page.get_by_text(CALM)).to_be_visible()
    expect(page.get_by_text(HOURS)).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "29-identity-04-book-merged")
    assert Book.objects.filter(reader=alice).count() == 3


@pytest.mark.django_db(transaction=True)
def test_the_words_deck_holds_look_ups_and_the_book_page_the_rest(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    alice = User.objects.create_user("alice", password=PASSWORD)
    book = book_of(alice, "Punished by Rewards", "Kohn, Alfie")
    highlight_in(book, "Rewards are not the opposite of punishment but its twin.", location=5)
    for n, text in enumerate(["ostensibly,", "iota", "obfuscate"]):
        word_in(book, text, location=10 + n)
    for n, text in enumerate(["Why Incentives Fail", "TABLE 1.1 Jarrett engagements, 1974/5"]):
        word_in(book, text, location=20 + n)
    for n, text in enumerate(["continue to", "Introduce yourself", "groves of trees"]):
        word_in(book, text, location=30 + n)
    log_in(page, base, "alice")

    page.goto(f"{base}{book.get_absolute_url()}")
    expect(page.get_by_role("heading", name="Words you looked up · 3")).to_be_visible()
    expect(page.get_by_role("heading", name="Headings · 2")).to_be_visible()
    expect(page.get_by_role("heading", name="Fragments · 3")).to_be_visible()
    expect(page.locator("ul.words-heading")).to_contain_text("Why Incentives Fail")
    expect(page.locator("ul.words-fragment")).to_contain_text("Introduce yourself")
    assert_accessible(page, axe_source)
    snapshot(page, "29-words-01-book-page")

    page.goto(f"{base}/review/words/")
    cards = page.locator("article.word-card")
    expect(cards).to_have_count(3)
    for word in ("ostensibly", "iota", "obfuscate"):
        expect(cards.get_by_role("heading", name=word, exact=True)).to_be_visible()
    expect(page.get_by_text("Why Incentives Fail")).to_have_count(0)
    expect(page.get_by_text("Introduce yourself")).to_have_count(0)
    assert_accessible(page, axe_source)
    snapshot(page, "29-words-02-deck")
    page.set_viewport_size(PHONE)
    assert fits_the_screen(page), "the words deck is wider than a phone"
    # The words page's table, with a long title and a long look-up, fits a phone too.
    long_book = book_of(alice, "Incentives, Motivation and the Workplace: " * 3, "Kohn, Alfie")
    word_in(long_book, "antidisestablishmentarianistically", location=40)
    page.goto(f"{base}/words/")
    expect(page.get_by_text("antidisestablishmentarianistically")).to_be_visible()
    assert fits_the_screen(page), "the words page is wider than a phone"
