"""Every page a reader sees, in a browser whose locale is es-ES, at 1280 px: no English
left of the strings each page is known for, and a screenshot of each under
var/screens/es/ (not committed). Lines that read the same in English and in Spanish,
other than the reader's own words, are listed beside them in leftovers.txt."""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

from accounts.models import User
from books.importing.services import clippings_import
from books.library_map.services import library_map_refresh
from books.models import Book, Highlight, Tag
from tests.books.embedded import embedded_library
from tests.books.importing.devices import sidecar
from tests.books.kindle import Entry
from tests.conftest import PASSWORD

SCREENS = Path(__file__).resolve().parents[2] / "var" / "screens" / "es"
DESKTOP: ViewportSize = {"width": 1280, "height": 900}

BORGES = "Ficciones (Borges, Jorge Luis)"
SACKS = "The Man Who Mistook His Wife for a Hat (Sacks, Oliver)"
ENTRIES = [
    Entry(BORGES, "Pensar es olvidar diferencias, es generalizar, abstraer.", location="412-414"),
    Entry(BORGES, "La memoria es el tesoro y la guardiana de todas las cosas.", location="380-381"),
    Entry(BORGES, "palimpsesto", location="500"),
    Entry(SACKS, "To think is to forget differences, to generalize, to abstract.", location="1520"),
    Entry(SACKS, "Our memory guards everything we have ever lived.", location="1530-1532"),
]
# A KOReader sidecar whose second highlight has no text: a problem line on its report.
SIDECAR = sidecar(
    "El motor callado", "Chidi Okonkwo", ["Las maquinas zumban cuando estan solas.", ""]
)
# Words of the pages that are the reader's, or the same in both languages: not leftovers.
OWN_WORDS = (
    "Ficciones", "Borges", "Sacks", "Oliver", "Man Who Mistook", "think is to forget",
    "memory guards", "palimpsesto", "lectora", "memoria", "El motor callado", "Okonkwo",
    "metadata.epub.lua", "My Clippings", "Exogram", "KOReader", "Kobo", "Apple Books",
    "Kindle", "Readwise", "Bookcision", "JSON", "CSV", "MCP", "API", "OK", "Español",
    "Pensar es olvidar", "Las maquinas",
)  # fmt: skip
# Said on every page a reader is signed in to, in English: none may be left.
NAV_ENGLISH = [
    r"(?<!/)\bLibrary\b(?!/)",
    r"\bSearch\b",
    r"\bImport\b",
    r"\bLog out\b",
    r"\bSettings\b",
]


def _english_left(text: str, patterns: list[str]) -> list[str]:
    return [p for p in patterns if re.search(p, text)]


@pytest.fixture
def contexts(browser: Browser) -> Iterator[dict[str, BrowserContext]]:
    made = {
        language: browser.new_context(locale=locale, viewport=DESKTOP, bypass_csp=True)
        for language, locale in (("es", "es-ES"), ("en", "en-GB"))
    }
    yield made
    for context in made.values():
        context.close()


def _sign_in(context: BrowserContext, base: str) -> Page:
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{base}/login/")
    page.locator("#id_username").fill("lectora")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("#id_password").press("Enter")
    page.wait_for_url(f"{base}/")
    return page


def _visible_lines(page: Page) -> list[str]:
    text: str = page.evaluate("() => document.body.innerText")
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


# English words that no Spanish sentence of the interface has.
_ENGLISH_WORDS = re.compile(
    r"\b(the|your|you|highlights?|notes?|with|from|this|and|of|is|are|not|been|will|books?)\b"
)


def _leftovers(spanish: list[str], english: list[str]) -> list[str]:
    """Lines the same in both languages, or with English words in them: words not
    translated, unless they are the reader's."""
    same = set(spanish) & set(english)
    mixed = {line for line in spanish if _ENGLISH_WORDS.search(line)}
    return sorted(
        line
        for line in same | mixed
        if len(re.findall(r"[A-Za-z]{2,}", line)) >= 2
        and not any(word.casefold() in line.casefold() for word in OWN_WORDS)
    )


def _library() -> dict[str, str]:
    reader = User.objects.create_user("lectora", password=PASSWORD, is_staff=True)
    mine = embedded_library(reader, *ENTRIES)
    think = mine["Pensar es olvidar diferencias, es generalizar, abstraer."]
    think.note = "Funes no podía pensar."
    think.save(update_fields=["note"])
    tag = Tag.objects.create(reader=reader, name="memoria")
    think.tags.add(tag)
    report = clippings_import(reader=reader, data=SIDECAR, file_name="metadata.epub.lua")
    library_map_refresh(reader=reader)
    borges = Book.objects.get(reader=reader, title="Ficciones")
    return {
        "highlight": think.get_absolute_url(),
        "book": borges.get_absolute_url(),
        "book_words": f"/books/{borges.code}/words/",
        "report": report.get_absolute_url(),
        "tag": f"/tags/{tag.name}/",
    }


