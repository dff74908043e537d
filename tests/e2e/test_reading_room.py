"""Issue 18 in a real browser: the daily review, favourites, the book page, tags renamed
and merged, a password reset through the mailbox, and the phone menu, at 1280 and 390 px."""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import Page, expect

from accounts.models import User
from books.models import Book, Highlight, Tag
from books.services import highlight_tag
from review.models import ReviewCard, ReviewSettings, ReviewState
from review.services import unsubscribe_token
from tests.books.library import book_of, highlight_in
from tests.conftest import PASSWORD
from tests.e2e.pages import (
    DESKTOP,
    PHONE,
    assert_accessible,
    fits_the_screen,
    log_in,
    open_account_menu,
    path_of,
    snapshot,
)

LINES = [
    (
        "Ficciones",
        "Borges, Jorge Luis",
        "To think is to forget differences, to generalize, to abstract.",
    ),
    ("Ficciones", "Borges, Jorge Luis", "He remembered every leaf of every tree of every wood."),
    (
        "Ficciones",
        "Borges, Jorge Luis",
        "Funes had trouble sleeping: to sleep is to be distracted.",
    ),
    ("Walden", "Thoreau, Henry David", "Our life is frittered away by detail. Simplify, simplify."),
    (
        "Walden",
        "Thoreau, Henry David",
        "I went to the woods because I wished to live deliberately.",
    ),
    ("The 48 Laws of Power", "Greene, Robert", "Never outshine the master."),
    ("Mastery", "Robert Greene", "The future belongs to those who learn more skills."),
]


def _library(reader: User) -> list[Highlight]:
    return [
        highlight_in(book_of(reader, title, authors), text, location=10 * i + 1)
        for i, (title, authors, text) in enumerate(LINES)
    ]


