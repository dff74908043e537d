"""The nightly backup: retention, the record, a loud failure, the beat's schedule."""

import json
import logging
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from backups.models import BackupRun
from backups.nightly import STAMP, backups_prune
from backups.services import DUMP, MANIFEST
from backups.tasks import nightly_backup
from tests.beat import beat_schedule
from tests.worker import ROOT

NOW = datetime(2026, 12, 4, 3, 30, tzinfo=UTC)  # a Friday


def _nightly(folder: Path, when: datetime) -> Path:
    path = folder / f"nightly-{when.strftime(STAMP)}"
    path.mkdir()
    (path / MANIFEST).write_text("{}")
    return path


class RetentionTests:
    def test_it_keeps_seven_days_and_the_newest_of_four_weeks(self, tmp_path: Path) -> None:
        days = [_nightly(tmp_path, NOW - timedelta(days=n)) for n in range(40)]
        manual = tmp_path / "manual-20260101T000000Z"
        manual.mkdir()
        removed = backups_prune(folder=tmp_path, now=NOW, daily=7, weekly=4)
        kept = sorted(path.name for path in tmp_path.glob("nightly-*"))
        # Seven days, back to Sat 28 Nov; and the newest of each of the four latest ISO
        # weeks: weeks 49 and 48 have theirs among the seven, week 47's is Sun 22 Nov and
        # week 46's Sun 15 Nov.
        expected = [days[n].name for n in (19, 12, 6, 5, 4, 3, 2, 1, 0)]
        assert kept == sorted(expected)
        assert len(removed) == 40 - len(expected)
        assert manual.exists()  # taken by hand: never pruned

    def test_it_never_counts_or_removes_an_unfinished_backup_of_today(self, tmp_path: Path) -> None:
        for n in range(9):
            _nightly(tmp_path, NOW - timedelta(days=n))
        fresh = tmp_path / ".partial-nightly-20261204T033000Z"
        fresh.mkdir()
        stale = tmp_path / ".partial-nightly-20261101T033000Z"
        stale.mkdir()
        os.utime(stale, (NOW.timestamp() - 2 * 86400,) * 2)
        backups_prune(folder=tmp_path, now=NOW, daily=7, weekly=0)
        assert len(list(tmp_path.glob("nightly-*"))) == 7
        assert fresh.exists()
        assert not stale.exists()


@pytest.mark.django_db(transaction=True)
class NightlyBackupTests:
    def test_it_writes_the_backup_records_and_logs_it(
        self, tmp_path: Path, settings: object, caplog: pytest.LogCaptureFixture, alice: object
    ) -> None:
        settings.EXOGRAM_BACKUP_DIR = tmp_path  # type: ignore[attr-defined]
        with caplog.at_level(logging.INFO, logger="backups"):
            result = nightly_backup()
        run = BackupRun.objects.get()
        assert (run.kind, run.status, result["status"]) == ("nightly", "ok", "ok")
        manifest = json.loads((Path(run.path) / MANIFEST).read_text())
        assert manifest["counts"]["accounts_user"] == 1
        assert (
            run.size_bytes
            == sum(entry["bytes"] for entry in manifest["files"].values())
            + (Path(run.path) / MANIFEST).stat().st_size
        )
        assert f"nightly backup written to {run.path}" in caplog.text

    def test_every_file_of_a_backup_is_its_owners_alone(
        self, tmp_path: Path, settings: object, alice: object
    ) -> None:
        """`manage.py backup --to`: the dump is the whole library and the key signs
        sessions. pg_dump wrote the dump 0644, readable by every account of the machine,
        beside a key kept 0600."""
        data_dir = tmp_path / "data"
        data_dir.mkdir()
        (data_dir / "secret_key").write_text(settings.SECRET_KEY + "\n")  # type: ignore[attr-defined]
        settings.EXOGRAM_DATA_DIR = data_dir  # type: ignore[attr-defined]
        backup = tmp_path / "backup"
        call_command("backup", to=backup, stdout=StringIO())
        modes = {path.name: path.stat().st_mode & 0o777 for path in backup.iterdir()}
        assert modes == {DUMP: 0o600, MANIFEST: 0o600, "secret_key": 0o600}
        assert backup.stat().st_mode & 0o777 == 0o700

    def test_the_nightly_folder_and_its_files_are_the_owners_alone(
        self, tmp_path: Path, settings: object, alice: object
    ) -> None:
        settings.EXOGRAM_BACKUP_DIR = tmp_path / "backups"  # type: ignore[attr-defined]
        nightly_backup()
        run = Path(BackupRun.objects.get().path)
        assert (tmp_path / "backups").stat().st_mode & 0o777 == 0o700
        assert run.stat().st_mode & 0o777 == 0o700
        assert {path.stat().st_mode & 0o777 for path in run.iterdir()} == {0o600}

    def test_a_failed_backup_is_an_error_in_the_log_and_red_on_the_status_page(
        self, tmp_path: Path, settings: object, caplog: pytest.LogCaptureFixture
    ) -> None:
        blocker = tmp_path / "a-file"
        blocker.write_text("not a folder")
        settings.EXOGRAM_BACKUP_DIR = blocker / "backups"  # type: ignore[attr-defined]
        with caplog.at_level(logging.ERROR, logger="backups"):
            result = nightly_backup()
        assert result["status"] == "failed"
        assert any(
            record.levelno == logging.ERROR and "FAILED" in record.getMessage()
            for record in caplog.records
        )
        run = BackupRun.objects.get()
        assert "NotADirectoryError" in run.error
        from accounts.models import User

        keeper = User.objects.create_user("keeper", is_staff=True)
        client = Client()
        client.force_login(keeper)
        page = client.get(reverse("status")).content.decode()
        assert "The last backup failed" in page
        assert "NotADirectoryError" in page
        assert "No backup written in the last 26 hours" in page