def test_every_page_is_in_spanish_at_1280_px(
    contexts: dict[str, BrowserContext], live_server: object
) -> None:
    base = str(live_server)
    urls = _library()
    assert Highlight.objects.filter(embedding_status=Highlight.EmbeddingStatus.DONE).count() >= 5
    # path, the English the page is known for (none may be left), Spanish it must say
    signed_in = [
        ("home", "/", ["Your reading memory"], "Tu memoria de lectura"),
        ("import", "/import/", ["Import highlights"], "Importar subrayados"),
        ("import-report", urls["report"], ["a highlight without text", "Import of"],
         "anotación 2: un subrayado sin texto"),
        ("library", "/library/", ["Download your library"], "Descargar tu biblioteca:"),
        ("book", urls["book"], ["highlights", "Export"], "subrayados"),
        ("highlight", urls["highlight"], ["Your note", "Save note", "Add a tag"], "Tu nota"),
        ("connections", "/connections/", ["Connections"], "Conexiones"),
        ("search", "/search/?q=memoria", ["by words", "by meaning"], "memoria"),
        ("search-notice", "/search/?q=memoria+author:nadie", ["No book of yours matches"],
         "Ninguno de tus libros coincide con author:nadie."),
        ("map", "/map/", ["Map of your library", "Whole map"], "Mapa"),
        ("words", "/words/", ["Your words"], "palimpsesto"),
        ("book-words", urls["book_words"], ["Words from this book"], "palimpsesto"),
        ("review", "/review/", ["Daily review"], "Repaso diario"),
        ("review-words", "/review/words/", ["Words to review"], "Repaso"),
        ("review-settings", "/review/settings/", ["Review settings"], "Repaso"),
        ("tags", "/tags/", ["Tags"], "memoria"),
        ("tag", urls["tag"], ["Rename", "Delete"], "memoria"),
        ("settings", "/settings/", ["Language", "Save language"], "Ajustes"),
        ("api-tokens", "/settings/api-tokens/", ["API tokens"], "API"),
        ("password-change", "/settings/password/", ["Change your password"], "contraseña"),
        ("kindred", "/kindred/", ["Kindred readers"], "lector"),
        ("sharing", "/sharing/", ["Sharing"], "Compartir"),
        ("status", "/status/", ["The last backup", "Status"], "Estado"),
        ("export", "/export/?format=pdf", ["Export your library", "does not export"],
         "Exogram no exporta «pdf»"),
    ]  # fmt: skip
    signed_out = [
        ("login", "/login/", ["Log in", "Forgot your password"], "Iniciar sesión"),
        ("signup", "/signup/", ["Create your Exogram"], "Crea tu Exogram"),
        ("password-reset", "/password-reset/", ["Reset your password"], "contraseña"),
    ]
    SCREENS.mkdir(parents=True, exist_ok=True)
    english_left: dict[str, list[str]] = {}
    leftovers: dict[str, list[str]] = {}
    for signed, checks in ((False, signed_out), (True, signed_in)):
        # The pages of a reader who has not signed in are seen first, before signing in.
        visitors = {
            language: _sign_in(context, base) if signed else context.new_page()
            for language, context in contexts.items()
        }
        for name, path, english, spanish in checks:
            es, en = visitors["es"], visitors["en"]
            es.goto(f"{base}{path}")
            en.goto(f"{base}{path}")
            if name == "map":
                expect(es.locator("#map-canvas")).to_have_attribute(
                    "data-points", re.compile(r"\d")
                )
            es.screenshot(path=str(SCREENS / f"{name}.png"), full_page=True)
            text: str = es.evaluate("() => document.body.innerText")
            patterns = [rf"\b{re.escape(phrase)}\b" for phrase in english]
            if signed:
                patterns += NAV_ENGLISH
            left = _english_left(text, patterns)
            if left or spanish not in text:
                english_left[name] = left or [f"(no {spanish!r})"]
            same = _leftovers(_visible_lines(es), _visible_lines(en))
            if same:
                leftovers[name] = same
    (SCREENS / "leftovers.txt").write_text(
        "".join(f"{name}: {line}\n" for name, lines in leftovers.items() for line in lines)
    )
    assert english_left == {}
