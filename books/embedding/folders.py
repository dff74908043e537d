"""Model folders built once from a wheel's file, in a child process, under the data dir.

A built-in model whose wheel file ONNX Runtime should not load as it is (e5's packed 4-bit
file, MiniLM's graph that dequantizes at load) is rewritten once into a folder under
EXOGRAM_DATA_DIR/models, named after the source's sha256 and the builder's version: a new
source or a new builder gets a new folder, and the old ones are removed.

The builders are tools, apart from the runtime (the `modelbuild` package, which the runtime
never imports: an import-linter contract keeps it so). The runtime asks for a folder through
one narrow entry point, `python -m modelbuild FAMILY SOURCE TARGET`, in a child process
whose peak memory a worker process, kept under 450 MB for months, must not carry; a file
lock makes processes that start together build it once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from books.embedding.spec import MODEL_DIR_CONFIG

# The builders' entry point, run as a module in a child process (never imported here).
BUILDER = "modelbuild"


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


def built_folder(*, family: str, source: Path, target: Path) -> Path:
    """`target` (named by folder_name), built from `source` by the builder of `family` unless
    it is complete already; other folders of the same `family` under its parent are
    removed."""
    if (target / MODEL_DIR_CONFIG).is_file():
        return target
    with _locked(target.parent / ".build.lock"):
        if (target / MODEL_DIR_CONFIG).is_file():  # built by another process meanwhile
            return target
        command = [sys.executable, "-m", BUILDER, family, str(source), str(target)]
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
