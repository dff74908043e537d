"""Issue 18's words deck in a real browser: the day's looked-up words, each in the sentence
it was read in, known or back soon, defined on the card, at 1280 and 390 px."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Locator, Page, expect

from accounts.models import User
from books.models import Highlight
from review.models import WordCard, WordState
from tests.books.library import book_of, highlight_in
from tests.conftest import PASSWORD
from tests.e2e.pages import PHONE, assert_accessible, fits_the_screen, log_in, snapshot
from tests.review.vocabulary import word_in


def _library(reader: User) -> None:
    walden = book_of(reader, "Walden", "Thoreau, Henry David")
    highlight_in(walden, "Our life is frittered away by detail. Simplify, simplify.", location=11)
    word_in(walden, "frittered", location=11)
    highlight_in(walden, "I went to the woods because I wished to live deliberately.", location=21)
    word_in(walden, "deliberately.", location=22)
    ficciones = book_of(reader, "Ficciones", "Borges, Jorge Luis")
    # Lower case: a capitalised single word is no look-up (books.vocabulary.word_kind).
    word_in(ficciones, "allay", location=5, note="to calm, to put to rest")
    word_in(ficciones, "ostensibly", location=40)
    word_in(ficciones, "iota", location=60)


def _card(page: Page, word: str) -> Locator:
    return page.locator("article.word-card").filter(
        has=page.get_by_role("heading", name=word, exact=True)
    )


@pytest.mark.django_db(transaction=True)
def test_a_reader_learns_the_days_words(page: Page, live_server: object, axe_source: str) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    alice = User.objects.create_user("alice", password=PASSWORD)
    _library(alice)
    log_in(page, base, "alice")
    today = timezone.localdate()

    page.get_by_role("link", name="Review", exact=True).click()
    page.get_by_role("navigation", name="Review decks").get_by_role("link", name="Words").click()
    expect(page.get_by_role("heading", name="Words to review")).to_be_visible()
    expect(page.locator("article.word-card")).to_have_count(5)
    expect(page.locator("#review-count")).to_have_text("0 of 5 reviewed")
    # the word in the sentence it was read in; a word read in no highlighted sentence alone
    frittered = _card(page, "frittered")
    expect(frittered.locator("blockquote mark")).to_have_text("frittered")
    expect(frittered.locator("blockquote")).to_contain_text("Our life is frittered away")
    expect(frittered).to_contain_text("Walden · Thoreau, Henry David · location 11")
    expect(_card(page, "deliberately").locator("mark")).to_have_text("deliberately")
    expect(_card(page, "iota").locator("blockquote")).to_have_count(0)
    assert_accessible(page, axe_source)
    snapshot(page, "18-12-words")

    frittered.get_by_role("button", name="I know it").click()
    expect(frittered.get_by_role("status")).to_contain_text("You know it: it comes back on")
    expect(page.locator("#review-count")).to_have_text("1 of 5 reviewed")
    assert WordState.objects.get(word="frittered").due == today + timedelta(days=70)

    iota = _card(page, "iota")
    iota.get_by_role("button", name="Again soon").click()
    expect(iota.get_by_role("status")).to_contain_text("Again soon: it comes back on")
    expect(iota.get_by_role("button", name="Again soon")).to_have_attribute("aria-pressed", "true")
    expect(iota.get_by_role("button", name="I know it")).not_to_have_attribute(
        "aria-pressed", "true"
    )
    assert WordState.objects.get(word="iota").due == today + timedelta(days=2)

    # the reader's definition is hidden until asked for, as on a flash card, and editable
    allay = _card(page, "allay")
    definition = allay.get_by_role("textbox", name="Your definition of allay")
    expect(definition).to_be_hidden()
    allay.locator("summary", has_text="Show your definition").click()
    expect(definition).to_have_value("to calm, to put to rest")
    definition.fill("to calm; to relieve")
    allay.get_by_role("button", name="Save definition").click()
    expect(allay.get_by_role("status")).to_contain_text("Definition saved.")
    expect(definition).to_be_visible()
    expect(definition).to_have_value("to calm; to relieve")
    expect(page.locator("#review-count")).to_have_text("3 of 5 reviewed")
    assert Highlight.objects.get(reader=alice, text="allay").note == "to calm; to relieve"

    ostensibly = _card(page, "ostensibly")
    ostensibly.locator("summary", has_text="Add a definition").click()
    ostensibly.get_by_role("textbox", name="Your definition of ostensibly").fill("seemingly")
    ostensibly.get_by_role("button", name="Save definition").click()
    expect(ostensibly.get_by_role("status")).to_contain_text("Definition saved.")
    assert_accessible(page, axe_source)
    snapshot(page, "18-13-words-answered")
    page.set_viewport_size(PHONE)
    assert fits_the_screen(page), "the words deck is wider than a phone"
    page.set_viewport_size({"width": 1280, "height": 900})

    # the answers survive a reload; "Open" shows the word's own page
    page.reload()
    expect(_card(page, "frittered").get_by_role("status")).to_contain_text("Known · back on")
    expect(_card(page, "iota").get_by_role("status")).to_contain_text("Again soon · back on")
    _card(page, "deliberately").get_by_role("button", name="Open").click()
    expect(page).to_have_url(
        re.compile(re.escape(Highlight.objects.get(text="deliberately.").get_absolute_url()))
    )
    page.go_back()
    page.reload()
    expect(page.get_by_text("That is today\u2019s words.")).to_be_visible()
    expect(page.get_by_text(f"comes back on {today + timedelta(days=2):%-d %b %Y}")).to_be_visible()
    assert WordCard.objects.filter(reader=alice, day=today).exclude(answer="").count() == 5

    # the deck's own count: 0 turns it off
    page.get_by_role("link", name="10 a day").click()
    page.get_by_label("Words a day").fill("0")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Review settings saved.")).to_be_visible()
    page.goto(f"{base}/review/words/")
    expect(page.get_by_text("The words deck is off.")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "18-14-words-off")


@pytest.mark.django_db(transaction=True)
def test_a_reader_without_words_or_with_none_due_is_told_so(
    page: Page, live_server: object, axe_source: str
) -> None:
    base = str(live_server)
    page.set_default_timeout(30_000)
    alice = User.objects.create_user("alice", password=PASSWORD)
    highlight_in(book_of(alice, "Walden"), "I went to the woods to live deliberately.", location=1)
    log_in(page, base, "alice")
    page.goto(f"{base}/review/words/")
    expect(page.get_by_text("No words yet.")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "18-15-words-none")

    word = word_in(book_of(alice, "Walden"), "deliberately", location=1)
    later = timezone.localdate() + timedelta(days=9)
    WordState.objects.create(reader=alice, word=word.text, due=later)
    page.reload()
    expect(page.get_by_text("All done for today.")).to_be_visible()
    expect(page.get_by_text(f"the next one comes back on {later:%-d %b %Y}")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "18-16-words-all-done")


@pytest.mark.django_db(transaction=True)
def test_the_words_pages_log_no_console_error_under_the_sites_policy(
    browser: Browser, live_server: object
) -> None:
    """The Content-Security-Policy enforced (the suite's pages bypass it for axe): an inline
    style or script the policy refuses shows as a console error, and silently unstyled."""
    base = str(live_server)
    alice = User.objects.create_user("alice", password=PASSWORD)
    _library(alice)
    walden = book_of(alice, "Walden", "Thoreau, Henry David")
    context = browser.new_context()  # the policy enforced
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on(
        "console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    log_in(page, base, "alice")
    for path in [
        "/words/",
        f"/books/{walden.code}/words/",
        f"/books/{walden.code}/",
        "/review/words/",
    ]:
        page.goto(base + path)
        expect(page.locator("h1")).to_be_visible()
    assert errors == []
    context.close()
