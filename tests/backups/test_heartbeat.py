"""The worker's heartbeat: recorded by the worker, said on /status/ and /healthz."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone, translation

from accounts.models import User
from backups.heartbeat import Heartbeat, heartbeat_record, heartbeat_stopped, worker_wording
from backups.models import WorkerHeartbeat
from tests.worker import celery_worker, wait_for

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


def _said(text: str) -> str:
    return text.replace("\xa0", " ")  # Django's durations keep "12 minutes" on one line


class WorkerWordingTests:
    def test_it_warns_plainly_when_the_worker_has_not_been_seen_for_a_while(self) -> None:
        late, message = worker_wording(last_seen=NOW - timedelta(minutes=12), now=NOW)
        assert late
        assert _said(message) == (
            "The background worker has not been seen for 12 minutes: imports and embeddings "
            "wait until it runs again."
        )

    def test_it_warns_when_the_worker_was_never_seen(self) -> None:
        late, message = worker_wording(last_seen=None, now=NOW)
        assert late
        assert message.startswith("The background worker has never been seen")

    def test_a_worker_seen_within_five_minutes_is_running(self) -> None:
        assert worker_wording(last_seen=NOW - timedelta(seconds=20), now=NOW) == (
            False,
            "The background worker is running: seen less than a minute ago.",
        )
        late, message = worker_wording(last_seen=NOW - timedelta(minutes=5), now=NOW)
        assert not late
        assert _said(message) == "The background worker is running: seen 5 minutes ago."

    def test_five_missed_beats_and_a_second_is_late(self) -> None:
        late, _ = worker_wording(last_seen=NOW - timedelta(minutes=5, seconds=1), now=NOW)
        assert late

    def test_it_says_when_the_worker_was_stopped_cleanly(self) -> None:
        stopped = NOW - timedelta(minutes=12)
        late, message = worker_wording(last_seen=stopped, now=NOW, stopped_at=stopped)
        assert late
        assert _said(message) == (
            "The background worker stopped cleanly on 6 Dec 2026, 11:48 UTC (12 minutes "
            "ago): imports and embeddings wait until it is started again (make run "
            "starts it; with Docker, docker compose start worker)."
        )

    def test_a_worker_stopped_just_now_is_stopped_not_running(self) -> None:
        stopped = NOW - timedelta(seconds=5)
        late, message = worker_wording(last_seen=stopped, now=NOW, stopped_at=stopped)
        assert late
        assert "stopped cleanly on 6 Dec 2026, 11:59 UTC (less than a minute ago)" in (
            _said(message)
        )

    def test_it_says_a_clean_stop_in_spanish(self) -> None:
        stopped = NOW - timedelta(minutes=12)
        with translation.override("es"):
            _, message = worker_wording(last_seen=stopped, now=NOW, stopped_at=stopped)
        assert _said(message) == (
            "El proceso de fondo se detuvo correctamente el 6 dic 2026, 11:48 UTC "
            "(hace 12 minutos): las importaciones y el procesado de los subrayados "
            "esperan hasta que vuelva a ponerse en marcha (make run lo pone en marcha; con "
            "Docker, docker compose start worker)."
        )

    def test_it_speaks_spanish(self) -> None:
        with translation.override("es"):
            _, message = worker_wording(last_seen=NOW - timedelta(minutes=12), now=NOW)
        assert _said(message) == (
            "El proceso de fondo no se ve desde hace 12 minutos: las importaciones y el "
            "procesado de los subrayados esperan hasta que vuelva a funcionar."
        )


def _staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("keeper", is_staff=True))
    return client


@pytest.mark.django_db
class StatusPageWorkerTests:
    def test_it_warns_of_a_worker_not_seen_for_twelve_minutes(self) -> None:
        now = timezone.now()
        heartbeat_record(hostname="celery@reader-box", now=now - timedelta(minutes=12),
                         started_at=now - timedelta(days=2))  # fmt: skip
        page = _said(_staff().get(reverse("status")).content.decode())
        assert (
            '<p role="alert" class="status-bad"><strong>The background worker has not been '
            "seen for 12 minutes: imports and embeddings wait until it runs again.</strong>"
        ) in page

    def test_it_says_a_worker_seen_just_now_is_running(self) -> None:
        now = timezone.now()
        heartbeat_record(hostname="celery@reader-box", now=now, started_at=now)
        page = _staff().get(reverse("status")).content.decode()
        assert "The background worker is running: seen less than a minute ago." in page
        assert "has not been seen" not in page

    def test_it_names_a_worker_running_other_code(self) -> None:
        now = timezone.now()
        WorkerHeartbeat.objects.create(
            hostname="celery@old", code_version="0123456789abcdef" * 2 + "01234567",
            started_at=now, seen_at=now,
        )  # fmt: skip
        page = _staff().get(reverse("status")).content.decode()
        assert "The worker <code>celery@old</code> runs different code" in page

    def test_it_says_a_worker_stopped_cleanly_was_stopped_at_once(self) -> None:
        now = timezone.now()
        started = now - timedelta(hours=3)
        heartbeat_record(hostname="celery@reader-box", now=now - timedelta(seconds=30),
                         started_at=started)  # fmt: skip
        heartbeat_stopped(hostname="celery@reader-box", now=now, started_at=started)
        page = _said(_staff().get(reverse("status")).content.decode())
        alert = '<p role="alert" class="status-bad"><strong>The background worker stopped'
        assert f"{alert} cleanly on " in page
        assert "(less than a minute ago): imports and embeddings wait until it is started" in page
        assert "is running" not in page

    def test_a_worker_started_again_is_running(self) -> None:
        now = timezone.now()
        first = now - timedelta(hours=3)
        heartbeat_record(hostname="celery@reader-box", now=first, started_at=first)
        heartbeat_stopped(hostname="celery@reader-box", now=first, started_at=first)
        heartbeat_record(hostname="celery@reader-box", now=now, started_at=now)
        assert WorkerHeartbeat.objects.get().stopped_at is None
        page = _staff().get(reverse("status")).content.decode()
        assert "The background worker is running: seen less than a minute ago." in page
        assert "stopped cleanly" not in page

    def test_a_stop_from_an_earlier_run_does_not_mark_the_running_one(self) -> None:
        now = timezone.now()
        earlier = now - timedelta(hours=3)
        heartbeat_record(hostname="celery@reader-box", now=now, started_at=now)
        heartbeat_stopped(hostname="celery@reader-box", now=now, started_at=earlier)
        assert WorkerHeartbeat.objects.get().stopped_at is None

    def test_one_worker_stopped_does_not_hide_another_running(self) -> None:
        now = timezone.now()
        heartbeat_record(hostname="celery@a", now=now - timedelta(seconds=40),
                         started_at=now - timedelta(days=1))  # fmt: skip
        heartbeat_record(hostname="celery@b", now=now - timedelta(seconds=20),
                         started_at=now - timedelta(days=1))  # fmt: skip
        heartbeat_stopped(hostname="celery@b", now=now, started_at=now - timedelta(days=1))
        page = _said(_staff().get(reverse("status")).content.decode())
        assert "The background worker is running: seen less than a minute ago." in page
        assert "<li><code>celery@b</code>: stopped cleanly on " in page
        assert "<li><code>celery@a</code>: last seen " in page

    def test_a_clean_stop_after_a_silent_worker_is_what_the_page_says(self) -> None:
        now = timezone.now()
        heartbeat_record(hostname="celery@killed", now=now - timedelta(hours=2),
                         started_at=now - timedelta(days=1))  # fmt: skip
        heartbeat_record(hostname="celery@new", now=now - timedelta(minutes=20),
                         started_at=now - timedelta(hours=1))  # fmt: skip
        heartbeat_stopped(hostname="celery@new", now=now - timedelta(minutes=12),
                          started_at=now - timedelta(hours=1))  # fmt: skip
        page = _said(_staff().get(reverse("status")).content.decode())
        assert "(12 minutes ago): imports and embeddings wait until it is started" in page
        assert "has not been seen" not in page

    def test_healthz_says_the_worker_stopped_and_when(self, client: Client) -> None:
        now = timezone.now()
        heartbeat_record(hostname="celery@a", now=now, started_at=now)
        heartbeat_stopped(hostname="celery@a", now=now, started_at=now)
        body = client.get("/healthz").json()
        assert body["worker"] == "stopped"
        assert datetime.fromisoformat(body["worker_stopped_at"]) == now
        heartbeat_record(hostname="celery@a", now=now, started_at=now)
        assert "worker_stopped_at" not in client.get("/healthz").json()

    def test_healthz_says_whether_the_worker_was_seen(self, client: Client) -> None:
        now = timezone.now()
        heartbeat_record(hostname="celery@a", now=now - timedelta(minutes=6), started_at=now)
        assert client.get("/healthz").json()["worker"] == "late"
        heartbeat_record(hostname="celery@a", now=now, started_at=now)
        assert client.get("/healthz").json()["worker"] == "ok"


@pytest.mark.django_db(transaction=True)
class HeartbeatThreadTests:
    def test_it_records_the_worker_at_once_and_stops_when_asked(self) -> None:
        heartbeat = Heartbeat("celery@thread-test")
        heartbeat.start()
        try:
            seen = wait_for(
                lambda: WorkerHeartbeat.objects.filter(hostname="celery@thread-test").first(),
                timeout=30, what="the first heartbeat",
            )  # fmt: skip
        finally:
            heartbeat.stop()
            heartbeat.join(timeout=30)
        assert not heartbeat.is_alive()
        assert seen.code_version == settings.EXOGRAM_CODE_VERSION

    def test_it_records_the_stop_once_stopped(self) -> None:
        heartbeat = Heartbeat("celery@stopping")
        heartbeat.start()
        wait_for(
            lambda: WorkerHeartbeat.objects.filter(hostname="celery@stopping").first(),
            timeout=30, what="the first heartbeat",
        )  # fmt: skip
        assert heartbeat.stop(wait_seconds=30)
        row = WorkerHeartbeat.objects.get(hostname="celery@stopping")
        assert row.stopped_at is not None
        assert row.seen_at == row.stopped_at

    def test_a_stop_the_database_holds_up_does_not_hold_up_the_worker(self) -> None:
        # The row locked by another transaction stands for a database that does not answer:
        # the worker's stop waits the time it is given, no longer, and the thread, a daemon,
        # writes the stop when the database lets it.
        heartbeat = Heartbeat("celery@held")
        heartbeat.start()
        wait_for(
            lambda: WorkerHeartbeat.objects.filter(hostname="celery@held").first(),
            timeout=30, what="the first heartbeat",
        )  # fmt: skip
        with transaction.atomic():
            WorkerHeartbeat.objects.select_for_update().get(hostname="celery@held")
            assert not heartbeat.stop(wait_seconds=0.5)
            assert heartbeat.daemon
            assert heartbeat.is_alive()
        heartbeat.join(timeout=30)
        assert WorkerHeartbeat.objects.get(hostname="celery@held").stopped_at is not None

    def test_a_database_down_at_the_stop_is_logged_not_raised(
        self, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        from django.db import OperationalError

        from backups import heartbeat as module

        heartbeat = Heartbeat("celery@down")
        heartbeat.start()
        wait_for(
            lambda: WorkerHeartbeat.objects.filter(hostname="celery@down").first(),
            timeout=30, what="the first heartbeat",
        )  # fmt: skip

        def close_old_connections() -> None:
            raise OperationalError("connection refused")

        monkeypatch.setattr(module, "close_old_connections", close_old_connections)
        assert heartbeat.stop(wait_seconds=30)
        assert "the worker's stop was not recorded" in caplog.text
        assert WorkerHeartbeat.objects.get(hostname="celery@down").stopped_at is None

    def test_an_unexpected_error_does_not_stop_the_beats(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Django's InterfaceError ("connection already closed") is no DatabaseError: it
        # must not end the thread, or /status/ calls a running worker stopped.
        from django.db import InterfaceError

        from backups import heartbeat as module

        failures = [InterfaceError("connection already closed")]

        def close_old_connections() -> None:
            if failures:
                raise failures.pop()

        monkeypatch.setattr(module, "close_old_connections", close_old_connections)
        monkeypatch.setattr(module, "HEARTBEAT_SECONDS", 0.2)
        beat = Heartbeat("celery@unlucky")
        beat.start()
        try:
            wait_for(
                lambda: WorkerHeartbeat.objects.filter(hostname="celery@unlucky").first(),
                timeout=30, what="a heartbeat after the failed one",
            )  # fmt: skip
            assert beat.is_alive()
        finally:
            beat.stop()
            beat.join(timeout=30)
        assert not failures

    def test_a_worker_not_seen_for_a_week_is_forgotten(self) -> None:
        heartbeat_record(hostname="celery@old-container", now=NOW - timedelta(days=8),
                         started_at=NOW - timedelta(days=9))  # fmt: skip
        heartbeat_record(hostname="celery@yesterday", now=NOW - timedelta(days=1),
                         started_at=NOW - timedelta(days=2))  # fmt: skip
        heartbeat_record(hostname="celery@now", now=NOW, started_at=NOW)
        assert sorted(WorkerHeartbeat.objects.values_list("hostname", flat=True)) == [
            "celery@now", "celery@yesterday",
        ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
class RealWorkerHeartbeatTests:
    def test_a_running_worker_is_seen_on_the_status_page(self, tmp_path: Path) -> None:
        with celery_worker(broker_url="filesystem://", data_dir=tmp_path):
            seen = wait_for(WorkerHeartbeat.objects.first, timeout=120, what="a heartbeat")
            page = _staff().get(reverse("status")).content.decode()
        assert seen.hostname.startswith("celery@")
        assert seen.code_version == settings.EXOGRAM_CODE_VERSION
        assert "The background worker is running" in page

    def test_a_worker_stopped_with_sigterm_is_said_stopped(self, tmp_path: Path) -> None:
        with celery_worker(broker_url="filesystem://", data_dir=tmp_path) as worker:
            wait_for(WorkerHeartbeat.objects.first, timeout=120, what="a heartbeat")
            worker.terminate()  # SIGTERM, as make run, docker compose stop and systemd send
            assert worker.wait(timeout=60) == 0
        row = WorkerHeartbeat.objects.get()
        assert row.stopped_at is not None
        page = _said(_staff().get(reverse("status")).content.decode())
        assert "The background worker stopped cleanly on " in page
