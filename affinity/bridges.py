"""What bridges two libraries: pairs of highlights, one of each reader, from different
books, close in meaning, judged by the rule that grades connections.

Candidates: the K highlights of each side closest to the other side's centroid, then every
pair between the two small sets. The cost is one scan of each library, never the product
of the two (20,000 by 20,000 would be 400 million distances).

Judgement (`bridge_judgement`, the one place that says how close a pair is): a pair is
weighed by the pair judge that judges connections (books.connections.judge: both models'
cosines, the lengths, the languages), so "same idea" and "related" mean the same on the
kindred page as on a highlight's. A pair of two readers is never a stored Connection (those
join one reader's highlights), so it is judged here, when shown. Only pairs the judge calls
related or the same idea are shown: two passages on the same broad topic sit at 0.85 by e5
whether they share an idea or not, and "89 % alike" under two unrelated passages was a
claim the page could not keep.
"""

from dataclasses import dataclass
from typing import Any

from django.db import connection

from affinity.models import ReaderCentroid
from affinity.services import discoverable_sql, shared_vector_sql
from books.connections.judge import (
    NEARBY,
    SAME_IDEA,
    PairFacts,
    negated,
    numbers_differ,
    numbers_of,
    same_words,
    stems_of_wording,
    wording,
)
from books.connections.selectors import Strength
from books.connections.services import current_judge
from books.models import Highlight
from books.vocabulary import words_of

# Highlights of each side taken toward the other side's centroid; K by K pairs are scored.
BRIDGE_CANDIDATES = 32
BRIDGES_SHOWN = 5
# Pairs kept per other reader, closest by the main model first, for the judgement to rank:
# enough that `shown` of them use distinct highlights on both sides.
CANDIDATE_PAIRS = 12 * BRIDGES_SHOWN


def _vector_param(vector: Any) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


@dataclass(frozen=True)
class Bridge:
    """One highlight of yours and one of theirs, from different books, close in meaning."""

    mine: Highlight
    theirs: Highlight
    # The distance the pair was judged by (the English model's for two English passages).
    distance: float
    # Same idea or related, as a connection would be.
    strength: Strength


@dataclass(frozen=True)
class Candidate:
    """A pair as the candidate query returns it."""

    reader_id: int
    mine: int
    theirs: int
    distance: float  # by the main model's vectors
    english_distance: float | None  # by the English model's, when both have one
    languages: tuple[str, str]
    theme_distance: float | None = None  # by the theme model's, when both have one
    # Each side's passage as both readers may hold it (a hash of book key and words):
    # mine and theirs swapped is the same pair when both readers hold both passages.
    passages: tuple[str, str] = ("", "")


def bridge_judgement(candidates: list[Candidate]) -> list[tuple[float, float, Strength | None]]:
    """(grade, distance, strength) of each pair, lower grades first: the grade is 1 -
    P(related) by the pair judge; the strength None when it is no connection."""
    if not candidates:
        return []
    texts = dict(
        Highlight.objects.filter(
            pk__in={pk for c in candidates for pk in (c.mine, c.theirs)}
        ).values_list("pk", "text")
    )
    facts = []
    for c in candidates:
        first, second = texts.get(c.mine, ""), texts.get(c.theirs, "")
        english = c.english_distance is not None and c.languages == ("en", "en")
        first_words, second_words = wording(first), wording(second)
        shared = stems_of_wording(first_words) & stems_of_wording(second_words)
        facts.append(
            PairFacts(
                main=1.0 - c.distance,
                english=1.0 - c.english_distance
                if english and c.english_distance is not None
                else None,
                theme=None if c.theme_distance is None else 1.0 - c.theme_distance,
                # Two libraries have no one library's word counts: a shared stem is weighed
                # as a word of middling rarity.
                rare=float(len(shared)),
                rare_share=0.0,
                words_a=len(words_of(first)),
                words_b=len(words_of(second)),
                language_a=c.languages[0],
                language_b=c.languages[1],
                same_author=False,
                numbers_differ=numbers_differ(numbers_of(first), numbers_of(second)),
                negation_differs=negated(first) != negated(second),
                same_words=same_words(first_words, second_words),
            )
        )
    judged = []
    for c, (related, _, strength) in zip(candidates, current_judge().judge(facts), strict=True):
        shown = None
        if strength != NEARBY:
            shown = Strength.SAME_IDEA if strength == SAME_IDEA else Strength.RELATED
        judged.append((1.0 - related, c.distance, shown))
    return judged


