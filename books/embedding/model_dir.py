"""A model folder (EXOGRAM_EMBEDDING_MODEL_DIR, or a built-in model's built folder): its
description, exogram_model.json, read into a ModelSpec with clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from books.embedding.profiles import (
    DEFAULT_SEARCH_MAX_DISTANCE,
    folder_profile,
)
from books.embedding.spec import (
    DIMENSIONS,
    FIX_FOLDER,
    MODEL_DESCRIPTION,
    MODEL_DIR_CONFIG,
    MODEL_FILE_MISSING,
    EncoderUnavailable,
    ModelSpec,
    read_verified,
)


def _config_value(config: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in config:
        raise ValueError(f"the key {key!r} is missing")
    value = config[key]
    # bool is an int in Python; "dimensions": true must not pass as 1.
    if isinstance(value, bool) and kind is not bool:
        raise ValueError(f"{key!r} must not be true/false")
    if not isinstance(value, kind):
        raise ValueError(f"{key!r} has the wrong type ({type(value).__name__})")
    return value


def model_spec_from_dir(path: Path) -> ModelSpec:
    """A sentence-transformers ONNX export: model.onnx, tokenizer.json and exogram_model.json.

    exogram_model.json holds name, dimensions, pooling ("mean"/"cls"), normalize, prefix,
    max_tokens and threshold (cosine distance), and optionally related_threshold (the looser
    cut for a shared theme; default: threshold + RELATED_MARGIN) and search_max_distance,
    model_sha256/tokenizer_sha256, and sentencepiece_model (a file in the folder whose
    Unigram pieces segment text for tokenizer.json's pipeline) with its sha256.
    """
    path = Path(path)
    fix = FIX_FOLDER % {"description": MODEL_DIR_CONFIG, "folder": path}
    config_path = path / MODEL_DIR_CONFIG
    raw = read_verified(config_path, None, MODEL_DESCRIPTION, fix)
    try:
        config = json.loads(raw)
        if not isinstance(config, dict):
            raise ValueError("it is not a JSON object")
        name = _config_value(config, "name", str).strip()
        dimensions = _config_value(config, "dimensions", int)
        pooling = _config_value(config, "pooling", str)
        normalize = _config_value(config, "normalize", bool)
        prefix = _config_value(config, "prefix", str)
        max_tokens = _config_value(config, "max_tokens", int)
        threshold = float(_config_value(config, "threshold", (int, float)))
        related = config.get("related_threshold")
        if related is not None:
            if isinstance(related, bool) or not isinstance(related, (int, float)):
                raise ValueError("'related_threshold' must be a number")
            related = float(related)
            if not threshold <= related <= 2.0:
                raise ValueError(
                    f"'related_threshold' is a cosine distance in [threshold, 2], not {related}"
                )
        search_max_distance = float(config.get("search_max_distance", DEFAULT_SEARCH_MAX_DISTANCE))
        if not 0.0 < search_max_distance <= 2.0:
            raise ValueError("'search_max_distance' is a cosine distance in (0, 2]")
        model_sha256 = config.get("model_sha256")
        tokenizer_sha256 = config.get("tokenizer_sha256")
        sentencepiece_model = config.get("sentencepiece_model")
        sentencepiece_sha256 = config.get("sentencepiece_model_sha256")
        if sentencepiece_model is not None and not (
            isinstance(sentencepiece_model, str)
            and sentencepiece_model
            and Path(sentencepiece_model).name == sentencepiece_model
        ):
            # A bare file name: a description must not point the loader outside its folder.
            raise ValueError("'sentencepiece_model' must be the name of a file in the folder")
        if not name:
            raise ValueError("'name' is empty")
        if pooling not in ("mean", "cls"):
            raise ValueError(f'\'pooling\' must be "mean" or "cls", not {pooling!r}')
        if max_tokens < 4:
            raise ValueError(f"'max_tokens' must be at least 4, not {max_tokens}")
        if not 0.0 < threshold <= 2.0:
            raise ValueError(f"'threshold' is a cosine distance in (0, 2], not {threshold}")
        for key, value in (
            ("model_sha256", model_sha256),
            ("tokenizer_sha256", tokenizer_sha256),
            ("sentencepiece_model_sha256", sentencepiece_sha256),
        ):
            if value is not None and not (isinstance(value, str) and len(value) == 64):
                raise ValueError(f"{key!r} must be a 64-character hex sha256")
    except ValueError as error:  # json.JSONDecodeError is a ValueError too
        raise EncoderUnavailable(
            f"The model description {config_path} is not valid: {error}. Fix: write a JSON "
            "object with name, dimensions, pooling, normalize, prefix, max_tokens, threshold."
        ) from None
    if dimensions != DIMENSIONS:
        # The vector column is VectorField(384): another width cannot be stored or compared.
        raise EncoderUnavailable(
            f"The model in {path} makes {dimensions}-dimensional vectors, but Exogram stores "
            f"{DIMENSIONS}-dimensional ones. Fix: choose a {DIMENSIONS}-dimensional model, or "
            "unset EXOGRAM_EMBEDDING_MODEL_DIR to use the default model."
        )
    files = ["model.onnx", "tokenizer.json"] + (
        [sentencepiece_model] if sentencepiece_model else []
    )
    for file in files:
        if not (path / file).is_file():
            raise EncoderUnavailable(MODEL_FILE_MISSING % {"path": path / file, "fix": fix})
    return ModelSpec(
        name=name,
        dimensions=dimensions,
        pooling=pooling,
        normalize=normalize,
        prefix=prefix,
        max_tokens=max_tokens,
        model_path=path / "model.onnx",
        tokenizer_path=path / "tokenizer.json",
        model_sha256=model_sha256.lower() if model_sha256 else None,
        tokenizer_sha256=tokenizer_sha256.lower() if tokenizer_sha256 else None,
        sentencepiece_path=path / sentencepiece_model if sentencepiece_model else None,
        sentencepiece_sha256=sentencepiece_sha256.lower() if sentencepiece_sha256 else None,
        profile=folder_profile(
            name,
            same_idea_cut=threshold,
            related_cut=related,
            search_max_distance=search_max_distance,
        ),
    )
