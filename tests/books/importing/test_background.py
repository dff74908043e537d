"""Large imports run on a worker: the upload returns at once, the report shows progress."""

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.importing import background
from books.importing.background import (
    IMPORT_QUEUE_UNREACHABLE,
    import_queue,
    import_send,
    imports_to_resend,
)
from books.importing.clippings import NOT_UTF8_FILE, parse_clippings
from books.importing.screening import screen_entries
from books.importing.services import clippings_import
from books.models import Highlight, Import, ImportSaving, ImportUpload
from books.tasks import run_import, sweep_pending_imports
from exogram.celery import app
from tests.books.kindle import BORGES, MEMORY_LIBRARY, Entry, clippings_file
from tests.worker import celery_worker, wait_for

DATA = clippings_file(*MEMORY_LIBRARY)


@pytest.fixture
def small_inline_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any file goes to the background (a real 2 MB file would only make the test slow)."""
    monkeypatch.setattr("books.importing.background.IMPORT_INLINE_MAX_BYTES", 100)


def _upload(data: bytes) -> dict[str, SimpleUploadedFile]:
    return {"file": SimpleUploadedFile("My Clippings.txt", data, content_type="text/plain")}


@pytest.mark.django_db
@pytest.mark.usefixtures("small_inline_limit")
class BackgroundImportViewTests:
    def test_a_large_upload_returns_at_once_with_a_queued_import(
        self, alice_client: Client
    ) -> None:
        response = alice_client.post(reverse("import"), _upload(DATA))
        the_import = Import.objects.get()
        assert response["Location"] == the_import.get_absolute_url()
        assert the_import.status == Import.Status.QUEUED
        assert bytes(ImportUpload.objects.get(the_import=the_import).data) == DATA
        assert not Highlight.objects.exists()
        report = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "Waiting for a worker" in report
        assert "hx-trigger" in report

    def test_the_report_polls_then_reloads_when_the_worker_is_done(
        self, alice_client: Client
    ) -> None:
        alice_client.post(reverse("import"), _upload(DATA))
        the_import = Import.objects.get()
        poll = reverse("import_progress", args=[the_import.code]) + "?under_way=1"
        assert (
            "Importing My Clippings.txt: waiting for a worker"
            in alice_client.get(poll).content.decode()
        )
        assert run_import(the_import.pk) == Import.Status.DONE
        assert run_import(the_import.pk) == Import.Status.DONE  # a duplicate does nothing
        assert Highlight.objects.count() == 5
        assert not ImportUpload.objects.exists()
        response = alice_client.get(poll)
        assert response.headers["HX-Refresh"] == "true"
        report = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "New highlights" in report

    def test_a_bad_large_file_fails_with_the_reason(self, alice_client: Client) -> None:
        response = alice_client.post(reverse("import"), _upload(b"\x00\x01binary" * 64))
        assert response.status_code == 200
        assert "KoboReader.sqlite" in response.content.decode()
        # Refused before any worker: listed among Past imports as refused, nothing added.
        assert Import.objects.get().status == Import.Status.REFUSED
        assert not ImportUpload.objects.exists()
        assert not Highlight.objects.exists()

    def test_a_file_the_worker_cannot_read_fails_with_the_reason(
        self, alice_client: Client
    ) -> None:
        alice_client.post(reverse("import"), _upload(b"just some notes\n" * 20))
        the_import = Import.objects.get()
        run_import(the_import.pk)
        the_import.refresh_from_db()
        assert the_import.status == Import.Status.FAILED
        assert "This text file is in none of the formats Exogram reads" in the_import.error
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "This text file is in none of the formats Exogram reads" in page
        # Its reading was counted (a Kindle file, read in pieces); a failed import keeps
        # no count of a reading that saved nothing.
        assert the_import.counts == {}

    def test_a_file_over_a_lowered_limit_is_refused_in_the_readers_language(
        self, alice: User, alice_client: Client
    ) -> None:
        # Queued under the day's limit; the operator lowers it before a worker takes it.
        alice_client.post(reverse("import"), _upload(DATA * 800))  # 1.01 MB
        the_import = Import.objects.get()
        with override_settings(EXOGRAM_MAX_UPLOAD_MB=1):
            assert run_import(the_import.pk) == Import.Status.FAILED
        the_import.refresh_from_db()
        # Stored in English, for the admin and the log; rounded up, never the limit itself.
        assert the_import.error == "The file is 1.1 MB; the limit is 1 MB."
        alice.language = "es"
        alice.save(update_fields=["language"])
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "El archivo ocupa 1,1 MB; el límite es 1 MB." in page

    def test_another_reader_cannot_see_the_progress(
        self, alice_client: Client, bob_client: Client
    ) -> None:
        alice_client.post(reverse("import"), _upload(DATA))
        the_import = Import.objects.get()
        poll = reverse("import_progress", args=[the_import.code]) + "?under_way=1"
        assert bob_client.get(poll).status_code == 404
        assert Client().get(poll).status_code == 302


FIXTURES = Path(__file__).parent / "fixtures"
SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}
UNREADABLE = "The file could not be read: Exogram could not make sense of what is in it."


class ParseInPiecesTests:
    @pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.txt")))
    def test_pieces_parse_as_the_whole_file(
        self, name: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        data = (FIXTURES / name).read_bytes()
        whole = screen_entries(parse_clippings(data))
        monkeypatch.setattr(background, "PARSE_PIECE_BYTES", 300)  # many small pieces
        if not whole.clippings:
            return
        assert len(list(background._pieces(data))) > 1 or len(data) < 600
        in_pieces = background.parse_in_pieces(data)
        assert in_pieces.clippings == whole.clippings
        assert in_pieces.problems == whole.problems
        assert in_pieces.entries == whole.entries

    def test_a_windows_file_in_pieces_is_named_once(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # Each piece of a Windows-1252 file found it Windows-1252 throughout: a 9.8 MB file
        # was named three times, at lines 1, 85,399 and 171,137 (found by review).
        entries = [
            Entry(BORGES, f"Funes {i} recordaba cada hoja de cada árbol.") for i in range(60)
        ]
        data = clippings_file(*entries).decode("utf-8-sig").encode("cp1252")
        monkeypatch.setattr(background, "PARSE_PIECE_BYTES", 2_000)
        assert len(list(background._pieces(data))) > 2
        parsed = background.parse_in_pieces(data)
        assert [w.message for w in parsed.warnings] == [NOT_UTF8_FILE]
        assert len(parsed.clippings) == 60


@pytest.mark.django_db
class ImportInPartsTests:
    def test_a_file_saved_in_parts_gives_the_library_of_the_file_at_once(
        self,
        alice: User,
        bob: User,
        monkeypatch: pytest.MonkeyPatch,
        django_capture_on_commit_callbacks: Any,
    ) -> None:
        monkeypatch.setattr(background, "IMPORT_PART", 2)  # every book a part of its own
        broken = "Broken (A)\r\n- nothing a Kindle writes\r\n\r\ntext\r\n==========\r\n"
        data = clippings_file(*MEMORY_LIBRARY) + broken.encode()
        at_once = clippings_import(reader=bob, data=data, file_name="c.txt")
        the_import = import_queue(reader=alice, data=data, file_name="c.txt")
        with django_capture_on_commit_callbacks(execute=True):
            assert run_import(the_import.pk) == Import.Status.DONE
        the_import.refresh_from_db()
        assert the_import.counts == at_once.counts
        assert the_import.counts["new_books"] == 2  # one part each, summed
        assert the_import.problems == at_once.problems != []

        def library(reader: User) -> list[tuple[str, str, str, int | None]]:
            rows = Highlight.objects.filter(reader=reader)
            return sorted(rows.values_list("book__title", "text", "note", "location_start"))

        assert library(alice) == library(bob)
        # Sent after the last part, all of them (and run here, eagerly).
        statuses = Highlight.objects.filter(reader=alice).values_list("embedding_status")
        assert set(statuses) == {("done",)}


@pytest.mark.django_db
class BrokerDownTests:
    def test_the_import_waits_saved_and_says_why_until_the_sweep_sends_it(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="c.txt")
        saved = (app.conf.broker_url, app.conf.task_always_eager)
        app.conf.update(broker_url="redis://127.0.0.1:9/0", task_always_eager=False)
        app._pool = None
        app.amqp._producer_pool = None
        try:
            assert import_send(the_import=the_import) is False
        finally:
            app.conf.update(broker_url=saved[0], task_always_eager=saved[1])
            app._pool = None
            app.amqp._producer_pool = None
        the_import.refresh_from_db()
        assert the_import.error == IMPORT_QUEUE_UNREACHABLE
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "task queue cannot be reached" in page
        # The broker is back: the sweep sends it (and the eager task runs it here).
        assert imports_to_resend() == [the_import.pk]
        assert sweep_pending_imports() == 1
        the_import.refresh_from_db()
        assert the_import.status == Import.Status.DONE
        assert Highlight.objects.filter(reader=alice).count() == 5

    def test_an_import_whose_worker_died_starts_over(self, alice: User) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="c.txt")
        long_ago = timezone.now() - background.IMPORT_STALE - timedelta(minutes=1)
        Import.objects.filter(pk=the_import.pk).update(
            status=Import.Status.SAVING, finished_at=long_ago
        )
        assert imports_to_resend() == [the_import.pk]
        assert run_import(the_import.pk) == Import.Status.DONE
        assert Highlight.objects.filter(reader=alice).count() == 5

    def test_a_long_save_whose_count_moves_is_not_taken_for_dead(self, alice: User) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="c.txt")
        long_ago = timezone.now() - background.IMPORT_STALE - timedelta(minutes=1)
        Import.objects.filter(pk=the_import.pk).update(
            status=Import.Status.SAVING, finished_at=long_ago
        )
        saving = ImportSaving.objects.create(
            the_import=the_import, done=250, total=5_000, updated_at=timezone.now()
        )
        assert imports_to_resend() == []
        assert run_import(the_import.pk) == Import.Status.SAVING
        assert not Highlight.objects.exists()
        # Its count stopped moving too: the worker died.
        ImportSaving.objects.filter(pk=saving.pk).update(updated_at=long_ago)
        assert imports_to_resend() == [the_import.pk]

    def test_a_running_import_is_not_taken_twice(self, alice: User) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="c.txt")
        Import.objects.filter(pk=the_import.pk).update(
            status=Import.Status.SAVING, finished_at=timezone.now()
        )
        assert imports_to_resend() == []
        assert run_import(the_import.pk) == Import.Status.SAVING
        assert not Highlight.objects.exists()


@pytest.mark.django_db
class ImportTakenOverTests:
    """A slow worker is taken for dead (IMPORT_STALE), and another takes its import again:
    the first one's writes, if it goes on, are not the import's any more."""

    def test_a_run_taken_over_before_its_save_saves_nothing(
        self, alice: User, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="c.txt")

        def taken_over_after_reading(result: Any) -> Any:
            # The whole file is read and counted; then the second worker takes it.
            long_ago = timezone.now() - background.IMPORT_STALE - timedelta(minutes=1)
            Import.objects.filter(pk=the_import.pk).update(finished_at=long_ago)
            assert imports_to_resend() == [the_import.pk]
            assert background.import_claim(import_id=the_import.pk) == 2
            background.ReadingCount(the_import=the_import, size=len(DATA), attempt=2)(100, 1)
            return screen_entries(result)

        monkeypatch.setattr(background, "screen_entries", taken_over_after_reading)
        run_import(the_import.pk)
        assert not Highlight.objects.exists()
        assert not ImportSaving.objects.exists()
        the_import.refresh_from_db()
        assert the_import.status == Import.Status.READING
        assert the_import.attempts == 2
        assert the_import.counts == {
            "reading_done": 100, "reading_size": len(DATA), "reading_entries": 1
        }  # fmt: skip
        assert bytes(ImportUpload.objects.get(the_import=the_import).data) == DATA
        assert "stopped being attempt 1's before it saved" in caplog.text
        # Its file is left whole for the attempt that finishes: here a third, the second
        # worker having died too.
        monkeypatch.undo()
        long_ago = timezone.now() - background.IMPORT_STALE - timedelta(minutes=1)
        Import.objects.filter(pk=the_import.pk).update(finished_at=long_ago)
        assert run_import(the_import.pk) == Import.Status.DONE
        assert Highlight.objects.filter(reader=alice).count() == 5

    def test_a_run_taken_over_as_its_save_begins_saves_nothing(
        self, alice: User, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="c.txt")
        real_progress = background.SavingProgress

        def taken_over_then_saving(**kwargs: Any) -> Any:
            # Moved to saving; then, before its save's transaction, the second worker takes it.
            long_ago = timezone.now() - background.IMPORT_STALE - timedelta(minutes=1)
            Import.objects.filter(pk=the_import.pk).update(finished_at=long_ago)
            assert background.import_claim(import_id=the_import.pk) == 2
            return real_progress(**kwargs)

        monkeypatch.setattr(background, "SavingProgress", taken_over_then_saving)
        run_import(the_import.pk)
        assert not Highlight.objects.exists()
        the_import.refresh_from_db()
        assert (the_import.status, the_import.attempts) == (Import.Status.READING, 2)
        assert the_import.error == ""
        assert bytes(ImportUpload.objects.get(the_import=the_import).data) == DATA
        assert "stopped being attempt 1's as its save began" in caplog.text

    def test_an_import_given_up_is_one_taken_too_often(self, alice: User) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="c.txt")
        message = background.IMPORT_GAVE_UP % {"attempts": background.IMPORT_MAX_ATTEMPTS}
        assert not background._fail(the_import, message, attempt=None)
        Import.objects.filter(pk=the_import.pk).update(attempts=background.IMPORT_MAX_ATTEMPTS)
        assert background._fail(the_import, message, attempt=None)
        the_import.refresh_from_db()
        assert the_import.status == Import.Status.FAILED

    def test_a_run_taken_over_fails_nothing_and_keeps_the_file(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="c.txt")

        def taken_over_then_broken(data: bytes, **kwargs: Any) -> None:
            long_ago = timezone.now() - background.IMPORT_STALE - timedelta(minutes=1)
            Import.objects.filter(pk=the_import.pk).update(finished_at=long_ago)
            assert background.import_claim(import_id=the_import.pk) == 2
            raise KeyError("a parser's own bug")

        monkeypatch.setattr(background, "parse_in_pieces", taken_over_then_broken)
        run_import(the_import.pk)
        the_import.refresh_from_db()
        assert the_import.status == Import.Status.READING
        assert the_import.attempts == 2
        assert the_import.error == ""
        assert ImportUpload.objects.filter(the_import=the_import).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("small_inline_limit")
class BackgroundImportWorkerTests:
    def test_a_real_worker_imports_and_embeds_a_large_upload(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        with celery_worker(broker_url="filesystem://", data_dir=tmp_path):
            alice_client.post(reverse("import"), _upload(DATA))
            the_import = Import.objects.get()
            wait_for(
                lambda: Import.objects.filter(pk=the_import.pk, status="done").exists(),
                timeout=120,
                what="the worker to import the file",
            )
            wait_for(
                lambda: (
                    Highlight.objects.filter(reader=alice, embedding_status="done").count() == 5
                ),
                timeout=120,
                what="every highlight to be embedded",
            )
        assert not ImportUpload.objects.exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("small_inline_limit")
class ImportThatBreaksTheWorkerTests:
    def test_a_deeply_nested_json_file_fails_with_a_message_and_is_dropped(
        self, alice_client: Client
    ) -> None:
        # 3 MB of "[[[[…": the JSON reader's recursion ran out, and only ValueError was
        # caught, so the import stayed at "Reading the file…" with its upload kept.
        alice_client.post(reverse("import"), _upload(b"[" * 3_000_000))
        the_import = Import.objects.get()
        assert run_import(the_import.pk) == Import.Status.FAILED
        the_import.refresh_from_db()
        # The exception as Python says it, for the admin; plain words for the reader.
        assert the_import.error.startswith("This file could not be read (RecursionError: ")
        assert not ImportUpload.objects.exists()
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert UNREADABLE in page
        assert "RecursionError" not in page
        assert "recursion" not in page
        spanish = alice_client.get(the_import.get_absolute_url(), headers=SPANISH)
        assert (
            "No se ha podido leer el archivo: Exogram no ha entendido" in spanish.content.decode()
        )
        assert "RecursionError" not in spanish.content.decode()
        assert imports_to_resend() == []

    def test_an_import_failed_so_before_is_said_in_plain_words(
        self, alice: User, alice_client: Client
    ) -> None:
        # Stored by an earlier version, with the exception's type name alone.
        the_import = Import.objects.create(
            reader=alice,
            file_name="c.json",
            sha256="0" * 64,
            status=Import.Status.FAILED,
            error="This file could not be read (RecursionError); nothing was imported and "
            "the file was dropped.",
        )
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert UNREADABLE in page
        assert "RecursionError" not in page

    def test_any_error_while_reading_ends_the_import_as_failed(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="c.txt")

        def broken(data: bytes) -> None:
            raise KeyError("a parser's own bug")

        monkeypatch.setattr(background, "parse_in_pieces", broken)
        assert run_import(the_import.pk) == Import.Status.FAILED
        the_import.refresh_from_db()
        assert "could not be read" in the_import.error
        assert not ImportUpload.objects.exists()

    def test_the_sweep_gives_up_on_an_import_whose_worker_keeps_dying(self, alice: User) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="c.txt")
        long_ago = timezone.now() - background.IMPORT_STALE - timedelta(minutes=1)
        for _attempt in range(background.IMPORT_MAX_ATTEMPTS):
            # A worker takes it, and dies (out of memory, killed) before it finishes.
            Import.objects.filter(pk=the_import.pk).update(status=Import.Status.QUEUED)
            assert background.import_claim(import_id=the_import.pk)
            Import.objects.filter(pk=the_import.pk).update(finished_at=long_ago)
        assert imports_to_resend() == [the_import.pk]
        assert run_import(the_import.pk) == Import.Status.FAILED
        the_import.refresh_from_db()
        assert f"stopped {background.IMPORT_MAX_ATTEMPTS} times" in the_import.error
        assert not ImportUpload.objects.exists()
        assert imports_to_resend() == []
