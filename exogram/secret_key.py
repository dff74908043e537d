"""The SECRET_KEY kept under EXOGRAM_DATA_DIR when the environment gives none.

Generated on first start and kept readable by its owner only (mode 0600), so every
process that shares the data folder (web, worker, management commands, benches, tests)
signs and checks sessions with the same key, and a restart logs nobody out.
"""

import os
import secrets
import stat
import time
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from exogram.start_writes import file_made, folder_make

FILE_NAME = "secret_key"


def secret_key_load(*, data_dir: Path) -> str:
    """Read the key file, creating it (atomically, mode 0600) the first time."""
    path = data_dir / FILE_NAME
    try:
        folder_make(data_dir)
        _create(path)
        file_made(path)
    except FileExistsError:
        pass
    except OSError as error:
        raise ImproperlyConfigured(
            f"SECRET_KEY is unset and the key file {path} cannot be created ({error}); "
            "set SECRET_KEY or make EXOGRAM_DATA_DIR writable"
        ) from None
    # Another process may be writing it this very moment: O_EXCL made it the creator.
    for _ in range(50):
        key = path.read_text().strip()
        if key:
            break
        time.sleep(0.1)
    else:
        raise ImproperlyConfigured(f"the key file {path} is empty; delete it to make a new one")
    if path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        # Copied or restored with looser rights: the key signs every session.
        path.chmod(0o600)
    return key


def _create(path: Path) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as key_file:
        key_file.write(secrets.token_urlsafe(50) + "\n")
