"""Which two Spanish passages are *related*: e5 close, each the other's nearest, and a rare
word in common.

e5 tells two Spanish passages that say the same thing (under the Spanish same-idea cut), but
past that cut its distance matches a saying's mould ("Nunca haga …", "no es X, sino Y",
"Quien no …, no …") as readily as its idea: read pair by pair on the evaluation library
(`evaluate_library`), of the Spanish pairs at 0.05-0.08 about half carried one idea, of
those sharing no uncommon word 2 in 12. So a pair in the Spanish related band counts only
when both hold:
- **mutual**: each is the other's nearest Spanish passage in the reader's other books (the
  rule that already keeps pairs across languages honest);
- **a rare word in common**: a stem (PostgreSQL's Spanish snowball, stop words dropped)
  that at most RARE_WORD_SHARE of the reader's Spanish passages have — "envidia",
  "cuchillo", "escuela", not "hombre" or "cosa".
Judged blind on fresh pairs of that library, such pairs carried one idea 16 times in 20 at
0.05-0.08 and 6 in 12 at 0.08-0.09 (hence the related cut, E5_SPANISH_RELATED).
"""

from collections.abc import Iterable, Sequence

from django.db import connection

from books.connections.neighbours import Query, nearest_each
from books.language import SPANISH
from books.models import Highlight
from books.search.keyword import matching
from books.search.query import tsquery
from books.text import fold

# A word is rare when at most this share of the reader's Spanish passages have it, or at
# most RARE_WORD_MIN_PASSAGES in a small library. On the evaluation library (1,939 Spanish
# passages) 2 % is 38: the pairs sharing a word that rare read 56 % related at 0.05-0.08,
# those sharing none 17 %.
RARE_WORD_SHARE = 0.02
RARE_WORD_MIN_PASSAGES = 5
# Shorter stems are mostly what is left of a short common word ("va", "da").
MIN_STEM_LETTERS = 3


def related_pairs(
    *, reader_id: int, model_id: str, candidates: Sequence[tuple[Query, Query]]
) -> set[tuple[int, int]]:
    """Of candidate pairs (a passage, its nearest Spanish passage in other books, under the
    Spanish related cut), the (passage id, other id) pairs that are related: the other's
    nearest is the passage, and the two share a rare word."""
    if not candidates:
        return set()
    back = nearest_each(
        reader_id=reader_id,
        model_id=model_id,
        queries=list({other.highlight_id: other for _, other in candidates}.values()),
        languages=[SPANISH],
        limit=1,
    )
    mutual = [
        (passage.highlight_id, other.highlight_id)
        for passage, other in candidates
        if [n.highlight_id for n in back.get(other.highlight_id, [])] == [passage.highlight_id]
    ]
    if not mutual:
        return set()
    stems = passage_stems({pk for pair in mutual for pk in pair})
    shared = {pair: stems[pair[0]] & stems[pair[1]] for pair in mutual}
    rare = rare_words(reader_id, set().union(*shared.values()))
    return {pair for pair, words in shared.items() if words & rare}


def passage_stems(ids: Iterable[int]) -> dict[int, set[str]]:
    """Each passage's Spanish stems, stop words left out, from its folded text (as the
    keyword index holds it)."""
    texts = dict(Highlight.objects.filter(pk__in=list(ids)).values_list("pk", "text"))
    pks = list(texts)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.pk, tsvector_to_array(to_tsvector('spanish', p.text)) "
            "FROM unnest(%s::bigint[], %s::text[]) AS p(pk, text)",
            [pks, [fold(texts[pk]) for pk in pks]],
        )
        return {
            pk: {stem for stem in stems if len(stem) >= MIN_STEM_LETTERS and stem.isalnum()}
            for pk, stems in cursor.fetchall()
        }


def rare_words(reader_id: int, words: set[str]) -> set[str]:
    """Those of `words` (stems) that few of the reader's Spanish passages have: counted
    through the keyword index, which holds every passage's Spanish stems."""
    if not words:
        return set()
    passages = Highlight.objects.alive().passages().filter(reader_id=reader_id, language=SPANISH)
    most = max(RARE_WORD_MIN_PASSAGES, int(RARE_WORD_SHARE * passages.count()))
    # One passage more than `most` is enough to know a word is common.
    return {
        word
        for word in sorted(words)
        if matching(passages, tsquery(f"'{word}'")).values("pk")[: most + 1].count() <= most
    }