@pytest.mark.django_db(transaction=True)
def test_a_reader_reviews_the_days_highlights(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    alice = User.objects.create_user("alice", password=PASSWORD)
    _library(alice)
    log_in(page, base, "alice")
    of_the_day = page.locator("blockquote.highlight").first.inner_text()

    page.get_by_role("link", name="Review", exact=True).click()
    expect(page.get_by_role("heading", name="Daily review")).to_be_visible()
    cards = page.locator("article.review-card")
    expect(cards).to_have_count(5)
    # the highlight of the day on home is the first card of the same queue
    expect(cards.first.locator("blockquote")).to_have_text(of_the_day)
    assert_accessible(page, axe_source)
    snapshot(page, "18-01-review")
    today = timezone.localdate()
    queue = list(ReviewCard.objects.filter(reader=alice, day=today).order_by("position"))

    cards.nth(0).get_by_role("button", name="Keep").click()
    expect(cards.nth(0).get_by_role("status")).to_contain_text("Kept. It comes back on")
    expect(page.locator("#review-count")).to_have_text("1 of 5 reviewed")
    kept = ReviewState.objects.get(highlight_id=queue[0].highlight_id)
    assert kept.due == today + timedelta(days=14)
    # The answer given shows on the card (a ring round its button), and another changes it.
    keep = cards.nth(0).get_by_role("button", name="Keep")
    expect(keep).to_have_attribute("aria-pressed", "true")
    assert keep.evaluate("b => getComputedStyle(b).boxShadow") != "none"
    expect(cards.nth(0).get_by_role("status")).to_contain_text("Another answer changes it.")
    cards.nth(0).get_by_role("button", name="Less often").click()
    expect(cards.nth(0).get_by_role("status")).to_contain_text("Less often: it comes back on")
    expect(keep).not_to_have_attribute("aria-pressed", "true")
    expect(page.locator("#review-count")).to_have_text("1 of 5 reviewed")
    cards.nth(0).get_by_role("button", name="Keep").click()
    expect(cards.nth(0).get_by_role("status")).to_contain_text("Kept. It comes back on")
    kept.refresh_from_db()
    assert kept.due == today + timedelta(days=14)

    cards.nth(1).get_by_role("button", name="Favourite").click()
    expect(cards.nth(1).get_by_role("status")).to_contain_text("A favourite now")
    expect(cards.nth(1).get_by_role("button", name="Favourite")).to_have_attribute(
        "aria-pressed", "true"
    )
    favourite = ReviewState.objects.get(highlight_id=queue[1].highlight_id)
    assert favourite.due == today + timedelta(days=7)
    assert Highlight.objects.get(pk=queue[1].highlight_id).favourite

    cards.nth(2).get_by_role("button", name="Less often").click()
    expect(cards.nth(2).get_by_role("status")).to_contain_text("Less often: it comes back on")
    less = ReviewState.objects.get(highlight_id=queue[2].highlight_id)
    assert less.due > kept.due

    cards.nth(3).locator("summary", has_text="Note").click()
    cards.nth(3).get_by_role("textbox", name="Your note on this highlight").fill("Still true.")
    cards.nth(3).get_by_role("button", name="Save note").click()
    expect(cards.nth(3).get_by_role("status")).to_contain_text("Note saved.")
    assert Highlight.objects.get(pk=queue[3].highlight_id).note == "Still true."
    assert_accessible(page, axe_source)
    snapshot(page, "18-02-review-answered")

    # the answers survive a reload; the fifth card opens its highlight
    page.reload()
    expect(cards.nth(0).get_by_role("status")).to_contain_text("Kept · back on")
    cards.nth(4).get_by_role("button", name="Open").click()
    expect(page).to_have_url(
        re.compile(re.escape(Highlight.objects.get(pk=queue[4].highlight_id).get_absolute_url()))
    )
    expect(page.get_by_role("heading", level=1)).to_contain_text("Highlight from")
    assert_accessible(page, axe_source)

    page.goto(f"{base}/review/")
    expect(page.get_by_text("That is today\u2019s review.")).to_be_visible()
    page.get_by_role("link", name=re.compile("5 a day")).click()
    assert_accessible(page, axe_source)
    snapshot(page, "18-03-review-settings")
    page.get_by_label("Highlights a day").fill("3")
    page.get_by_label("Send me the day's highlights by e-mail each morning").check()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("The daily e-mail needs an address to go to.")).to_be_visible()
    page.get_by_label("E-mail address").fill("alice@example.org")
    page.get_by_label("Your password (to change the address)").fill(PASSWORD)
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Review settings saved.")).to_be_visible()
    expect(page.get_by_text("3 a day, by e-mail too")).to_be_visible()

    # the e-mail's unsubscribe link, opened logged out: it asks, then stops the e-mail
    open_account_menu(page)
    page.get_by_role("button", name="Log out").click()
    page.goto(f"{base}{reverse('review_unsubscribe', args=[unsubscribe_token(alice)])}")
    assert_accessible(page, axe_source)
    page.get_by_role("button", name="Unsubscribe").click()
    expect(page.get_by_text("You will get no more daily review e-mails.")).to_be_visible()
    assert not ReviewSettings.objects.get(reader=alice).daily_email


