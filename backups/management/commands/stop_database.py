"""`manage.py stop_database`: stop the embedded PostgreSQL of this data folder."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Stop the embedded PostgreSQL under EXOGRAM_DATA_DIR (before moving its folder)."

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.DATABASE_URL:
            raise CommandError("DATABASE_URL is set: there is no embedded server to stop")
        from exogram.embedded_postgres import server

        data_dir = Path(settings.EXOGRAM_DATA_DIR)
        # A running `make run` starts the server again within seconds: stopping it under
        # the run would report "stopped" for a server about to come back.
        run = server.supervisor(data_dir)
        if run is not None:
            raise CommandError(
                f"make run (pid {run}) is supervising the PostgreSQL in "
                f"{data_dir / 'postgres'}; stop it first (Ctrl-C in its terminal, or "
                f"kill {run})"
            )
        server.stop(data_dir)
        if server.is_running(data_dir):
            raise CommandError(f"the PostgreSQL in {data_dir / 'postgres'} did not stop")
        self.stdout.write(f"The PostgreSQL in {data_dir / 'postgres'} is stopped.")
