"""A model folder is written whole or not at all (modelbuild.folders.write_folder)."""

import json
from pathlib import Path

import pytest

from modelbuild.folders import DESCRIPTION, write_folder


class WriteFolderTests:
    def test_it_writes_the_files_and_then_the_description(self, tmp_path: Path) -> None:
        target = tmp_path / "models" / "m-1"
        write_folder(target, {"model.onnx": b"graph"}, {"name": "m", "model_sha256": "ab"})
        assert (target / "model.onnx").read_bytes() == b"graph"
        assert json.loads((target / DESCRIPTION).read_text()) == {"name": "m", "model_sha256": "ab"}
        assert sorted(p.name for p in target.parent.iterdir()) == ["m-1"]  # no staging left

    def test_it_replaces_what_a_killed_build_left(self, tmp_path: Path) -> None:
        target = tmp_path / "m-1"
        target.mkdir()
        (target / "model.onnx").write_bytes(b"half")
        write_folder(target, {"model.onnx": b"whole"}, {"name": "m"})
        assert (target / "model.onnx").read_bytes() == b"whole"
        assert (target / DESCRIPTION).is_file()

    def test_a_failed_write_leaves_nothing(self, tmp_path: Path) -> None:
        target = tmp_path / "m-1"
        with pytest.raises(TypeError):
            # A description that is not JSON fails after the files were staged.
            write_folder(target, {"model.onnx": b"graph"}, {"name": object()})
        assert not target.exists()
        assert list(tmp_path.iterdir()) == []
