"""A throw-away database for benchmarks that need one: never the developer's data.

    with bench_database() as name:
        ...  # Django's default connection now points at a freshly migrated `name`

The database is created on the configured server (the embedded one under DEBUG=1) the way
Django's test runner creates its test database: same server, migrations applied, then dropped
on the way out, even when the benchmark fails. A leftover from a killed run is dropped and
made anew.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

DEFAULT_NAME = "exogram_bench"


def setup_django() -> None:
    """Configure Django for a benchmark run as a plain module (`python -m bench.…`)."""
    import django
    from django.apps import apps

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exogram.settings")
    if not apps.ready:
        django.setup()
    # Tasks a benchmark runs in-process would each log a line between the figures.
    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)


@contextmanager
def bench_database(
    name: str = DEFAULT_NAME, *, alias: str = "default", verbosity: int = 0
) -> Iterator[str]:
    """Create and migrate database `name`, point connection `alias` at it, drop it after."""
    setup_django()
    from django.db import connections

    connection = connections[alias]
    real_name = connection.settings_dict["NAME"]
    if name == real_name:
        # The database is dropped on exit: it must never be the one the app uses.
        raise ValueError(f"refusing to use the configured database {real_name!r} for a bench")
    test_settings = connection.settings_dict.setdefault("TEST", {})
    saved_test_name = test_settings.get("NAME")
    # create_test_db() takes its name from TEST.NAME; borrowed here, given back below.
    test_settings["NAME"] = name
    try:
        try:
            # autoclobber: a database of this name can only be a bench's own leftover.
            connection.creation.create_test_db(
                verbosity=verbosity, autoclobber=True, serialize=False, keepdb=False
            )
        except BaseException:
            # Created but not migrated: still ours to drop.
            if connection.settings_dict["NAME"] == name:
                connection.creation.destroy_test_db(real_name, verbosity=verbosity)
            raise
        try:
            yield name
        finally:
            connection.creation.destroy_test_db(real_name, verbosity=verbosity)
    finally:
        test_settings["NAME"] = saved_test_name


@contextmanager
def cloned_database(
    name: str,
    *,
    template: str,
    make: Callable[[], None],
    marker: str,
    alias: str = "default",
) -> Iterator[bool]:
    """A throw-away copy `name` of a kept database `template`, made once by `make()`.

    The first run creates and migrates `template`, points the connection at it and calls
    `make()` (seeding it); `marker` is then written as the database's comment, so a run
    killed half-way seeds again, and a run asking for other contents (another marker)
    too. Every run then copies the template (a file copy: seconds, where seeding the load
    library took 6 minutes on a quiet machine), migrates the copy (this branch may add
    migrations), points the connection at it and drops it on the way out; the template
    is kept. Yields whether the template was made by this run.
    """
    setup_django()
    from django.core.management import call_command
    from django.db import connections

    connection = connections[alias]
    real_name = connection.settings_dict["NAME"]
    if real_name in (name, template):
        raise ValueError(f"refusing to use the configured database {real_name!r} for a bench")

    def admin(sql: str, params: list[str] | None = None) -> list[tuple[Any, ...]]:
        connection.close()
        with connection._nodb_cursor() as cursor:
            cursor.execute(sql, params)
            return list(cursor.fetchall()) if cursor.description else []

    found = admin(
        "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
        [template],
    )
    made = not found or found[0][0] != marker
    if made:
        admin(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')
        admin(f'CREATE DATABASE "{template}"')
        connection.settings_dict["NAME"] = template
        try:
            call_command("migrate", interactive=False, verbosity=0)
            make()
        finally:
            connection.settings_dict["NAME"] = real_name
        admin(f"COMMENT ON DATABASE \"{template}\" IS '{marker}'")
    admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    # FILE_COPY: copies the files and writes one WAL record, where the default (WAL_LOG)
    # writes every page of the library to the WAL.
    admin(f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY')
    connection.settings_dict["NAME"] = name
    try:
        call_command("migrate", interactive=False, verbosity=0)
        yield made
    finally:
        connection.settings_dict["NAME"] = real_name
        admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
