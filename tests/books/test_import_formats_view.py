"""The upload page takes every format and tells them apart by content, not by name."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from accounts.models import User
from books.models import Highlight, Import

FIXTURES = Path(__file__).parent / "importing" / "fixtures"
# Each fixture, and how many highlights and notes its import keeps.
KEPT = {
    "notebook_desktop.html": 3,
    "notebook_mobile.html": 3,
    "notebook_zh.html": 2,
    "notebook_es.html": 1,
    "readwise.csv": 5,
    "readwise_semicolon.csv": 1,
    "bookcision.json": 3,
    "exogram.json": 2,
    "en_classic.txt": None,  # as many as the clippings parser reads
}


@pytest.mark.django_db
class UploadFormatsTests:
    @pytest.mark.parametrize("name", sorted(KEPT))
    def test_it_imports_each_format_under_a_misleading_name(
        self, alice_client: Client, alice: User, name: str
    ) -> None:
        upload = SimpleUploadedFile("My Clippings.txt", (FIXTURES / name).read_bytes())
        response = alice_client.post(reverse("import"), {"file": upload})
        the_import = Import.objects.get(reader=alice)
        assert response.status_code == 302, response.content.decode()[:500]
        assert response["Location"] == the_import.get_absolute_url()
        kept = Highlight.objects.filter(reader=alice).count()
        assert kept > 0
        if KEPT[name] is not None:
            assert kept == KEPT[name]
        report = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert f'<td class="n">{the_import.counts["new_highlights"]}</td>' in report

    def test_it_explains_json_it_does_not_know(self, alice_client: Client, alice: User) -> None:
        upload = SimpleUploadedFile("highlights.json", b'{"hello": "world"}')
        response = alice_client.post(reverse("import"), {"file": upload})
        assert response.status_code == 200
        assert "neither an Exogram export" in response.content.decode()
        assert not Highlight.objects.filter(reader=alice).exists()

    def test_it_explains_html_that_is_not_a_notebook(self, alice_client: Client) -> None:
        upload = SimpleUploadedFile("notebook.html", b'<html><div class="bookTitle">T</div></html>')
        response = alice_client.post(reverse("import"), {"file": upload})
        assert "not a Kindle notebook export" in response.content.decode()

    def test_it_shows_tags_and_favourites_in_the_report(
        self, alice_client: Client, alice: User
    ) -> None:
        upload = SimpleUploadedFile("x", (FIXTURES / "exogram.json").read_bytes())
        alice_client.post(reverse("import"), {"file": upload})
        report = alice_client.get(Import.objects.get(reader=alice).get_absolute_url())
        assert "Tags added" in report.content.decode()
        assert (
            escape("'The Quiet Engine', highlight 3: a location must be a whole number, not 'ten'")
            in report.content.decode()
        )