@pytest.mark.django_db(transaction=True)
def test_a_reader_keeps_favourites_and_works_a_book_page(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    alice = User.objects.create_user("alice", password=PASSWORD)
    highlights = _library(alice)
    Highlight.objects.filter(pk=highlights[1].pk).update(favourite=True)
    log_in(page, base, "alice")

    page.get_by_role("link", name="Favourites", exact=True).click()
    expect(page.get_by_role("heading", name="Favourites")).to_be_visible()
    expect(page.get_by_text("He remembered every leaf")).to_be_visible()
    expect(page.get_by_text("To think is to forget")).to_have_count(0)
    assert_accessible(page, axe_source)
    snapshot(page, "18-04-favourites")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Library").click()
    page.get_by_label("Sort by").select_option("author")
    page.get_by_role("button", name="Apply").click()
    groups = page.locator("h2.author-group")
    expect(groups).to_have_count(3)
    expect(groups.nth(1)).to_have_text("Greene, Robert")
    assert_accessible(page, axe_source)
    snapshot(page, "18-05-library-by-author")

    page.get_by_role("link", name="Ficciones").click()
    expect(page.locator(".highlight-count")).to_have_text("3 highlights")
    # each item's link is its own words
    expect(page.get_by_role("link", name="To think is to forget differences")).to_be_visible()
    expect(page.get_by_role("link", name="open", exact=True)).to_have_count(0)
    assert_accessible(page, axe_source)
    snapshot(page, "18-06-book")

    funes = Highlight.objects.get(text__startswith="Funes")
    item = page.locator("article.book-highlight").filter(has_text="Funes had trouble")
    item.get_by_role("button", name="Favourite").click()
    expect(item.get_by_role("button", name="★ Favourite")).to_have_attribute("aria-pressed", "true")
    item.locator("summary", has_text="Tag").click()
    item.get_by_label("Tag this highlight").fill("sleep")
    item.get_by_role("button", name="Add").click()
    expect(item.get_by_role("link", name="sleep", exact=True)).to_be_visible()
    assert [t.name for t in funes.tags.all()] == ["sleep"]
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    item.get_by_role("button", name="Copy").click()
    expect(item.get_by_text("Citation copied.")).to_be_visible()
    assert_accessible(page, axe_source)

    page.get_by_label("Favourites").check()
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("article.book-highlight")).to_have_count(2)
    expect(page.get_by_text("2 of 3 highlights match")).to_be_visible()
    page.get_by_label("Favourites").uncheck()
    page.get_by_label("Search this book").fill("SLEEP")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("article.book-highlight")).to_have_count(1)
    assert_accessible(page, axe_source)
    snapshot(page, "18-07-book-filtered")


@pytest.mark.django_db(transaction=True)
def test_a_reader_renames_merges_and_deletes_tags(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    alice = User.objects.create_user("alice", password=PASSWORD)
    highlights = _library(alice)
    highlight_tag(highlight=highlights[0], name="memory")
    highlight_tag(highlight=highlights[1], name="remembering")
    highlight_tag(highlight=highlights[3], name="a-very-long-tag-" * 4)
    log_in(page, base, "alice")

    page.get_by_role("link", name="Tags", exact=True).click()
    page.set_viewport_size(PHONE)
    assert fits_the_screen(page), "a long tag widens /tags/ past a phone's screen"
    page.set_viewport_size(DESKTOP)
    page.get_by_role("link", name="remembering").click()
    assert_accessible(page, axe_source)
    snapshot(page, "18-08-tag")
    page.get_by_label("New name").fill("Recall")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_text("Renamed “remembering” to “recall”.")).to_be_visible()
    assert path_of(page) == "/tags/recall/"

    page.get_by_label("Merge into").select_option(label="memory")
    page.get_by_role("button", name="Merge").click()
    expect(page.get_by_text("Merged “recall” into “memory”: 1 highlight moved.")).to_be_visible()
    expect(page.get_by_text("He remembered every leaf")).to_be_visible()
    expect(page.get_by_text("To think is to forget")).to_be_visible()
    assert not Tag.objects.filter(reader=alice, name="recall").exists()
    assert_accessible(page, axe_source)
    snapshot(page, "18-09-tag-merged")

    page.get_by_role("button", name="Delete the tag").click()
    expect(page.get_by_text("Deleted the tag “memory” from 2 highlights")).to_be_visible()
    assert Highlight.objects.filter(reader=alice).count() == len(LINES)
    assert_accessible(page, axe_source)