class BeatScheduleTests:
    def test_it_schedules_the_nightly_backup_by_default(self) -> None:
        assert beat_schedule()["nightly-backup"] == "<crontab: 30 3 * * * (m/h/dM/MY/d)>"

    def test_off_schedules_none(self) -> None:
        assert "nightly-backup" not in beat_schedule(EXOGRAM_BACKUP_DIR="off")
        assert "nightly-backup" not in beat_schedule(EXOGRAM_BACKUP_DIR="OFF")

    def test_it_schedules_the_nightly_backup_into_a_folder_named(self, tmp_path: Path) -> None:
        schedule = beat_schedule(EXOGRAM_BACKUP_DIR=str(tmp_path), EXOGRAM_BACKUP_HOUR="4")
        assert schedule["nightly-backup"] == "<crontab: 30 4 * * * (m/h/dM/MY/d)>"


def _backup_dir(**env: str) -> str:
    code = "from django.conf import settings; print(settings.EXOGRAM_BACKUP_DIR)"
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "exogram.settings", **env}
    if "EXOGRAM_BACKUP_DIR" not in env:
        environment.pop("EXOGRAM_BACKUP_DIR", None)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True,
        text=True, check=True, timeout=60,
    ).stdout.strip().splitlines()[-1]  # fmt: skip


class BackupFolderTests:
    """Beside the data folder by default (`rm -r var` leaves them), `off` for none."""

    def test_it_is_beside_the_data_folder_by_default(self, tmp_path: Path) -> None:
        data_dir = tmp_path / "var"
        assert _backup_dir(EXOGRAM_DATA_DIR=str(data_dir)) == str(tmp_path / "var-backups")
        assert _backup_dir(EXOGRAM_DATA_DIR=str(data_dir), EXOGRAM_BACKUP_DIR="") == str(
            tmp_path / "var-backups"
        )
        assert not (tmp_path / "var-backups").exists()  # made by the first backup

    def test_off_is_none(self, tmp_path: Path) -> None:
        assert _backup_dir(EXOGRAM_DATA_DIR=str(tmp_path / "var"), EXOGRAM_BACKUP_DIR="off") == (
            "None"
        )

    def test_a_folder_named_is_used(self, tmp_path: Path) -> None:
        named = tmp_path / "elsewhere" / "exogram"
        assert _backup_dir(
            EXOGRAM_DATA_DIR=str(tmp_path / "var"), EXOGRAM_BACKUP_DIR=str(named)
        ) == str(named)


