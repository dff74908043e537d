import io
import json
import zipfile

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.models import Highlight
from tests.books.exporting.library import build_library


@pytest.fixture
def rows(alice: User) -> dict[str, Highlight]:
    return build_library(alice)


@pytest.mark.django_db
class LibraryDownloadTests:
    def test_it_downloads_the_library_in_each_format(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        url = reverse("library_export")
        md = alice_client.get(url, {"format": "md"})
        assert md.status_code == 200
        assert md["Content-Type"] == "application/zip"
        assert md["Content-Disposition"].startswith('attachment; filename="exogram-')
        assert md["Cache-Control"] == "private, no-store"
        assert len(zipfile.ZipFile(io.BytesIO(md.content)).namelist()) == 3
        csv = alice_client.get(url, {"format": "csv"})
        assert csv.content.startswith(b"\xef\xbb\xbfHighlight,Title,Author,Note,Location,Date")
        document = json.loads(alice_client.get(url, {"format": "json"}).content)
        assert len(document["books"]) == 3

    def test_it_refuses_an_unknown_format(self, alice_client: Client) -> None:
        response = alice_client.get(reverse("library_export"), {"format": "docx"})
        assert response.status_code == 400
        assert b"md, csv, json" in response.content

    def test_it_exports_only_the_readers_own_library(
        self, bob_client: Client, rows: dict[str, Highlight]
    ) -> None:
        document = json.loads(bob_client.get(reverse("library_export"), {"format": "json"}).content)
        assert document["books"] == []

    def test_it_sends_anonymous_visitors_to_log_in(self, client: Client) -> None:
        response = client.get(reverse("library_export"), {"format": "csv"})
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))

    def test_the_library_page_links_to_each_format(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        page = alice_client.get(reverse("library")).content.decode()
        for chosen in ("md", "csv", "json"):
            assert f'href="{reverse("library_export")}?format={chosen}"' in page


@pytest.mark.django_db
class BookDownloadTests:
    def test_it_downloads_one_book_as_markdown(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        book = rows["To"].book
        response = alice_client.get(reverse("book_export", args=[book.code]), {"format": "md"})
        assert response.status_code == 200
        assert response["Content-Type"] == "text/markdown; charset=utf-8"
        assert 'filename="Ficciones - Borges, Jorge Luis.md"' in response["Content-Disposition"]
        assert "He remembered every leaf" in response.content.decode()
        assert "life-story" not in response.content.decode()

    def test_it_downloads_one_book_as_csv_and_json(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        url = reverse("book_export", args=[rows["To"].book.code])
        csv = alice_client.get(url, {"format": "csv"}).content.decode("utf-8-sig")
        # The header and the book's two highlights: its note rides on one of them.
        assert csv.count("\r\n") == 3
        document = json.loads(alice_client.get(url, {"format": "json"}).content)
        assert [b["title"] for b in document["books"]] == ["Ficciones"]

    def test_it_is_not_found_for_another_reader(
        self, bob_client: Client, rows: dict[str, Highlight]
    ) -> None:
        url = reverse("book_export", args=[rows["To"].book.code])
        assert bob_client.get(url, {"format": "md"}).status_code == 404

    def test_it_sends_anonymous_visitors_to_log_in(
        self, client: Client, rows: dict[str, Highlight]
    ) -> None:
        response = client.get(reverse("book_export", args=[rows["To"].book.code]), {"format": "md"})
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))

    def test_the_book_page_links_to_each_format(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        book = rows["To"].book
        page = alice_client.get(book.get_absolute_url()).content.decode()
        for chosen in ("md", "csv", "json"):
            assert f'href="{reverse("book_export", args=[book.code])}?format={chosen}"' in page
