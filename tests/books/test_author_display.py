"""Authors read tidily wherever a page or a reading export shows them ("Nir Eyal;" reads
"Nir Eyal"), while the field keeps what the file wrote and the JSON export carries it."""

import csv
import io
import json
import zipfile

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.exporting.services import library_export
from books.importing.identity import display_authors, normalize_author
from tests.books.library import book_of, highlight_in

# (as a Kindle wrote it, as a page shows it): fields of the shared corpus.
SHOWN = [
    ("Nir Eyal;", "Nir Eyal"),
    ("Thomas J. Stanley;William D. Danko", "Thomas J. Stanley; William D. Danko"),
    ("Beauvoir de,Simone", "Beauvoir de, Simone"),
    ("Berkun  Scott", "Berkun Scott"),
    ("Seneca,", "Seneca"),
    ("Richard P. Feynman and Ralph Leighton", "Richard P. Feynman; Ralph Leighton"),
    ("Isaacson, Walter", "Isaacson, Walter"),
    ("José Ortega y Gasset", "José Ortega y Gasset"),
    ("中島\u3000岳志", "中島\u3000岳志"),
    (";", ""),
]


class DisplayAuthorsTests:
    @pytest.mark.parametrize(("written", "shown"), SHOWN)
    def test_it_tidies_the_separators(self, written: str, shown: str) -> None:
        assert display_authors(written) == shown

    @pytest.mark.parametrize(("written", "shown"), SHOWN)
    def test_it_names_the_same_people_as_the_field(self, written: str, shown: str) -> None:
        # A tidy field read back (a CSV or Markdown export imported again) is the same author.
        assert normalize_author(shown) == normalize_author(written)


@pytest.fixture
def stanley(alice: User) -> str:
    book = book_of(alice, "The Millionaire Next Door", "Thomas J. Stanley;William D. Danko")
    highlight_in(book, "Wealth is what you accumulate, not what you spend.", location=10)
    return str(book.code)


@pytest.mark.django_db
class AuthorsOnPagesTests:
    def test_the_library_shows_the_authors_tidily(self, alice_client: Client, stanley: str) -> None:
        page = alice_client.get(reverse("library")).content.decode()
        assert "Thomas J. Stanley; William D. Danko" in page
        assert "Stanley;William" not in page

    def test_the_library_by_author_heads_each_group_tidily(
        self, alice_client: Client, stanley: str
    ) -> None:
        page = alice_client.get(reverse("library"), {"sort": "author"}).content.decode()
        assert '<h2 class="author-group">Thomas J. Stanley; William D. Danko</h2>' in page

    def test_the_book_page_shows_the_authors_tidily(
        self, alice_client: Client, stanley: str
    ) -> None:
        page = alice_client.get(reverse("book", args=[stanley])).content.decode()
        assert "Thomas J. Stanley; William D. Danko" in page
        assert "Stanley;William" not in page

    def test_the_search_pages_author_list_offers_them_tidily(
        self, alice_client: Client, stanley: str
    ) -> None:
        page = alice_client.get(reverse("search")).content.decode()
        assert '<option value="Thomas J. Stanley; William D. Danko">' in page

    def test_the_sharing_page_names_each_book_with_its_authors_tidily(
        self, alice_client: Client, stanley: str
    ) -> None:
        page = alice_client.get(reverse("sharing_settings")).content.decode()
        assert "The Millionaire Next Door (Thomas J. Stanley; William D. Danko)" in page

    def test_the_field_keeps_what_the_file_wrote(self, alice: User, stanley: str) -> None:
        book = alice.books.get()
        assert book.authors == "Thomas J. Stanley;William D. Danko"


@pytest.mark.django_db
class AuthorsInExportsTests:
    def test_markdown_shows_them_tidily(self, alice: User, stanley: str) -> None:
        export = library_export(reader=alice, format="md")
        with zipfile.ZipFile(io.BytesIO(export.data)) as archive:
            [name] = archive.namelist()
            text = archive.read(name).decode()
        assert name == "The Millionaire Next Door - Thomas J. Stanley; William D. Danko.md"
        assert 'author: "Thomas J. Stanley; William D. Danko"' in text

    def test_the_csv_shows_them_tidily(self, alice: User, stanley: str) -> None:
        export = library_export(reader=alice, format="csv")
        rows = list(csv.DictReader(io.StringIO(export.data.decode("utf-8-sig"))))
        assert [row["Author"] for row in rows] == ["Thomas J. Stanley; William D. Danko"]

    def test_the_json_keeps_the_field_as_written(self, alice: User, stanley: str) -> None:
        export = library_export(reader=alice, format="json")
        [book] = json.loads(export.data)["books"]
        assert book["authors"] == "Thomas J. Stanley;William D. Danko"
