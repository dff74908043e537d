"""Two English passages connect by the English model's distances; every other pair by e5's,
which connect within a language only as the same idea. And the batch neighbour query gives
the same answer whether it reads the space whole or asks the HNSW index."""

import importlib

import numpy as np
import pytest

from accounts.models import User
from books.connections import neighbours
from books.connections.neighbours import Query, nearest_each
from books.connections.selectors import (
    Strength,
    connections_for,
    highlight_connections,
    library_connections,
)
from books.connections.services import SHORT_PAIR_MARGIN, SHORT_PASSAGE_WORDS, thresholds
from books.embedding.encoder import MINILM_RELATED_THRESHOLD, MINILM_THRESHOLD, get_encoder
from books.models import Book, Connection, Highlight
from tests.books.embedded import connection_between, embedded_library
from tests.books.kindle import Entry

# Two English passages on one theme in other words: e5 puts them 0.12 apart, past its cut for
# two passages of one language (0.07); the English model 0.34, related.
FAILURE = "Failure is only the opportunity to begin again, this time more wisely."
FAILURE_TOO = (
    "Every failure teaches you something that success never could, if you are willing to listen."
)
# Their Spanish translations: e5 alone judges them; in its related band only as each other's
# nearest with a rare word in common ("fracaso"), as here (books.connections.confirmed).
FRACASO = "El fracaso es solo la oportunidad de empezar de nuevo, esta vez con más sabiduría."
FRACASO_TOO = "Cada fracaso te enseña algo que el éxito nunca podría enseñarte."
ROSES = "Prune the roses hard in early March, just above an outward bud."
# One idea in two short sentences, related by the English model (0.34), but short passages
# connect plainly only closer (SHORT_PAIR_MARGIN), farther only when confirmed…
HABITS = "Habits shape who we become."
HABITS_TOO = "Our daily habits slowly decide the person we turn into."
# …and two short ones at 0.28 connect plainly.
ENVY = "Envy is a form of hidden admiration."
ENVY_TOO = "We envy most the people we secretly admire."


def _library(reader: User) -> dict[str, Highlight]:
    return embedded_library(
        reader,
        Entry("Essays (Montaigne, Michel)", FAILURE, location="10"),
        Entry("Letters (Seneca)", FAILURE_TOO, location="20"),
        Entry("Ensayos (Montaigne, Michel)", FRACASO, location="10"),
        Entry("Cartas (Séneca)", FRACASO_TOO, location="20"),
        Entry("The Well-Tempered Garden (Lloyd, Christopher)", ROSES, location="88"),
        Entry("Atomic Habits (Clear, James)", HABITS, location="5"),
        Entry("The Power of Habit (Duhigg, Charles)", HABITS_TOO, location="7"),
        Entry("Journals (Kierkegaard, Søren)", ENVY, location="3"),
        Entry("The End of the Affair (Greene, Graham)", ENVY_TOO, location="9"),
    )


