"""Deleting an account: at once for a small library, in the background for a large one,
and never racing the embedding worker."""

import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts import services
from accounts.models import User
from accounts.services import reader_delete, reader_delete_request
from accounts.tasks import sweep_account_deletions
from books.embedding import pipeline
from books.importing.services import clippings_import
from books.models import Connection, Highlight
from exogram.celery import app
from tests.books.kindle import BORGES, SACKS, Entry, clippings_file
from tests.conftest import PASSWORD
from tests.worker import celery_worker, wait_for

# Short passages across two books, so that embedding them writes connections.
LIBRARY = [
    Entry(
        BORGES if n % 2 else SACKS,
        f"Memory keeps what we love, and forgets the rest of the day number {n}.",
        location=f"{n * 10}",
    )
    for n in range(1, 301)
]


@pytest.mark.django_db
class ReaderDeleteRequestTests:
    def test_a_large_library_is_deleted_in_the_background_after_the_account_closes(
        self, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(services, "DELETE_INLINE_MAX_HIGHLIGHTS", 10)
        monkeypatch.setattr(services, "DELETE_BATCH", 7)
        for reader in (alice, bob):
            clippings_import(reader=reader, data=clippings_file(*LIBRARY[:30]), file_name="c")
        # The eager task deletes at once, in batches of 7.
        assert reader_delete_request(reader=alice) is False
        assert not User.objects.filter(pk=alice.pk).exists()
        assert not Highlight.objects.filter(reader_id=alice.pk).exists()
        assert Highlight.objects.filter(reader=bob).count() == 30

    def test_a_closed_account_cannot_log_in_and_the_sweep_finishes_its_deletion(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(services, "DELETE_INLINE_MAX_HIGHLIGHTS", 10)
        clippings_import(reader=alice, data=clippings_file(*LIBRARY[:30]), file_name="c")
        saved = (app.conf.broker_url, app.conf.task_always_eager)
        app.conf.update(broker_url="redis://127.0.0.1:9/0", task_always_eager=False)
        app._pool = None
        app.amqp._producer_pool = None
        try:
            assert reader_delete_request(reader=alice) is False  # the broker is down
        finally:
            app.conf.update(broker_url=saved[0], task_always_eager=saved[1])
            app._pool = None
            app.amqp._producer_pool = None
        alice.refresh_from_db()
        assert not alice.is_active
        assert not Client().login(username="alice", password=PASSWORD)
        assert sweep_account_deletions() == 0  # too young: its task may still be queued
        User.objects.filter(pk=alice.pk).update(
            deletion_requested_at=timezone.now() - services.DELETION_LEASE - timedelta(1)
        )
        assert sweep_account_deletions() == 1
        assert not User.objects.filter(pk=alice.pk).exists()

    def test_deleting_twice_changes_nothing(self, alice: User) -> None:
        clippings_import(reader=alice, data=clippings_file(*LIBRARY[:3]), file_name="c")
        reader_delete(reader_id=alice.pk)
        reader_delete(reader_id=alice.pk)
        assert not User.objects.filter(pk=alice.pk).exists()

    def test_the_view_says_the_deletion_goes_on_in_the_background(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(services, "DELETE_INLINE_MAX_HIGHLIGHTS", 1)
        clippings_import(reader=alice, data=clippings_file(*LIBRARY[:3]), file_name="c")
        response = alice_client.post(
            reverse("delete_account"), {"confirm": "alice", "password": PASSWORD}, follow=True
        )
        assert "is closed and is being deleted" in response.content.decode()
        # Signed out: a page of the library sends her to the login.
        assert alice_client.get(reverse("library")).status_code == 302


def _finished_embed_tasks(log: Path) -> int:
    lines = log.read_text().splitlines()
    return sum(
        1
        for line in lines
        if "books.tasks.embed_highlights[" in line and (" succeeded " in line or " raised " in line)
    )


@pytest.mark.django_db(transaction=True)
class DeletionRaceTests:
    def test_a_deletion_waits_for_an_embedding_write_in_flight(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The race made certain: the worker is inside its write transaction (vectors
        # written, connections not yet) when the deletion starts.
        clippings_import(reader=alice, data=clippings_file(*LIBRARY[:20]), file_name="c")
        Highlight.objects.update(embedding=None, embedding_model="", embedding_status="pending")
        ids = list(Highlight.objects.values_list("pk", flat=True))
        in_write, go_on = threading.Event(), threading.Event()
        connect = pipeline.highlights_connect

        def paused_connect(*, ids: list[int]) -> None:
            in_write.set()
            go_on.wait(timeout=30)
            connect(ids=ids)

        monkeypatch.setattr(pipeline, "highlights_connect", paused_connect)
        errors: list[BaseException] = []

        def run(work: Callable[[], object]) -> threading.Thread:
            def target() -> None:
                try:
                    work()
                except BaseException as error:  # reported by the assertion below
                    errors.append(error)
                finally:
                    connection.close()

            thread = threading.Thread(target=target)
            thread.start()
            return thread

        embedding = run(lambda: pipeline.highlights_embed(ids=ids))
        assert in_write.wait(timeout=120)
        deleting = run(lambda: reader_delete_request(reader=alice))
        deleting.join(timeout=2)  # it waits for the write transaction (or, unfixed, races)
        go_on.set()
        embedding.join(timeout=120)
        deleting.join(timeout=120)
        assert errors == []
        assert not User.objects.filter(pk=alice.pk).exists()
        assert not Connection.objects.exists()

    def test_deleting_right_after_an_import_never_races_the_worker(self, tmp_path: Path) -> None:
        # Three rounds, as the fault was found: 1 delete in 3 failed with an IntegrityError
        # when the worker inserted a connection mid-delete.
        with celery_worker(broker_url="filesystem://", data_dir=tmp_path, concurrency=2):
            for round_ in range(3):
                reader = User.objects.create_user(f"reader{round_}", password=PASSWORD)
                clippings_import(reader=reader, data=clippings_file(*LIBRARY), file_name="c")
                wait_for(
                    lambda r=reader: Highlight.objects.filter(
                        reader=r, embedding_status="done"
                    ).exists(),
                    timeout=180,
                    what="the worker to start embedding",
                )
                reader_delete_request(reader=reader)
                assert not User.objects.filter(pk=reader.pk).exists()
                assert not Highlight.objects.filter(reader_id=reader.pk).exists()
                assert not Connection.objects.filter(reader_id=reader.pk).exists()
            # Let the worker finish what it had claimed: it must write nothing, fail nothing.
            wait_for(
                lambda: _finished_embed_tasks(tmp_path / "worker.log") >= 6,
                timeout=300,
                what="the worker to finish the six embedding tasks",
            )
        log = (tmp_path / "worker.log").read_text()
        assert "IntegrityError" not in log
        assert "ForeignKeyViolation" not in log