@pytest.mark.django_db(transaction=True)
def test_a_reader_tags_a_highlight_with_the_hashtags_of_a_note(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    alice = User.objects.create_user("alice", password=PASSWORD)
    funes = _library(alice)[1]
    log_in(page, base, "alice")
    page.goto(f"{base}{funes.get_absolute_url()}")
    tags = page.locator("#highlight-tags")
    expect(tags.get_by_text("No tags yet.")).to_be_visible()

    note = page.get_by_role("textbox", name="Your note")
    note.fill("Funes, who forgets nothing. #Memoria #insomnio")
    page.get_by_role("button", name="Save note").click()

    # htmx swaps the tags in beside the saved note: no reload.
    expect(
        page.get_by_text("Note saved, and tagged from its hashtags: memoria, insomnio.")
    ).to_be_visible()
    expect(tags.get_by_role("link", name="memoria")).to_be_visible()
    expect(tags.get_by_role("link", name="insomnio")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "18-10-note-hashtags")

    # The tags' own forms still work after the swap; a hashtag the reader removed is not
    # added again while the note names it, and one taken out of the note leaves its tag.
    tags.get_by_role("button", name="Remove the tag insomnio").click()
    expect(tags.get_by_role("link", name="insomnio")).to_have_count(0)
    note.fill("Funes, who forgets nothing. #insomnio")
    page.get_by_role("button", name="Save note").click()
    expect(page.get_by_text("Note saved.", exact=True)).to_be_visible()
    expect(tags.get_by_role("link", name="memoria")).to_be_visible()
    expect(tags.get_by_role("link", name="insomnio")).to_have_count(0)
    page.reload()
    expect(page.locator("#highlight-tags").get_by_role("link", name="memoria")).to_be_visible()
    assert sorted(funes.tags.values_list("name", flat=True)) == ["memoria"]


@pytest.mark.django_db(transaction=True)
def test_a_reader_resets_a_forgotten_password_by_email(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    User.objects.create_user(
        "alice",
        email="alice@example.org",
        verified_email="alice@example.org",  # she followed the mailed link once
        password=PASSWORD,
    )
    mail.outbox.clear()
    page.goto(f"{base}/login/")
    page.get_by_role("link", name="Forgot your password?").click()
    assert_accessible(page, axe_source)
    snapshot(page, "18-10-password-reset")
    page.locator("#id_email").fill("alice@example.org")
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your e-mail")).to_be_visible()
    assert len(mail.outbox) == 1
    link = re.search(r"https?://\S+/password-reset/\S+/", mail.outbox[0].body)
    assert link is not None
    page.goto(link.group(0))
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    assert_accessible(page, axe_source)
    new_password = "a brand new and unguessable passphrase"
    page.locator("#id_new_password1").fill(new_password)
    page.locator("#id_new_password2").fill(new_password)
    page.get_by_role("button", name="Set the new password").click()
    expect(page.get_by_role("heading", name="Password set")).to_be_visible()
    page.get_by_role("link", name="Log in").click()
    log_in(page, base, "alice", new_password)

    open_account_menu(page)
    page.get_by_role("link", name="Settings", exact=True).click()
    page.get_by_role("link", name="Change your password").click()
    assert_accessible(page, axe_source)
    page.locator("#id_old_password").fill(new_password)
    page.locator("#id_new_password1").fill(PASSWORD + " again")
    page.locator("#id_new_password2").fill(PASSWORD + " again")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("heading", name="Password changed")).to_be_visible()


@pytest.mark.django_db(transaction=True)
def test_the_phone_menu_shows_every_section(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    alice = User.objects.create_user("alice", password=PASSWORD)
    _library(alice)
    log_in(page, base, "alice")
    page.set_viewport_size(PHONE)
    nav = page.get_by_role("navigation", name="Main")
    menu = page.get_by_role("button", name="Menu")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(nav).to_be_hidden()
    assert fits_the_screen(page)
    snapshot_page = page
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    for name in ("Review", "Library", "Favourites", "Search", "Connections", "Tags", "Import"):
        expect(nav.get_by_role("link", name=name, exact=True)).to_be_in_viewport()
    assert_accessible(page, axe_source)
    page.screenshot(path=str(_artifact("18-11-phone-menu-open.png")), full_page=True)
    nav.get_by_role("link", name="Review", exact=True).click()
    expect(snapshot_page.get_by_role("heading", name="Daily review")).to_be_visible()
    assert fits_the_screen(page)
    book = Book.objects.get(reader=alice, title="Ficciones")
    page.goto(f"{base}{book.get_absolute_url()}")
    assert fits_the_screen(page)
    assert_accessible(page, axe_source)
    page.set_viewport_size(DESKTOP)
    expect(menu).to_be_hidden()
    expect(nav).to_be_visible()


def _artifact(name: str) -> object:
    from tests.e2e.conftest import ARTIFACTS

    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name
