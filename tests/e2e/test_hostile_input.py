"""A library made of hostile text, opened page by page in a real browser.

Titles, authors, highlights, notes and tags hold script tags, event handlers, template
syntax, javascript: URLs, right-to-left overrides and a 100 KB word. Every page the reader
(and the admin) can reach is loaded with the Content-Security-Policy bypassed, so escaping
alone must keep them inert: any dialog, any element or attribute the payloads could have
made, or the template syntax evaluated, fails the test. A last test loads the pages with
the policy on and fails on any violation the site's own markup causes.
"""

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, Page

from accounts.models import User
from affinity.services import sharing_update
from books.importing.services import clippings_import
from books.models import Book, Highlight, Import
from books.services import highlight_note_update, highlight_tag
from tests.books.kindle import Entry, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.pages import fits_the_screen

SCRIPT = '<script>alert("script")</script>'
IMG = "<img src=x onerror=alert('img')>"
SVG = '"><svg onload=alert("svg")>'
ATTRIBUTE = "' autofocus onfocus='alert(1)"
TEMPLATE = "{{ 7|add:4242 }} {% now 'Y' %}"
JS_URL = "javascript:alert('url')"
RTL = "\u202egnp.exe\u202c harmless"
HUGE_WORD = "W" * 100_000
LONG_TITLE = "T" * 2_000

PAYLOADS = [SCRIPT, IMG, SVG, ATTRIBUTE, TEMPLATE, JS_URL, RTL]
TAGS = [SCRIPT[:64], IMG, TEMPLATE, "a/../b", "..", JS_URL]

# What a payload would have made had it been parsed as markup (the site's own pages have
# no inline script, no on* attribute and no image).
INJECTED = """() => {
  const found = [];
  for (const element of document.querySelectorAll("*")) {
    for (const attribute of element.attributes) {
      if (attribute.name.startsWith("on")) found.push(`${element.tagName} ${attribute.name}`);
      if (attribute.name === "autofocus" && element.tagName !== "INPUT") found.push("autofocus");
    }
  }
  document.querySelectorAll("script:not([src])").forEach(() => found.push("inline script"));
  document.querySelectorAll("img[src='x']").forEach(() => found.push("img"));
  document.querySelectorAll("a[href]").forEach((a) => {
    const href = a.getAttribute("href").trim().toLowerCase();
    if (href.startsWith("javascript:")) found.push(`link ${href}`);
  });
  return found;
}"""


def _hostile_library(reader: User) -> list[str]:
    entries = [
        Entry(f"{payload} Title ({payload} Author)", f"Highlight {payload} text.", location=f"{i}0")
        for i, payload in enumerate(PAYLOADS, start=1)
    ]
    entries.append(Entry(f"Long Words ({RTL})", f"{HUGE_WORD} ends here.", location="900"))
    entries.append(Entry(f"{SCRIPT} Notes", f"{IMG} and a note", kind="Note", location="950"))
    entries.append(Entry(f"{LONG_TITLE} (Long Author)", "A passage under it.", location="960"))
    entries.append(Entry(f"Long Words ({RTL})", HUGE_WORD[:5_000], location="970"))  # one "word"
    clippings_import(reader=reader, data=clippings_file(*entries), file_name=f"{SCRIPT}{IMG}.txt")
    highlights = list(Highlight.objects.filter(reader=reader).order_by("location_start"))
    for highlight, payload in zip(highlights, PAYLOADS, strict=False):
        highlight_note_update(highlight=highlight, note=f"Note {payload}")
    for tag_name in TAGS:
        highlight_tag(highlight=highlights[0], name=tag_name)
    sharing_update(reader=reader, discoverable=True, display_name="Hostile", excluded_books=[])
    return [f"/highlights/{h.code}/" for h in highlights]


def _urls(reader: User, highlight_urls: list[str]) -> list[str]:
    urls = ["/", "/library/", "/library/?sort=recent", "/map/", "/tags/", "/connections/"]
    urls += ["/import/", "/kindred/", "/sharing/", "/settings/", "/progress/"]
    urls += [f"/search/?q={q}" for q in ("Highlight", "alert", "script")]
    urls += ["/search.json?q=Highlight", f"/library/?q={SCRIPT}"]
    urls += [f"/books/{b.code}/" for b in Book.objects.filter(reader=reader)]
    urls += highlight_urls
    urls += [f"/imports/{i.code}/" for i in Import.objects.filter(reader=reader)]
    urls += [
        "/admin/",
        "/admin/books/book/",
        "/admin/books/highlight/",
        "/admin/books/highlight/?q=alert",
        "/admin/books/import/",
        "/admin/accounts/user/",
        "/admin/affinity/sharingprofile/",
    ]
    urls += [f"/admin/books/book/{b.pk}/change/" for b in Book.objects.filter(reader=reader)]
    urls += [
        f"/admin/books/highlight/{h.pk}/change/"
        for h in Highlight.objects.filter(reader=reader)[:4]
    ]
    return urls


@pytest.fixture
def hostile_reader(transactional_db: None) -> User:
    reader = User.objects.create_superuser("hostile", password=PASSWORD)
    return reader


