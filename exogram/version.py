"""Which code is running: the git commit it came from, read once when the process starts.

From `git rev-parse HEAD` in a checkout (as `make run` runs it), else from the
EXOGRAM_VERSION variable (a Docker image has no .git: its build sets it), else "unknown".
The backup manifest and /status/ show it, and `restore` says when a backup came from
other code.
"""

import os
import subprocess
from pathlib import Path

UNKNOWN = "unknown"


def code_version_read(root: Path) -> str:
    if (root / ".git").exists():  # a folder, or a file in a git worktree
        try:
            found = subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                timeout=10, check=True,
            ).stdout.strip()  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            # No git installed, or one that refuses the folder (another user's checkout).
            found = ""
        if found:
            return found
    return os.environ.get("EXOGRAM_VERSION", "").strip() or UNKNOWN


def code_version_short(version: str) -> str:
    """A commit as people quote it (12 hex digits); anything else as it is."""
    is_commit = len(version) == 40 and all(c in "0123456789abcdef" for c in version)
    return version[:12] if is_commit else version
