"""The worker's heartbeat: recorded by the worker, said on /status/ and /healthz."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone, translation

from accounts.models import User
from backups.heartbeat import Heartbeat, heartbeat_record, worker_wording
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
