"""Each model carries two thresholds: same idea and the looser related one."""

import json
from pathlib import Path

import pytest

from books.embedding.builtin import minilm_model_spec
from books.embedding.encoder import get_encoder
from books.embedding.model_dir import model_spec_from_dir
from books.embedding.profiles import E5, MINILM, RELATED_MARGIN
from books.embedding.spec import EncoderUnavailable


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
        assert minilm_model_spec().profile == MINILM
        assert (MINILM.same_idea_cut, MINILM.related_cut) == (0.27, 0.37)
        # e5's own cut is one: it judges the pairs of no model by itself (the pair judge
        # does, books.connections.judge); the cuts judge only a model it was not trained for.
        assert E5.same_idea_cut == E5.related_cut

    def test_the_encoder_exposes_the_related_threshold(self) -> None:
        # The default model, multilingual-e5-small.
        assert get_encoder().related_threshold == E5.related_cut

    def test_a_model_folder_names_its_related_threshold(self, tmp_path: Path) -> None:
        spec = model_spec_from_dir(_folder(tmp_path, related_threshold=0.33))
        assert (spec.profile.same_idea_cut, spec.profile.related_cut) == (0.2, 0.33)

    def test_a_model_folder_without_one_gets_the_margin(self, tmp_path: Path) -> None:
        spec = model_spec_from_dir(_folder(tmp_path))
        assert spec.profile.related_cut == pytest.approx(0.2 + RELATED_MARGIN)

    @pytest.mark.parametrize("bad", [0.1, 2.5, "loose", True])
    def test_it_refuses_a_bad_related_threshold(self, tmp_path: Path, bad: object) -> None:
        with pytest.raises(EncoderUnavailable, match="related_threshold"):
            model_spec_from_dir(_folder(tmp_path, related_threshold=bad))
