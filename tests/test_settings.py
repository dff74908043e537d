import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from exogram.env import database_from_url, env_bool, env_float, env_int, env_optional_dir

ROOT = Path(__file__).resolve().parent.parent


def _import_settings(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY"}}
    return subprocess.run(
        [sys.executable, "-c", "import exogram.settings"],
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
    def test_it_requires_a_secret_key_when_debug_is_off(self) -> None:
        result = _import_settings(DEBUG="0")
        assert result.returncode != 0
        assert "SECRET_KEY must be set when DEBUG is off" in result.stderr

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

    def test_it_fails_loudly_on_an_unknown_embedding_model(self) -> None:
        result = _import_settings(DEBUG="1", EXOGRAM_EMBEDDING_MODEL="gpt")
        assert result.returncode != 0
        assert "EXOGRAM_EMBEDDING_MODEL must be multilingual-e5-small or minilm-l6" in result.stderr
        assert "'gpt'" in result.stderr

    def test_it_takes_either_built_in_model(self) -> None:
        for name in ("multilingual-e5-small", "minilm-l6"):
            assert _import_settings(DEBUG="1", EXOGRAM_EMBEDDING_MODEL=name).returncode == 0
