"""The local sentence encoder: ONNX Runtime + `tokenizers` + numpy, no PyTorch, no Django models
(and `sentencepiece` to segment text for a model folder that names a sentencepiece model, as
e5's does: books/embedding/unigram.py).

A highlight becomes one unit-length float32 vector: the model's token vectors are mean-pooled
over the attention mask and L2-normalized, so cosine distance is `1 - a @ b`. The model is
chosen by `EXOGRAM_EMBEDDING_MODEL` among the built-in ones (books.embedding.builtin, their
figures in books.embedding.profiles), or `EXOGRAM_EMBEDDING_MODEL_DIR` swaps in any
sentence-transformers ONNX export described by an `exogram_model.json`
(books.embedding.model_dir). This module loads a model's files, encodes texts in windows,
and keeps the process's models: an `Encoder` is one model; `Encoders` is the configured one
with the English and theme models beside it (books.embedding.english, books.embedding.theme)
and the id their vectors carry.

Django is imported only inside `get_encoders()`, so the encoder runs (and is tested) without it.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

from books.embedding.builtin import spec_for
from books.embedding.english import english_model_spec_for
from books.embedding.profiles import DEFAULT_MODEL
from books.embedding.spec import (
    EMBEDDING_MODEL,
    INPUTS_NOT_INTEGERS,
    NO_MASK_INPUTS,
    NO_ROOM_FOR_TEXT,
    NO_TOKEN_OUTPUT,
    NOT_AN_EXPORT,
    ONNX_CANNOT_LOAD,
    SENTENCEPIECE,
    TOKENIZER,
    TOKENIZER_PAIR_UNREADABLE,
    TOKENIZER_UNREADABLE,
    UNKNOWN_INPUTS,
    WRONG_WIDTH,
    ModelSpec,
    read_verified,
    sha256_of_file,
    verified_sha256,
)

# EncoderUnavailable is what get_encoders() raises: its callers import it from here.
from books.embedding.spec import EncoderUnavailable as EncoderUnavailable
from books.embedding.theme import THEME_MODEL_ID, ThemeEncoder
from books.embedding.unigram import UnigramTokenizer

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

Vectors = npt.NDArray[np.float32]


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
    fix = spec.fix_hint()
    data = read_verified(spec.tokenizer_path, spec.tokenizer_sha256, TOKENIZER, fix)
    if spec.sentencepiece_path is None:
        return data, None
    pieces = read_verified(spec.sentencepiece_path, spec.sentencepiece_sha256, SENTENCEPIECE, fix)
    return data, pieces


def _tokenizer_from(
    spec: ModelSpec, data: bytes, pieces: bytes | None
) -> Tokenizer | UnigramTokenizer:
    if pieces is not None:
        try:
            return UnigramTokenizer.from_buffers(data, pieces)
        except ValueError as error:
            raise EncoderUnavailable(
                TOKENIZER_PAIR_UNREADABLE
                % {
                    "folder": spec.tokenizer_path.parent,
                    "tokenizer": spec.tokenizer_path.name,
                    "pieces": spec.sentencepiece_path and spec.sentencepiece_path.name,
                    "error": error,
                    "fix": spec.fix_hint(),
                }
            ) from None
    try:
        return Tokenizer.from_buffer(data)
    except Exception as error:  # tokenizers raises plain Exception on bad JSON
        raise EncoderUnavailable(
            TOKENIZER_UNREADABLE
            % {"path": spec.tokenizer_path, "error": error, "fix": spec.fix_hint()}
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
    ) -> None:
        if threads < 0:
            raise ValueError("threads must be 0 (all cores) or more")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.spec = spec
        self.dimensions = spec.dimensions
        # Its own cuts (books.embedding.profiles): kindred readers' echo distance reads them.
        self.threshold = spec.profile.same_idea_cut
        self.related_threshold = spec.profile.related_cut
        self.batch_size = batch_size
        fix = spec.fix_hint()
        # The graph is hashed as a stream and ONNX Runtime reads it from its path: holding its
        # bytes in Python as well while the session loads cost the e5 graph ~95 MB of peak
        # memory in every worker process.
        model_sha256 = verified_sha256(spec.model_path, spec.model_sha256, EMBEDDING_MODEL, fix)
        # Checked before either loads: a bad file fails fast, with nothing loaded.
        tokenizer_files = _read_tokenizer_files(spec)
        # The id this model's vectors carry; a highlight's stored id is Encoders.model_id.
        self.vectors_id = _vectors_id(spec, model_sha256)
        # The session first: its load peaks ~35 MB above what it keeps, and that peak then
        # falls before the tokenizer is there, not on top.
        self._session = self._load_session(spec.model_path, threads)
        self._tokenizer = self._load_tokenizer(*tokenizer_files)
        self._check_dimensions()

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
                NO_ROOM_FOR_TEXT
                % {"max": spec.max_tokens, "specials": specials, "path": spec.tokenizer_path}
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
                ONNX_CANNOT_LOAD
                % {"path": self.spec.model_path, "error": error, "fix": self.spec.fix_hint()}
            ) from None
        inputs = {i.name: i.type for i in session.get_inputs()}
        problem = None
        if "input_ids" not in inputs or "attention_mask" not in inputs:
            problem = NO_MASK_INPUTS
        elif set(inputs) - {"input_ids", "attention_mask", "token_type_ids"}:
            problem = UNKNOWN_INPUTS % {"inputs": sorted(inputs)}
        elif any(kind not in _INT_TYPES for kind in inputs.values()):
            problem = INPUTS_NOT_INTEGERS % {"inputs": inputs}
        self._input_types = {name: _INT_TYPES.get(kind, np.int64) for name, kind in inputs.items()}
        outputs = session.get_outputs()
        named = [o.name for o in outputs if o.name in _TOKEN_OUTPUTS]
        ranked = [o.name for o in outputs if len(o.shape or ()) == 3]
        if named or ranked:
            self._output = (named or ranked)[0]
        elif problem is None:
            problem = NO_TOKEN_OUTPUT
        if problem:
            raise EncoderUnavailable(
                NOT_AN_EXPORT
                % {"path": self.spec.model_path, "problem": problem, "fix": self.spec.fix_hint()}
            )
        return session

    def _check_dimensions(self) -> None:
        # The graph's declared shape may be symbolic, so one tiny run is the honest check.
        width = self._run([_Window(0, *self._ids_of(self._tokenizer.encode("")))]).shape[1]
        if width != self.spec.dimensions:
            raise EncoderUnavailable(
                WRONG_WIDTH
                % {
                    "path": self.spec.model_path,
                    "width": width,
                    "dimensions": self.spec.dimensions,
                    "fix": self.spec.fix_hint(),
                }
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

    def pieces(self, text: str) -> int:
        """How many pieces the tokenizer cuts `text` into, its special tokens aside: a word
        the model knows is one to three; a string of random letters is a piece per letter
        or two (books.search.meaning.reads_as_fragments)."""
        encoding = self._tokenizer.encode(text)
        return sum(1 for special in encoding.special_tokens_mask if not special)

    def keeps_whole(self, word: str) -> bool:
        """Whether the tokenizer's vocabulary has `word` as one piece (beside a word-start
        marker standing alone): a word common enough in what the model read to be kept
        whole ("miedo", "Angst", "peur"), never a slip of one (books.search.spelling)."""
        encoding = self._tokenizer.encode(word)
        pieces = [
            token
            for token, special in zip(encoding.tokens, encoding.special_tokens_mask, strict=True)
            if not special and token != "\u2581"
        ]
        return len(pieces) == 1

    def log_likelihood(self, text: str) -> float | None:
        """The log-probability of the tokenizer's pieces of `text`, its special tokens aside:
        how common those pieces were in what the model's vocabulary was built from. None when
        the tokenizer has no scores (only a Unigram vocabulary read by sentencepiece has
        them here: e5's)."""
        if not isinstance(self._tokenizer, UnigramTokenizer):
            return None
        encoding = self._tokenizer.encode(text)
        return sum(
            self._tokenizer.score(piece_id)
            for piece_id, special in zip(encoding.ids, encoding.special_tokens_mask, strict=True)
            if not special
        )

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


class Encoders:
    """The configured model and, beside it, the English model that judges two English
    passages (books.embedding.english) and the theme model that helps judge every pair
    (books.embedding.theme), when its profile names them: what a highlight's vectors are
    made with, and what the pipeline, search and connections read them by. Each is one
    model; the two beside the main one are loaded on first use (web processes only encode
    queries, with the main model alone)."""

    def __init__(
        self, main: Encoder, english: ModelSpec | None, *, theme: bool = False, threads: int = 0
    ) -> None:
        self.main = main
        self.english_spec = english
        self.with_theme = theme
        # A highlight's vectors are the main model's and, for an English passage, the
        # English model's, and the theme model's: the id names them all, so a change of any
        # re-embeds the library.
        self.model_id = _model_id(main.vectors_id, english, theme=theme)
        self._threads = threads
        self._english: Encoder | None = None
        self._theme: ThemeEncoder | None = None

    def encode_english(self, texts: Sequence[str]) -> Vectors:
        """The English model's vectors of English passages."""
        if self.english_spec is None:
            raise ValueError(f"{self.main.spec.name} has no English model beside it")
        if self._english is None:
            with _encoders_lock:
                if self._english is None:
                    self._english = Encoder(self.english_spec, threads=self._threads)
        return self._english.encode(texts)

    def encode_theme(self, texts: Sequence[str]) -> Vectors:
        """The theme model's vectors; raises EncoderUnavailable when its wheel is missing."""
        if not self.with_theme:
            raise ValueError(f"{self.main.spec.name} has no theme model beside it")
        if self._theme is None:
            with _encoders_lock:
                if self._theme is None:
                    self._theme = ThemeEncoder.from_wheel()
        return self._theme.encode(texts)


def _vectors_id(spec: ModelSpec, model_sha256: str) -> str:
    """The id one model's vectors carry: its own name, or its name and graph's sha256."""
    return spec.vectors_id or f"{spec.name}@{model_sha256[:8]}"


def _model_id(main_id: str, english: ModelSpec | None, *, theme: bool) -> str:
    """The id a highlight's vectors carry: the main model's, with its English and theme
    models'."""
    ids = [main_id]
    if english is not None:
        ids.append(english_model_id(english))
    if theme:
        ids.append(THEME_MODEL_ID)
    return "+".join(ids)


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


# --- the process-wide encoder ------------------------------------------------------------

_CHECKOUT = Path(__file__).resolve().parents[2]
_encoders: dict[tuple[Any, ...], Encoder] = {}
_encoder_sets: dict[tuple[Any, ...], Encoders] = {}
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


def active_model_id() -> str | None:
    """The id the configured model writes on its vectors, without loading the model (web
    processes filter by it); None when the model cannot load. Read paths compare only
    vectors carrying this id: during a model change the others wait to be re-embedded."""
    name, model_dir, _, cache = _configuration()
    key = (name, model_dir, cache)
    if key in _model_ids:
        return _model_ids[key]
    try:
        spec = spec_for(name, model_dir, cache)
        sha256 = spec.model_sha256 or sha256_of_file(spec.model_path, EMBEDDING_MODEL, "")
    except EncoderUnavailable:
        return None  # not remembered: the model may be installed or fixed meanwhile
    try:
        english = english_model_spec_for(spec, cache_dir=cache)
    except EncoderUnavailable:
        return None
    model_id = _model_id(_vectors_id(spec, sha256), english, theme=spec.profile.theme_model)
    _model_ids[key] = model_id
    return model_id


_model_ids: dict[tuple[Any, ...], str] = {}


def model_cache_dir() -> Path:
    """Where built models are kept: EXOGRAM_DATA_DIR/models."""
    return _configuration()[3]


def get_encoders() -> Encoders:
    """The configured model with its English model (the one judging two English
    passages), loaded on first use; raises EncoderUnavailable. Its model_id is the one
    stored vectors are compared by."""
    name, model_dir, threads, cache = _configuration()
    # Keyed by configuration so a test that overrides settings gets its own models.
    key = (name, model_dir, threads, cache)
    encoders = _encoder_sets.get(key)
    if encoders is not None:
        return encoders
    main = _encoder(name, model_dir, threads, cache)
    with _encoders_lock:
        encoders = _encoder_sets.get(key)
        if encoders is None:
            english = english_model_spec_for(main.spec, cache_dir=cache)
            theme = main.spec.profile.theme_model
            encoders = Encoders(main, english, theme=theme, threads=threads)
            _encoder_sets[key] = encoders
    return encoders


def loaded_encoder() -> Encoder | None:
    """The configured model if this process has loaded it already, else None: never loads
    it (a search by words alone asks, and must not pay the second and 100 MB of a load)."""
    name, model_dir, threads, cache = _configuration()
    return _encoders.get((name, model_dir, threads, cache))


def get_encoder(model: str | None = None) -> Encoder:
    """The configured model (get_encoders().main), or the built-in `model` (the evaluation
    commands compare models with it), loaded on first use; raises EncoderUnavailable.
    One model: the id of stored vectors is get_encoders().model_id."""
    if model is None:
        return get_encoders().main
    _, _, threads, cache = _configuration()
    return _encoder(model, None, threads, cache)


def _encoder(name: str, model_dir: Path | None, threads: int, cache: Path) -> Encoder:
    key = (name, model_dir, threads, cache)
    encoder = _encoders.get(key)
    if encoder is not None:
        return encoder
    # A lock, because loading takes a second and ~100 MB (the first e5 load builds its
    # folder, ~30 s): two threads of a worker asking at once must not load the model twice.
    with _encoders_lock:
        encoder = _encoders.get(key)
        if encoder is None:
            encoder = Encoder(spec_for(name, model_dir, cache), threads=threads)
            _encoders[key] = encoder
    return encoder
