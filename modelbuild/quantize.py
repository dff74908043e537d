"""The opt-in fast encoder: the default model with int8 matrix products, ~1.7x the speed.

`manage.py build_fast_model DIR` writes it as a model folder for EXOGRAM_EMBEDDING_MODEL_DIR.
It is not the default: it meets the speed and fidelity bar on the benchmark (bench_encoder)
by a thin margin, and falls below it on other text (see FAST_PATH_MEASURED).

How it is made from the shipped model:
1. The int8 weights are dequantized into an fp32 graph (`fp32_graph`), the same products the
   original model computes.
2. SmoothQuant: the input of each weight matrix product is divided, channel by channel, by
   s = amax(x)^alpha / amax(W)^(1-alpha) and the weight rows multiplied by s (exact in fp32).
   Activations then have no outlier channels left for an int8 scale to be wasted on. amax(x)
   comes from running calibration texts through the fp32 graph.
3. ONNX Runtime's dynamic quantization: int8 weights per output channel, activations
   quantized per call. The activation-by-activation products of attention, and the feed-forward
   down-projections of the first two layers (the most sensitive), stay fp32.

Measured on 2 cores (AVX512-VNNI), 256 highlight-like texts, 2 threads, batch 16 sorted, against
the fp32 graph: plain dynamic int8 ran 395-432 texts/s with top-10 neighbour overlap 0.912;
this recipe 343-361 texts/s, overlap 0.955-0.960, cosine mean 0.9988 (min 0.994), STS-B dev
Spearman 0.8666 (fp32: 0.8668). With 128 calibration texts the overlap fell to 0.950; on
1,611 quotes outside the calibration set it was 0.944 (plain dynamic int8: 0.875).
"""

import logging
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic
from tokenizers import Tokenizer

SMOOTHING_ALPHA = 0.72
# Feed-forward down-projections kept in fp32, by layer.
FP32_DOWN_LAYERS = (0, 1)
# Fewer calibration texts than this miss activation outliers (measured: 128 fell below the
# fidelity bar, 512 and 1,024 met it).
MIN_CALIBRATION_TEXTS = 256
DEFAULT_CALIBRATION_TEXTS = 512
# Clamp the smoothing factors: a channel that never fires must not blow up its weight row.
_SCALE_RANGE = (1e-3, 1e3)


class QuantizationError(Exception):
    """The model cannot be made into the fast variant (not the graph this recipe knows)."""


def fp32_graph(model_path: Path) -> onnx.ModelProto:
    """The shipped graph with every Cast(int8) -> Mul(scale) weight chain folded into fp32."""
    model = onnx.load_model_from_string(model_path.read_bytes())
    graph = model.graph
    arrays = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    casts = {n.output[0]: n for n in graph.node if n.op_type == "Cast" and n.input[0] in arrays}
    folded: dict[str, npt.NDArray[np.float32]] = {}
    dropped: set[str] = set()
    for node in graph.node:
        if node.op_type == "Mul" and node.input[0] in casts and node.input[1] in arrays:
            quantized = arrays[casts[node.input[0]].input[0]].astype(np.float32)
            folded[node.output[0]] = (quantized * arrays[node.input[1]]).astype(np.float32)
            dropped |= {node.output[0], node.input[0]}
    if not folded:
        raise QuantizationError(f"{model_path} has no int8 weights to dequantize")
    keep = [n for n in graph.node if n.output[0] not in dropped]
    used = {name for node in keep for name in node.input}
    initializers = [init for init in graph.initializer if init.name in used]
    initializers += [numpy_helper.from_array(array, name) for name, array in folded.items()]
    del graph.node[:]
    graph.node.extend(keep)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    onnx.checker.check_model(model)
    return model


