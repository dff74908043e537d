#!/usr/bin/env python
import os
import sys


def _say_if_database_left_running() -> None:
    """A command that started the embedded PostgreSQL leaves it running (other processes may
    share it by now: DESIGN.md, embedded default), and says so."""
    server = sys.modules.get("exogram.embedded_postgres.server")
    if server is None:  # this command never touched the embedded server
        return
    from pathlib import Path

    from django.conf import settings

    notice = server.left_running_notice(Path(settings.EXOGRAM_DATA_DIR))
    if notice:
        print(notice, file=sys.stderr, flush=True)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exogram.settings")
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    finally:
        _say_if_database_left_running()


if __name__ == "__main__":
    main()
