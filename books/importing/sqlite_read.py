"""Open a reader's device database safely: a private temporary copy, read only.

Pure Python, no Django; the standard library's sqlite3. An uploaded database is a file
someone else wrote, so it is never opened in place or for writing: its bytes (and those
of its `-wal`/`-shm` companions, which can hold most of its rows) are written to a fresh
temporary folder under names of our choosing, and opened read only, with the schema
untrusted, no memory mapping, and a budget of work after which a query is interrupted.
A database unpacked from a zip arrives as a file (never held in memory whole) and is
copied the same way.
"""

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

SQLITE_MAGIC = b"SQLite format 3\x00"
# Ample for a device's database (a few thousand highlights read in well under a million
# steps); a crafted file that makes a query loop forever is stopped here instead.
STEP_BUDGET = 500_000_000
_STEPS_PER_CALL = 100_000
MAX_VALUE_BYTES = 64 * 1024 * 1024


class UnreadableDatabase(Exception):
    """The bytes are not an SQLite database this reader can open."""


def is_sqlite(data: bytes) -> bool:
    return data.startswith(SQLITE_MAGIC)


def _uses_wal(data: bytes) -> bool:
    # Header bytes 18 and 19 are the read and write versions: 2 means WAL mode.
    return len(data) > 19 and data[18] == 2


# A database's bytes, or the file in a private temporary folder that holds them.
Content = bytes | Path


def _head(content: Content) -> bytes:
    if isinstance(content, Path):
        with content.open("rb") as file:
            return file.read(len(SQLITE_MAGIC))
    return content


def _write(content: Content, path: Path) -> None:
    if isinstance(content, Path):
        shutil.copyfile(content, path)  # in pieces, never whole in memory
    else:
        path.write_bytes(content)


def _size(content: Content | None) -> int:
    if content is None:
        return 0
    return content.stat().st_size if isinstance(content, Path) else len(content)


@contextmanager
def database_copy(
    data: Content, wal: Content | None = None, shm: Content | None = None
) -> Iterator[sqlite3.Connection]:
    """A read-only connection to a temporary copy of the database (and its companions)."""
    if not is_sqlite(_head(data)):
        raise UnreadableDatabase("not an SQLite database (its first bytes say otherwise)")
    wal = wal if _size(wal) else None
    shm = shm if _size(shm) else None
    with tempfile.TemporaryDirectory(prefix="exogram-db-") as folder:
        path = Path(folder) / "upload.sqlite"
        _write(data, path)
        if wal:
            _write(wal, Path(folder) / "upload.sqlite-wal")
            if shm:
                _write(shm, Path(folder) / "upload.sqlite-shm")
        # Read-only WAL needs its -shm; without a -wal there is nothing to read from it,
        # and `immutable` tells SQLite the copy will not change (no locks, no -shm).
        mode = "mode=ro" if wal else "mode=ro&immutable=1"
        if wal and not shm:
            mode = "mode=ro"  # SQLite rebuilds the index from the -wal (in memory)
        uri = f"file:{quote(str(path))}?{mode}"
        try:
            connection = sqlite3.connect(uri, uri=True, isolation_level=None)
        except (sqlite3.Error, UnicodeDecodeError) as error:
            raise UnreadableDatabase(f"the database cannot be opened: {error}") from None
        try:
            _harden(connection)
            yield connection
        except (sqlite3.Error, UnicodeDecodeError) as error:
            # (SQLite's own message can quote a damaged schema's bytes, which are not UTF-8.)
            raise UnreadableDatabase(f"the database cannot be read: {error}") from None
        finally:
            connection.close()


def _harden(connection: sqlite3.Connection) -> None:
    # Text that is not UTF-8 (a damaged page, a hostile schema) is read with a mark, not
    # an exception from the middle of a row.
    connection.text_factory = lambda raw: raw.decode("utf-8", errors="replace")
    steps = [0]

    def over_budget() -> int:
        steps[0] += _STEPS_PER_CALL
        return 1 if steps[0] > STEP_BUDGET else 0

    connection.set_progress_handler(over_budget, _STEPS_PER_CALL)
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    for pragma in (
        "PRAGMA trusted_schema = OFF",
        "PRAGMA query_only = ON",
        "PRAGMA mmap_size = 0",
        "PRAGMA cell_size_check = ON",
    ):
        connection.execute(pragma)
    connection.execute("SELECT count(*) FROM sqlite_master").fetchone()


def tables_of(connection: sqlite3.Connection) -> set[str]:
    """The names of the real tables (not views: a view of the same name could compute
    anything when read)."""
    return {
        str(name)
        for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }


def columns_of(connection: sqlite3.Connection, table: str) -> set[str]:
    quoted = table.replace('"', '""')
    return {str(row[1]) for row in connection.execute(f'PRAGMA table_info("{quoted}")')}
