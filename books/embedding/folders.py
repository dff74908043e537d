"""Model folders built once from a wheel's file, in a child process, under the data dir.

A built-in model whose wheel file ONNX Runtime should not load as it is (e5's packed 4-bit
file, MiniLM's graph that dequantizes at load) is rewritten once into a folder under
EXOGRAM_DATA_DIR/models, named after the source's sha256 and the builder's version: a new
source or a new builder gets a new folder, and the old ones are removed. The build runs in a
child process (`python -m <builder> SOURCE TARGET`), whose peak memory a worker process,
kept under 450 MB for months, must not carry; a file lock makes processes that start
together build it once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

# The file a complete folder has: builders write it last.
DESCRIPTION = "exogram_model.json"


class BuildFailed(RuntimeError):
    """The child process could not build the folder; the message is its last line."""


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder at a time: worker processes starting together build the folder once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def folder_name(family: str, source_sha256: str, version: int) -> str:
    """A built folder's name: its family, its source's sha256 and its builder's version."""
    return f"{family}-{source_sha256[:16]}-v{version}"


def built_folder(*, builder: str, source: Path, target: Path, family: str) -> Path:
    """`target` (named by folder_name), built from `source` by the module `builder` unless
    it is complete already; other folders of the same `family` under its parent are
    removed."""
    if (target / DESCRIPTION).is_file():
        return target
    with _locked(target.parent / ".build.lock"):
        if (target / DESCRIPTION).is_file():  # built by another process meanwhile
            return target
        command = [sys.executable, "-m", builder, str(source), str(target)]
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(_import_roots())}
        done = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout or "no output").strip().splitlines()
            raise BuildFailed(f"building the model from {source} failed: {lines[-1]}")
        for old in target.parent.glob(f"{family}-*"):
            if old != target and old.is_dir():  # a build from another source or builder
                shutil.rmtree(old, ignore_errors=True)
    return target


def _import_roots() -> list[str]:
    root = str(Path(__file__).resolve().parents[2])
    return [root, *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]


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
