"""The pair judge itself, pure: the pinned weights, its probabilities and bands."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from books.connections.judge import (
    FEATURES,
    NEARBY,
    RELATED,
    SAME_IDEA,
    WEIGHTS_FILE,
    Judge,
    PairFacts,
    features,
    judge_for,
    judge_from_json,
    judge_version,
    negated,
    numbers_differ,
    numbers_of,
    same_words,
    shared_rarity,
    shared_wording,
    stem_frequency,
    stems,
    strength_of,
    wording,
)

E5 = "multilingual-e5-small"

# A pair of two English passages, each the other's nearest, with an ordinary library around.
PAIR = PairFacts(
    main=0.88, english=0.6, rare=3.0, rare_share=0.2,
    words_a=20, words_b=25, language_a="en", language_b="en", same_author=False,
)  # fmt: skip


def _judge() -> Judge:
    return judge_for(E5, same_idea_cut=0.07, related_cut=0.07)


class PinnedWeightsTests:
    def test_it_reads_the_pinned_weights_and_their_version(self) -> None:
        data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
        assert judge_version() == data["version"] >= 1
        judge = judge_for(E5, same_idea_cut=0.07, related_cut=0.07)
        assert judge.version == data["version"]
        assert judge.names == FEATURES
        # Calibrated, not inverted: Platt's scale keeps the order of the fitted logit.
        assert judge.related.scale > 0
        assert judge.same_idea.scale > 0

    def test_its_recorded_held_out_figures_meet_the_same_idea_aims(self) -> None:
        # Written by `train_pair_judge --write` from pairs nothing was fitted on (STS-B dev);
        # the aims are issue #28's. Training again takes minutes and the shared data: here
        # the pinned record is read.
        # The head ranks STS-B's pairs as the aims ask (F1 at P ≥ 0.5); the pinned band is
        # stricter (0.99: a blind reader found 1 in 20 of a library's pairs at 0.5 the same
        # idea), and what it shows as the same idea is the same idea (docs/evaluation.md).
        held_out = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))["held out"]
        f1 = held_out["same idea F1, STS-B dev, at P >= 0.5"]
        assert f1["en"] >= 0.92
        assert f1["es"] >= 0.88
        assert f1["es-en"] >= 0.82
        assert held_out["translations judged the same idea, STS-B dev, at P >= 0.5"] >= 0.92
        precision = held_out["same idea precision, STS-B dev, at the pinned band"]
        assert min(precision.values()) >= 0.95
        kept_right, kept = held_out[
            "German/Portuguese/French blind pairs in the related band, judged related"
        ]
        assert 0 <= kept_right <= kept

    def test_it_refuses_weights_for_other_features(self) -> None:
        data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))["models"][E5]
        data["features"] = [*data["features"][:-1], "something else"]
        with pytest.raises(ValueError, match="retrain"):
            judge_from_json(data)

    def test_a_model_it_was_not_trained_for_is_judged_by_its_own_cuts(self) -> None:
        judge = judge_for("some-folder-model", same_idea_cut=0.2, related_cut=0.3)
        at = {d: judge.judge([replace(PAIR, main=1 - d)])[0] for d in (0.1, 0.25, 0.4)}
        assert at[0.1][2] == SAME_IDEA
        assert at[0.25][2] == RELATED
        assert at[0.4][2] == NEARBY


class ProbabilityTests:
    @pytest.mark.parametrize(
        "pair",
        [
            PAIR,
            replace(PAIR, english=None,
                    language_a="es", language_b="es"),
            replace(PAIR, english=None,
                    language_a="en", language_b="es"),
            replace(PAIR, english=None,
                    language_a="unknown", language_b="unknown"),
            replace(PAIR, english=None,
                    language_a="de", language_b="de"),
            replace(PAIR, english=None,
                    language_a="pt", language_b="en"),
        ],
        ids=["english", "spanish", "across", "undetected", "german", "portuguese-english"],
    )  # fmt: skip
    def test_it_rises_with_the_main_models_cosine(self, pair: PairFacts) -> None:
        judge = _judge()
        verdicts = [judge.judge([replace(pair, main=c)])[0] for c in np.linspace(0.75, 0.99, 13)]
        related = [v[0] for v in verdicts]
        same = [v[1] for v in verdicts]
        assert related == sorted(related)
        assert same == sorted(same)
        assert related[-1] > related[0]
        assert same[-1] > same[0]

    def test_it_rises_with_the_english_models_cosine(self) -> None:
        judge = _judge()
        related = [judge.judge([replace(PAIR, english=c)])[0][0] for c in (0.3, 0.5, 0.7, 0.9)]
        assert related == sorted(related)
        assert related[-1] > related[0]

    def test_the_same_idea_is_never_likelier_than_related(self) -> None:
        judge = _judge()
        rng = np.random.default_rng(3)
        rows = [
            replace(PAIR, main=float(m), english=float(e), rare=float(r))
            for m, e, r in zip(rng.uniform(0.7, 1, 200), rng.uniform(0.1, 1, 200),
                               rng.uniform(0, 20, 200), strict=True)
        ]  # fmt: skip
        for related, same, strength in judge.judge(rows):
            assert 0 <= same <= related <= 1
            assert strength == strength_of(related, same, judge.same_idea_band, judge.related_band)

    def test_bands_are_ordered(self) -> None:
        assert strength_of(0.9, 0.6) == SAME_IDEA
        assert strength_of(0.9, 0.2) == RELATED
        assert strength_of(0.3, 0.1) == NEARBY

    def test_a_judge_grades_by_its_own_pinned_bands(self) -> None:
        judge = replace(_judge(), same_idea_band=0.7, related_band=0.4)
        assert judge.strength_of(0.9, 0.6) == RELATED
        assert judge.strength_of(0.45, 0.1) == RELATED
        assert judge.strength_of(0.35, 0.1) == NEARBY
        assert judge.strength_of(0.9, 0.7) == SAME_IDEA
        data = judge.as_json()
        assert data["bands"] == {"same_idea": 0.7, "related": 0.4}
        assert judge_from_json(data) == judge

    def test_two_passages_of_the_same_words_are_the_same_idea(self) -> None:
        # Two Spanish copies of one saying, an accent apart: the features gave P(same idea)
        # 0.98, under the band, and the page called them only related.
        a, b = "Oír a todos, creer a pocos.", "Oir a todos creer a pocos"
        assert wording(a) == wording(b) == ("oir", "a", "todos", "creer", "a", "pocos")
        assert same_words(wording(a), wording(b))
        assert not same_words(wording(a), wording("Oír a pocos, creer a todos."))
        assert not same_words((), ())
        sayings = replace(
            PAIR, main=0.9, english=None, language_a="es", language_b="es", words_a=6, words_b=6
        )
        judge = _judge()
        [(_, same, strength)] = judge.judge([sayings])
        assert same < judge.same_idea_band
        assert strength != SAME_IDEA
        assert judge.judge([replace(sayings, same_words=True)]) == [(1.0, 1.0, SAME_IDEA)]

    def test_the_words_two_passages_share_tell_a_quote_from_a_paraphrase(self) -> None:
        def shared(a: str, b: str) -> float:
            return shared_wording(wording(a), wording(b))

        assert shared("Oír a todos, creer a pocos.", "Oir a todos creer a pocos") == 1.0
        # One quote and its variant: a word changed, a contraction.
        assert shared(
            "What lies behind us and what lies before us are small matters.",
            "What lies behind us and what lies before us are tiny matters.",
        ) == pytest.approx(8 / 10)
        # A paraphrase of the same idea is no copy.
        assert (
            shared(
                "Friendship often ends in love, but love in friendship - never.",
                "Friendship may, and often does, grow into love, but love never subsides into"
                " friendship.",
            )
            < 0.5
        )
        assert shared("", "") == 0.0

    def test_other_numbers_and_a_negation_lower_the_same_idea(self) -> None:
        judge = _judge()
        (_, plain, _), (_, numbers, _), (_, negation, _) = judge.judge(
            [PAIR, replace(PAIR, numbers_differ=True), replace(PAIR, negation_differs=True)]
        )
        assert numbers < plain
        assert negation < plain


class FeatureTests:
    def test_features_follow_the_named_order(self) -> None:
        row = features(PAIR)
        assert len(row) == len(FEATURES)
        named = dict(zip(FEATURES, row, strict=True))
        assert named["main"] == 0.88
        assert named["english"] == 0.6
        assert named["across"] == 0.0

    @pytest.mark.parametrize(
        ("a", "b", "across", "unknown", "en_es"),
        [
            ("en", "en", 0, 0, 0),
            ("en", "es", 1, 0, 1),
            ("de", "de", 0, 0, 0),
            ("de", "en", 1, 0, 0),
            ("pt", "fr", 1, 0, 0),
            ("it", "es", 1, 0, 0),
            # An undetected side is no evidence of two languages.
            ("unknown", "en", 0, 1, 0),
            ("unknown", "unknown", 0, 1, 0),
        ],
    )  # fmt: skip
    def test_the_two_languages_are_features_of_their_own(
        self, a: str, b: str, across: float, unknown: float, en_es: float
    ) -> None:
        named = dict(zip(FEATURES, features(replace(PAIR, language_a=a, language_b=b)),
                         strict=True))  # fmt: skip
        assert (named["across"], named["unknown"], named["en_es"]) == (across, unknown, en_es)
        assert named["main_across"] == 0.88 * across
        assert named["main_unknown"] == 0.88 * unknown
        assert named["main_en_es"] == 0.88 * en_es

    def test_the_cosine_is_weighed_by_the_shorter_passages_length(self) -> None:
        named = dict(zip(FEATURES, features(replace(PAIR, words_a=3, words_b=40)), strict=True))
        assert named["short"] == pytest.approx(math.log(4))
        assert named["main_short"] == pytest.approx(0.88 * math.log(4))

    @pytest.mark.parametrize(
        ("a", "b", "differ"),
        [
            ("Stocks rose 3% on Monday.", "Stocks rose 30% on Monday.", True),
            ("Stocks rose 3% on Monday.", "Stocks rose on Monday.", True),
            ("In 1984, he left.", "He left in 1984.", False),
            ("The price is 3,5 euros.", "It costs 3,5 euros.", False),
            ("No numbers here.", "None here either.", False),
        ],
    )
    def test_numbers_differ_when_the_two_do_not_name_the_same(
        self, a: str, b: str, differ: bool
    ) -> None:
        assert numbers_differ(numbers_of(a), numbers_of(b)) is differ

    @pytest.mark.parametrize(
        ("text", "negative"),
        [
            ("I do not know.", True),
            ("I don't know.", True),
            ("I know.", False),
            ("No sé nada.", True),
            ("Das weiß ich nicht.", True),
            ("Eu não sei.", True),
            ("Je ne sais pas.", True),
            ("Non lo so.", True),
            ("Lo sé.", False),
        ],
    )
    def test_a_negation_in_any_of_the_six_languages(self, text: str, negative: bool) -> None:
        assert negated(text) is negative

    def test_stems_are_folded_and_alike_in_any_language(self) -> None:
        assert stems("Die Erinnerungen des Herzens") == stems("die ERINNERUNG des herzen")
        assert stems("el corazón") == {"corazo"}
        assert stems("Ça ne marche pas") == stems("ca ne MARCHE pas")

    def test_a_rare_shared_stem_weighs_more_than_a_common_one(self) -> None:
        library = [stems(t) for t in ["the people think", "people walk", "people envy"] * 10]
        library.append(stems("envy is concealed admiration"))
        frequency = stem_frequency(library)
        a, b = stems("envy of people"), stems("envy among people")
        rare, share = shared_rarity(a, b, frequency, len(library))
        common, _ = shared_rarity(stems("people"), stems("people"), frequency, len(library))
        assert rare > common > 0
        assert 0 < share <= 1