def _logged_in_context(browser: Browser, base: str, reader: User, **options: Any) -> BrowserContext:
    client = Client()
    client.force_login(reader)
    context = browser.new_context(**options)
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": base}]
    )
    return context


@pytest.fixture
def dialogs() -> list[str]:
    return []


def _watch(page: Page, dialogs: list[str]) -> None:
    def on_dialog(dialog: Any) -> None:
        dialogs.append(f"{page.url}: {dialog.type} {dialog.message!r}")
        dialog.dismiss()

    page.on("dialog", on_dialog)


def test_hostile_text_stays_text_on_every_page(
    browser: Browser, live_server: Any, hostile_reader: User, dialogs: list[str]
) -> None:
    base = str(live_server)
    highlight_urls = _hostile_library(hostile_reader)
    context = _logged_in_context(browser, base, hostile_reader, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    _watch(page, dialogs)
    tag_links: set[str] = set()
    visited = 0
    for url in _urls(hostile_reader, highlight_urls):
        response = page.goto(base + url)
        assert response is not None
        assert response.status == 200, f"{url}: {response.status}"
        visited += 1
        if url.startswith("/search.json"):
            continue
        injected = page.evaluate(INJECTED)
        assert injected == [], f"{url}: {injected}"
        text = page.inner_text("body")
        assert "4249" not in text, url  # the template syntax was evaluated
        tag_links.update(
            page.eval_on_selector_all(
                "a[href^='/tags/']:not([href='/tags/'])",
                "links => links.map(a => a.getAttribute('href'))",
            )
        )
    # The tag pages, found by their links (names with "/" and dots included).
    assert len(tag_links) >= len(TAGS)
    for path in sorted(tag_links):
        response = page.goto(base + path)
        assert response is not None
        assert response.status == 200, f"{path}: {response.status}"
        assert page.evaluate(INJECTED) == [], path
        visited += 1
    # The payloads are shown as the reader wrote them, not dropped.
    page.goto(base + highlight_urls[0])
    assert SCRIPT in page.inner_text("body")
    page.goto(base + highlight_urls[4])
    assert TEMPLATE in page.inner_text("body")
    assert dialogs == []
    assert visited > 40
    context.close()


@pytest.mark.parametrize("size", [{"width": 390, "height": 844}, {"width": 1280, "height": 800}])
def test_a_word_longer_than_the_screen_breaks_instead_of_widening_the_page(
    browser: Browser, live_server: Any, hostile_reader: User, size: dict[str, int]
) -> None:
    base = str(live_server)
    highlight_urls = _hostile_library(hostile_reader)
    context = _logged_in_context(browser, base, hostile_reader, viewport=size)
    page = context.new_page()
    page.set_default_timeout(30_000)
    books = [f"/books/{b.code}/" for b in Book.objects.filter(reader=hostile_reader)]
    wider = []
    for url in ["/library/", "/library/?sort=recent", "/words/", *books, *highlight_urls]:
        page.goto(base + url)
        if not fits_the_screen(page):
            wider.append(url)
    assert wider == []
    # A run of 5,000 letters is no heading of its book: a fragment.
    long_words = Book.objects.get(reader=hostile_reader, title__startswith="Long Words")
    page.goto(f"{base}/books/{long_words.code}/")
    assert "Fragments" in page.inner_text("main")
    context.close()


def test_the_content_security_policy_blocks_nothing_of_the_sites_own(
    browser: Browser, live_server: Any, hostile_reader: User, dialogs: list[str]
) -> None:
    base = str(live_server)
    highlight_urls = _hostile_library(hostile_reader)
    context = _logged_in_context(browser, base, hostile_reader)  # the policy enforced
    page = context.new_page()
    _watch(page, dialogs)
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(f"{page.url}: {message.text}")
            if "Content Security Policy" in message.text
            else None
        ),
    )
    for url in ["/", "/library/", "/map/", "/import/", "/connections/", highlight_urls[0]]:
        page.goto(base + url)
        header = page.evaluate("() => document.readyState")
        assert header == "complete"
    # The progress bar's width comes from a class (pct-0 … pct-100), never a style attribute.
    # A bar shows while the library is being read: one passage left to read.
    Highlight.objects.filter(pk=_first_highlight_pk(hostile_reader)).update(
        is_word=False, embedding_status=Highlight.EmbeddingStatus.PENDING
    )
    page.goto(base + "/")
    bars = page.eval_on_selector_all(
        ".progress > span", "bars => bars.map(b => [b.className, b.getAttribute('style')])"
    )
    assert bars
    assert all(name.startswith("pct-") and style is None for name, style in bars)
    assert violations == []
    assert dialogs == []
    context.close()


def _first_highlight_pk(reader: User) -> int:
    first = Highlight.objects.filter(reader=reader).order_by("location_start").first()
    assert first is not None
    return first.pk


@pytest.fixture(autouse=True)
def _no_leftover_contexts(browser: Browser) -> Iterator[None]:
    yield
    for context in browser.contexts:
        context.close()
