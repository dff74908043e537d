"""A Unigram tokenizer whose pieces are found by `sentencepiece`, and everything else by
`tokenizers`.

multilingual-e5-small's vocabulary has 250,002 pieces. As a `tokenizers` Unigram model it
held 253-273 MB in every encoding process (VmRSS before and after loading it, in a fresh
process), because `tokenizers` builds a byte trie with a hash map in each of its 782,760
nodes; that alone put a worker process at ~510 MB, past the 450 MB aim and past the 420 MB
after which a worker process is replaced after every task (and the next one loads the model
again). `sentencepiece` holds the same pieces and scores in a double-array trie, in 45 MB,
and runs the same Viterbi.

So the folder holds both halves: `tokenizer.json`, a `tokenizers` pipeline whose model knows
only the special tokens (it normalizes, puts in the metaspace, cuts long texts into
overlapping windows and adds `<s> … </s>`, and keeps the offsets of every token), and
`sentencepiece.model`, the pieces and scores, which segments the normalized text between
the two. On the 10,115 sentences in eight languages of `bench/bench_e5.py` this gives the
`tokenizers` Unigram's ids on every one. The two differ only where two segmentations tie
to float precision (a run of dashes: sentencepiece scores in float32, `tokenizers` in
float64), and there this one's is the reference engine's.
"""

from __future__ import annotations

from typing import Any

import sentencepiece
from tokenizers import Encoding, PreTokenizedString, Token, Tokenizer


class UnigramTokenizer:
    """The subset of `tokenizers.Tokenizer` the encoder uses, over a sentencepiece model.

    Special tokens written in a text (`<s>`) are not cut out before normalization as
    `tokenizers` does: the sentencepiece model carries them as user-defined pieces, which
    the segmentation takes whole, as the reference engine does with its piece table.
    """

    def __init__(self, pipeline: Tokenizer, model_proto: bytes) -> None:
        self._pipeline = pipeline
        self._normalizer = pipeline.normalizer
        self._pre_tokenizer = pipeline.pre_tokenizer
        self._pieces = sentencepiece.SentencePieceProcessor(model_proto=model_proto)

    @classmethod
    def from_buffers(cls, tokenizer_json: bytes, model_proto: bytes) -> UnigramTokenizer:
        """Raises ValueError saying which of the two files cannot be read."""
        try:
            pipeline = Tokenizer.from_buffer(tokenizer_json)
        except Exception as error:  # tokenizers raises plain Exception on bad JSON
            raise ValueError(f"the tokenizer pipeline cannot be read: {error}") from None
        try:
            return cls(pipeline, model_proto)
        except Exception as error:  # sentencepiece raises RuntimeError or OSError
            raise ValueError(f"the sentencepiece model cannot be read: {error}") from None

    def encode(self, text: str) -> Encoding:
        """As `Tokenizer.encode(text)`: ids, offsets into `text`, and the overflowing windows
        when truncation is on."""
        pretokenized = PreTokenizedString(text)
        if self._normalizer is not None:
            pretokenized.normalize(self._normalizer.normalize)
        if self._pre_tokenizer is not None:
            self._pre_tokenizer.pre_tokenize(pretokenized)
        pretokenized.tokenize(self._segment)
        encoding: Encoding = self._pipeline.post_process(pretokenized.to_encoding())
        return encoding

    def _segment(self, text: str) -> list[Token]:
        # Offsets are bytes of the normalized split, in both libraries: tokenizers maps them
        # back to characters of the original text.
        found = self._pieces.encode(text, return_type="proto")
        return [Token(p.id, p.surface, (p.begin, p.end)) for p in found.pieces]

    # --- what the encoder configures, passed to the pipeline -----------------------------

    @property
    def padding(self) -> dict[str, Any] | None:
        padding: dict[str, Any] | None = self._pipeline.padding
        return padding

    def no_padding(self) -> None:
        self._pipeline.no_padding()

    def no_truncation(self) -> None:
        self._pipeline.no_truncation()

    def enable_truncation(
        self, max_length: int, stride: int = 0, strategy: str = "longest_first"
    ) -> None:
        self._pipeline.enable_truncation(max_length, stride=stride, strategy=strategy)

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        count: int = self._pipeline.num_special_tokens_to_add(is_pair)
        return count

    def token_to_id(self, token: str) -> int | None:
        piece_id = self._pieces.piece_to_id(token)
        # piece_to_id answers the unknown piece's id for any text it does not know.
        if piece_id == self._pieces.unk_id() and token != self._pieces.id_to_piece(piece_id):
            return None
        return int(piece_id)

    def id_to_token(self, piece_id: int) -> str:
        piece: str = self._pieces.id_to_piece(piece_id)
        return piece

    def score(self, piece_id: int) -> float:
        """The piece's log-probability in the Unigram model (how often the text the model
        was built from holds it)."""
        return float(self._pieces.get_score(piece_id))
