import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight, HighlightMerge, Import
from books.services import highlight_delete
from books.tasks import embed_highlights, purge_deleted
from tests.books.kindle import BORGES, MEMORY_LIBRARY, SACKS, Entry, clippings_file


def _upload(data: bytes, name: str = "My Clippings.txt") -> dict[str, SimpleUploadedFile]:
    return {"file": SimpleUploadedFile(name, data, content_type="text/plain")}


@pytest.mark.django_db
class ImportUploadTests:
    def test_it_shows_the_form_and_past_imports(self, alice_client: Client, alice: User) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="old.txt")
        response = alice_client.get(reverse("import"))
        assert response.status_code == 200
        assert b'type="file"' in response.content
        assert b"old.txt" in response.content

    def test_it_labels_the_drop_zone_for_every_format_not_kindle_clippings_only(
        self, alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("import")).content.decode()
        assert "Drop your highlights files here, or choose them:</label>" in page
        assert "clippings file here" not in page
        spanish = alice_client.get(reverse("import"), HTTP_ACCEPT_LANGUAGE="es-ES")
        assert "Suelta aquí tus archivos de subrayados o elígelos:" in spanish.content.decode()

    def test_it_imports_an_upload_and_shows_the_report(self, alice_client: Client) -> None:
        response = alice_client.post(reverse("import"), _upload(clippings_file(*MEMORY_LIBRARY)))
        the_import = Import.objects.get()
        assert response.status_code == 302
        assert response["Location"] == the_import.get_absolute_url()
        report = alice_client.get(response["Location"])
        assert report.status_code == 200
        content = report.content.decode()
        assert "New highlights" in content
        assert "<strong>Starting</strong>: 5 highlights waiting" in content
        assert Highlight.objects.count() == 5
        assert "Nothing new in this file" not in content

    def test_the_report_of_a_file_imported_again_says_nothing_in_it_is_new(
        self, alice: User, alice_client: Client
    ) -> None:
        data = clippings_file(*MEMORY_LIBRARY)
        clippings_import(reader=alice, data=data, file_name="My Clippings.txt")
        again = clippings_import(reader=alice, data=data, file_name="My Clippings.txt")
        url = again.get_absolute_url()

        page = alice_client.get(url).content.decode()
        spanish = alice_client.get(url, HTTP_ACCEPT_LANGUAGE="es-ES").content.decode()

        said = "Nothing new in this file: everything in it is already in your library."
        assert said in page
        assert "Nada nuevo en este archivo: todo lo que contiene ya está en tu biblioteca." in (
            spanish
        )
        # A file that changed a note changed the library: not said of it.
        noted = clippings_file(*MEMORY_LIBRARY, Entry(SACKS, "A second thought.", kind="Note"))
        changed = clippings_import(reader=alice, data=noted, file_name="My Clippings.txt")
        assert said not in alice_client.get(changed.get_absolute_url()).content.decode()

    def test_it_says_notes_when_a_notebook_holds_notes_only(self, alice_client: Client) -> None:
        notes = "".join(
            f"<h3 class='noteHeading'>Note - Location {n}0</div>"
            f"<div class='noteText'>A thought of my own, number {n}.</h3>"
            for n in range(1, 9)
        )
        notebook = (
            "<html><body><div class='bookTitle'>The Quiet Engine</div>"
            f"<div class='authors'>Okonkwo, Chidi</div>{notes}</body></html>"
        ).encode()
        response = alice_client.post(reverse("import"), _upload(notebook, "notebook.html"))

        content = alice_client.get(response["Location"]).content.decode()

        assert "<strong>Starting</strong>: 8 notes waiting" in content
        assert "highlights waiting" not in content
        assert '<th scope="row">Standalone notes</th><td class="n">8</td>' in content

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            (b"", "The file is empty: there is nothing to import."),
            (b"\x00\x01\x02\x03binary\x00\x00", "KoboReader.sqlite"),
            (b"just some notes\nnothing else\n", "This text file is in none of the formats"),
        ],
    )
    def test_it_explains_a_bad_file_and_adds_nothing(
        self, alice_client: Client, data: bytes, message: str
    ) -> None:
        response = alice_client.post(reverse("import"), _upload(data, "bad.txt"))
        assert response.status_code == 200
        assert message in response.content.decode()
        assert not Highlight.objects.exists()
        # Kept in Past imports as refused (tests/books/test_import_refusals.py).
        assert Import.objects.get().status == Import.Status.REFUSED

    @pytest.mark.parametrize(
        ("language", "said"),
        [
            ("en", "at line 2: not valid JSON, at column 30: a comma with nothing after it"),
            ("es", "en la línea 2: JSON no válido, en la columna 30: una coma sin nada detrás"),
        ],
    )
    def test_it_tells_broken_json_its_own_error_where_it_is(
        self, alice_client: Client, language: str, said: str
    ) -> None:
        data = b'{"title": "Salt Roads",\n "highlights": [{"text": "x"},]}\n'
        response = alice_client.post(
            reverse("import"),
            _upload(data, "export.json"),
            headers={"Accept-Language": f"{language};q=1"},
        )
        assert response.status_code == 200
        assert said in response.content.decode()
        # Nothing added: the file is only listed among Past imports as refused, and why.
        refused = Import.objects.get()
        assert refused.status == Import.Status.REFUSED
        past = alice_client.get(reverse("import"), headers={"Accept-Language": f"{language};q=1"})
        assert said in past.content.decode()
        assert not Highlight.objects.exists()

    def test_an_unclosed_csv_quote_is_shown_on_its_line_and_the_other_rows_kept(
        self, alice_client: Client
    ) -> None:
        data = (
            b"Highlight,Title\nThe lamp was lit.,Harbour Notes\n"
            b'"Left open,Harbour Notes\nThe tide came in.,Harbour Notes\n'
        )
        response = alice_client.post(reverse("import"), _upload(data, "readwise.csv"))
        report = alice_client.get(
            response["Location"], headers={"Accept-Language": "es-ES,es;q=0.9"}
        ).content.decode()
        assert "Línea 3: unas comillas abiertas aquí no se cierran nunca" in report
        assert sorted(Highlight.objects.values_list("text", flat=True)) == [
            "The lamp was lit.",
            "The tide came in.",
        ]

    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_it_refuses_a_file_over_the_limit(self, alice_client: Client) -> None:
        response = alice_client.post(reverse("import"), _upload(b"x" * (2 * 1024 * 1024)))
        assert response.status_code == 413
        assert "up to 1 MB" in response.content.decode()
        assert not Import.objects.exists()

    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_it_refuses_a_file_just_over_the_limit_with_the_form(
        self, alice_client: Client
    ) -> None:
        # Within the multipart allowance the request is read; the form says why it fails.
        response = alice_client.post(reverse("import"), _upload(b"x" * (1024 * 1024 + 100)))
        assert response.status_code == 200
        assert "the limit is 1 MB" in response.content.decode()
        assert Import.objects.get().status == Import.Status.REFUSED

    def test_it_never_uses_the_file_name_as_a_path(
        self, alice_client: Client, tmp_path: Path
    ) -> None:
        target = tmp_path / "evil.txt"
        name = f"../../../../../../..{target}"
        response = alice_client.post(
            reverse("import"), _upload(clippings_file(*MEMORY_LIBRARY), name)
        )
        assert response.status_code == 302
        assert not target.exists()
        assert "/" not in Import.objects.get().file_name


