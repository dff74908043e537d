"""A file the import page refuses stays in Past imports, marked refused, with its name, when
and why, and nothing of its content; one bad file of several refuses only itself."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.urls import reverse

from accounts.models import User
from books.importing.upload import FILE_BINARY, FILE_EMPTY, FORMATS_READ
from books.models import Highlight, Import, ImportUpload
from tests.books.importing.devices import EMPTY_SIDECAR, sidecar

PICTURE = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 40
BINARY = b"\x01\x02\x03\x04\x05\x06\x07\x08" * 40
MEGABYTE = 1024 * 1024


def _sidecar(title: str) -> bytes:
    return sidecar(title, "Chidi Okonkwo", [f"A sentence of {title}."])


def _rows(client: Client) -> list[str]:
    """Past imports, a row a line: its file, when, its status, how many new."""
    page = client.get(reverse("import")).content.decode()
    if "<tbody>" not in page:
        return []
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    rows = [re.sub("<[^>]+>", " ", row) for row in body.split("<tr>")[1:]]
    return [re.sub(r"\s+", " ", row).strip() for row in rows]


def _refused(client: Client) -> list[str]:
    return [row for row in _rows(client) if "Refused: nothing added" in row]


def _several(client: Client, *files: SimpleUploadedFile, **extra: str) -> str:
    response = client.post(reverse("import"), {"file": list(files)}, follow=True, **extra)
    return str(response.content.decode())


@pytest.mark.django_db
class RefusedUploadTests:
    @pytest.mark.parametrize(
        ("name", "data", "reason"),
        [
            ("picture.png", PICTURE, "This file is an image (PNG), not highlights. Exogram"),
            ("empty.txt", b"", "The file is empty: there is nothing to import."),
            (
                "notes.txt",
                b"just some notes\nnothing else\n",
                "This text file is in none of the formats Exogram reads",
            ),
        ],
    )
    def test_it_lists_a_refused_file_with_why(
        self, alice_client: Client, name: str, data: bytes, reason: str
    ) -> None:
        response = alice_client.post(reverse("import"), {"file": SimpleUploadedFile(name, data)})

        # The page says why, as before, and Past imports keeps it.
        assert reason in response.content.decode()
        [row] = _refused(alice_client)
        assert row.startswith(f"{name} ")
        assert reason in row
        assert not Highlight.objects.exists()

    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_it_lists_a_file_over_the_limit_with_the_limit(self, alice_client: Client) -> None:
        upload = SimpleUploadedFile("big.txt", b"x" * (MEGABYTE + 100))
        alice_client.post(reverse("import"), {"file": upload})

        [row] = _refused(alice_client)
        assert row.startswith("big.txt ")
        assert "The file is 1.1 MB; the limit is 1 MB." in row

    def test_it_keeps_nothing_of_the_file(self, alice: User, alice_client: Client) -> None:
        alice_client.post(reverse("import"), {"file": SimpleUploadedFile("data.bin", BINARY)})

        refused = Import.objects.get(reader=alice)
        assert refused.status == Import.Status.REFUSED
        assert refused.error == FILE_BINARY % {"what": FORMATS_READ}
        assert refused.finished_at is not None
        # Not even its fingerprint, nor a copy for a worker.
        assert (refused.sha256, refused.counts, refused.problems) == ("", {}, [])
        assert not ImportUpload.objects.filter(the_import=refused).exists()

    def test_its_report_says_why_and_has_no_fingerprint(self, alice_client: Client) -> None:
        alice_client.post(reverse("import"), {"file": SimpleUploadedFile("empty.txt", b"")})

        report = alice_client.get(Import.objects.get().get_absolute_url()).content.decode()

        assert 'id="why"' in report
        assert "The file is empty: there is nothing to import." in report
        assert "File fingerprint" not in report
        assert "Try again" in report

    def test_an_empty_sidecar_is_listed_with_its_book_and_no_problem(
        self, alice: User, alice_client: Client
    ) -> None:
        upload = SimpleUploadedFile("metadata.md.lua", EMPTY_SIDECAR)
        alice_client.post(reverse("import"), {"file": upload})

        [row] = _refused(alice_client)

        assert "KOReader sidecar of “README” holds no highlights or notes" in row
        assert "line 1" not in row
        assert "clipping" not in row

    def test_it_says_it_in_spanish(self, alice: User, alice_client: Client) -> None:
        alice.language = "es"
        alice.save(update_fields=["language"])
        alice_client.post(reverse("import"), {"file": SimpleUploadedFile("empty.txt", b"")})

        [row] = _rows(alice_client)

        assert "Rechazado: no se añadió nada" in row
        assert "El archivo está vacío: no hay nada que importar." in row

    def test_another_reader_never_sees_it(
        self, alice_client: Client, bob: User, bob_client: Client
    ) -> None:
        alice_client.post(reverse("import"), {"file": SimpleUploadedFile("picture.png", PICTURE)})
        refused = Import.objects.get()

        assert "picture.png" not in bob_client.get(reverse("import")).content.decode()
        assert bob_client.get(refused.get_absolute_url()).status_code == 404
        assert not Import.objects.filter(reader=bob).exists()

    def test_the_admin_shows_it(self, alice_client: Client, client: Client) -> None:
        alice_client.post(reverse("import"), {"file": SimpleUploadedFile("picture.png", PICTURE)})
        client.force_login(User.objects.create_superuser("admin", password="x"))

        listing = client.get(reverse("admin:books_import_changelist"), {"status": "refused"})

        page = listing.content.decode()
        assert "picture.png" in page
        assert "Refused: nothing added" in page


@pytest.mark.django_db
class SeveralFilesInOneRequestTests:
    """Without JavaScript the files go in one request: each is refused on its own."""

    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_a_file_over_the_limit_refuses_only_itself(
        self, alice: User, alice_client: Client
    ) -> None:
        page = _several(
            alice_client,
            SimpleUploadedFile("quiet.lua", _sidecar("The Quiet Engine")),
            SimpleUploadedFile("big.txt", b"x" * (MEGABYTE + 100)),
            SimpleUploadedFile("harbour.lua", _sidecar("Harbour Lights")),
        )

        assert "Imported quiet.lua: 1 new highlight." in page
        assert "Imported harbour.lua: 1 new highlight." in page
        assert "big.txt was not imported. The file is 1.1 MB; the limit is 1 MB." in page
        statuses = dict(Import.objects.filter(reader=alice).values_list("file_name", "status"))
        assert statuses == {"quiet.lua": "done", "harbour.lua": "done", "big.txt": "refused"}

    def test_an_empty_file_refuses_only_itself(self, alice: User, alice_client: Client) -> None:
        page = _several(
            alice_client,
            SimpleUploadedFile("quiet.lua", _sidecar("The Quiet Engine")),
            SimpleUploadedFile("empty.txt", b""),
        )

        assert "Imported quiet.lua: 1 new highlight." in page
        assert "empty.txt was not imported. The file is empty" in page
        [refused] = Import.objects.filter(reader=alice, status=Import.Status.REFUSED)
        assert (refused.file_name, refused.error) == ("empty.txt", FILE_EMPTY)

    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_files_too_large_together_are_told_to_go_fewer_at_a_time(
        self, alice_client: Client
    ) -> None:
        response = alice_client.post(
            reverse("import"),
            {"file": [SimpleUploadedFile(f"{n}.txt", b"x" * (MEGABYTE // 2)) for n in range(3)]},
        )

        assert response.status_code == 413
        assert "If you chose several files at once" in response.content.decode()
        assert not Import.objects.exists()


@pytest.mark.django_db
class OneFileOfSeveralTests:
    """With JavaScript each file of several is a request of its own (static/js/upload.js);
    a file over the limit is not sent, its name and size are."""

    def test_each_file_is_answered_with_no_page_and_said_on_the_next(
        self, alice: User, alice_client: Client
    ) -> None:
        response = alice_client.post(
            reverse("import"),
            {"file": SimpleUploadedFile("quiet.lua", _sidecar("The Quiet Engine"))},
            headers={"X-Exogram-One-Of-Several": "1"},
        )

        assert response.status_code == 204
        assert Import.objects.get(reader=alice).status == Import.Status.DONE
        assert (
            "Imported quiet.lua: 1 new highlight."
            in alice_client.get(reverse("import")).content.decode()
        )

    def test_a_file_over_the_limit_is_refused_by_name_with_the_limit(
        self, alice: User, alice_client: Client
    ) -> None:
        response = alice_client.post(
            reverse("import_too_large"), {"name": "big.txt", "size": str(60 * MEGABYTE)}
        )

        assert response.status_code == 204
        page = alice_client.get(reverse("import")).content.decode()
        assert "big.txt was not imported. The file is 60 MB; the limit is 50 MB." in page
        [row] = _refused(alice_client)
        assert row.startswith("big.txt ")
        assert Import.objects.get(reader=alice).error == "The file is 60 MB; the limit is 50 MB."

    def test_it_is_said_in_spanish(self, alice: User, alice_client: Client) -> None:
        alice.language = "es"
        alice.save(update_fields=["language"])
        alice_client.post(
            reverse("import_too_large"), {"name": "big.txt", "size": str(60 * MEGABYTE)}
        )

        page = alice_client.get(reverse("import")).content.decode()

        assert "big.txt no se ha importado. El archivo ocupa 60 MB; el límite es 50 MB." in page

    def test_it_keeps_only_the_files_own_name(self, alice: User, alice_client: Client) -> None:
        alice_client.post(
            reverse("import_too_large"),
            {"name": "C:\\fakepath\\../big\x07.txt", "size": str(60 * MEGABYTE)},
        )

        assert Import.objects.get(reader=alice).file_name == "big.txt"

    def test_it_records_no_file_within_the_limit(self, alice_client: Client) -> None:
        response = alice_client.post(reverse("import_too_large"), {"name": "a.txt", "size": "10"})

        assert response.status_code == 400
        assert not Import.objects.exists()

    def test_it_is_the_readers_own(
        self, alice: User, alice_client: Client, bob_client: Client
    ) -> None:
        alice_client.post(
            reverse("import_too_large"), {"name": "big.txt", "size": str(60 * MEGABYTE)}
        )

        assert Import.objects.get().reader == alice
        assert _rows(bob_client) == []
        assert "big.txt" not in bob_client.get(reverse("import")).content.decode()

    def test_it_asks_an_anonymous_visitor_to_log_in(self, client: Client) -> None:
        response = client.post(
            reverse("import_too_large"), {"name": "big.txt", "size": str(60 * MEGABYTE)}
        )

        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
        assert not Import.objects.exists()

    def test_it_takes_only_a_post(self, alice_client: Client) -> None:
        assert alice_client.get(reverse("import_too_large")).status_code == 405


def _refusal(client: Client, name: str, data: bytes, language: str = "en") -> str:
    page = client.post(
        reverse("import"), {"file": SimpleUploadedFile(name, data)}, HTTP_ACCEPT_LANGUAGE=language
    ).content.decode()
    [error] = re.findall(r'<ul class="errorlist"[^>]*><li>(.*?)</li>', page, re.DOTALL)
    return str(error)


@pytest.mark.django_db
class WrongFileTypeTests:
    """A picture or a plain note dropped by mistake: said as what it is, with the formats
    read, as the import page lists them; no nested brackets, no "line 1" of an image."""

    def test_an_image_says_it_is_one_and_what_exogram_reads(self, alice_client: Client) -> None:
        # The first bytes of a PNG and then anything: what a cut-off screenshot holds.
        error = _refusal(alice_client, "picture.png", b"\x89PNG\r\n\x1a\nGARBAGE")
        assert error.startswith("This file is an image (PNG), not highlights. Exogram reads ")
        assert "line" not in error
        jpeg = _refusal(alice_client, "page.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" * 30)
        assert jpeg.startswith("This file is an image (JPEG), not highlights.")
        pdf = _refusal(alice_client, "book.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
        assert pdf.startswith("This file is a document (PDF), not an export of its highlights.")

    def test_a_plain_note_says_it_is_text_in_no_known_format(self, alice_client: Client) -> None:
        error = _refusal(alice_client, "notes.txt", b"hello world\nthis is not clippings\n")
        assert error.startswith("This text file is in none of the formats Exogram reads")
        assert "((" not in error
        assert "))" not in error
        assert "line 1" not in error
        assert "No clipping" not in error

    def test_the_formats_are_those_the_import_page_lists(self, alice_client: Client) -> None:
        page = alice_client.get(reverse("import")).content.decode()
        listed = page.split('<p class="muted" id="formats-read">', 1)[1].split("</p>", 1)[0]
        for name, data in [("picture.png", b"\x89PNG\r\n\x1a\nx"), ("n.txt", b"hello\n")]:
            error = _refusal(alice_client, name, data)
            assert error.endswith(listed.split(" The format is read")[0])
        assert FORMATS_READ.replace("'", "&#x27;") in listed

    def test_it_says_so_in_spanish(self, alice_client: Client) -> None:
        error = _refusal(alice_client, "picture.png", b"\x89PNG\r\n\x1a\nx", language="es")
        assert error.startswith("Este archivo es una imagen (PNG), no subrayados. Exogram lee ")
        text = _refusal(alice_client, "notes.txt", b"hola\nmundo\n", language="es")
        assert text.startswith("Este archivo de texto no está en ninguno de los formatos")
        assert text.endswith("JSON de Exogram.")


@pytest.mark.django_db
class RefusalWordingTests:
    def test_the_reason_is_a_sentence_after_a_full_stop_not_a_capital_after_a_colon(
        self, alice_client: Client
    ) -> None:
        page = _several(
            alice_client,
            SimpleUploadedFile("empty.txt", b""),
            SimpleUploadedFile("a.lua", _sidecar("The Quiet Engine")),
        )
        assert "empty.txt was not imported. The file is empty: there is nothing to import." in page
        assert "was not imported: " not in page
