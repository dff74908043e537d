"""Which code is running: the git commit, else EXOGRAM_VERSION, else "unknown"."""

import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from accounts.models import User
from exogram.version import code_version_read, code_version_short
from tests.worker import ROOT


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.org", *args],
        cwd=folder, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


class CodeVersionTests:
    def test_it_is_the_commit_of_a_checkout(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("EXOGRAM_VERSION", "from-the-image")
        _git(tmp_path, "init", "-q")
        (tmp_path / "README.md").write_text("Exogram\n")
        _git(tmp_path, "add", "README.md")
        _git(tmp_path, "commit", "-q", "-m", "first")
        assert code_version_read(tmp_path) == _git(tmp_path, "rev-parse", "HEAD")

    def test_without_a_checkout_it_is_exogram_version(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("EXOGRAM_VERSION", " 1f2e3d4c5b6a ")
        assert code_version_read(tmp_path) == "1f2e3d4c5b6a"

    def test_a_checkout_git_cannot_read_falls_back_too(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (tmp_path / ".git").write_text("gitdir: /nowhere\n")  # a worktree whose repo moved
        monkeypatch.setenv("EXOGRAM_VERSION", "from-the-image")
        assert code_version_read(tmp_path) == "from-the-image"

    def test_with_neither_it_is_unknown(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv("EXOGRAM_VERSION", raising=False)
        assert code_version_read(tmp_path) == "unknown"

    def test_this_process_read_its_own_commit_at_start(self) -> None:
        assert _git(ROOT, "rev-parse", "HEAD") == settings.EXOGRAM_CODE_VERSION

    def test_a_commit_is_quoted_short_anything_else_whole(self) -> None:
        assert code_version_short("0123456789abcdef0123456789abcdef01234567") == "0123456789ab"
        assert code_version_short("unknown") == "unknown"


@pytest.mark.django_db
def test_the_status_page_shows_the_code_version(client: Client) -> None:
    client.force_login(User.objects.create_user("keeper", is_staff=True))
    page = client.get(reverse("status")).content.decode()
    assert f"<code>{settings.EXOGRAM_CODE_VERSION}</code>" in page
