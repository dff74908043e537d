"""How a bridge between two readers is judged: by the rule that grades connections."""

import pytest

from affinity.bridges import Candidate, bridge_judgement
from books.connections.selectors import Strength, current_thresholds


def _pair(distance: float, languages: tuple[str, str], english: float | None = None) -> Candidate:
    return Candidate(1, 2, 3, distance, english, languages)


@pytest.mark.django_db
class BridgeJudgementTests:
    def test_it_grades_a_pair_as_a_connection_would_be(self) -> None:
        cuts = current_thresholds()
        within = cuts.within
        close, far = _pair(within.same_idea / 2, ("es", "es")), _pair(0.5, ("es", "es"))
        [(close_grade, close_distance, close_strength), (far_grade, _, far_strength)] = (
            bridge_judgement([close, far])
        )
        assert close_strength == Strength.SAME_IDEA
        assert close_grade == cuts.graded(close.distance, "es", "es")
        assert close_distance == close.distance
        assert far_strength is None  # the closest there is, shown without a strength
        assert far_grade > close_grade

    def test_it_judges_two_english_passages_by_the_english_model(self) -> None:
        cuts = current_thresholds()
        assert cuts.english is not None, "the default model has an English model beside it"
        # Far apart by the main model, related by the English one: related, judged by it.
        related = (cuts.english.same_idea + cuts.english.related) / 2
        if cuts.english.needs_confirming(related):
            related = cuts.english.same_idea
        [(grade, distance, strength)] = bridge_judgement([_pair(0.3, ("en", "en"), related)])
        assert distance == related
        assert strength == Strength.RELATED
        assert grade == cuts.graded(related, "en", "en", main_distance=0.3)

    def test_it_judges_english_passages_without_english_vectors_by_the_main_model(
        self,
    ) -> None:
        cuts = current_thresholds()
        pair = _pair(cuts.within.same_idea / 2, ("en", "en"), english=None)
        [(grade, distance, strength)] = bridge_judgement([pair])
        assert (distance, strength) == (pair.distance, Strength.SAME_IDEA)
        assert grade == cuts.within.grade(pair.distance)

    def test_it_judges_a_pair_across_languages_by_the_main_model(self) -> None:
        cuts = current_thresholds()
        pair = _pair(cuts.across.same_idea / 2, ("en", "es"), english=None)
        [(grade, distance, strength)] = bridge_judgement([pair])
        assert (distance, strength) == (pair.distance, Strength.SAME_IDEA)
        assert grade == cuts.graded(pair.distance, "en", "es")
