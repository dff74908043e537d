"""A KOReader reader drops several sidecars on the import page at once: each is imported,
with its own report, and Past imports lists each beside its book."""

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from books.models import Book, Import
from tests.books.importing.devices import sidecar
from tests.books.kindle import MEMORY_LIBRARY, clippings_file
from tests.conftest import PASSWORD
from tests.e2e.pages import log_in


def _sidecar(title: str) -> str:
    """One book's KOReader sidecar: what a reader drops, one file a book."""
    return sidecar(title, "Chidi Okonkwo", [f"A sentence of {title}."]).decode()


@pytest.mark.django_db(transaction=True)
def test_dropping_two_sidecars_imports_both(page: Page, live_server: object) -> None:
    reader = User.objects.create_user("reader", password=PASSWORD)
    base = str(live_server)
    page.set_default_timeout(30_000)
    log_in(page, base, reader.username)
    page.goto(f"{base}/import/")
    files = [
        {"name": "metadata.epub.lua", "text": _sidecar("The Quiet Engine")},
        {"name": "metadata.epub.lua", "text": _sidecar("Harbour Lights")},
    ]
    dropped = page.evaluate_handle(
        """(files) => {
            const transfer = new DataTransfer();
            for (const file of files) {
                transfer.items.add(new File([file.text], file.name, {type: "text/plain"}));
            }
            return transfer;
        }""",
        files,
    )
    page.locator("#dropzone").dispatch_event("drop", {"dataTransfer": dropped})

    expect(page.get_by_text("Imported metadata.epub.lua: 1 new highlight.")).to_have_count(
        2, timeout=30_000
    )
    rows = page.locator("table.imports tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="The Quiet Engine")).to_have_count(1)
    expect(rows.filter(has_text="Harbour Lights")).to_have_count(1)
    assert Import.objects.filter(reader=reader, status=Import.Status.DONE).count() == 2
    assert sorted(Book.objects.filter(reader=reader).values_list("title", flat=True)) == [
        "Harbour Lights",
        "The Quiet Engine",
    ]


@pytest.mark.django_db(transaction=True)
def test_one_file_over_the_limit_refuses_only_itself(
    page: Page, live_server: object, settings: Any
) -> None:
    # The page sends each file alone (static/js/upload.js): the 2 MB file is never sent,
    # refused by its name with the limit, and the two sidecars are imported.
    settings.EXOGRAM_MAX_UPLOAD_MB = 1
    reader = User.objects.create_user("reader", password=PASSWORD)
    base = str(live_server)
    page.set_default_timeout(30_000)
    log_in(page, base, reader.username)
    page.goto(f"{base}/import/")
    files = [
        {"name": "quiet.lua", "text": _sidecar("The Quiet Engine")},
        {"name": "big.txt", "text": "x" * (2 * 1024 * 1024)},
        {"name": "harbour.lua", "text": _sidecar("Harbour Lights")},
    ]
    dropped = page.evaluate_handle(
        """(files) => {
            const transfer = new DataTransfer();
            for (const file of files) {
                transfer.items.add(new File([file.text], file.name, {type: "text/plain"}));
            }
            return transfer;
        }""",
        files,
    )
    page.locator("#dropzone").dispatch_event("drop", {"dataTransfer": dropped})

    expect(page.get_by_text("Imported quiet.lua: 1 new highlight.")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Imported harbour.lua: 1 new highlight.")).to_be_visible()
    expect(
        page.get_by_text("big.txt was not imported. The file is 2 MB; the limit is 1 MB.")
    ).to_be_visible()
    refused = page.locator("table.imports tbody tr", has_text="big.txt")
    expect(refused).to_contain_text("Refused: nothing added")
    expect(refused).to_contain_text("The file is 2 MB; the limit is 1 MB.")
    statuses = dict(Import.objects.filter(reader=reader).values_list("file_name", "status"))
    assert statuses == {"quiet.lua": "done", "harbour.lua": "done", "big.txt": "refused"}


@pytest.mark.django_db(transaction=True)
def test_each_files_message_says_what_came_and_what_could_not_be_read(
    page: Page, live_server: object
) -> None:
    # The walk of 2026-12-07: a file with two broken entries in the middle was said as
    # "Imported broken_middle.txt." and listed as "Done".
    reader = User.objects.create_user("reader", password=PASSWORD)
    base = str(live_server)
    page.set_default_timeout(30_000)
    log_in(page, base, reader.username)
    page.goto(f"{base}/import/")
    broken = "Ficciones (Borges)\r\n- not metadata\r\n\r\nlost\r\n==========\r\n"
    first = clippings_file(*MEMORY_LIBRARY[:2]).decode("utf-8-sig")
    files = [
        {"name": "broken_middle.txt", "text": first + broken * 2 + first.replace("Ficciones", "F")},
        {"name": "metadata.epub.lua", "text": _sidecar("Harbour Lights")},
    ]
    dropped = page.evaluate_handle(
        """(files) => {
            const transfer = new DataTransfer();
            for (const file of files) {
                transfer.items.add(new File([file.text], file.name, {type: "text/plain"}));
            }
            return transfer;
        }""",
        files,
    )
    page.locator("#dropzone").dispatch_event("drop", {"dataTransfer": dropped})

    expect(
        page.get_by_text(
            "Imported broken_middle.txt: 4 new highlights; 2 entries could not be read "
            "(see the report)."
        )
    ).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Imported metadata.epub.lua: 1 new highlight.")).to_be_visible()
    row = page.locator("table.imports tbody tr", has_text="broken_middle.txt")
    expect(row.locator("td").nth(2)).to_have_text("Done, 2 entries not read")
    row.get_by_role("link", name="2 entries not read").click()
    expect(page.locator("#unread")).to_have_text("2 entries could not be read")
