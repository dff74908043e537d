"""A Spanish-speaking reader, in a real browser whose locale is es-ES: import, a highlight
page, search and the daily review, every step in Spanish."""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from books.models import Highlight
from tests.books.kindle import Entry, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.pages import assert_accessible, import_answered, open_account_menu, snapshot

BORGES = "Ficciones (Borges, Jorge Luis)"
SACKS = "The Man Who Mistook His Wife for a Hat (Sacks, Oliver)"
LIBRARY = [
    Entry(BORGES, "Pensar es olvidar diferencias, es generalizar, abstraer.", location="412-414"),
    Entry(BORGES, "La memoria es el tesoro y la guardiana de todas las cosas.", location="380-381"),
    Entry(
        SACKS,
        "To think is to forget differences; to generalize; to make abstractions.",
        location="1520-1522",
    ),
    Entry(SACKS, "Our memory guards everything we have ever lived.", location="1530-1532"),
]
TIMEOUT = 120_000  # ms: the first embedding batch waits for the worker to load the model


@pytest.fixture
def spanish_page(browser: Browser) -> Iterator[Page]:
    # The browser's locale sets its Accept-Language: the reader has chosen nothing yet.
    context = browser.new_context(locale="es-ES", bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


@pytest.mark.usefixtures("worker")
def test_a_spanish_reader_imports_reads_searches_and_reviews(
    spanish_page: Page, live_server: object, tmp_path: Path, axe_source: str
) -> None:
    page = spanish_page
    base = str(live_server)
    page.goto(f"{base}/signup/")
    expect(page.get_by_role("heading", name="Crea tu Exogram")).to_be_visible()
    assert page.locator("html").get_attribute("lang") == "es"
    snapshot(page, "es-01-signup")
    page.locator("#id_username").fill("lectora")
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Crear cuenta").click()
    expect(page.get_by_text("Tu biblioteca está vacía.")).to_be_visible()
    expect(page.get_by_text("Te damos la bienvenida a Exogram, lectora.")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "es-02-home-empty")

    # Import
    clippings = tmp_path / "My Clippings.txt"
    clippings.write_bytes(clippings_file(*LIBRARY))
    page.get_by_role("link", name="Importar", exact=True).click()
    expect(page.get_by_role("heading", name="Importar subrayados")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "es-03-import")
    page.get_by_label("Suelta aquí tus archivos de subrayados o elígelos:").set_input_files(
        clippings
    )
    page.get_by_role("button", name="Importar", exact=True).click()
    import_answered(page)
    expect(page.get_by_role("heading", name="Importación de My Clippings.txt")).to_be_visible()
    expect(
        page.get_by_text(
            "Todo listo con 4 subrayados: ya cuentan para las conexiones y la búsqueda por "
            "significado."
        )
    ).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text(re.compile(r"Esta importación ha creado \d+ conexi"))).to_be_visible(
        timeout=TIMEOUT
    )
    assert_accessible(page, axe_source)
    snapshot(page, "es-04-import-report")

    page.get_by_role("link", name="Biblioteca", exact=True).click()
    expect(page.get_by_text("Descargar tu biblioteca:")).to_be_visible()
    snapshot(page, "es-05-library")

    # A highlight page: its connection, a note and a tag, in Spanish
    think = Highlight.objects.get(text__startswith="Pensar es olvidar")
    page.goto(f"{base}{think.get_absolute_url()}")
    expect(page.get_by_role("heading", name="Tu nota")).to_be_visible()
    expect(page.locator("section.connections").get_by_text("to make abstractions")).to_be_visible()
    page.get_by_role("textbox", name="Tu nota").fill("Funes no podía pensar.")
    page.get_by_role("button", name="Guardar nota").click()
    expect(page.get_by_text("Nota guardada.")).to_be_visible()
    page.get_by_label("Añadir una etiqueta").fill("memoria")
    page.get_by_role("button", name="Añadir", exact=True).click()
    expect(page.get_by_text("Etiquetado como «memoria».")).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "es-06-highlight")

    # Search, by words and by meaning
    page.get_by_role("link", name="Buscar", exact=True).click()
    expect(
        page.get_by_text("Busca en tus subrayados por palabras o por significado.")
    ).to_be_visible()
    page.locator("#search-q").fill("memorias")
    page.keyboard.press("Enter")
    results = page.locator("#results")
    expect(results.get_by_text("La memoria es el tesoro")).to_be_visible()
    expect(
        results.get_by_text(re.compile(r"\d+ (subrayados?|coincidencias? cercanas?)\s+por"))
    ).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "es-07-search")

    # The daily review
    page.get_by_role("link", name="Repaso", exact=True).click()
    expect(page.get_by_role("heading", name="Repaso diario")).to_be_visible()
    snapshot(page, "es-08-review")
    page.get_by_role("button", name="Conservar").first.click()
    expect(page.get_by_text(re.compile(r"Conservado\. Vuelve el \d+ \w+ \d{4}\."))).to_be_visible()
    assert_accessible(page, axe_source)
    snapshot(page, "es-09-review-answered")

    # The reader's own setting, then English again
    open_account_menu(page)
    page.get_by_role("link", name="Ajustes", exact=True).click()
    expect(page.get_by_role("heading", name="Ajustes", exact=True)).to_be_visible()
    snapshot(page, "es-10-settings")
    page.get_by_label("Idioma").select_option("en")
    page.get_by_role("button", name="Guardar idioma").click()
    expect(page.get_by_text("Language saved.")).to_be_visible()
    expect(page.get_by_role("heading", name="Settings", exact=True)).to_be_visible()
