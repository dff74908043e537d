"""Fusion: how much each half counts for this query, weighted reciprocal rank fusion, the
recency boost, and the order of the fused results.

The weights come from the query itself (its length, a quoted phrase, how rare its words
are, whether the model reads its language, how sure the meaning half is), measured on the
three tasks of `evaluate_search`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from books.connections.neighbours import Neighbour
from books.embedding.profiles import profile_for_model_id
from books.search.query import ParsedQuery, is_few_words

# Reciprocal rank fusion: k = 60 (Cormack et al.), over the top 100 of each half.
RRF_K = 60
DEPTH = 100
# Recency boost: a fused score times 1 + 0.15 * 0.5 ** (age_days / 14).
RECENCY_WEIGHT = 0.15
RECENCY_HALF_LIFE_DAYS = 14.0
# Fusion weights (fusion_weights), chosen on the paraphrase and remembered-words tasks of
# evaluate_search together (half the queries each way gave the same choice) and checked on
# the names task. A few words or a sentence: books.search.query.is_few_words.
SENTENCE_KEYWORD_WEIGHT = 0.25
SOME_WORDS_WEIGHT = 1.0
PHRASE_WEIGHT = 2.0
FOREIGN_MEANING_WEIGHT = 0.3
SURE_MEANING_WEIGHT = 3.0


@dataclass
class Fused:
    score: float = 0.0
    keyword_rank: int | None = None
    meaning_rank: int | None = None
    distance: float | None = None


def fuse(
    keyword: Sequence[int],
    meaning: Sequence[Neighbour],
    *,
    keyword_weight: float = 1.0,
    meaning_weight: float = 1.0,
    depth: int | None = DEPTH,
) -> dict[int, Fused]:
    """Weighted reciprocal rank fusion: sum of weight / (RRF_K + rank) over the first
    `depth` of each list an id is in (all of them with None: one half alone is its own
    ranking, and every match it read is a result)."""
    fused: dict[int, Fused] = {}
    for rank, pk in enumerate(keyword[:depth], start=1):
        entry = fused.setdefault(pk, Fused())
        entry.score += keyword_weight / (RRF_K + rank)
        entry.keyword_rank = rank
    for rank, neighbour in enumerate(meaning[:depth], start=1):
        entry = fused.setdefault(neighbour.highlight_id, Fused())
        entry.score += meaning_weight / (RRF_K + rank)
        entry.meaning_rank = rank
        entry.distance = neighbour.distance
    return fused


@dataclass(frozen=True)
class FusionWeights:
    keyword: float
    meaning: float
    why: str  # for the evaluation and for tests: which rule chose them


def fusion_weights(
    parsed: ParsedQuery,
    keyword_pass: str,
    *,
    model_reads: bool,
    best_distance: float | None = None,
    model_id: str = "",
) -> FusionWeights:
    """How much each half counts, from the query and from how sure the meaning half is.

    - A query in a language the model reads poorly: the words lead.
    - A quoted phrase: the reader asked for those words, exactly.
    - The meaning half is sure (its best match nearer than its profile's `sure_distance`,
      books.embedding.profiles: a paraphrase): it leads, and the words count only for a
      few words that all matched.
    - A few words ("habit entrance ramp"): remembered words, so a highlight with only some
      of them (a typo, a word misremembered) counts as much as one with all.
    - A sentence (not `is_few_words`: more than four words besides stop words, or more than
      five in all): words shared with it say little; highlights with only some of them do
      not count at all.
    Measured on the three tasks of `evaluate_search` (see the README): with equal weights,
    hybrid search lost 1.5 points of MRR@10 to meaning alone on paraphrases and 1.3 to
    keyword alone on remembered words.
    """
    few = is_few_words(parsed)
    if not model_reads:
        return FusionWeights(1.0, FOREIGN_MEANING_WEIGHT, "a language the model reads poorly")
    if parsed.phrases:
        return FusionWeights(PHRASE_WEIGHT, 1.0, "a quoted phrase")
    profile = profile_for_model_id(model_id)
    sure = profile.sure_distance if profile is not None else None
    if sure is not None and best_distance is not None and best_distance < sure:
        keyword = 1.0 if few and keyword_pass == "all" else 0.0
        return FusionWeights(keyword, SURE_MEANING_WEIGHT, "a close match by meaning")
    if keyword_pass == "any":
        if few:
            return FusionWeights(SOME_WORDS_WEIGHT, 1.0, "some of a few words")
        return FusionWeights(0.0, 1.0, "some words of a sentence")
    if not few:
        return FusionWeights(SENTENCE_KEYWORD_WEIGHT, 1.0, "a sentence")
    return FusionWeights(1.0, 1.0, "a few words")


def recency_factor(added: datetime, now: datetime) -> float:
    age_days = max(0.0, (now - added).total_seconds() / 86400)
    return 1 + RECENCY_WEIGHT * math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def fused_order(fused: dict[int, Fused]) -> list[int]:
    def key(pk: int) -> tuple[float, float, float, int]:
        entry = fused[pk]
        # Equal scores (first by words, first by meaning): the words' exact evidence first
        # (measured: +1 point of MRR@10 on remembered words, nothing lost on paraphrases),
        # then the better meaning rank, then the newer highlight.
        keyword = math.inf if entry.keyword_rank is None else entry.keyword_rank
        meaning = math.inf if entry.meaning_rank is None else entry.meaning_rank
        return (-entry.score, keyword, meaning, -pk)

    return sorted(fused, key=key)
