"""Pairs a distance alone cannot vouch for: *related* only when each passage is the other's
nearest and they share a rare word.

Past a kind of pair's plain related cut (Cuts.confirmed_from), a distance stops telling a
shared idea from a shared mould or a crowded region, but two signals still do:
- **mutual**: each is the other's nearest passage of its language in the reader's other
  books (the rule that already keeps pairs across languages honest);
- **a rare word in common**: a stem (PostgreSQL's snowball for the pair's language, stop
  words dropped) that at most RARE_WORD_SHARE of the reader's passages in that language
  have: "envidia", "cuchillo", "compensation", "omnipotent", not "hombre" or "people".
A pair in that band connects when both hold. Judged blind ("do these two meet on one
specific idea or theme, worth reading side by side?"):
- two Spanish passages, e5 0.05-0.08 (the evaluation library, `evaluate_library`): those
  sharing no such word 2 of 12, sharing one 14 of 25, mutual and sharing one 16 of 20
  fresh pairs, and 24 of 30 of the pairs the app stored; at 0.08-0.09, 6 of 12;
- two English passages, the English model 0.37-0.39 (a real library of 6,004 English
  passages): such pairs 80 % (33 pairs, two readers), where the plain band's last stretch,
  0.35-0.37, read 67 % (books.embedding.encoder.MINILM_CONFIRMED_RELATED).
"""

from collections import Counter
from collections.abc import Iterable, Sequence

from django.db import connection
from django.db.models import Value

from books.connections.neighbours import Query, nearest_each
from books.language import ENGLISH, SPANISH
from books.models import Highlight
from books.search.keyword import matching
from books.search.query import tsquery
from books.text import fold

# A word is rare when at most this share of the reader's passages in its language have it,
# or at most RARE_WORD_MIN_PASSAGES in a small library. On the evaluation library (1,939
# Spanish passages) 2 % is 38: mutual pairs sharing a word only 2-4 % have read 8 of 20.
RARE_WORD_SHARE = 0.02
RARE_WORD_MIN_PASSAGES = 5
# Shorter stems are mostly what is left of a short common word ("va", "da").
MIN_STEM_LETTERS = 3
# PostgreSQL's snowball configuration of each language a pair can be confirmed in.
STEMMERS = {ENGLISH: "english", SPANISH: "spanish"}


def confirmed_pairs(
    *,
    reader_id: int,
    model_id: str,
    column: str,
    language: str,
    candidates: Sequence[tuple[Query, Query]],
) -> set[tuple[int, int]]:
    """Of candidate pairs of two passages in `language` (a passage, its nearest passage of
    that language in other books by the vectors of `column`), the (passage id, other id)
    pairs that are confirmed: the other's nearest is the passage, and the two share a rare
    word."""
    if not candidates:
        return set()
    back = nearest_each(
        reader_id=reader_id,
        model_id=model_id,
        queries=list({other.highlight_id: other for _, other in candidates}.values()),
        column=column,
        languages=[language],
        limit=1,
    )
    mutual = [
        (passage.highlight_id, other.highlight_id)
        for passage, other in candidates
        if [n.highlight_id for n in back.get(other.highlight_id, [])] == [passage.highlight_id]
    ]
    if not mutual:
        return set()
    stems = passage_stems({pk for pair in mutual for pk in pair}, language)
    shared = {pair: stems[pair[0]] & stems[pair[1]] for pair in mutual}
    rare = rare_words(reader_id, language, set().union(*shared.values()))
    return {pair for pair, words in shared.items() if words & rare}


def passage_stems(ids: Iterable[int], language: str) -> dict[int, set[str]]:
    """Each passage's stems in `language`, stop words left out, from its folded text (as the
    keyword index holds it)."""
    texts = dict(Highlight.objects.filter(pk__in=list(ids)).values_list("pk", "text"))
    pks = list(texts)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.pk, tsvector_to_array(to_tsvector(%s::regconfig, p.text)) "
            "FROM unnest(%s::bigint[], %s::text[]) AS p(pk, text)",
            [STEMMERS[language], pks, [fold(texts[pk]) for pk in pks]],
        )
        return {
            pk: {stem for stem in stems if len(stem) >= MIN_STEM_LETTERS and stem.isalnum()}
            for pk, stems in cursor.fetchall()
        }


def rare_words(reader_id: int, language: str, words: set[str]) -> set[str]:
    """Those of `words` (stems) that few of the reader's passages in `language` have:
    counted through the keyword index, which holds every passage's English and Spanish
    stems."""
    if not words:
        return set()
    passages = Highlight.objects.alive().passages().filter(reader_id=reader_id, language=language)
    most = max(RARE_WORD_MIN_PASSAGES, int(RARE_WORD_SHARE * passages.count()))
    # Up to one passage more than `most` for each word, through the index, in one statement.
    having = [
        matching(passages, tsquery(f"'{word}'"))
        .annotate(word=Value(word))
        .values("word")[: most + 1]
        for word in sorted(words)
    ]
    found = Counter(having[0].union(*having[1:], all=True).values_list("word", flat=True))
    return {word for word in words if found[word] <= most}
