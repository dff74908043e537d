"""The English model beside e5: which model has one, the id a library's vectors carry, that
only workers load it, and that only English passages get its vector."""

import pytest

from accounts.models import User
from books.embedding.builtin import e5_model_spec, minilm_encoder_spec
from books.embedding.encoder import (
    Encoder,
    Encoders,
    active_model_id,
    get_encoder,
    get_encoders,
    model_cache_dir,
)
from books.embedding.english import english_model_spec_for
from books.embedding.pipeline import highlights_embed
from books.embedding.profiles import E5, MINILM
from books.importing.services import clippings_import
from books.models import Highlight
from tests.books.kindle import Entry, clippings_file

ENGLISH = "Failure is only the opportunity to begin again, this time more wisely."
SPANISH = "El fracaso es solo la oportunidad de empezar de nuevo con más inteligencia."
WORD = "perspicacious"


class EnglishModelSpecTests:
    def test_it_works_beside_e5_only(self) -> None:
        cache = model_cache_dir()
        beside_e5 = english_model_spec_for(e5_model_spec(cache_dir=cache), cache_dir=cache)
        assert beside_e5 is not None
        assert beside_e5.name == MINILM.name
        # MiniLM judges every pair itself when it is the model.
        assert english_model_spec_for(minilm_encoder_spec(cache_dir=cache), cache_dir=cache) is None


@pytest.mark.django_db
class EnglishModelIdTests:
    def test_a_librarys_vectors_name_the_models(self) -> None:
        encoders = get_encoders()
        main, english, _theme = encoders.model_id.split("+")
        assert main == encoders.main.vectors_id
        assert main.startswith(f"{E5.name}@")
        # The id of MiniLM's vectors, whatever graph computes them (modelbuild.minilm).
        assert english == f"{MINILM.name}@8199be6f"
        assert active_model_id() == encoders.model_id

    def test_an_evaluation_gets_the_model_alone(self) -> None:
        alone = get_encoder(E5.name)
        assert "+" not in alone.vectors_id
        # One model, one encoder: the configured set's main model is the same one.
        assert alone is get_encoders().main
        assert not hasattr(alone, "encode_english")

    def test_a_model_set_without_an_english_model_refuses_english(self) -> None:
        encoders = Encoders(get_encoder(E5.name), None)
        assert encoders.model_id == encoders.main.vectors_id
        with pytest.raises(ValueError, match="no English model"):
            encoders.encode_english([ENGLISH])

    def test_a_process_that_only_encodes_queries_never_loads_it(self) -> None:
        cache = model_cache_dir()
        spec = e5_model_spec(cache_dir=cache)
        english = english_model_spec_for(spec, cache_dir=cache)
        encoders = Encoders(Encoder(spec, threads=1), english, threads=1)
        encoders.main.encode(["what did Seneca say about time"])
        assert encoders._english is None
        vector = encoders.encode_english([ENGLISH])
        assert vector.shape == (1, 384)
        assert encoders._english is not None


@pytest.mark.django_db
class EnglishVectorsTests:
    def test_only_english_passages_get_the_english_vector(self, alice: User) -> None:
        clippings_import(
            reader=alice,
            data=clippings_file(
                Entry("Essays (Montaigne, Michel)", ENGLISH, location="10"),
                Entry("Ensayos (Montaigne, Michel)", SPANISH, location="10"),
                Entry("Essays (Montaigne, Michel)", WORD, location="12"),
            ),
            file_name="c.txt",
        )
        highlights_embed(ids=list(Highlight.objects.values_list("pk", flat=True)))
        rows = {h.text: h for h in Highlight.objects.all()}
        assert all(h.embedding_status == Highlight.EmbeddingStatus.DONE for h in rows.values())
        assert all(h.embedding is not None for h in rows.values())
        assert rows[ENGLISH].language == "en"
        english = get_encoders().encode_english([ENGLISH])[0]
        assert rows[ENGLISH].english_embedding == pytest.approx(english.tolist(), abs=1e-6)
        # Spanish passages and the reader's words are judged by e5 alone, or not at all.
        assert rows[SPANISH].english_embedding is None
        assert rows[WORD].is_word
        assert rows[WORD].english_embedding is None
