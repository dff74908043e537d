"""What this process made on its disk while its settings were read: a new data folder,
the secret key file, the file broker's folders.

Every process makes them when missing, so that each finds them (exogram/secret_key.py,
the broker in settings.py). A command that refuses to act takes them back with
`start_writes_undo()`: `manage.py restore` of a damaged backup into a new data folder
leaves no folder behind, rather than a generated key that the next, good restore would
have to set aside.
"""

from pathlib import Path

from django.conf import settings

_made: list[Path] = []


def folder_make(path: Path) -> None:
    """`mkdir -p path`, noting each folder it made, the outermost first."""
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    path.mkdir(parents=True, exist_ok=True)
    _made.extend(reversed(missing))


def file_made(path: Path) -> None:
    _made.append(path)


def start_writes_undo() -> list[Path]:
    """Remove what this process made for its data folder (EXOGRAM_DATA_DIR: in it, or the
    folders made to hold it), the newest first; a folder only while it is empty (another
    process may have written into it meanwhile). Returns what was removed."""
    data_dir = Path(settings.EXOGRAM_DATA_DIR).resolve()
    removed = []
    for path in reversed(_made):
        resolved = path.resolve()
        if not (resolved.is_relative_to(data_dir) or data_dir.is_relative_to(resolved)):
            continue  # made for another data folder than the one the command acts on
        try:
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
        except OSError:  # not empty, or already gone
            continue
        removed.append(path)
    _made.clear()
    return removed
