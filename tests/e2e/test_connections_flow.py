"""The highlight page's connections in a real browser: strengths, the same author behind a
toggle swapped in by htmx, scripts from files only (a strict CSP allows no inline script)."""

import re

import pytest
from playwright.sync_api import Page, expect

from books.models import Highlight
from tests.books.kindle import Entry, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.pages import assert_accessible, snapshot

FICCIONES = "Ficciones (Borges, Jorge Luis)"
ALEPH = "El Aleph (Borges, Jorge Luis)"
SACKS = "The Man Who Mistook His Wife for a Hat (Sacks, Oliver)"
GARDEN = "The Well-Tempered Garden (Lloyd, Christopher)"
THINK = "To think is to forget differences, to generalize, to abstract."
LIBRARY = [
    Entry(FICCIONES, THINK, location="412"),
    Entry(ALEPH, "To think is to forget the differences, to generalize and abstract.",
          location="80"),
    Entry(SACKS, "To think is to forget differences; to generalize; to make abstractions.",
          location="1520-1522"),
    Entry(GARDEN, "Prune roses in early spring before the buds open.", location="77-78"),
    Entry(GARDEN, "ineffable", location="120"),
]  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_reader_reads_connections_by_strength_and_opens_the_same_author(
    page: Page, live_server: object, axe_source: str
) -> None:
    from accounts.models import User
    from books.importing.services import clippings_import

    alice = User.objects.create_user("alice", password=PASSWORD)
    # Tests run tasks in process: the import embeds and connects before it returns.
    clippings_import(reader=alice, data=clippings_file(*LIBRARY), file_name="a.txt")
    think = Highlight.objects.get(text=THINK)
    assert think.embedding_status == Highlight.EmbeddingStatus.DONE

    base = str(live_server)
    inline_scripts: list[str] = []
    page.on(
        "console",
        lambda message: (
            inline_scripts.append(message.text)
            if "Content Security Policy" in message.text
            else None
        ),
    )
    page.goto(f"{base}/login/")
    page.locator("#id_username").fill("alice")
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{base}{think.get_absolute_url()}")

    section = page.locator("section.connections")
    expect(section.get_by_role("heading", name="Same idea")).to_be_visible()
    expect(section.get_by_text("to generalize; to make abstractions")).to_be_visible()
    expect(section.get_by_text("to generalize and abstract")).to_have_count(0)
    expect(section.get_by_text(re.compile("cosine|% alike"))).to_have_count(0)
    assert page.locator("script:not([src])").count() == 0
    assert_accessible(page, axe_source)
    snapshot(page, "20-highlight-strengths")

    section.get_by_role("link", name=re.compile(r"Show 1 from Borges, Jorge Luis")).click()
    expect(section.get_by_text("to generalize and abstract")).to_be_visible()
    expect(page).to_have_url(re.compile(re.escape(think.get_absolute_url()) + "$"))  # htmx swap
    assert_accessible(page, axe_source)
    snapshot(page, "21-highlight-same-author")

    page.get_by_role("button", name="Copy as citation").click()
    expect(page.locator(".copy-status").first).to_have_text(re.compile(r"\S"))  # the script ran
    assert inline_scripts == []

    page.get_by_role("link", name="Words", exact=True).click()
    expect(page.get_by_role("link", name="ineffable")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "22-words")
