"""Each model carries two thresholds: same idea and the looser related one."""

import json
from pathlib import Path

import pytest

from books.embedding.encoder import (
    E5_RELATED_THRESHOLD,
    E5_THRESHOLD,
    MINILM_RELATED_THRESHOLD,
    MINILM_THRESHOLD,
    RELATED_MARGIN,
    EncoderUnavailable,
    get_encoder,
    minilm_model_spec,
    model_spec_from_dir,
)


def _folder(path: Path, **overrides: object) -> Path:
    description = {
        "name": "some-model", "dimensions": 384, "pooling": "mean", "normalize": True,
        "prefix": "", "max_tokens": 128, "threshold": 0.2,
    }  # fmt: skip
    description.update(overrides)
    (path / "exogram_model.json").write_text(json.dumps(description))
    # Only the description is read here; the files must exist.
    (path / "model.onnx").write_bytes(b"")
    (path / "tokenizer.json").write_text("{}")
    return path


class RelatedThresholdTests:
    def test_each_built_in_model_has_both_thresholds(self) -> None:
        spec = minilm_model_spec()
        assert (spec.threshold, spec.related) == (MINILM_THRESHOLD, MINILM_RELATED_THRESHOLD)
        assert MINILM_THRESHOLD < MINILM_RELATED_THRESHOLD
        # e5's own cut is one: it judges the pairs of no model by itself (the pair judge
        # does, books.connections.judge); the cuts judge only a model it was not trained for.
        assert E5_THRESHOLD == E5_RELATED_THRESHOLD

    def test_the_encoder_exposes_the_related_threshold(self) -> None:
        # The default model, multilingual-e5-small.
        assert get_encoder().related_threshold == E5_RELATED_THRESHOLD

    def test_a_model_folder_names_its_related_threshold(self, tmp_path: Path) -> None:
        spec = model_spec_from_dir(_folder(tmp_path, related_threshold=0.33))
        assert (spec.threshold, spec.related) == (0.2, 0.33)

    def test_a_model_folder_without_one_gets_the_margin(self, tmp_path: Path) -> None:
        spec = model_spec_from_dir(_folder(tmp_path))
        assert spec.related_threshold is None
        assert spec.related == pytest.approx(0.2 + RELATED_MARGIN)

    @pytest.mark.parametrize("bad", [0.1, 2.5, "loose", True])
    def test_it_refuses_a_bad_related_threshold(self, tmp_path: Path, bad: object) -> None:
        with pytest.raises(EncoderUnavailable, match="related_threshold"):
            model_spec_from_dir(_folder(tmp_path, related_threshold=bad))
