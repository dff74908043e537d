import io
import json
import zipfile

import pytest
from django.http import HttpResponse, StreamingHttpResponse
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.models import Book, Highlight
from tests.books.exporting.library import build_library

SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}


def _name(response: HttpResponse | StreamingHttpResponse) -> str:
    """The downloaded file's name, once the download is read to its end (one export at a
    time: an unread one keeps the reader's slot)."""
    response.getvalue()
    disposition = response["Content-Disposition"]
    assert disposition.startswith('attachment; filename="'), disposition
    return disposition.removeprefix('attachment; filename="').removesuffix('"')


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
        assert len(zipfile.ZipFile(io.BytesIO(md.getvalue())).namelist()) == 3
        csv = alice_client.get(url, {"format": "csv"})
        assert csv.getvalue().startswith(b"\xef\xbb\xbfHighlight,Title,Author,Note,Location,Date")
        document = json.loads(alice_client.get(url, {"format": "json"}).getvalue())
        assert len(document["books"]) == 3

    def test_it_shows_the_formats_to_choose_from_without_one(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        # A typed or bookmarked /export/: a page of the site, not a bare 400.
        response = alice_client.get(reverse("library_export"))
        assert response.status_code == 200
        page = response.content.decode()
        assert 'id="main-nav"' in page
        assert "<h1>Export your library</h1>" in page
        url = reverse("library_export")
        for chosen, label in [
            ("md", "Markdown (a zip, one file per book)"),
            ("csv", "CSV (Readwise columns)"),
            ("json", "JSON (re-imports into Exogram)"),
        ]:
            assert f'<a href="{url}?format={chosen}" download>{label}</a>' in page
        assert "a favourite is tagged “favorite”, as Readwise marks its favourites" in page
        assert "does not export" not in page

    def test_it_shows_the_formats_in_spanish(self, alice: User, alice_client: Client) -> None:
        by_browser = alice_client.get(reverse("library_export"), headers=SPANISH)
        alice.language = "es"
        alice.save(update_fields=["language"])
        by_setting = alice_client.get(reverse("library_export"))
        for response in (by_browser, by_setting):
            page = response.content.decode()
            assert response.status_code == 200
            assert "<h1>Exportar tu biblioteca</h1>" in page
            assert "Descargar tu biblioteca:" in page
            assert "Markdown (un zip, un archivo por libro)</a>" in page
            assert "CSV (columnas de Readwise)</a>" in page
            assert "JSON (se vuelve a importar en Exogram)</a>" in page
            assert "un favorito lleva la etiqueta «favorite»" in page

    def test_it_refuses_an_unknown_format_on_the_same_page(self, alice_client: Client) -> None:
        response = alice_client.get(reverse("library_export"), {"format": "docx"})
        assert response.status_code == 400
        page = response.content.decode()
        assert "Exogram does not export “docx”: choose one of the formats below." in page
        assert f'href="{reverse("library_export")}?format=json"' in page
        spanish = alice_client.get(reverse("library_export"), {"format": "pdf"}, headers=SPANISH)
        assert spanish.status_code == 400
        assert "Exogram no exporta «pdf»" in spanish.content.decode()

    def test_it_escapes_the_format_it_names(self, alice_client: Client) -> None:
        response = alice_client.get(reverse("library_export"), {"format": "<b>md</b>"})
        assert response.status_code == 400
        assert "“&lt;b&gt;md&lt;/b&gt;”" in response.content.decode()

    def test_it_exports_only_the_readers_own_library(
        self, bob_client: Client, rows: dict[str, Highlight]
    ) -> None:
        document = json.loads(
            bob_client.get(reverse("library_export"), {"format": "json"}).getvalue()
        )
        assert document["books"] == []

    def test_it_sends_anonymous_visitors_to_log_in(self, client: Client) -> None:
        for query in ({"format": "csv"}, {}, {"format": "pdf"}):
            response = client.get(reverse("library_export"), query)
            assert response.status_code == 302
            assert response["Location"].startswith(reverse("login"))

    def test_its_page_shows_nothing_of_another_readers_library(
        self, bob_client: Client, rows: dict[str, Highlight]
    ) -> None:
        page = bob_client.get(reverse("library_export")).content.decode()
        assert "Ficciones" not in page
        assert str(rows["To"].book.code) not in page

    def test_the_library_page_links_to_each_format(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        page = alice_client.get(reverse("library")).getvalue().decode()
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
        day = timezone.localdate().isoformat()
        name = f"exogram-{day}-Ficciones - Borges, Jorge Luis.md"
        assert f'filename="{name}"' in response["Content-Disposition"]
        assert "He remembered every leaf" in response.getvalue().decode()
        assert "life-story" not in response.getvalue().decode()

    def test_every_format_of_one_book_is_named_the_same_way(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        url = reverse("book_export", args=[rows["To"].book.code])
        stem = f"exogram-{timezone.localdate().isoformat()}-Ficciones - Borges, Jorge Luis"
        for chosen in ("md", "csv", "json"):
            assert _name(alice_client.get(url, {"format": chosen})) == f"{stem}.{chosen}"

    def test_a_title_never_brings_control_characters_or_folders_into_a_name(
        self, alice: User, alice_client: Client
    ) -> None:
        """A right-to-left override turns `1984 gpj.exe` into what reads as `1984 exe.jpg`;
        a slash would make a folder of the zip's entry (what is left of `..` is no path)."""
        title = "1984\u202egpj.exe/..\\x\u2066\x07y"
        book = Book.objects.create(reader=alice, title=title, key="rtl")
        Highlight.objects.create(reader=alice, book=book, text="War is peace.", dedupe_key="1")
        url = reverse("book_export", args=[book.code])
        day = timezone.localdate().isoformat()
        for chosen in ("md", "json"):
            name = _name(alice_client.get(url, {"format": chosen}))
            assert name == f"exogram-{day}-1984 gpj.exe .. x y.{chosen}"
        zipped = alice_client.get(reverse("library_export"), {"format": "md"}).getvalue()
        assert zipfile.ZipFile(io.BytesIO(zipped)).namelist() == ["1984 gpj.exe .. x y.md"]

    def test_it_downloads_one_book_as_csv_and_json(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        url = reverse("book_export", args=[rows["To"].book.code])
        csv = alice_client.get(url, {"format": "csv"}).getvalue().decode("utf-8-sig")
        # The header and the book's two highlights: its note rides on one of them.
        assert csv.count("\r\n") == 3
        document = json.loads(alice_client.get(url, {"format": "json"}).getvalue())
        assert [b["title"] for b in document["books"]] == ["Ficciones"]

    def test_it_shows_the_formats_for_the_book_without_one(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        book = rows["To"].book
        url = reverse("book_export", args=[book.code])
        response = alice_client.get(url)
        assert response.status_code == 200
        page = response.content.decode()
        assert 'id="main-nav"' in page
        assert "<h1>Export Ficciones</h1>" in page
        assert f'<a href="{book.get_absolute_url()}">Back to the book</a>' in page
        assert "Download this book:" in page
        # One book's Markdown is one file, not the library's zip.
        assert f'<a href="{url}?format=md" download>Markdown (one file)</a>' in page
        assert f'<a href="{url}?format=csv" download>CSV (Readwise columns)</a>' in page
        assert f'<a href="{url}?format=json" download>JSON (re-imports into Exogram)</a>' in page
        spanish = alice_client.get(url, headers=SPANISH).content.decode()
        assert "<h1>Exportar Ficciones</h1>" in spanish
        assert "Markdown (un archivo)</a>" in spanish

    def test_it_refuses_an_unknown_format_for_the_book_on_the_same_page(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        url = reverse("book_export", args=[rows["To"].book.code])
        response = alice_client.get(url, {"format": "epub"})
        assert response.status_code == 400
        page = response.content.decode()
        assert "Exogram does not export “epub”" in page
        assert "<h1>Export Ficciones</h1>" in page
        assert f'href="{url}?format=md"' in page

    def test_it_is_not_found_for_another_reader(
        self, bob_client: Client, rows: dict[str, Highlight]
    ) -> None:
        url = reverse("book_export", args=[rows["To"].book.code])
        for query in ({"format": "md"}, {}, {"format": "pdf"}):
            response = bob_client.get(url, query)
            assert response.status_code == 404
            assert "Ficciones" not in response.content.decode()

    def test_it_sends_anonymous_visitors_to_log_in(
        self, client: Client, rows: dict[str, Highlight]
    ) -> None:
        url = reverse("book_export", args=[rows["To"].book.code])
        for query in ({"format": "md"}, {}, {"format": "pdf"}):
            response = client.get(url, query)
            assert response.status_code == 302
            assert response["Location"].startswith(reverse("login"))

    def test_the_book_page_links_to_each_format(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        book = rows["To"].book
        page = alice_client.get(book.get_absolute_url()).getvalue().decode()
        for chosen in ("md", "csv", "json"):
            assert f'href="{reverse("book_export", args=[book.code])}?format={chosen}"' in page


@pytest.mark.django_db
class StreamedExportTests:
    def test_it_streams_the_library_a_book_at_a_time(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        for chosen in ("md", "csv", "json"):
            response = alice_client.get(reverse("library_export"), {"format": chosen})
            assert response.streaming
            chunks = [chunk for chunk in response.streaming_content if chunk]
            # A head, one chunk per book (three), a tail: never the whole file at once.
            assert len(chunks) >= 3
        document = json.loads(b"".join(chunks))
        assert [b["title"] for b in document["books"]] == sorted(
            b["title"] for b in document["books"]
        )
        assert document["format"] == "exogram"

    def test_the_streamed_files_are_the_files_the_command_writes(
        self, alice: User, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        from books.exporting.services import library_export

        for chosen in ("csv", "json"):
            streamed = alice_client.get(reverse("library_export"), {"format": chosen})
            written = library_export(reader=alice, format=chosen).data
            if chosen == "json":
                streamed_doc = json.loads(streamed.getvalue())
                written_doc = json.loads(written)
                streamed_doc.pop("exported_at")
                written_doc.pop("exported_at")
                assert streamed_doc == written_doc
            else:
                assert streamed.getvalue() == written
        archive = zipfile.ZipFile(
            io.BytesIO(alice_client.get(reverse("library_export"), {"format": "md"}).getvalue())
        )
        assert archive.testzip() is None
        assert len(archive.namelist()) == 3

    def test_it_allows_one_export_at_a_time_per_reader(
        self, alice_client: Client, bob_client: Client, rows: dict[str, Highlight]
    ) -> None:
        first = alice_client.get(reverse("library_export"), {"format": "json"})
        chunks = iter(first.streaming_content)
        next(chunks)  # under way: its head is sent, the books are not
        second = alice_client.get(reverse("library_export"), {"format": "csv"})
        assert second.status_code == 429
        assert second["Retry-After"]
        assert "still being prepared" in second.content.decode()
        # Another reader is not held up by alice's export.
        assert bob_client.get(reverse("library_export"), {"format": "csv"}).status_code == 200
        list(chunks)  # the first one finishes ...
        # ... and gives its turn back.
        third = alice_client.get(reverse("library_export"), {"format": "csv"})
        assert third.status_code == 200
        third.getvalue()

    def test_an_abandoned_download_gives_its_turn_back(
        self, alice_client: Client, rows: dict[str, Highlight]
    ) -> None:
        first = alice_client.get(reverse("library_export"), {"format": "md"})
        next(iter(first.streaming_content))
        # The client went away: its chunks are abandoned, which closes them (through the
        # test client's wrapper, which keeps the test's database connection open).
        first._iterator.close()  # type: ignore[attr-defined]
        assert alice_client.get(reverse("library_export"), {"format": "md"}).status_code == 200