def _input_maxima(
    model: onnx.ModelProto, inputs: Sequence[str], tokenizer: Tokenizer, texts: Sequence[str]
) -> dict[str, npt.NDArray[np.float64]]:
    """Per channel, the largest |value| each tensor in `inputs` takes over the texts."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for name in inputs:
        probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(
        probe.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feeds = {i.name for i in session.get_inputs()}
    maxima: dict[str, npt.NDArray[np.float64]] = {}
    for text in texts:  # one at a time: no padding to skew the maxima
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        values = session.run(list(inputs), {k: v for k, v in feed.items() if k in feeds})
        for name, value in zip(inputs, values, strict=True):
            channel = np.abs(np.asarray(value).reshape(-1, value.shape[-1])).max(axis=0)
            maxima[name] = np.maximum(maxima[name], channel) if name in maxima else channel
    return maxima


def fast_model(model_path: Path, tokenizer_path: Path, texts: Sequence[str]) -> bytes:
    """The fast variant of the model at `model_path`, calibrated on `texts`."""
    if len(texts) < MIN_CALIBRATION_TEXTS:
        raise QuantizationError(
            f"calibration needs at least {MIN_CALIBRATION_TEXTS} texts, not {len(texts)}"
        )
    model = fp32_graph(model_path)
    graph = model.graph
    weights = {init.name: init for init in graph.initializer}
    products = [n for n in graph.node if n.op_type == "MatMul"]
    weighted = [n for n in products if n.input[1] in weights]
    # A BERT layer has six: query, key, value, attention output, feed-forward up and down.
    if not weighted or len(weighted) % 6:
        raise QuantizationError(f"{model_path} is not the BERT graph this recipe knows")
    down = weighted[5::6]

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    groups: dict[str, list[onnx.NodeProto]] = {}
    for node in weighted:  # query, key and value share their input
        groups.setdefault(node.input[0], []).append(node)
    maxima = _input_maxima(model, sorted(groups), tokenizer, texts)

    smoothing: dict[str, onnx.NodeProto] = {}  # first product of a group -> its Mul
    for tensor, members in groups.items():
        arrays = [numpy_helper.to_array(weights[m.input[1]]).astype(np.float64) for m in members]
        x_max = np.maximum(maxima[tensor], 1e-5)
        w_max = np.maximum(np.max([np.abs(w).max(axis=1) for w in arrays], axis=0), 1e-5)
        scale = np.clip(x_max**SMOOTHING_ALPHA / w_max ** (1 - SMOOTHING_ALPHA), *_SCALE_RANGE)
        inverse = numpy_helper.from_array((1 / scale).astype(np.float32), f"{tensor}_smooth")
        graph.initializer.append(inverse)
        smoothing[members[0].name] = helper.make_node(
            "Mul", [tensor, inverse.name], [f"{tensor}_smoothed"], name=f"{tensor}_smooth_mul"
        )
        for member, array in zip(members, arrays, strict=True):
            member.input[0] = f"{tensor}_smoothed"
            smoothed = numpy_helper.from_array(
                (array * scale[:, None]).astype(np.float32), member.input[1]
            )
            weights[member.input[1]].CopyFrom(smoothed)
    ordered: list[onnx.NodeProto] = []
    for node in graph.node:
        if node.name in smoothing:
            ordered.append(smoothing[node.name])
        ordered.append(node)
    del graph.node[:]
    graph.node.extend(ordered)

    keep_fp32 = [n.name for n in products if n.input[1] not in weights]
    keep_fp32 += [down[layer].name for layer in FP32_DOWN_LAYERS if layer < len(down)]
    if not all(keep_fp32):
        raise QuantizationError(f"{model_path} has unnamed matrix products")
    with tempfile.TemporaryDirectory() as scratch:
        source, target = Path(scratch) / "smoothed.onnx", Path(scratch) / "fast.onnx"
        onnx.save(model, str(source))
        # The quantizer logs on the root logger, at warning level, that it saw no static
        # calibration and no pre-processing: both expected for dynamic quantization.
        logging.disable(logging.WARNING)
        try:
            quantize_dynamic(
                str(source),
                str(target),
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                reduce_range=False,
                weight_type=QuantType.QInt8,
                nodes_to_exclude=keep_fp32,
            )
        finally:
            logging.disable(logging.NOTSET)
        return target.read_bytes()
