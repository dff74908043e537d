"""Connections per language pair, on the real model: a translation still connects across
languages, Spanish sayings that e5 puts close only for being Spanish sayings do not, the
same author still comes last, and a dense cluster connects nothing to everything."""

import importlib
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from accounts.models import User
from books.connections.selectors import connections_for, library_connections
from books.connections.services import (
    CONNECTIONS_PER_HIGHLIGHT,
    RELATED_GRADE,
    SAME_IDEA_GRADE,
    Cuts,
    connections_rebuild,
    cuts_of,
    highlights_connect,
    thresholds,
)
from books.embedding.encoder import E5_THRESHOLD
from books.models import Book, Connection, Highlight
from tests.books.embedded import connection_between, embedded_library
from tests.books.kindle import Entry

# The cut every pair had before there was one per language pair.
OLD_RELATED_CUT = 0.115

MEMORY_ES = "La memoria del corazón elimina los malos recuerdos y magnifica los buenos."
MEMORY_EN = "The heart's memory eliminates the bad memories and magnifies the good ones."
# An exact translation that e5 puts farther apart than two English paraphrases (0.10).
SNOW_ES = "Dos niños acostados en la nieve haciendo ángeles de nieve."
SNOW_EN = "Two children lying in the snow making snow angels."
# Two pairs of sayings from the Spanish evaluation library that share a shape and no idea;
# e5 puts each pair at 0.10-0.11, where two English passages would be related.
SIN_ES = "El ojo del amo, engorda el caballo."
SHAME_ES = "El yerro encelado, medio perdonado."
TIME_ES = "La justicia no corre, pero atrapa."
MONEY_ES = "Ir contra la corriente, no es de hombre prudente."

LIBRARY = [
    Entry("Cien años de soledad (García Márquez, Gabriel)", MEMORY_ES, location="210-212"),
    Entry("El amor en los tiempos del cólera (García Márquez, Gabriel)",
          "La memoria del corazón borra los malos recuerdos y engrandece los buenos.",
          location="40-41"),
    Entry("The Man Who Mistook His Wife for a Hat (Sacks, Oliver)", MEMORY_EN,
          location="1520-1522"),
    Entry("Nieve (Vallejo, Irene)", SNOW_ES, location="12-13"),
    Entry("Winter Stories (Munro, Alice)", SNOW_EN, location="300-301"),
    Entry("Refranero, tomo 1 (Refranero popular)", SIN_ES, location="10"),
    Entry("Refranes de Castilla (Sbarbi, José María)", SHAME_ES, location="20"),
    Entry("Refranero, tomo 2 (Refranero popular)", TIME_ES, location="30"),
    Entry("Refranes de Castilla (Sbarbi, José María)", MONEY_ES, location="40"),
    Entry("The Well-Tempered Garden (Lloyd, Christopher)",
          "Prune the roses hard in early March, just above an outward bud.", location="88"),
]  # fmt: skip


def _library(reader: User) -> dict[str, Highlight]:
    return embedded_library(reader, *LIBRARY)


def _distance(a: Highlight, b: Highlight) -> float:
    a.refresh_from_db()
    b.refresh_from_db()
    return float(1.0 - np.dot(np.asarray(a.embedding), np.asarray(b.embedding)))


