"""How a bridge between two readers is judged: by the pair judge that judges connections."""

import pytest

from affinity.bridges import Candidate, bridge_judgement
from books.connections.selectors import Strength


def _pair(
    distance: float,
    languages: tuple[str, str],
    english: float | None = None,
    theme: float | None = None,
) -> Candidate:
    """A pair of which only the distances are known; the theme model's as the main one's
    unless given."""
    return Candidate(1, 2, 3, distance, english, languages, distance if theme is None else theme)


@pytest.mark.django_db
class BridgeJudgementTests:
    def test_a_close_pair_is_likely_related_and_a_far_one_no_connection(self) -> None:
        close, far = _pair(0.02, ("es", "es")), _pair(0.5, ("es", "es"))
        [(close_grade, close_distance, _), (far_grade, _, far_strength)] = bridge_judgement(
            [close, far]
        )
        # Two passages of which only the distances are known (no words to share): likely
        # related by the judge.
        assert close_grade < 0.5
        assert close_distance == close.distance
        assert far_strength is None  # the closest there is, shown without a strength
        assert 0 <= close_grade < far_grade <= 1

    def test_two_english_passages_are_weighed_by_the_english_model_too(self) -> None:
        # One distance by e5; the English model's cosine moves the verdict.
        [(near_grade, _, _), (far_grade, _, _)] = bridge_judgement(
            [_pair(0.1, ("en", "en"), 0.2), _pair(0.1, ("en", "en"), 0.7)]
        )
        assert near_grade < far_grade

    def test_a_translation_across_languages_connects(self) -> None:
        # The theme model puts a translation at about 0.1 (books.embedding.theme).
        [(_, distance, strength)] = bridge_judgement([_pair(0.03, ("en", "es"), theme=0.12)])
        assert distance == 0.03
        assert strength == Strength.SAME_IDEA
