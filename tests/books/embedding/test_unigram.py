"""The e5 tokenizer: `tokenizers`' pipeline around a sentencepiece Unigram model.

Compared with a `tokenizers` Unigram of the same 250,002 pieces (what the model folder held
before): the same ids, offsets and windows, in a fifth of the memory.
Runs without Django too: `pytest -p no:django -W ignore::pytest.PytestConfigWarning` on this file.
"""

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models

from books.embedding.builtin import E5_PREFIX, E5_SOURCE, e5_model_spec
from books.embedding.encoder import load_tokenizer, model_cache_dir
from books.embedding.spec import E5_INSTALL_HINT, ModelSpec, pinned_path
from books.embedding.unigram import UnigramTokenizer
from modelbuild import e5

# Letters of the eight languages, their punctuation, the characters the normalization map
# rewrites (fullwidth forms, ligatures, tabs, odd spaces), emoji and private-use characters
# no piece covers. No "<" or ">": `tokenizers` cuts special tokens out of the text before its
# model runs, this tokenizer gives them to the pieces (test_e5 has the reference's ids).
ALPHABET = (
    "aeinorstlcdumhpgbvfyqjkzxw AEIOUNSTMP áéíóúñüçãõâêôàèìòùäöüßœ ¿¡?!.,;:'\"()-\u2013\u2014…«»“”"
    "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВ ひらがなカタカナ漢字学而不思则罔吾輩は猫である。、"
    "\uff10\uff11\uff12\uff21\uff22\uff23\ufb01\ufb02\t\n\u3000\u00a0\u200b"
    " ½™Ⅻ 📚🙂\ue000\ue001 0123456789"
)


@pytest.fixture(scope="module")
def spec() -> ModelSpec:
    return e5_model_spec(cache_dir=model_cache_dir())


@pytest.fixture(scope="module")
def parsed() -> e5.E5File:
    return e5.read_e5_file(pinned_path(E5_SOURCE, E5_INSTALL_HINT).read_bytes())


@pytest.fixture(scope="module")
def ours(spec: ModelSpec) -> UnigramTokenizer:
    tokenizer = load_tokenizer(spec)
    assert isinstance(tokenizer, UnigramTokenizer)
    tokenizer.no_truncation()
    return tokenizer


@pytest.fixture(scope="module")
def theirs(spec: ModelSpec, parsed: e5.E5File) -> Any:
    """The folder's pipeline with a `tokenizers` Unigram of the same pieces as its model."""
    pipeline = Tokenizer.from_file(str(spec.tokenizer_path))
    pipeline.model = models.Unigram(parsed.pieces, unk_id=parsed.unk, byte_fallback=False)
    return pipeline


def _score(parsed: e5.E5File, ids: list[int]) -> float:
    unknown = min(score for _, score in parsed.pieces) - 10
    return sum(unknown if i == parsed.unk else parsed.pieces[i][1] for i in ids)


def _windows(encoding: Any) -> list[tuple[Any, ...]]:
    return [
        (e.ids, e.offsets, e.special_tokens_mask, e.type_ids)
        for e in [encoding, *encoding.overflowing]
    ]


class UnigramTokenizerTests:
    @settings(max_examples=400, deadline=None)
    @given(text=st.text(alphabet=ALPHABET, max_size=120))
    # A tie, which the two libraries break differently (test_e5 has the reference's ids).
    @example(text=":----------------------------------) ¡Pinocho!")
    def test_it_segments_as_a_tokenizers_unigram_of_the_same_pieces(
        self, ours: UnigramTokenizer, theirs: Any, parsed: e5.E5File, text: str
    ) -> None:
        mine, other = ours.encode(E5_PREFIX + text), theirs.encode(E5_PREFIX + text)
        if mine.ids == other.ids:
            assert mine.offsets == other.offsets
        else:
            # Only a tie to float precision may differ: sentencepiece scores in float32,
            # `tokenizers` in float64 (the reference engine, in float32, sides with the first).
            assert _score(parsed, mine.ids) == pytest.approx(_score(parsed, other.ids), abs=1e-4)

    def test_it_cuts_long_texts_into_the_same_windows(self, spec: ModelSpec, theirs: Any) -> None:
        tokenizer = load_tokenizer(spec)
        passage = E5_PREFIX + " ".join(
            [
                "La imprenta cambió la forma en que circulaban las ideas por Europa.",
                "Die Druckerpresse veränderte, wie sich Ideen in Europa verbreiteten.",
                "印刷术改变了思想在欧洲传播的方式。活字印刷让书籍变得便宜。",
                "Печатный станок изменил то, как идеи распространялись по Европе.",
            ]
            * 40
        )
        tokenizer.enable_truncation(512, stride=32)
        theirs.enable_truncation(512, stride=32)
        try:
            windows = _windows(tokenizer.encode(passage))
            assert len(windows) > 3
            assert windows == _windows(theirs.encode(passage))
        finally:
            theirs.no_truncation()

    def test_it_knows_its_pieces_by_name(self, ours: UnigramTokenizer) -> None:
        assert ours.token_to_id("<s>") == 0
        assert ours.token_to_id("<unk>") == 3
        assert ours.token_to_id("▁query") is None  # not a piece: "▁que" + "ry"
        assert ours.id_to_token(41) == "▁que"
        assert ours.num_special_tokens_to_add(False) == 2

    def test_it_says_which_file_it_cannot_read(self, spec: ModelSpec) -> None:
        pieces = spec.sentencepiece_path.read_bytes() if spec.sentencepiece_path else b""
        with pytest.raises(ValueError, match="the tokenizer pipeline cannot be read"):
            UnigramTokenizer.from_buffers(b"{not json", pieces)
        with pytest.raises(ValueError, match="the sentencepiece model cannot be read"):
            UnigramTokenizer.from_buffers(spec.tokenizer_path.read_bytes(), b"not a model")

    def test_it_holds_the_pieces_in_a_fraction_of_the_memory(self, spec: ModelSpec) -> None:
        # In a fresh process, so that nothing this one has loaded counts. A `tokenizers`
        # Unigram of these pieces grew a process by 273 MB.
        program = textwrap.dedent(
            """
            import sys
            from pathlib import Path
            from books.embedding.encoder import load_tokenizer
            from books.embedding.model_dir import model_spec_from_dir
            def rss():
                for line in Path("/proc/self/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
            spec = model_spec_from_dir(Path(sys.argv[1]))
            before = rss()
            tokenizer = load_tokenizer(spec)
            print(rss() - before)
            """
        )
        folder = str(spec.model_path.parent)
        done = subprocess.run(
            [sys.executable, "-c", program, folder],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[3],
        )
        assert float(done.stdout) < 100
