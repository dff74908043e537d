"""A PostgreSQL backend that starts the embedded cluster before its first connection.

Starting lazily (not when settings are imported) keeps `manage.py check`, linting and
other commands that never touch the database from booting a server.
"""

from functools import cache
from pathlib import Path
from typing import Any

from django.db.backends.postgresql import base

from . import server


@cache
def _socket_dir(data_dir: str) -> str:
    # Once per process: start() takes a file lock and checks the cluster, which is too
    # much work for every new connection.
    return str(server.start(Path(data_dir)))


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        params["host"] = _socket_dir(self.settings_dict["EXOGRAM_DATA_DIR"])
        return params