class _BodyThatMustNotBeRead:
    def read(self, *args: object) -> bytes:
        raise AssertionError("the body of an oversized request was read")

    readline = read


@pytest.mark.django_db
class PastImportsTests:
    def test_each_file_name_is_whole_in_its_title(self, alice: User, alice_client: Client) -> None:
        """A long name is cut with "…" on a wide screen: the whole of it stays at hand."""
        name = "realistic_clippings_from_the_old_kindle_of_my_grandmother.txt"
        done = clippings_import(
            reader=alice,
            data=clippings_file(Entry(SACKS, "One more.", location="300-301")),
            file_name=name,
        )
        Import.objects.create(
            reader=alice, file_name="refused_" + name, sha256="0" * 64, status=Import.Status.REFUSED
        )
        page = alice_client.get(reverse("import")).content.decode()
        link = f'<a href="{done.get_absolute_url()}" class="file-name" title="{name}">{name}</a>'
        assert link in page
        assert f'<span class="file-name" title="refused_{name}">refused_{name}</span>' in page

    def test_it_says_beside_how_many_new_how_many_were_left_out_as_deleted(
        self, alice: User, alice_client: Client
    ) -> None:
        data = clippings_file(*MEMORY_LIBRARY)
        first = clippings_import(reader=alice, data=data, file_name="My Clippings.txt")
        _delete(alice, LEAF)
        _remove_for_good(alice, NARRATIVE)
        again = clippings_import(reader=alice, data=data, file_name="My Clippings.txt")
        _delete(alice, THINK)  # with its note: two more entries of the file
        third = clippings_import(reader=alice, data=data, file_name="My Clippings.txt")

        page = alice_client.get(reverse("import")).content.decode()
        spanish = alice_client.get(reverse("import"), HTTP_ACCEPT_LANGUAGE="es-ES")

        link = '<a href="{}#left-out" class="muted left-out">({} left out: you deleted {})</a>'
        assert link.format(third.get_absolute_url(), 4, "them") in page
        assert link.format(again.get_absolute_url(), 2, "them") in page
        assert f'<a href="{first.get_absolute_url()}#left-out"' not in page
        assert '<td class="n" data-label="New">5</td>' in page
        assert "(4 entradas omitidas: las borraste)</a>" in spanish.content.decode()

    def test_it_says_one_was_left_out_in_the_singular(
        self, alice: User, alice_client: Client
    ) -> None:
        data = clippings_file(*MEMORY_LIBRARY)
        clippings_import(reader=alice, data=data, file_name="My Clippings.txt")
        _delete(alice, LEAF)
        clippings_import(reader=alice, data=data, file_name="My Clippings.txt")

        page = alice_client.get(reverse("import")).content.decode()
        spanish = alice_client.get(reverse("import"), HTTP_ACCEPT_LANGUAGE="es-ES")

        assert "(1 left out: you deleted it)</a>" in page
        assert "(1 entrada omitida: la borraste)</a>" in spanish.content.decode()


