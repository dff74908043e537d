"""A model's files, as the encoder loads them: where they are, what they must hash to, and
how to read them so that a bad file fails early with its fix in the message.

Every source file is checked by sha256 at load; no wheel's own code is ever imported.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import sys
from dataclasses import dataclass, field
from pathlib import Path

from books.embedding.profiles import ModelProfile

# The vector column is VectorField(384): every model makes 384-dimensional vectors.
DIMENSIONS = 384
# A model folder's description; builders write it last, so a folder that has it is complete.
MODEL_DIR_CONFIG = "exogram_model.json"


class EncoderUnavailable(RuntimeError):
    """The embedding model cannot be loaded; the message says which file, why, and the fix."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    dimensions: int
    pooling: str  # "mean" or "cls"
    normalize: bool
    prefix: str
    max_tokens: int
    model_path: Path
    tokenizer_path: Path
    # Its figures for search and connections (books.embedding.profiles).
    profile: ModelProfile
    # Expected sha256 of the two files; None means "not pinned" (a model folder may pin them).
    model_sha256: str | None = field(default=None, kw_only=True)
    tokenizer_sha256: str | None = field(default=None, kw_only=True)
    # A sentencepiece model that segments the text for tokenizer.json's pipeline (see
    # books/embedding/unigram.py), or None when tokenizer.json holds its own model.
    sentencepiece_path: Path | None = field(default=None, kw_only=True)
    sentencepiece_sha256: str | None = field(default=None, kw_only=True)
    # The id its vectors carry, when not "name@sha256 of the graph": a graph rewritten for
    # memory that computes the same vectors keeps its source's id (no re-embedding).
    vectors_id: str | None = field(default=None, kw_only=True)
    # What a reader does when a file is bad; None: check the folder's files.
    fix: str | None = field(default=None, kw_only=True)

    def fix_hint(self) -> str:
        if self.fix is not None:
            return self.fix
        return (
            f"check the files in {self.model_path.parent}, or unset "
            "EXOGRAM_EMBEDDING_MODEL_DIR to use the default model"
        )


def read_verified(path: Path, expected_sha256: str | None, what: str, fix: str) -> bytes:
    """The file's bytes, checked once in memory: what is hashed is exactly what gets loaded."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise EncoderUnavailable(f"The {what} is missing: looked for {path}. Fix: {fix}.") from None
    except OSError as error:
        raise EncoderUnavailable(
            f"The {what} at {path} cannot be read ({error}). Fix: {fix}."
        ) from None
    if expected_sha256 is not None:
        _check_sha256(path, expected_sha256, hashlib.sha256(data).hexdigest(), what, fix)
    return data


def sha256_of_file(path: Path, what: str, fix: str) -> str:
    """Streamed: the 72 MB e5 file is hashed without holding it in a worker's memory."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except FileNotFoundError:
        raise EncoderUnavailable(f"The {what} is missing: looked for {path}. Fix: {fix}.") from None
    except OSError as error:
        raise EncoderUnavailable(
            f"The {what} at {path} cannot be read ({error}). Fix: {fix}."
        ) from None
    return digest.hexdigest()


def verified_sha256(path: Path, expected_sha256: str | None, what: str, fix: str) -> str:
    """The file's sha256, streamed, checked against `expected_sha256` when it is given."""
    actual = sha256_of_file(path, what, fix)
    if expected_sha256 is not None:
        _check_sha256(path, expected_sha256, actual, what, fix)
    return actual


def _check_sha256(path: Path, expected: str, actual: str, what: str, fix: str) -> None:
    if actual != expected:
        raise EncoderUnavailable(
            f"The {what} at {path} does not match its pinned sha256 "
            f"(expected {expected}, found {actual}): the file is altered or from "
            f"another version. Fix: {fix}."
        )


@dataclass(frozen=True)
class PinnedFile:
    distribution: str
    version: str
    path: str  # inside site-packages, as the wheel's RECORD lists it
    sha256: str


def pinned_path(pinned: PinnedFile, hint: str) -> Path:
    """Where the wheel put the file, found from its metadata: no code of the wheel runs."""
    wanted = f"{pinned.distribution}=={pinned.version}"
    try:
        dist = importlib.metadata.distribution(pinned.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise EncoderUnavailable(
            f"The embedding model needs {pinned.path} from the {wanted} wheel, which "
            f"is not installed in this Python environment ({sys.prefix}). Fix: {hint}."
        ) from None
    path = Path(str(dist.locate_file(pinned.path)))
    if dist.version != pinned.version:
        raise EncoderUnavailable(
            f"The embedding model needs {wanted}, but {pinned.distribution} "
            f"{dist.version} is installed (looked at {path}). Fix: {hint}."
        )
    return path