@pytest.mark.django_db
class EnglishPairsTests:
    def test_two_english_passages_connect_by_the_english_model(self, alice: User) -> None:
        rows = _library(alice)
        first, second = rows[FAILURE], rows[FAILURE_TOO]
        e5 = float(1 - np.dot(first.embedding, second.embedding))
        english = float(1 - np.dot(first.english_embedding, second.english_embedding))
        assert e5 > thresholds().within.related  # e5 alone would leave them apart
        assert MINILM_THRESHOLD <= english < MINILM_RELATED_THRESHOLD
        pair = connection_between(first, second)
        assert pair is not None
        assert pair.distance == pytest.approx(english, abs=1e-5)
        (found,) = [c for c in connections_for(first) if c.highlight.pk == second.pk]
        assert found.strength == Strength.RELATED
        assert pair.embedding_model == get_encoder().model_id

    def test_their_spanish_translations_are_judged_by_e5(self, alice: User) -> None:
        rows = _library(alice)
        fracaso, otro = rows[FRACASO], rows[FRACASO_TOO]
        distance = float(1 - np.dot(fracaso.embedding, otro.embedding))
        cuts = thresholds().spanish
        assert cuts.same_idea <= distance < cuts.related  # e5: not the same idea
        (found,) = [c for c in connections_for(fracaso) if c.highlight.pk == otro.pk]
        assert found.strength == Strength.RELATED

    def test_two_short_passages_must_be_closer_or_confirmed(self, alice: User) -> None:
        rows = _library(alice)
        first, second = rows[HABITS], rows[HABITS_TOO]
        english = float(1 - np.dot(first.english_embedding, second.english_embedding))
        cuts = thresholds().english
        assert cuts is not None
        assert cuts.confirmed_from is not None
        assert english < cuts.confirmed_from  # plainly related, were they longer
        judged = english + SHORT_PAIR_MARGIN
        assert cuts.needs_confirming(judged)  # as two short ones, past the plain cut
        assert min(len(HABITS.split()), len(HABITS_TOO.split())) < SHORT_PASSAGE_WORDS
        # Past the plain cut they connect only if confirmed, as they would be (each the
        # other's nearest, "habits" rare in this library), and never past the related cut.
        assert (connection_between(first, second) is not None) == (judged < cuts.related)
        # A short pair closer than that connects plainly.
        envy, envy_too = rows[ENVY], rows[ENVY_TOO]
        closer = float(1 - np.dot(envy.english_embedding, envy_too.english_embedding))
        assert not cuts.needs_confirming(closer + SHORT_PAIR_MARGIN)
        assert connection_between(envy, envy_too) is not None

    def test_an_unrelated_passage_shows_its_nearest_by_the_english_model(self, alice: User) -> None:
        rows = _library(alice)
        shown = highlight_connections(rows[ROSES])
        assert not shown.any
        # Nearest among English passages (only they have the English model's vectors).
        english = {FAILURE, FAILURE_TOO, HABITS, HABITS_TOO, ENVY, ENVY_TOO}
        assert {c.highlight.text for c in shown.nearest} <= english
        assert len(shown.nearest) == 3


# The same idea for the English model (0.17) and for e5 (0.06): both agree.
MEMORY = "Memory is not a record of the past but a story we keep rewriting every time we remember."
MEMORY_TOO = (
    "Every act of remembering rewrites the story, so memory is less a record than a retelling."
)
# The same idea for the English model (0.20), not for e5 (0.077): two claims on one theme.
MONEY = "Money cannot buy happiness, but it can buy the time to pursue what makes us happy."
MONEY_TOO = "Happiness depends less on money than on the people we spend our days with."


@pytest.mark.django_db
class SameIdeaAgreementTests:
    """Two English passages are the same idea only when both models say so."""

    def _rows(self, reader: User) -> dict[str, Highlight]:
        return embedded_library(
            reader,
            Entry("Speak, Memory (Nabokov, Vladimir)", MEMORY, location="1"),
            Entry("The Man Who Mistook His Wife for a Hat (Sacks, Oliver)", MEMORY_TOO,
                  location="2"),
            Entry("Essays (Russell, Bertrand)", MONEY, location="3"),
            Entry("The Good Life (Waldinger, Robert)", MONEY_TOO, location="4"),
        )  # fmt: skip

    def test_both_models_agree_the_same_idea(self, alice: User) -> None:
        rows = self._rows(alice)
        first, second = rows[MEMORY], rows[MEMORY_TOO]
        main = float(1 - np.dot(first.embedding, second.embedding))
        assert main < thresholds().within.same_idea
        pair = connection_between(first, second)
        assert pair is not None
        assert pair.distance < MINILM_THRESHOLD
        assert pair.main_distance == pytest.approx(main, abs=1e-5)
        shown = highlight_connections(first)
        assert [c.highlight.text for c in shown.same_idea] == [MEMORY_TOO]

    def test_the_main_model_disagreeing_makes_it_related(self, alice: User) -> None:
        rows = self._rows(alice)
        first, second = rows[MONEY], rows[MONEY_TOO]
        pair = connection_between(first, second)
        assert pair is not None
        assert pair.distance < MINILM_THRESHOLD  # the English model alone: the same idea
        assert pair.main_distance is not None
        assert pair.main_distance >= thresholds().within.same_idea
        shown = highlight_connections(first)
        assert shown.same_idea == []
        assert [c.highlight.text for c in shown.related] == [MONEY_TOO]
        # The library's pages grade it the same way, in SQL.
        related = library_connections(alice, strength=Strength.RELATED)
        same = library_connections(alice, strength=Strength.SAME_IDEA)
        assert {(p.highlight_a.text, p.highlight_b.text) for p in related} <= {
            (MONEY, MONEY_TOO), (MONEY_TOO, MONEY)
        }  # fmt: skip
        assert len(list(related)) == 1
        assert {p.highlight_a.text for p in same} | {p.highlight_b.text for p in same} == {
            MEMORY, MEMORY_TOO
        }  # fmt: skip