@pytest.mark.django_db
class LanguagePairCutTests:
    def test_it_knows_each_highlights_language_from_the_import(self, alice: User) -> None:
        rows = _library(alice)
        assert rows[MEMORY_ES].language == "es"
        assert rows[MEMORY_EN].language == "en"

    def test_a_translation_still_connects_across_languages(self, alice: User) -> None:
        rows = _library(alice)
        spanish, english = rows[SNOW_ES], rows[SNOW_EN]
        # Farther apart than two English paraphrases would be, and mutual: it connects.
        assert _distance(spanish, english) >= E5_THRESHOLD
        assert connection_between(spanish, english)
        found = {c.highlight.pk: c for c in connections_for(spanish)}
        assert english.pk in found

    def test_spanish_sayings_e5_puts_close_no_longer_connect(self, alice: User) -> None:
        rows = _library(alice)
        for first, second in ((SIN_ES, SHAME_ES), (TIME_ES, MONEY_ES)):
            # Under the old single cut they were a connection…
            assert _distance(rows[first], rows[second]) < OLD_RELATED_CUT
            # …and under the cut of two Spanish highlights they are not.
            assert not connection_between(rows[first], rows[second]), (first, second)

    def test_other_authors_still_come_first(self, alice: User) -> None:
        rows = _library(alice)
        found = connections_for(rows[MEMORY_ES])
        authors = [c.highlight.book.authors for c in found]
        # García Márquez's other book says it closer, in Spanish; Sacks still leads.
        assert authors == ["Sacks, Oliver", "García Márquez, Gabriel"]
        assert [c.same_author for c in found] == [False, True]
        pairs = list(library_connections(alice))
        assert [p.same_author for p in pairs] == sorted(p.same_author for p in pairs)

    def test_pages_grade_a_pair_by_its_languages(self, alice: User) -> None:
        rows = _library(alice)
        cuts = thresholds()
        across = connections_for(rows[MEMORY_ES])[0]
        # Across languages a distance is graded by the cuts across languages, looser than
        # within one, so the translation reads as the same idea.
        assert across.graded == pytest.approx(cuts.across.grade(across.distance))
        assert str(across.strength) == "same idea"

    def test_rebuilding_finds_the_same_connections_again(self, alice: User, bob: User) -> None:
        _library(alice)
        # A pair the old rule stored, which the new one would not keep.
        sin, shame = (Highlight.objects.get(reader=alice, text=t) for t in (SIN_ES, SHAME_ES))
        low, high = sorted((sin.pk, shame.pk))
        stale = Connection.objects.create(
            reader=alice, highlight_a_id=low, highlight_b_id=high, distance=0.08,
            embedding_model=sin.embedding_model,
        )  # fmt: skip
        before = set(Connection.objects.values_list("highlight_a_id", "highlight_b_id"))
        before.discard((stale.highlight_a_id, stale.highlight_b_id))
        assert connections_rebuild(reader_id=alice.pk) == len(before)
        assert set(Connection.objects.values_list("highlight_a_id", "highlight_b_id")) == before
        out = StringIO()
        call_command("reconnect", "--user", "alice", stdout=out)
        assert set(Connection.objects.values_list("highlight_a_id", "highlight_b_id")) == before
        assert out.getvalue().startswith(f"{len(before)} connections for alice")
        # Another reader's connections are left alone.
        assert not Connection.objects.filter(reader=bob).exists()


@pytest.mark.django_db
class DenseRegionTests:
    def test_a_dense_cluster_connects_each_passage_to_its_few_nearest(self, alice: User) -> None:
        rng = np.random.default_rng(15)
        centre = rng.normal(size=384)
        centre /= np.linalg.norm(centre)

        def near(vector: np.ndarray, distance: float) -> list[float]:
            other = rng.normal(size=384)
            other -= (other @ vector) * vector
            other /= np.linalg.norm(other)
            cos = 1.0 - distance
            return (cos * vector + np.sqrt(1 - cos * cos) * other).astype(np.float32).tolist()

        rows = []
        # Twelve passages of twelve books, every one ~0.016 from every other: a region where
        # a plain cut would connect each to all the others (66 pairs).
        for n in range(12):
            book = Book.objects.create(reader=alice, title=f"B{n}", authors=f"A{n}", key=f"b{n}")
            rows.append(
                Highlight.objects.create(
                    reader=alice, book=book, text=f"Passage {n}.", dedupe_key=f"{n}",
                    embedding=near(centre, 0.008), embedding_model="test-model@0",
                    embedding_status=Highlight.EmbeddingStatus.DONE,
                )
            )  # fmt: skip
        # And two that say one thing, far from the cluster and very close to each other.
        far = rng.normal(size=384)
        far /= np.linalg.norm(far)
        for n, distance in ((12, 0.0), (13, 0.02)):
            book = Book.objects.create(reader=alice, title=f"B{n}", authors=f"A{n}", key=f"b{n}")
            rows.append(
                Highlight.objects.create(
                    reader=alice, book=book, text=f"Passage {n}.", dedupe_key=f"{n}",
                    embedding=near(far, distance), embedding_model="test-model@0",
                    embedding_status=Highlight.EmbeddingStatus.DONE,
                )
            )  # fmt: skip
        highlights_connect(ids=[h.pk for h in rows])
        pairs = set(Connection.objects.values_list("highlight_a_id", "highlight_b_id"))
        assert (rows[12].pk, rows[13].pk) in pairs
        cluster = {h.pk for h in rows[:12]}
        inside = [pair for pair in pairs if set(pair) <= cluster]
        # Each passage keeps its best three: at most 12 x 3 pairs, found from either side,
        # and never one from the cluster to the far pair.
        assert CONNECTIONS_PER_HIGHLIGHT == 3
        assert len(inside) <= 12 * CONNECTIONS_PER_HIGHLIGHT < 66
        assert len(pairs) == len(inside) + 1
        assert {pk for pair in inside for pk in pair} == cluster

    def test_two_books_that_say_one_thing_connect_in_a_small_library(self, alice: User) -> None:
        # Each passage's only neighbour is the other: "typical" must not be that neighbour
        # itself, or a new reader's first import never connects anything.
        embedded_library(
            alice,
            Entry("Ficciones (Borges, Jorge Luis)", "To think is to forget differences, "
                  "to generalize, to abstract.", location="412"),
            Entry("The Mind's Eye (Sacks, Oliver)", "To think is to forget the "
                  "differences, to generalise and abstract.", location="1520"),
        )  # fmt: skip
        assert Connection.objects.count() == 1


