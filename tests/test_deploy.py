"""`manage.py check --deploy` under the values of a production server behind TLS."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BEHIND_TLS = {
    "SECURE_COOKIES": "1",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "ALLOWED_HOSTS": "exogram.example.org",
}


def _check_deploy(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "SECRET_KEY", *BEHIND_TLS} and not k.startswith("SECURE_")
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**clean, "EXOGRAM_DATA_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        check=False,
    )


class CheckDeployTests:
    def test_it_is_clean_behind_tls_with_the_generated_key(self, tmp_path: Path) -> None:
        result = _check_deploy(tmp_path, **BEHIND_TLS)
        assert result.returncode == 0, result.stderr
        assert "no issues" in result.stdout

    def test_it_only_asks_for_tls_when_served_over_plain_http(self, tmp_path: Path) -> None:
        # `make run`'s own values: everything but what needs a certificate is in place.
        result = _check_deploy(tmp_path)
        assert result.returncode != 0
        warned = {
            line.split(")")[0].split("(")[-1]
            for line in result.stderr.splitlines()
            if "(security." in line
        }
        assert warned == {"security.W004", "security.W008", "security.W012", "security.W016"}

    def test_it_warns_with_debug_on(self, tmp_path: Path) -> None:
        result = _check_deploy(tmp_path, DEBUG="1", **BEHIND_TLS)
        assert "security.W018" in result.stderr
