"""Kindred readers in a real browser: a reader turns sharing on and meets the reader whose
highlights sit closest to theirs; a reader who does not share never shows up.

The libraries are imported and embedded by the real model (Celery runs eagerly here), so
"closest" is the model's judgement, not a number planted in the database.
"""

import re

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from affinity.services import sharing_update
from books.importing.services import clippings_import
from tests.books.kindle import Entry, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.pages import assert_accessible, snapshot


def _library(titles: list[str], subjects: list[str], predicates: list[str]) -> bytes:
    """Every subject with every predicate, spread over the books, far apart in each so
    that none is taken for an extended version of another."""
    entries = [
        Entry(
            titles[index % len(titles)],
            f"{subject} {predicate}.",
            location=f"{100 + 20 * index}-{101 + 20 * index}",
        )
        for index, (subject, predicate) in enumerate((s, p) for s in subjects for p in predicates)
    ]
    return clippings_file(*entries)


MINE = _library(
    ["Ficciones (Borges, Jorge Luis)", "Speak, Memory (Nabokov, Vladimir)"],
    ["What we remember", "A recollection", "The mind's archive", "Every memory"],
    [
        "makes us who we are",
        "holds the days we lived",
        "fades when no one tells it again",
        "is rebuilt whenever it is recalled",
        "keeps the faces we have lost",
        "betrays the facts it stores",
    ],
)
# A reader of the same idea in other books.
KINDRED = _library(
    ["The Man Who Mistook His Wife for a Hat (Sacks, Oliver)", "Proust (Beckett, Samuel)"],
    ["Memory", "Remembering", "Our recollection", "The past we keep"],
    [
        "shapes who we become",
        "is a treasury of the days we lived",
        "fades unless we retell it",
        "rebuilds itself each time we recall it",
        "keeps the faces of the dead",
        "is never a faithful record",
    ],
)
GARDENER = _library(
    ["The Well-Tempered Garden (Lloyd, Christopher)", "Gardening Month by Month (Hessayon, D. G.)"],
    ["Roses", "Tomatoes", "Young seedlings", "Fruit trees"],
    [
        "need pruning in early spring",
        "want deep and rare watering",
        "thrive in well-drained soil",
        "should be mulched before the first frost",
        "grow best in full sun",
        "suffer when planted too close together",
    ],
)


def _reader(username: str, clippings: bytes) -> User:
    reader = User.objects.create_user(username, password=PASSWORD)
    clippings_import(reader=reader, data=clippings, file_name="My Clippings.txt")
    return reader


@pytest.mark.django_db(transaction=True)
def test_a_reader_turns_sharing_on_and_meets_a_kindred_reader(
    page: Page, live_server: object, axe_source: str
) -> None:
    for username, name, clippings in (
        ("ana", "Ireneo", KINDRED),
        ("bruno", "Gertrude", GARDENER),
    ):
        sharing_update(
            reader=_reader(username, clippings),
            discoverable=True,
            display_name=name,
            excluded_books=[],
        )
    # The same reading as the kindred reader, but this reader does not share.
    _reader("dora", KINDRED)
    _reader("reader", MINE)

    base = str(live_server)
    page.set_default_timeout(30_000)
    page.goto(f"{base}/login/")
    page.get_by_label("Username").fill("reader")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    # Not sharing yet: the Readers page sends the reader to the sharing settings first.
    page.get_by_role("link", name="Readers", exact=True).click()
    expect(page).to_have_url(re.compile(r"/sharing/$"))
    expect(page.get_by_text("Turn sharing on first.")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "16-sharing")

    page.get_by_label("Share my reading with other readers who share theirs").check()
    page.get_by_label("Display name").fill("Funes")
    page.get_by_role("button", name="Save").click()
    expect(page).to_have_url(re.compile(r"/kindred/$"))
    expect(page.get_by_text("You share your reading as “Funes”.")).to_be_visible()

    readers = page.locator("ol.pairs > li.pair")
    expect(readers).to_have_count(2)
    # The reader of memory comes first, the gardener second; the reader who does not
    # share appears nowhere.
    expect(readers.nth(0).get_by_role("heading", name="Ireneo")).to_be_visible()
    expect(readers.nth(1).get_by_role("heading", name="Gertrude")).to_be_visible()
    expect(page.get_by_text("dora")).to_have_count(0)
    first = readers.nth(0)
    expect(first.get_by_text("What bridges you:")).to_be_visible()
    expect(first.locator("blockquote").first).to_be_visible()
    expect(first.get_by_text(re.compile(r"The Man Who Mistook His Wife|Proust"))).not_to_have_count(
        0
    )
    assert_accessible(page, axe_source)
    snapshot(page, "17-kindred")

    first.get_by_role("link", name="Ireneo").click()
    expect(page.get_by_role("heading", name="Ireneo")).to_be_visible()
    # Three sharing readers: too few pairs to say how alike two are (no "99% alike").
    expect(page.get_by_text("less alike than you two")).to_have_count(0)
    assert_accessible(page, axe_source)
    snapshot(page, "18-reader-profile")

    # Sharing off: the reader is gone from the others' view and the page asks again.
    page.goto(f"{base}/sharing/")
    page.get_by_label("Share my reading with other readers who share theirs").uncheck()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Sharing is off: no other reader sees you")).to_be_visible()
    page.get_by_role("link", name="Readers", exact=True).click()
    expect(page).to_have_url(re.compile(r"/sharing/$"))