def _candidates(centroid: ReaderCentroid, others: list[ReaderCentroid]) -> list[Candidate]:
    # Only ids and distances are ranked and sorted; the vectors of the few candidates
    # are read again for the pairs (carrying 20,000 vectors through a sort spills to disk).
    sql = f"""
        WITH others AS MATERIALIZED (
            SELECT c.reader_id, c.vector FROM affinity_readercentroid c
            WHERE c.reader_id = ANY(%(others)s) AND c.embedding_model = %(model)s
              AND c.vector IS NOT NULL AND {discoverable_sql("c")}
        ), mine_ranked AS (
            -- one pass over the reader's rows, each measured against every other centroid
            SELECT o.reader_id, h.id, row_number() OVER (
                       PARTITION BY o.reader_id ORDER BY h.embedding <=> o.vector, h.id
                   ) AS rank
            FROM books_highlight h CROSS JOIN others o
            WHERE h.reader_id = %(reader)s AND {shared_vector_sql("h")}
        ), theirs_ranked AS (
            SELECT h.reader_id, h.id, row_number() OVER (
                       PARTITION BY h.reader_id ORDER BY h.embedding <=> %(vector)s::vector, h.id
                   ) AS rank
            FROM books_highlight h
            WHERE h.reader_id IN (SELECT reader_id FROM others) AND {shared_vector_sql("h")}
        ), my_side AS MATERIALIZED (
            SELECT r.reader_id, h.id, b.key, h.embedding, h.english_embedding, h.theme_embedding,
                   h.language, md5(b.key || chr(31) || h.text) AS passage
            FROM mine_ranked r
            JOIN books_highlight h ON h.id = r.id JOIN books_book b ON b.id = h.book_id
            WHERE r.rank <= %(k)s
        ), their_side AS MATERIALIZED (
            SELECT r.reader_id, h.id, b.key, h.embedding, h.english_embedding, h.theme_embedding,
                   h.language, md5(b.key || chr(31) || h.text) AS passage
            FROM theirs_ranked r
            JOIN books_highlight h ON h.id = r.id JOIN books_book b ON b.id = h.book_id
            WHERE r.rank <= %(k)s
        ), pairs AS (
            SELECT m.reader_id, m.id AS mine, t.id AS theirs,
                   m.embedding <=> t.embedding AS distance,
                   m.english_embedding <=> t.english_embedding AS english_distance,
                   m.theme_embedding <=> t.theme_embedding AS theme_distance,
                   m.language AS my_language, t.language AS their_language,
                   m.passage AS my_passage, t.passage AS their_passage
            FROM my_side m JOIN their_side t ON t.reader_id = m.reader_id AND t.key <> m.key
        ), ranked AS (
            SELECT *, row_number() OVER (
                PARTITION BY reader_id ORDER BY distance, mine, theirs) AS rank
            FROM pairs
        )
        SELECT reader_id, mine, theirs, distance, english_distance, my_language,
               their_language, theme_distance, my_passage, their_passage
        FROM ranked WHERE rank <= %(kept)s ORDER BY reader_id, rank
    """
    params: dict[str, Any] = {
        "reader": centroid.reader_id,
        "model": centroid.embedding_model,
        "vector": _vector_param(centroid.vector),
        "others": [o.reader_id for o in others],
        "k": BRIDGE_CANDIDATES,
        "kept": CANDIDATE_PAIRS,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [
        Candidate(
            int(reader_id),
            int(mine),
            int(theirs),
            float(distance),
            None if english is None else float(english),
            (str(my_language), str(their_language)),
            None if theme is None else float(theme),
            (str(my_passage), str(their_passage)),
        )
        for (
            reader_id,
            mine,
            theirs,
            distance,
            english,
            my_language,
            their_language,
            theme,
            my_passage,
            their_passage,
        ) in rows
    ]


def bridges_between(
    centroid: ReaderCentroid, others: list[ReaderCentroid], *, shown: int = BRIDGES_SHOWN
) -> dict[int, list[Bridge]]:
    """The best-judged pairs (one of the reader's, one of each other reader's, from
    different books) among the K highlights of each side nearest the other side's centroid.

    One statement for all the other readers plus one to load the highlights, whatever
    their number.
    """
    others = [o for o in others if o.vector is not None]
    if centroid.vector is None or not others:
        return {}
    candidates = _candidates(centroid, others)
    judged: dict[int, list[tuple[float, float, Strength | None, Candidate]]] = {}
    for candidate, (graded, distance, strength) in zip(
        candidates, bridge_judgement(candidates), strict=True
    ):
        judged.setdefault(candidate.reader_id, []).append((graded, distance, strength, candidate))
    chosen: dict[int, list[tuple[int, int, float, Strength]]] = {}
    for reader_id, pairs in judged.items():
        picked = chosen.setdefault(reader_id, [])
        seen: set[int] = set()
        shown_passages: set[frozenset[str]] = set()
        for _, distance, strength, pair in sorted(
            pairs, key=lambda p: (p[0], p[3].mine, p[3].theirs)
        ):
            if strength is None:
                continue
            # Two readers who both hold passages P and Q get "my P, your Q" and "my Q, your
            # P": one bridge, shown once.
            passages = frozenset(pair.passages)
            if passages in shown_passages:
                continue
            # One highlight in one bridge only: five bridges from one passage explain little.
            if len(picked) < shown and pair.mine not in seen and pair.theirs not in seen:
                picked.append((pair.mine, pair.theirs, distance, strength))
                seen |= {pair.mine, pair.theirs}
                shown_passages.add(passages)
    ids = {pk for picked in chosen.values() for m, t, _, _ in picked for pk in (m, t)}
    highlights = Highlight.objects.select_related("book").in_bulk(list(ids))
    return {
        reader_id: [Bridge(highlights[m], highlights[t], d, s) for m, t, d, s in picked]
        for reader_id, picked in chosen.items()
        if picked
    }
