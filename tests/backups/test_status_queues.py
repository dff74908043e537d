"""/status/ says why imports wait: how many wait, and the tasks queued ahead of them."""

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.models import Import
from books.tasks import embed_highlights, refresh_library_map, run_import
from exogram.celery import app
from tests.worker import forget_connections, tasks_kept_in


def _status(client: Client) -> str:
    client.force_login(User.objects.create_user("keeper", is_staff=True))
    page = client.get(reverse("status")).content.decode()
    return re.sub(r"\s+", " ", re.sub("<[^>]+>", "", page))


@pytest.mark.django_db
class StatusQueueTests:
    def test_it_counts_the_imports_waiting_for_a_worker(self, alice: User, client: Client) -> None:
        for name, status in [("a", "queued"), ("b", "queued"), ("c", "saving"), ("d", "done")]:
            Import.objects.create(reader=alice, file_name=name, status=status)
        Import.objects.filter(file_name="a").update(
            started_at=timezone.now() - timedelta(minutes=6)
        )

        page = _status(client)

        assert (
            "2 imports waiting for a worker (the oldest for 6 minutes); 1 being read or saved."
            in page
        )

    def test_it_counts_the_tasks_in_each_queue(self, client: Client, tmp_path: Path) -> None:
        default = app.conf.task_default_queue
        with tasks_kept_in(tmp_path):
            for _ in range(3):
                embed_highlights.delay([1])
            run_import.delay(1)
            refresh_library_map.delay(1)
            refresh_library_map.delay(2)
            page = _status(client)
        assert f"{default}-imports 1, {default}-refresh 2, {default} 3" in page

    def test_a_broker_that_does_not_answer_is_said(
        self, client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:9/0")
        forget_connections(app)
        try:
            page = _status(client)
        finally:
            monkeypatch.undo()
            forget_connections(app)
        assert "The task queue does not answer" in page
