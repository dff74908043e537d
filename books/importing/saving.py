"""How far the save of a background import has got, written while it goes on.

The save is one transaction (a file is imported whole or not at all): nothing it writes is
seen by another connection before the commit, and the report it writes part by part locks
the import's row until then. So the count is written from a database connection of its
own, in autocommit, into ImportSaving, a row that the save's transaction never touches:
the page that polls the import reads each write at once, no write waits for the save, and
a save that fails rolls back everything it added to the library, while the count (no part
of the library) stays with the failed import.
"""

import logging
from types import TracebackType

from django.db import DEFAULT_DB_ALIAS, Error, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

from books.models import Import, ImportSaving

logger = logging.getLogger(__name__)

# At most this many writes of the count for one import (one small row each, in a few ms),
# so that a 200,000-highlight file moves the bar in steps of 2% ...
SAVING_WRITES = 50
# ... and never one for fewer highlights than this: a small file gets a few writes.
SAVING_STEP_MIN = 250
# A write that waits for a lock longer than this gives up, and the count with it: the
# import goes on without it. One thing holds the row: the reader's account deleted during
# the save (its transaction deletes this row, then waits for the import's, which the save
# holds), a deadlock PostgreSQL cannot see, one side being this process's other connection.
SAVING_LOCK_TIMEOUT = "2s"


class SavingProgress:
    """Write how many of the file's highlights the save has gone through, in steps.

    Used as a context manager around the save: the count starts at 0 (written on the
    caller's connection, before its transaction), then goes on as the save matches the
    highlights of each part of the file (`matched`) and saves the part (`part_saved`);
    the second connection is closed on the way out, whatever happened.
    """

    def __init__(self, *, the_import: Import, total: int) -> None:
        self.the_import = the_import
        self.total = total
        self.step = max(SAVING_STEP_MIN, -(-total // SAVING_WRITES))
        self.written = 0
        # Highlights of the parts of the file saved before the one under way.
        self.before = 0
        self._database: BaseDatabaseWrapper | None = None
        self._given_up = False

    def __enter__(self) -> "SavingProgress":
        ImportSaving.objects.update_or_create(
            the_import=self.the_import,
            defaults={"done": 0, "total": self.total, "updated_at": timezone.now()},
        )
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def matched(self, count: int) -> None:
        """`count` highlights of the part under way are matched (parsed_clippings_save's
        `on_match`)."""
        self.advance(self.before + count)

    def part_saved(self, highlights: int) -> None:
        """The part under way, of that many highlights, is saved (in the transaction)."""
        self.before += highlights
        self.advance(self.before)

    def advance(self, done: int) -> None:
        """The save has gone through `done` highlights of the file: written when that is
        a step on from the last count written, or all of them."""
        done = min(done, self.total)
        if done - self.written >= self.step or (done == self.total and self.written < done):
            self._write(done)

    def _write(self, done: int) -> None:
        if self._given_up:
            return
        try:
            if self._database is None:
                self._database = connections.create_connection(DEFAULT_DB_ALIAS)
                with self._database.cursor() as cursor:
                    cursor.execute(f"SET lock_timeout = '{SAVING_LOCK_TIMEOUT}'")
            with self._database.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {ImportSaving._meta.db_table} SET done = %s, updated_at = %s "
                    "WHERE the_import_id = %s",
                    [done, timezone.now(), self.the_import.pk],
                )
        except Error:  # an InterfaceError too: only the bar stops, the save goes on
            logger.warning("could not write the saving count of an import", exc_info=True)
            self._given_up = True
            self.close()
            return
        self.written = done

    def close(self) -> None:
        if self._database is not None:
            try:
                self._database.close()
            except Error:
                logger.warning("could not close the saving count's connection", exc_info=True)
            self._database = None
