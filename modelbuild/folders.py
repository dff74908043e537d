"""Writing a model folder whole or not at all: what the runtime reads
(books.embedding.model_dir) is only ever a complete folder."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from books.embedding.spec import MODEL_DIR_CONFIG

# The file a complete folder has: written last.
DESCRIPTION = MODEL_DIR_CONFIG


def write_folder(target: Path, files: Mapping[str, bytes], description: Mapping[str, Any]) -> None:
    """Write a builder's `files` and then its `description` (DESCRIPTION) into `target`,
    atomically: staged in a folder beside it and renamed into place, so a folder that has
    its description is complete. What a killed build left at `target` is replaced."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=target.parent))
    try:
        for name, content in files.items():
            (staging / name).write_bytes(content)
        (staging / DESCRIPTION).write_text(json.dumps(dict(description), indent=2) + "\n")
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