class ThresholdsTests:
    def test_it_grades_each_kind_of_pair_by_its_own_cuts(self) -> None:
        cuts = cuts_of(
            same_idea=0.07, related=0.07, spanish_shift=-0.02, across_shift=0.005,
            across_related=0.12, english=(0.27, 0.40),
        )  # fmt: skip
        assert cuts.cuts("en", "en") == Cuts(0.27, 0.40)  # the English model's
        assert cuts.cuts("es", "es") == Cuts(0.05, 0.05)
        assert cuts.cuts("es", "en") == cuts.cuts("en", "es") == Cuts(0.075, 0.12)
        # Undetected takes the cut within a language, never the looser one across.
        assert cuts.cuts("unknown", "en") == cuts.cuts("unknown", "es") == Cuts(0.07, 0.07)
        assert cuts.in_english("en", "en")
        assert not cuts.in_english("unknown", "en")
        # One scale for every kind: under 1 the same idea, under 2 related.
        assert cuts.graded(0.20, "en", "en", main_distance=0.05) < SAME_IDEA_GRADE
        assert SAME_IDEA_GRADE <= cuts.graded(0.33, "en", "en") < RELATED_GRADE
        assert cuts.graded(0.41, "en", "en") >= RELATED_GRADE
        assert SAME_IDEA_GRADE <= cuts.graded(0.10, "es", "en") < RELATED_GRADE
        # Within a language the model connects only the same idea.
        assert cuts.graded(0.069, "unknown", "unknown") < SAME_IDEA_GRADE
        assert cuts.graded(0.071, "unknown", "unknown") >= RELATED_GRADE
        assert cuts.loosest == pytest.approx(0.12)
        assert cuts.loosest_stored == pytest.approx(0.40)

    def test_two_english_passages_are_the_same_idea_only_when_both_models_say_so(self) -> None:
        cuts = cuts_of(same_idea=0.07, related=0.07, english=(0.27, 0.37))
        # Under the English model's same-idea cut and the main model's: the same idea.
        assert cuts.graded(0.20, "en", "en", main_distance=0.069) < SAME_IDEA_GRADE
        # The main model disagrees, or was not asked: related, at the top of the band.
        assert cuts.graded(0.20, "en", "en", main_distance=0.071) == SAME_IDEA_GRADE
        assert cuts.graded(0.20, "en", "en") == SAME_IDEA_GRADE
        # The related band is the English model's alone.
        assert cuts.graded(0.33, "en", "en", main_distance=0.2) == cuts.graded(0.33, "en", "en")
        # Other pairs never ask for a main distance.
        assert cuts.graded(0.05, "es", "es") == cuts.graded(0.05, "es", "es", main_distance=0.5)

    def test_a_model_without_an_english_model_judges_english_pairs_itself(self) -> None:
        cuts = cuts_of(same_idea=0.27, related=0.40)
        assert cuts.english is None
        assert cuts.cuts("en", "en") == Cuts(0.27, 0.40)
        assert not cuts.in_english("en", "en")


@pytest.mark.django_db
class LanguageBackfillTests:
    def test_the_migration_detects_the_language_of_existing_highlights(self, alice: User) -> None:
        from django.apps import apps

        backfill = importlib.import_module("books.migrations.0015_highlight_language")
        rows = _library(alice)
        Highlight.objects.update(language="unknown")  # as the new column starts
        backfill.detect_languages(apps, None)
        languages = dict(Highlight.objects.values_list("text", "language"))
        assert languages[MEMORY_ES] == "es"
        assert languages[SNOW_EN] == "en"
        assert languages == {text: h.language for text, h in rows.items()}