@pytest.mark.django_db
class NearestEachTests:
    def test_reading_the_space_whole_and_asking_the_index_agree(
        self, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        rng = np.random.default_rng(7)
        centres = rng.normal(size=(6, 384))
        rows = []
        for reader in (alice, bob):
            books = [
                Book.objects.create(reader=reader, title=f"B{i}", key=f"b{i}") for i in range(8)
            ]
            for n in range(120):
                vector = centres[n % 6] + 0.6 * rng.normal(size=384)
                rows.append(
                    Highlight.objects.create(
                        reader=reader, book=books[n % 8], text=f"Passage {n}.",
                        dedupe_key=f"{reader.pk}-{n}", is_word=n % 17 == 0,
                        embedding=(vector / np.linalg.norm(vector)).tolist(),
                        embedding_model="test-model@0",
                        embedding_status=Highlight.EmbeddingStatus.DONE,
                    )
                )  # fmt: skip
        mine = [h for h in rows if h.reader_id == alice.pk and not h.is_word][:40]
        queries = [Query(h.pk, h.book_id) for h in mine]

        def ask() -> dict[int, list[tuple[int, float]]]:
            found = nearest_each(
                reader_id=alice.pk, model_id="test-model@0", queries=queries, limit=10
            )
            return {q: [(n.highlight_id, n.distance) for n in ns] for q, ns in found.items()}

        in_memory = ask()
        monkeypatch.setattr(neighbours, "IN_MEMORY_MAX", 0)
        by_index = ask()
        assert by_index.keys() == in_memory.keys()
        for query_id, found in by_index.items():
            # The same neighbours; distances from float32 in numpy, float64 in pgvector.
            expected = in_memory[query_id]
            assert [pk for pk, _ in found] == [pk for pk, _ in expected]
            assert [d for _, d in found] == pytest.approx([d for _, d in expected], abs=1e-5)
        words = {h.pk for h in rows if h.is_word}
        books = {h.pk: h.book_id for h in rows}
        for query in queries:
            found = [pk for pk, _ in in_memory[query.highlight_id]]
            assert len(found) == 10
            assert all(books[pk] != query.book_id for pk in found)  # other books only
            assert not set(found) & words  # never a word
            assert all(h.reader_id == alice.pk for h in rows if h.pk in found)


@pytest.mark.django_db
class NotesTests:
    def test_two_notes_never_connect_to_each_other(self, alice: User) -> None:
        note = "Use this in the talk on how memory rebuilds what it keeps, every single time."
        embedded_library(
            alice,
            # The same note, standing alone, in two books; and a passage on its theme.
            Entry("Ficciones (Borges, Jorge Luis)", note, kind="Note", location="500"),
            Entry("Awakenings (Sacks, Oliver)", note, kind="Note", location="600"),
            Entry(
                "Remembering (Bartlett, Frederic)",
                "Memory does not keep the past; it rebuilds it every single time we "
                "remember, and what it keeps is what it rebuilds.",
                location="10",
            ),
        )
        notes = list(Highlight.objects.filter(kind=Highlight.Kind.NOTE))
        assert len(notes) == 2
        assert connection_between(*notes) is None
        passage = Highlight.objects.get(kind=Highlight.Kind.HIGHLIGHT)
        assert any(connection_between(n, passage) for n in notes)  # a note meets what books say


@pytest.mark.django_db
class MainDistanceBackfillTests:
    def test_the_migration_measures_the_pairs_stored_before(self, alice: User) -> None:
        from django.apps import apps

        backfill = importlib.import_module("books.migrations.0019_connection_main_distance")
        rows = _library(alice)
        first, second = rows[FAILURE], rows[FAILURE_TOO]
        Connection.objects.update(main_distance=None)  # as the new column starts
        backfill.measure_main_distances(apps, None)
        pair = connection_between(first, second)
        assert pair is not None
        assert pair.main_distance == pytest.approx(
            float(1 - np.dot(first.embedding, second.embedding)), abs=1e-5
        )
        # Only two English passages have one.
        for other in Connection.objects.exclude(pk=pair.pk).select_related(
            "highlight_a", "highlight_b"
        ):
            english = other.highlight_a.language == other.highlight_b.language == "en"
            assert (other.main_distance is not None) == english
