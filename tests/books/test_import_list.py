"""Past imports: every KOReader sidecar is called "metadata.epub.lua"; the list says which
book each one held."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Import
from tests.books.importing.devices import sidecar
from tests.books.kindle import Entry, clippings_file


def _sidecar(title: str) -> bytes:
    """One book's KOReader sidecar: what a reader drops, one file a book."""
    return sidecar(title, "Chidi Okonkwo", [f"A sentence of {title}."])


def _rows(client: Client) -> list[str]:
    page = client.get(reverse("import")).content.decode()
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    # The first cell of each row: the file, and its books.
    cells = [row.split("</td>")[0] for row in body.split("<tr>")[1:]]
    return [re.sub(r"\s+", " ", re.sub("<[^>]+>", "", cell)).strip() for cell in cells]


@pytest.mark.django_db
class PastImportsTests:
    def test_it_names_the_book_beside_each_sidecar(self, alice: User, alice_client: Client) -> None:
        for title in ("The Quiet Engine", "Harbour Lights"):
            clippings_import(reader=alice, data=_sidecar(title), file_name="metadata.epub.lua")
        # Again: nothing new, still its book.
        clippings_import(
            reader=alice, data=_sidecar("Harbour Lights"), file_name="metadata.epub.lua"
        )

        rows = _rows(alice_client)

        assert rows == [
            "metadata.epub.lua · Harbour Lights",
            "metadata.epub.lua · Harbour Lights",
            "metadata.epub.lua · The Quiet Engine",
        ]

    def test_an_import_kept_before_titles_were_recorded_names_its_books(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = clippings_import(
            reader=alice, data=_sidecar("The Quiet Engine"), file_name="metadata.epub.lua"
        )
        counts = {k: v for k, v in the_import.counts.items() if k != "book_titles"}
        Import.objects.filter(pk=the_import.pk).update(counts=counts)

        assert _rows(alice_client) == ["metadata.epub.lua · The Quiet Engine"]


def _growing(*books: str) -> bytes:
    """A My Clippings.txt that grows: a highlight for each book named, in order."""
    return clippings_file(
        *(
            Entry(f"{title} (Okonkwo, Chidi)", f"Passage {n} of {title}.", location=f"{n}")
            for n, title in enumerate(books, start=1)
        )
    )


@pytest.mark.django_db
class GrowingFileTests:
    """Every import of a growing My Clippings.txt listed the same first three titles of the
    file; each names the books it changed."""

    def test_each_import_names_the_books_it_changed(
        self, alice: User, alice_client: Client
    ) -> None:
        first = ["Atlas", "Borders", "Cinder", "Drift"]
        clippings_import(reader=alice, data=_growing(*first), file_name="My Clippings.txt")
        clippings_import(
            reader=alice, data=_growing(*first, "Zephyr"), file_name="My Clippings.txt"
        )
        clippings_import(
            reader=alice,
            data=_growing(*first, "Zephyr", "Yarrow", "Quay", "Drift"),
            file_name="My Clippings.txt",
        )
        # The same file again: nothing changed, so the file's books.
        clippings_import(
            reader=alice,
            data=_growing(*first, "Zephyr", "Yarrow", "Quay", "Drift"),
            file_name="My Clippings.txt",
        )

        assert _rows(alice_client) == [
            "My Clippings.txt · 7 books: Atlas, Borders, Cinder, …",
            "My Clippings.txt · 3 books: Drift, Quay, Yarrow",
            "My Clippings.txt · Zephyr",
            "My Clippings.txt · 4 books: Atlas, Borders, Cinder, …",
        ]
        spanish = alice_client.get(reverse("import"), headers={"Accept-Language": "es"})
        assert "· 3 libros: Drift, Quay, Yarrow" in spanish.content.decode()

    def test_the_list_reads_as_many_queries_for_seven_imports_as_for_one(
        self, alice: User, alice_client: Client
    ) -> None:
        def queries() -> int:
            with CaptureQueriesContext(connection) as captured:
                alice_client.get(reverse("import"))
            return len(captured)

        clippings_import(reader=alice, data=_growing("Book 0"), file_name="My Clippings.txt")
        one = queries()
        for n in range(2, 8):
            books = [f"Book {i}" for i in range(n)]
            clippings_import(reader=alice, data=_growing(*books), file_name="My Clippings.txt")
        assert queries() == one


@pytest.mark.django_db
class SeveralFilesTests:
    def test_each_file_is_its_own_import_and_a_refused_one_is_named(
        self, alice: User, alice_client: Client
    ) -> None:
        files = [
            SimpleUploadedFile("metadata.epub.lua", _sidecar("The Quiet Engine")),
            SimpleUploadedFile("picture.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 40),
            SimpleUploadedFile("metadata.epub.lua", _sidecar("Harbour Lights")),
        ]

        response = alice_client.post(reverse("import"), {"file": files}, follow=True)

        page = response.content.decode()
        assert page.count("Imported metadata.epub.lua: 1 new highlight.") == 2
        assert "picture.txt was not imported. This file is an image (PNG)" in page
        assert _rows(alice_client) == [
            "metadata.epub.lua · Harbour Lights",
            "picture.txt",  # refused, nothing added (tests/books/test_import_refusals.py)
            "metadata.epub.lua · The Quiet Engine",
        ]

    def test_it_is_said_in_spanish(self, alice: User, alice_client: Client) -> None:
        files = [
            SimpleUploadedFile("a.lua", _sidecar("The Quiet Engine")),
            SimpleUploadedFile("picture.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 40),
        ]
        response = alice_client.post(
            reverse("import"), {"file": files}, follow=True, HTTP_ACCEPT_LANGUAGE="es"
        )
        assert "picture.txt no se ha importado. Este archivo es una imagen (PNG)" in (
            response.content.decode()
        )


@pytest.mark.django_db
class PastImportsPagesTests:
    def test_older_imports_are_on_the_next_pages(self, alice: User, alice_client: Client) -> None:
        # One re-upload of 26 files pushed every import that had added highlights off the
        # list of the latest 20: its report, and "delete what an import added", were lost.
        added = clippings_import(reader=alice, data=_sidecar("Harbour Lights"), file_name="a.lua")
        for n in range(26):
            clippings_import(reader=alice, data=_sidecar("Harbour Lights"), file_name=f"{n}.lua")

        first = alice_client.get(reverse("import")).content.decode()
        second = alice_client.get(reverse("import") + "?page=2").content.decode()

        assert len(_rows(alice_client)) == 20
        assert added.get_absolute_url() not in first
        assert 'href="?page=2"' in first
        assert added.get_absolute_url() in second
        assert 'href="?page=1"' in second
        assert "Page 2 of 2" in second

    def test_a_few_imports_are_one_page(self, alice: User, alice_client: Client) -> None:
        clippings_import(reader=alice, data=_sidecar("Harbour Lights"), file_name="a.lua")
        page = alice_client.get(reverse("import")).content.decode()
        assert 'class="pagination"' not in page