@pytest.mark.django_db
class OversizedBodyTests:
    def test_it_refuses_60_mb_before_reading_the_body(self, alice_client: Client) -> None:
        # Through the whole WSGI stack (sessions, CSRF, auth) with a body that explodes
        # if anything reads a byte of it.
        session = alice_client.cookies["sessionid"].value
        statuses: list[str] = []
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": reverse("import"),
            "SERVER_NAME": "localhost",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "localhost",
            "HTTP_COOKIE": f"sessionid={session}",
            "CONTENT_TYPE": "multipart/form-data; boundary=xyz",
            "CONTENT_LENGTH": str(60 * 1024 * 1024),
            "wsgi.input": _BodyThatMustNotBeRead(),
            "wsgi.errors": io.StringIO(),
            "wsgi.url_scheme": "http",
        }
        # As Django's test client does: the test's transaction must outlive the request.
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            body = b"".join(
                WSGIHandler()(environ, lambda status, headers, *rest: statuses.append(status))
            )
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)
        assert statuses == ["413 Request Entity Too Large"]
        assert b"up to 50 MB" in body
        assert not Import.objects.exists()

    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_it_answers_in_the_requests_language_not_the_previous_ones(
        self, alice_client: Client
    ) -> None:
        # One thread serves both requests, as a gunicorn thread does: the Spanish page
        # leaves Spanish active on it.
        spanish = alice_client.get(reverse("import"), HTTP_ACCEPT_LANGUAGE="es-ES")
        assert "Importar" in spanish.content.decode()
        response = alice_client.post(
            reverse("import"),
            _upload(b"x" * (2 * 1024 * 1024)),
            HTTP_ACCEPT_LANGUAGE="en-US",
        )
        assert response.status_code == 413
        page = response.content.decode()
        assert '<html lang="en">' in page
        assert "That file is too large" in page
        assert "demasiado grande" not in page
        # The site's page: its navigation and favicon, not a bare one.
        assert 'rel="icon"' in page
        assert f'href="{reverse("library")}"' in page

    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_it_answers_in_the_readers_own_language(
        self, alice_client: Client, alice: User
    ) -> None:
        alice.language = "es"
        alice.save(update_fields=["language"])
        response = alice_client.post(
            reverse("import"),
            _upload(b"x" * (2 * 1024 * 1024)),
            HTTP_ACCEPT_LANGUAGE="en-US",
        )
        assert response.status_code == 413
        page = response.content.decode()
        assert '<html lang="es">' in page
        assert "Ese archivo es demasiado grande" in page

    def test_it_shows_problems_with_line_numbers(self, alice_client: Client) -> None:
        good = clippings_file(*MEMORY_LIBRARY[:2])
        broken = b"Ficciones (Borges)\r\n- not metadata\r\n\r\nlost\r\n==========\r\n"
        alice_client.post(reverse("import"), _upload(good + broken))
        report = alice_client.get(Import.objects.get().get_absolute_url()).content.decode()
        assert "1 entry could not be read" in report
        assert "Line 12: unrecognised metadata line" in report

    def test_it_lists_what_could_be_read_of_each_lost_entry_before_the_delete_box(
        self, alice_client: Client
    ) -> None:
        good = clippings_file(*MEMORY_LIBRARY[:2])
        broken = (
            b"Broken Test Book (Tester, Quinn)\r\n"
            b"- Your Highlight on Lokation 20-21 | Addd on Blursday, Foo 99, 2023 9:00:00 XM\r\n"
            b"\r\nThis entry has a mangled metadata line, and more words after that.\r\n"
            b"==========\r\n"
            b"Broken Test Book (Tester, Quinn)\r\n\r\nno metadata line at all here\r\n"
            b"==========\r\n"
        )
        report = _upload_report(alice_client, good + broken)
        assert "2 entries could not be read" in report
        lost = report.split('<ul class="unread">', 1)[1].split("</ul>", 1)[0]
        assert (
            "Broken Test Book: “This entry has a mangled metadata line, and more words after that.”"
        ) in lost
        assert "Line 17: expected the metadata line after the title, found a blank line" in lost
        assert "Broken Test Book: “no metadata line at all here”" in lost
        # What was lost comes before the box that deletes what was added.
        assert report.index('id="unread"') < report.index('id="delete-import-heading"')
        spanish = _upload_report(alice_client, good + broken, language="es")
        assert "búscalas en el archivo por su línea" in spanish


