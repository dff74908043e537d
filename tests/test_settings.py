import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from exogram.env import database_from_url, env_bool, env_float, env_int, env_optional_dir

ROOT = Path(__file__).resolve().parent.parent


def _import_settings(**env: str) -> subprocess.CompletedProcess[str]:
    return _run_python("import exogram.settings", **env)


def _run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY"}}
    clean["DJANGO_SETTINGS_MODULE"] = "exogram.settings"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


class EnvHelperTests:
    def test_it_reads_booleans(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("X_FLAG", "yes")
        assert env_bool("X_FLAG") is True
        monkeypatch.setenv("X_FLAG", "0")
        assert env_bool("X_FLAG", default=True) is False

    def test_it_rejects_a_bad_boolean(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("X_FLAG", "maybe")
        with pytest.raises(ImproperlyConfigured, match="X_FLAG"):
            env_bool("X_FLAG")

    def test_it_rejects_a_bad_integer(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("X_MB", "fifty")
        with pytest.raises(ImproperlyConfigured, match="X_MB must be a whole number"):
            env_int("X_MB", 50)
        monkeypatch.setenv("X_MB", "0")
        with pytest.raises(ImproperlyConfigured, match="at least 1"):
            env_int("X_MB", 50, minimum=1)
        monkeypatch.setenv("X_MB", "20")
        with pytest.raises(ImproperlyConfigured, match="at most 19"):
            env_int("X_MB", 10, maximum=19)

    def test_it_rejects_a_threshold_out_of_range(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("X_T", "3")
        with pytest.raises(ImproperlyConfigured, match=r"between 0\.0 and 2\.0"):
            env_float("X_T", 0.45, low=0.0, high=2.0)
        monkeypatch.setenv("X_T", "abc")
        with pytest.raises(ImproperlyConfigured, match="must be a number"):
            env_float("X_T", 0.45, low=0.0, high=2.0)

    def test_it_rejects_a_model_dir_that_does_not_exist(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.setenv("X_DIR", str(tmp_path / "nowhere"))
        with pytest.raises(ImproperlyConfigured, match="existing folder"):
            env_optional_dir("X_DIR")
        monkeypatch.setenv("X_DIR", str(tmp_path))
        assert env_optional_dir("X_DIR") == tmp_path

    def test_it_parses_database_urls(self) -> None:
        db = database_from_url("DATABASE_URL", "postgres://ex:p%40ss@db.local:5433/exogram")
        assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
            "exogram",
            "ex",
            "p@ss",
            "db.local",
            "5433",
        )
        socket = database_from_url("DATABASE_URL", "postgresql:///exogram?host=/run/pg")
        assert socket["HOST"] == "/run/pg"

    def test_it_rejects_bad_database_urls(self) -> None:
        with pytest.raises(ImproperlyConfigured, match="postgres://"):
            database_from_url("DATABASE_URL", "mysql://db/exogram")
        with pytest.raises(ImproperlyConfigured, match="must name a database"):
            database_from_url("DATABASE_URL", "postgres://db")


class SettingsModuleTests:
    def test_it_keeps_a_generated_secret_key_in_the_data_dir(self, tmp_path: Path) -> None:
        key = "from django.conf import settings; print(settings.SECRET_KEY)"
        first = _run_python(key, DEBUG="0", EXOGRAM_DATA_DIR=str(tmp_path))
        assert first.returncode == 0, first.stderr
        key_file = tmp_path / "secret_key"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert first.stdout.strip() == key_file.read_text().strip()
        assert len(first.stdout.strip()) >= 50
        again = _run_python(key, DEBUG="1", EXOGRAM_DATA_DIR=str(tmp_path))
        assert again.stdout == first.stdout  # every process, debug or not, signs alike
        other = _run_python(key, EXOGRAM_DATA_DIR=str(tmp_path / "other"))
        assert other.stdout.strip() not in {"", first.stdout.strip()}

    def test_it_tightens_a_key_file_readable_by_others(self, tmp_path: Path) -> None:
        (tmp_path / "secret_key").write_text("k" * 60 + "\n")
        (tmp_path / "secret_key").chmod(0o644)
        result = _run_python(
            "from django.conf import settings; print(settings.SECRET_KEY)",
            EXOGRAM_DATA_DIR=str(tmp_path),
        )
        assert result.stdout.strip() == "k" * 60
        assert stat.S_IMODE((tmp_path / "secret_key").stat().st_mode) == 0o600

    def test_it_prefers_the_environments_secret_key(self, tmp_path: Path) -> None:
        result = _run_python(
            "from django.conf import settings; print(settings.SECRET_KEY)",
            SECRET_KEY="y" * 50,
            EXOGRAM_DATA_DIR=str(tmp_path),
        )
        assert result.stdout.strip() == "y" * 50
        assert not (tmp_path / "secret_key").exists()

    def test_it_names_an_unwritable_data_dir(self, tmp_path: Path) -> None:
        blocker = tmp_path / "a-file"
        blocker.write_text("")
        result = _import_settings(EXOGRAM_DATA_DIR=str(blocker / "data"))
        assert result.returncode != 0
        assert "set SECRET_KEY or make EXOGRAM_DATA_DIR writable" in result.stderr

    def test_it_rejects_an_unknown_signup_mode(self) -> None:
        result = _import_settings(EXOGRAM_SIGNUP="invite-only")
        assert result.returncode != 0
        assert "EXOGRAM_SIGNUP must be open or closed" in result.stderr

    def test_it_starts_with_a_secret_key_and_debug_off(self) -> None:
        assert _import_settings(DEBUG="0", SECRET_KEY="x" * 50).returncode == 0

    def test_it_fails_loudly_on_a_bad_upload_limit(self) -> None:
        result = _import_settings(DEBUG="1", EXOGRAM_MAX_UPLOAD_MB="lots")
        assert result.returncode != 0
        assert "EXOGRAM_MAX_UPLOAD_MB must be a whole number" in result.stderr

    def test_it_fails_loudly_on_a_bad_threshold(self) -> None:
        result = _import_settings(DEBUG="1", EXOGRAM_CONNECTION_THRESHOLD="-1")
        assert result.returncode != 0
        assert "EXOGRAM_CONNECTION_THRESHOLD must be between" in result.stderr

    def test_it_fails_loudly_on_a_negative_number_of_days_deleted_highlights_stay(self) -> None:
        result = _import_settings(DEBUG="1", EXOGRAM_DELETED_DAYS="-1")
        assert result.returncode != 0
        assert "EXOGRAM_DELETED_DAYS must be at least 0" in result.stderr

    def test_it_fails_loudly_on_an_unknown_embedding_model(self) -> None:
        result = _import_settings(DEBUG="1", EXOGRAM_EMBEDDING_MODEL="gpt")
        assert result.returncode != 0
        assert "EXOGRAM_EMBEDDING_MODEL must be multilingual-e5-small or minilm-l6" in result.stderr
        assert "'gpt'" in result.stderr

    def test_it_fails_loudly_on_a_bad_shared_buffers_size(self) -> None:
        result = _import_settings(DEBUG="1", EXOGRAM_PG_SHARED_BUFFERS="lots")
        assert result.returncode != 0
        assert "EXOGRAM_PG_SHARED_BUFFERS must be a size such as 512MB" in result.stderr
        assert _import_settings(DEBUG="1", EXOGRAM_PG_SHARED_BUFFERS="2GB").returncode == 0

    def test_it_takes_either_built_in_model(self) -> None:
        for name in ("multilingual-e5-small", "minilm-l6"):
            assert _import_settings(DEBUG="1", EXOGRAM_EMBEDDING_MODEL=name).returncode == 0


def test_backups_beside_the_data_folder_are_never_committed_nor_built_into_the_image() -> None:
    # Each holds every reader's highlights and the instance's secret key.
    root = Path(__file__).resolve().parent.parent
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "var-backups/nightly-20261206T033000Z/database.dump"],
        cwd=root, check=False,
    )  # fmt: skip
    assert ignored.returncode == 0
    assert "var-backups" in (root / ".dockerignore").read_text().split()


class TaskQueueSettingsTests:
    def test_it_names_the_imports_queue_after_the_instances_queue_and_lists_it_first(
        self,
    ) -> None:
        code = (
            "from exogram import settings as s\n"
            "print([q.name for q in s.CELERY_TASK_QUEUES])\n"
            "print(s.CELERY_BROKER_TRANSPORT_OPTIONS)\n"
        )
        ran = _run_python(
            code, EXOGRAM_TASK_QUEUE="exo2", CELERY_BROKER_URL="redis://127.0.0.1:6379/9"
        )
        assert ran.returncode == 0, ran.stderr
        queues, options = ran.stdout.splitlines()
        assert queues == "['exo2-imports', 'exo2-refresh', 'exo2']"
        # Redis is asked for them in that order, not round the three.
        assert options == "{'queue_order_strategy': 'priority'}"