@pytest.mark.django_db(transaction=True)
class BackupCommandFolderTests:
    def test_by_hand_it_writes_beside_the_nightly_ones(
        self, tmp_path: Path, settings: object, alice: object
    ) -> None:
        settings.EXOGRAM_BACKUP_DIR = tmp_path / "nightly"  # type: ignore[attr-defined]
        call_command("backup", stdout=StringIO())
        [written] = (tmp_path / "nightly").iterdir()
        assert written.name.startswith("manual-")
        assert (written / MANIFEST).is_file()

    def test_its_manifest_names_the_code_it_came_from(
        self, tmp_path: Path, settings: object, alice: object
    ) -> None:
        call_command("backup", to=tmp_path / "backup", stdout=StringIO())
        manifest = json.loads((tmp_path / "backup" / MANIFEST).read_text())
        assert manifest["code_version"] == settings.EXOGRAM_CODE_VERSION  # type: ignore[attr-defined]
        assert len(manifest["code_version"]) == 40  # a commit: these tests run in a checkout

    def test_with_nightly_backups_off_it_writes_where_they_would_go(
        self, tmp_path: Path, settings: object, alice: object
    ) -> None:
        settings.EXOGRAM_DATA_DIR = tmp_path / "var"  # type: ignore[attr-defined]
        settings.EXOGRAM_BACKUP_DIR = None  # type: ignore[attr-defined]
        call_command("backup", stdout=StringIO())
        [written] = (tmp_path / "var-backups").iterdir()
        assert written.name.startswith("manual-")
        assert not (tmp_path / "var").exists()


@pytest.mark.django_db
class StatusPageTests:
    def test_it_sends_an_anonymous_visitor_to_log_in(self, client: Client) -> None:
        response = client.get(reverse("status"))
        assert response.status_code == 302
        assert reverse("login") in response["Location"]

    def test_it_tells_a_reader_who_is_not_staff_whose_page_it_is(
        self, alice_client: Client
    ) -> None:
        """Not "this page does not exist, or it belongs to someone else's library": the
        page is the operator's, and nothing of it is shown."""
        response = alice_client.get(reverse("status"))
        assert response.status_code == 403
        page = response.content.decode()
        assert "<h1>For the site's operator</h1>" in page
        assert "for the person who runs this Exogram, signed in with a staff account" in page
        assert "Nothing here" not in page
        for operational in ("Background worker", "backup", "Backup", "commit", "EXOGRAM_"):
            assert operational not in page, operational

    def test_it_says_so_in_spanish(self, alice: object, alice_client: Client) -> None:
        response = alice_client.get(reverse("status"), headers={"Accept-Language": "es"})
        assert response.status_code == 403
        page = response.content.decode()
        assert "Para quien administra el sitio" in page
        assert "Esta página es para quien administra este Exogram" in page

    def test_it_says_nightly_backups_are_off(self, settings: object) -> None:
        from accounts.models import User

        settings.EXOGRAM_BACKUP_DIR = None  # type: ignore[attr-defined]
        client = Client()
        client.force_login(User.objects.create_user("keeper", is_staff=True))
        page = client.get(reverse("status")).content.decode()
        assert "Nightly backups are off (<code>EXOGRAM_BACKUP_DIR=off</code>)" in page
        assert "No backup has been taken yet." in page
        assert "The last backup failed" not in page

    def test_a_new_instance_is_not_late_before_its_first_night(self, settings: object) -> None:
        from django.db.migrations.recorder import MigrationRecorder

        from accounts.models import User

        settings.EXOGRAM_BACKUP_DIR = Path("/nowhere/var-backups")  # type: ignore[attr-defined]
        client = Client()
        client.force_login(User.objects.create_user("keeper", is_staff=True))
        recorded = MigrationRecorder.Migration.objects
        recorded.update(applied=datetime.now(UTC) - timedelta(hours=2))
        page = client.get(reverse("status")).content.decode()
        assert "No backup has been taken yet." in page
        assert "No backup written in the last" not in page
        # A day and more later, still none: now it is late.
        recorded.update(applied=datetime.now(UTC) - timedelta(hours=27))
        page = client.get(reverse("status")).content.decode()
        assert "No backup written in the last 26 hours" in page
