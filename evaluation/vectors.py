"""The evaluation texts' vectors, by the app's own encoder, kept under the data folder
(EXOGRAM_DATA_DIR/pair_judge) so that training twice encodes nothing twice."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from evaluation.labels import text_sha as text_key

if TYPE_CHECKING:
    from books.embedding.encoder import Encoders

Vectors = npt.NDArray[np.float32]


def _cache_path(folder: Path, model_id: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_id)
    return folder / f"{safe}.npz"


def cached_vectors(
    texts: Sequence[str], *, encoders: Encoders, kind: str, folder: Path, log: Any = None
) -> Vectors:
    """One unit row per text: the main model's vectors ("main"), the English model's
    ("english") or the theme model's ("theme"), the file named after the models' id, as a
    highlight's vectors are."""
    encode = {
        "main": encoders.main.encode,
        "english": encoders.encode_english,
        "theme": encoders.encode_theme,
    }[kind]
    model_id = f"{kind}-{encoders.model_id}"
    path = _cache_path(folder, model_id)
    known: dict[str, Vectors] = {}
    if path.exists():
        with np.load(path) as stored:
            known = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))
    keys = [text_key(t) for t in texts]
    missing = list(dict.fromkeys(k for k in keys if k not in known))
    if missing:
        by_key = {k: t for k, t in zip(keys, texts, strict=True)}
        step = 512
        for start in range(0, len(missing), step):
            part = missing[start : start + step]
            batch = [by_key[k] for k in part]
            found = encode(batch)
            known |= dict(zip(part, found, strict=True))
            if log is not None:
                log(f"  encoded {min(start + step, len(missing))}/{len(missing)} ({model_id[:40]})")
            folder.mkdir(parents=True, exist_ok=True)
            np.savez(path, keys=np.array(list(known)), vectors=np.stack(list(known.values())))
    if not keys:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([known[k] for k in keys]).astype(np.float32)