def _refuse_poison() -> None:
    """A real failure while writing: the database refuses the highlight 'Poison.'."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION refuse_poison() RETURNS trigger AS $$ BEGIN "
            "IF NEW.text = 'Poison.' THEN RAISE EXCEPTION 'disk on fire'; END IF; "
            "RETURN NEW; END $$ LANGUAGE plpgsql"
        )
        cursor.execute(
            "CREATE TRIGGER refuse_poison BEFORE INSERT ON books_highlight "
            "FOR EACH ROW EXECUTE FUNCTION refuse_poison()"
        )


POISONED = clippings_file(*MEMORY_LIBRARY[:2], Entry(SACKS, "Poison.", location="90"))


@pytest.mark.django_db
class ImportFailureTests:
    def test_a_failed_upload_leads_to_its_report_saying_it_is_the_servers_fault(
        self, alice_client: Client
    ) -> None:
        _refuse_poison()

        response = alice_client.post(reverse("import"), _upload(POISONED), follow=True)

        failed = Import.objects.get(status=Import.Status.FAILED)
        assert response.redirect_chain == [(failed.get_absolute_url(), 302)]
        page = response.content.decode()
        assert "My Clippings.txt could not be imported." in page
        assert "The server could not save this import; nothing was saved" in page
        assert "the server&#x27;s operator can find the details in its log" in page
        # The database's words stay with the operator (the admin, the log).
        assert "disk on fire" in failed.error
        for raw in ("disk on fire", "COPY", "CONTEXT", "books_highlight"):
            assert raw not in page
        assert not Highlight.objects.exists()

    def test_a_failed_import_is_listed_with_a_link_to_why(self, alice_client: Client) -> None:
        _refuse_poison()
        alice_client.post(reverse("import"), _upload(POISONED))
        failed = Import.objects.get()

        page = alice_client.get(reverse("import")).content.decode()

        assert f'<a href="{failed.get_absolute_url()}#why">Failed: see why</a>' in page

    def test_it_says_why_in_spanish(self, alice_client: Client) -> None:
        _refuse_poison()
        alice_client.post(reverse("import"), _upload(POISONED))
        failed = Import.objects.get()

        page = alice_client.get(
            failed.get_absolute_url(), headers={"Accept-Language": "es-ES,es;q=0.9"}
        ).content.decode()

        assert "El servidor no ha podido guardar esta importación" in page
        assert "disk on fire" not in page

    def test_a_file_problem_is_said_as_it_is(self, alice: User, alice_client: Client) -> None:
        failed = Import.objects.create(
            reader=alice,
            file_name="notes.txt",
            sha256="0" * 64,
            status=Import.Status.FAILED,
            error="No clipping in this file could be read (1 problem(s); the first, at line "
            "2: unrecognised metadata line '- not metadata').",
        )

        page = alice_client.get(failed.get_absolute_url()).content.decode()

        assert "at line 2: unrecognised metadata line" in page
        assert "The server could not save" not in page


@pytest.mark.django_db
class ImportWarningTests:
    def test_it_keeps_an_entry_with_a_bad_date_or_reversed_range_and_lists_it(
        self, alice_client: Client
    ) -> None:
        data = clippings_file(
            Entry(SACKS, "A good one.", location="10-11"),
            Entry(SACKS, "Kept all the same.", location="99-98", added="Blursday, Foo 99"),
        )

        alice_client.post(reverse("import"), _upload(data))

        the_import = Import.objects.get()
        kept = Highlight.objects.get(text="Kept all the same.")
        assert (kept.location_start, kept.location_end, kept.added_at) == (98, 99, None)
        report = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "2 warnings about entries that were kept" in report
        assert (
            "Line 7: the date &#x27;Blursday, Foo 99&#x27; could not be read; "
            "the entry is kept without one" in report
        )
        assert "Line 7: location 99-98 is reversed; read as 98-99" in report
        assert "entry could not be read" not in report
        assert "entries could not be read" not in report


@pytest.mark.django_db
class ImportReportCountsTests:
    def test_it_says_how_many_books_the_import_added(
        self, alice: User, alice_client: Client
    ) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY[:3]), file_name="a.txt")
        later = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="b.txt"
        )
        page = alice_client.get(later.get_absolute_url()).content.decode()
        assert (
            '<th scope="row">Books with something new or changed</th><td class="n">2</td>' in page
        )
        assert '<th scope="row">New books</th><td class="n">1</td>' in page
        spanish = alice_client.get(
            later.get_absolute_url(), headers={"Accept-Language": "es-ES,es;q=0.9"}
        ).content.decode()
        assert '<th scope="row">Libros nuevos</th><td class="n">1</td>' in spanish

    def test_it_says_none_were_added_when_none_were(
        self, alice: User, alice_client: Client
    ) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="a.txt")
        again = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="a.txt"
        )
        page = alice_client.get(again.get_absolute_url()).content.decode()
        assert '<th scope="row">New books</th><td class="n">0</td>' in page
        # The same file again names both books and changes neither: it says so.
        assert (
            '<th scope="row">Books with something new or changed</th><td class="n">0</td>' in page
        )
        assert "Books touched" not in page

    def test_it_leaves_the_line_out_for_an_import_made_before_it_was_counted(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="old.txt"
        )
        the_import.counts.pop("new_books")  # as an older Import's counts read
        the_import.counts.pop("books_changed")
        the_import.save(update_fields=["counts"])
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert '<th scope="row">Books touched</th><td class="n">2</td>' in page
        assert "New books" not in page


# MEMORY_LIBRARY's highlights by where they start; the note at 414 is on the first.
THINK, LEAF, NARRATIVE = 412, 380, 1520


def _delete(reader: User, *starts: int) -> None:
    for start in starts:
        highlight_delete(
            highlight=Highlight.objects.get(reader=reader, location_start=start, kind="highlight")
        )


def _remove_for_good(reader: User, *starts: int) -> None:
    """Deleted, kept their days in Recently deleted, then removed by the daily purge."""
    _delete(reader, *starts)
    Highlight.objects.filter(reader=reader, location_start__in=starts).update(
        deleted_at=timezone.now() - timedelta(days=31)
    )
    assert purge_deleted()["highlights"] == len(starts)


def _upload_report(client: Client, data: bytes, language: str = "en") -> str:
    """Upload through the import page and read the report it leads to."""
    response = client.post(
        reverse("import"), _upload(data), follow=True, HTTP_ACCEPT_LANGUAGE=language
    )
    assert response.redirect_chain[-1][0] == Import.objects.latest("pk").get_absolute_url()
    return " ".join(response.content.decode().split())


EVERYTHING_IN_IT = "Nothing new in this file: everything in it is already in your library."
EVERYTHING_ELSE = "Nothing new in this file: everything else in it is already in your library."
TO_DELETED = '<a href="/deleted/">Recently deleted</a>'


@pytest.mark.django_db
class ImportReportLeftOutTests:
    """A file imported again whose entries the reader had deleted: the report says they
    were left out and why, and "everything in it is already in your library" no more."""

    def test_a_file_whose_highlights_were_deleted_says_they_were_left_out(
        self, alice: User, alice_client: Client
    ) -> None:
        data = clippings_file(*MEMORY_LIBRARY)
        _upload_report(alice_client, data)
        _delete(alice, LEAF, NARRATIVE)

        page = _upload_report(alice_client, data)
        spanish = _upload_report(alice_client, data, "es-ES")

        assert (
            "2 entries in this file were left out: you deleted them, and they are in "
            f"{TO_DELETED}." in page
        )
        assert f'<p id="nothing-new">{EVERYTHING_ELSE}</p>' in page
        assert EVERYTHING_IN_IT not in page
        assert "removed for good." not in page
        assert (
            "2 entradas de este archivo se han omitido: las borraste, y están en "
            '<a href="/deleted/">Borrados hace poco</a>.' in spanish
        )
        assert (
            "Nada nuevo en este archivo: todo lo demás que contiene ya está en tu biblioteca."
            in spanish
        )

    def test_a_file_whose_highlight_was_removed_for_good_says_so(
        self, alice: User, alice_client: Client
    ) -> None:
        data = clippings_file(*MEMORY_LIBRARY)
        _upload_report(alice_client, data)
        _remove_for_good(alice, LEAF)

        page = _upload_report(alice_client, data)
        spanish = _upload_report(alice_client, data, "es-ES")

        assert (
            "1 entry in this file was left out: you deleted it, and it has since been removed "
            "for good." in page
        )
        assert f'<p id="nothing-new">{EVERYTHING_ELSE}</p>' in page
        assert EVERYTHING_IN_IT not in page
        assert "you deleted them, and they are in" not in page
        assert (
            "1 entrada de este archivo se ha omitido: la borraste, y desde entonces se ha "
            "eliminado para siempre." in spanish
        )

    def test_a_file_with_new_entries_too_says_what_was_left_out_and_nothing_of_nothing_new(
        self, alice: User, alice_client: Client
    ) -> None:
        _upload_report(alice_client, clippings_file(*MEMORY_LIBRARY))
        # The note on THINK goes with it: an entry of the file too.
        _delete(alice, THINK)
        _remove_for_good(alice, LEAF, NARRATIVE)
        grown = clippings_file(*MEMORY_LIBRARY, Entry(BORGES, "A new one.", location="500-501"))

        page = _upload_report(alice_client, grown)

        assert (
            "2 entries in this file were left out: you deleted them, and they are in "
            f"{TO_DELETED}." in page
        )
        assert (
            "2 entries in this file were left out: you deleted them, and they have since been "
            "removed for good." in page
        )
        assert 'id="nothing-new"' not in page
        assert '<th scope="row">New highlights</th><td class="n">1</td>' in page

    def test_a_file_holding_only_deleted_highlights_says_nothing_of_the_rest(
        self, alice: User, alice_client: Client
    ) -> None:
        only = [entry for entry in MEMORY_LIBRARY if entry.location == "380-381"]
        _upload_report(alice_client, clippings_file(*MEMORY_LIBRARY))
        _delete(alice, LEAF)

        page = _upload_report(alice_client, clippings_file(*only))

        assert (
            f"1 entry in this file was left out: you deleted it, and it is in {TO_DELETED}." in page
        )
        assert 'id="nothing-new"' not in page

    def test_a_file_with_nothing_deleted_reads_as_it_did(
        self, alice: User, alice_client: Client
    ) -> None:
        # A guard, not a fix: the report of a plain re-import is unchanged.
        data = clippings_file(*MEMORY_LIBRARY)
        _upload_report(alice_client, data)

        page = _upload_report(alice_client, data)

        assert f'<p id="nothing-new">{EVERYTHING_IN_IT}</p>' in page
        assert "left out" not in page
        assert 'id="left-out"' not in page


@pytest.mark.django_db
class ImportReportOwnershipTests:
    def test_it_hides_alices_import_from_bob(self, alice: User, bob_client: Client) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="alice.txt"
        )
        assert bob_client.get(the_import.get_absolute_url()).status_code == 404
        progress = reverse("import_progress", args=[the_import.code])
        assert bob_client.get(progress).status_code == 404
        assert b"alice.txt" not in bob_client.get(reverse("import")).content

    def test_it_sends_anonymous_readers_to_login(self, alice: User, client: Client) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="alice.txt"
        )
        response = client.get(the_import.get_absolute_url())
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class ImportReportAfterADeleteTests:
    """The first import's report of a 5,485-highlight library said "All 5,484 highlights
    read" above "New highlights 5,485" once the reader had deleted one: the progress counts
    the alive highlights, the table what the import added. The difference is said."""

    def _import_then_delete_one(self, alice: User) -> Import:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="alice.txt"
        )
        assert the_import.counts["new_highlights"] == 5
        highlight_delete(highlight=Highlight.objects.get(location_start=380))
        return the_import

    def test_it_says_how_many_were_deleted_since_beside_the_count(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = self._import_then_delete_one(alice)
        Highlight.objects.update(embedding_status=Highlight.EmbeddingStatus.DONE)

        page = alice_client.get(the_import.get_absolute_url()).content.decode()

        assert (
            "All 4 highlights (1 deleted since) ready: connections and search by meaning "
            "work on all of them." in page
        )
        assert '<th scope="row">New highlights</th><td class="n">5</td>' in page
        polled = reverse("import_progress", args=[the_import.code])
        assert (
            "All 4 highlights (1 deleted since) ready" in alice_client.get(polled).content.decode()
        )

    def test_it_says_it_while_the_rest_are_embedded_too(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = self._import_then_delete_one(alice)
        first = Highlight.objects.alive().order_by("pk").first()
        assert first is not None
        Highlight.objects.filter(pk=first.pk).update(
            embedding_status=Highlight.EmbeddingStatus.DONE
        )

        page = alice_client.get(the_import.get_absolute_url()).content.decode()

        assert "<strong>1 of 4</strong> highlights ready for connections (1 deleted since)." in page

    def test_it_says_it_in_spanish(self, alice: User, alice_client: Client) -> None:
        the_import = self._import_then_delete_one(alice)
        Highlight.objects.update(embedding_status=Highlight.EmbeddingStatus.DONE)

        page = alice_client.get(the_import.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es-ES")

        assert (
            "Todo listo con 4 subrayados (desde entonces has borrado 1): ya cuentan para las "
            "conexiones y la búsqueda por significado." in page.content.decode()
        )

    def test_nothing_deleted_adds_nothing(self, alice: User, alice_client: Client) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="alice.txt"
        )
        Highlight.objects.update(embedding_status=Highlight.EmbeddingStatus.DONE)

        page = alice_client.get(the_import.get_absolute_url()).content.decode()

        assert "All 5 highlights ready: connections" in page
        assert "deleted since" not in page


@pytest.mark.django_db
class ProgressPartialTests:
    def test_it_polls_while_highlights_wait_and_stops_when_done(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="alice.txt"
        )
        url = reverse("import_progress", args=[the_import.code])
        waiting = alice_client.get(url).content.decode()
        assert 'hx-trigger="every 2s"' in waiting
        assert "<strong>Starting</strong>: 5 highlights waiting" in waiting
        Highlight.objects.update(embedding_status=Highlight.EmbeddingStatus.DONE)
        done = alice_client.get(url).content.decode()
        assert "hx-trigger" not in done
        assert (
            "All 5 highlights ready: connections and search by meaning work on all of them." in done
        )

    def test_it_shows_why_highlights_wait(self, alice: User, alice_client: Client) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="a.txt")
        Highlight.objects.update(embedding_error="The embedding model could not load: x")
        page = alice_client.get(reverse("library_progress")).content.decode()
        assert "Waiting: The embedding model could not load" in page


def _versions(count: int) -> list[Entry]:
    """`count` highlights, each selected twice: from its start, then from a word later on."""
    entries = []
    for number in range(count):
        words = [f"w{number}x{i}" for i in range(8)]
        where = f"{100 + 10 * number}-{101 + 10 * number}"
        entries.append(Entry(SACKS, " ".join(words[:6]), location=where))
        entries.append(Entry(SACKS, " ".join(words[2:]), location=where))
    return entries


@pytest.mark.django_db
class ImportReportMergesTests:
    def test_it_lists_each_merged_entry_and_the_highlight_it_went_into(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*_versions(1)), file_name="alice.txt"
        )
        highlight = Highlight.objects.get(reader=alice)

        content = alice_client.get(the_import.get_absolute_url()).content.decode()

        assert "1 entry was merged into highlights" in content
        assert "Re-selected" in content
        assert "location 100\N{EN DASH}101" in content
        assert "w0x2 w0x3 w0x4 w0x5 w0x6 w0x7" in content
        assert f'href="{highlight.get_absolute_url()}"' in content
        assert highlight.text == " ".join(f"w0x{i}" for i in range(8))

    @pytest.mark.parametrize(
        ("language", "single", "stored"),
        [("en", "location 1201", "location 1201-1201"), ("es", "posición 1201", None)],
    )
    def test_a_single_location_reads_as_one_number_as_on_the_highlight_pages(
        self, alice: User, alice_client: Client, language: str, single: str, stored: str | None
    ) -> None:
        # The Kindle writes a one-line highlight's location as "1201-1201"; the report said
        # the same number twice. Rows stored that way before still read as one number.
        data = clippings_file(
            Entry(SACKS, "one two three four five six", location="1201-1201"),
            Entry(SACKS, "three four five six seven eight", location="1201-1201"),
        )
        the_import = clippings_import(reader=alice, data=data, file_name="alice.txt")
        merge = HighlightMerge.objects.get()
        assert merge.where == "location 1201"
        if stored:
            HighlightMerge.objects.filter(pk=merge.pk).update(where=stored)

        content = alice_client.get(
            the_import.get_absolute_url(), headers={"Accept-Language": f"{language};q=1"}
        ).content.decode()

        assert f" · {single} · " in content
        assert "1201\N{EN DASH}1201" not in content
        highlight = alice_client.get(merge.highlight.get_absolute_url()).content.decode()
        assert "1201\N{EN DASH}1201" not in highlight

    def test_it_shows_the_whole_highlight_an_entry_went_into(
        self, alice: User, alice_client: Client
    ) -> None:
        # A long passage, selected again from its middle on: the reader checks every word.
        words = [f"word{i}" for i in range(120)]
        data = clippings_file(
            Entry(SACKS, " ".join(words[:100]), location="100-110"),
            Entry(SACKS, " ".join(words[40:]), location="104-112"),
        )
        the_import = clippings_import(reader=alice, data=data, file_name="alice.txt")
        highlight = Highlight.objects.get(reader=alice)
        assert len(highlight.text) > 600

        content = alice_client.get(the_import.get_absolute_url()).content.decode()

        assert "1 entry was merged into highlights" in content
        assert f'<blockquote class="highlight went-into">{highlight.text}</blockquote>' in content

    def test_it_pages_through_many_merges(self, alice: User, alice_client: Client) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*_versions(30)), file_name="alice.txt"
        )

        first = alice_client.get(the_import.get_absolute_url()).content.decode()
        second = alice_client.get(the_import.get_absolute_url() + "?page=2").content.decode()

        assert "30 entries were merged into highlights" in first
        assert "Page 1 of 2" in first
        assert first.count('<p class="meta">went into') == 25
        assert second.count('<p class="meta">went into') == 5

    def test_it_says_nothing_about_merges_when_there_were_none(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="alice.txt"
        )

        content = alice_client.get(the_import.get_absolute_url()).content.decode()

        assert "merged into highlights" not in content

    def test_it_leaves_out_highlights_the_reader_deleted_since(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*_versions(2)), file_name="alice.txt"
        )
        Highlight.objects.filter(reader=alice, location_start=100).update(deleted_at=timezone.now())

        content = alice_client.get(the_import.get_absolute_url()).content.decode()

        assert "1 entry was merged into highlights" in content
        assert "w0x2" not in content

    def test_it_hides_alices_merges_from_bob(self, alice: User, bob_client: Client) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*_versions(1)), file_name="alice.txt"
        )

        response = bob_client.get(the_import.get_absolute_url())

        assert response.status_code == 404
        assert b"w0x2" not in response.content

    def test_it_sends_anonymous_readers_to_login(self, alice: User, client: Client) -> None:
        the_import = clippings_import(
            reader=alice, data=clippings_file(*_versions(1)), file_name="alice.txt"
        )

        response = client.get(the_import.get_absolute_url() + "?page=1")

        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class DoubleSubmitTests:
    def test_the_second_upload_of_a_file_says_it_was_already_there(
        self, alice_client: Client
    ) -> None:
        data = clippings_file(*MEMORY_LIBRARY)
        alice_client.post(reverse("import"), _upload(data))
        response = alice_client.post(reverse("import"), _upload(data), follow=True)
        page = response.content.decode()
        assert "was already in your library: nothing new to add" in page
        assert "The import failed" not in page
        assert Highlight.objects.count() == 5
        assert Import.objects.filter(status=Import.Status.DONE).count() == 2

    def test_it_keeps_an_entry_with_bytes_that_are_not_utf8_and_names_their_line(
        self, alice_client: Client
    ) -> None:
        # The explorer's file: a title with four bytes that are not UTF-8 was imported
        # without a word.
        data = clippings_file(Entry(SACKS, "A good one.", location="10-11")).replace(
            b"A good one.", "caf\u00e9 \u20ac".encode() + b" \xff\xfe\xc3\x28"
        )

        alice_client.post(reverse("import"), _upload(data))

        assert Highlight.objects.get().text == "caf\u00e9 \u20ac \u00ff\u00fe\u00c3("
        report = alice_client.get(Import.objects.get().get_absolute_url()).content.decode()
        assert (
            "Line 4: this line has bytes that are not UTF-8; they were read as Windows-1252 "
            "characters: check its letters" in report
        )


@pytest.mark.django_db
class ImportMessageTests:
    """What the page says after an upload (alone or one of several, the same words), and
    what the report says of the entries that could not be read."""

    def test_the_message_after_an_upload_says_what_came_and_what_could_not_be_read(
        self, alice: User, alice_client: Client
    ) -> None:
        broken = b"Ficciones (Borges)\r\n- not metadata\r\n\r\nlost\r\n==========\r\n"
        middle = clippings_file(*MEMORY_LIBRARY[:2]) + broken * 2
        data = middle + clippings_file(*MEMORY_LIBRARY[4:5]).removeprefix(b"\xef\xbb\xbf")
        response = alice_client.post(reverse("import"), _upload(data, "broken.txt"), follow=True)

        page = response.content.decode()
        said = (
            "Imported broken.txt: 3 new highlights; 2 entries could not be read (see the report)."
        )
        assert said in page
        past = alice_client.get(reverse("import")).content.decode()
        assert "Done, <a" in past
        assert "2 entries not read</a>" in past

    def test_the_message_after_an_upload_says_nothing_new_when_nothing_came(
        self, alice: User, alice_client: Client
    ) -> None:
        data = clippings_file(*MEMORY_LIBRARY)
        alice_client.post(reverse("import"), _upload(data))
        highlight_delete(highlight=Highlight.objects.get(location_start=380))

        response = alice_client.post(reverse("import"), _upload(data), follow=True)

        page = response.content.decode()
        said = "Imported My Clippings.txt: nothing new; 1 entry left out: you deleted it."
        assert said in page
        spanish = alice_client.post(
            reverse("import"), _upload(data), follow=True, headers={"Accept-Language": "es"}
        ).content.decode()
        assert "My Clippings.txt importado: nada nuevo; 1 entrada omitida: la borraste." in spanish

    def test_a_file_of_bookmarks_and_empty_notes_says_what_it_held_not_already_there(
        self, alice: User, alice_client: Client
    ) -> None:
        data = clippings_file(
            Entry("Only Marks (A B)", "", kind="Bookmark", location="5"),
            Entry("Only Marks (A B)", "", kind="Note", location="7"),
        )
        response = alice_client.post(reverse("import"), _upload(data, "marks.txt"), follow=True)

        page = response.content.decode()
        assert "Nothing to import from marks.txt: 1 bookmark, 1 empty note." in page
        assert "already in your library" not in page
        report = alice_client.get(Import.objects.get().get_absolute_url()).content.decode()
        assert 'id="nothing-new"' not in report
        spanish = alice_client.post(
            reverse("import"), _upload(data, "marks.txt"), follow=True,
            headers={"Accept-Language": "es"},
        ).content.decode()  # fmt: skip
        assert "Nada que importar de marks.txt: 1 marcador, 1 nota vacía." in spanish

    def test_a_json_files_problems_name_their_book_and_entry_not_a_line(
        self, alice_client: Client
    ) -> None:
        books = [
            {"title": "T", "highlights": [{"text": "kept"}, {"text": "x", "location_start": "ten"}]}
        ]
        document = {"format": "exogram", "version": 1, "books": books}
        alice_client.post(reverse("import"), _upload(json.dumps(document).encode(), "e.json"))
        report = alice_client.get(Import.objects.get().get_absolute_url()).content.decode()
        said = "&#x27;T&#x27;, highlight 2: a location must be a whole number, not &#x27;ten&#x27;"
        assert f"<li>{said}</li>" in report
        assert "Line 1" not in report
        # Nothing read at all: the refusal says which entry, not "at line 1".
        books[0]["highlights"] = [{"text": "x", "location_start": "ten"}]
        response = alice_client.post(
            reverse("import"), _upload(json.dumps(document).encode(), "e.json")
        )
        assert "(1 problem: &#x27;T&#x27;, highlight 1: a location" in response.content.decode()

    def test_once_read_an_import_with_no_connection_says_so_in_words(
        self, alice: User, alice_client: Client
    ) -> None:
        one = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY[:1]), file_name="one.txt"
        )
        embed_highlights(list(Highlight.objects.values_list("pk", flat=True)))

        page = alice_client.get(one.get_absolute_url()).content.decode()

        assert "1 highlight ready: connections and search by meaning work on it." in page
        assert "All 1 highlight" not in page
        spanish = alice_client.get(one.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es-ES")
        assert (
            "Todo listo con 1 subrayado: ya cuenta para las conexiones y la búsqueda por "
            "significado." in spanish.content.decode()
        )
        # Nothing left to embed anywhere: no "yet", which promised a connection to come.
        assert (
            "This import made no connection with your library: no passage it added is close "
            "enough to one in another book." in page
        )
        assert "no connection with your library yet" not in page
        assert "0</strong> connections" not in page

    def test_an_import_with_no_connection_says_yet_while_the_library_still_waits(
        self, alice: User, alice_client: Client
    ) -> None:
        one = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY[:1]), file_name="one.txt"
        )
        embed_highlights(list(Highlight.objects.values_list("pk", flat=True)))
        clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY[4:5]), file_name="two.txt"
        )  # another book's passage waits for its vector, and may connect to the first's

        page = alice_client.get(one.get_absolute_url()).content.decode()

        assert "This import made no connection with your library yet." in page
        spanish = alice_client.get(one.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es-ES")
        said = "Esta importación aún no ha creado ninguna conexión con tu biblioteca."
        assert said in spanish.content.decode()
