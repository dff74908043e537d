"""Writing connections: each freshly embedded passage's candidates, judged once and stored
with the judge's verdict.

Candidates of a passage: its NEIGHBOURS nearest passages of the reader's other books by each
vector it has (the model's and the theme model's, in every language; the English model's,
among English passages). Each candidate pair gets its features (books.connections.judge:
each model's cosine, rare shared stems, lengths, languages, same author) and the pinned
judge's P(related), P(same idea) and strength band.
A passage keeps its best KEPT_PER_HIGHLIGHT pairs from P(related) ≥ NEARBY_BAND: the related
and same-idea ones are its connections, the nearby ones what the highlight page shows when
it has none. Reads filter on the stored strength (books.connections.selectors); nothing is
graded at read time. A new judge version re-judges stored pairs in the background
(connections_rejudge, books.tasks.rejudge_connections).
The reader's words (Highlight.is_word) never connect, from either side; two of the reader's
standalone notes never connect to each other.
"""

from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import F, Q, QuerySet

from books.connections.judge import (
    NEARBY_BAND,
    NEIGHBOURS,
    Judge,
    PairFacts,
    judge_for,
    judge_version,
    negated,
    numbers_differ,
    numbers_of,
    same_words,
    shared_rarity,
    shared_wording,
    stem_frequency,
    stems,
    stems_of_wording,
    wording,
)
from books.connections.neighbours import Query, nearest_each
from books.importing import identity
from books.language import ENGLISH
from books.models import Connection, Highlight
from books.vocabulary import words_of

NOTE = Highlight.Kind.NOTE
# The English model's vectors (books.embedding.english), beside the main model's `embedding`.
ENGLISH_COLUMN = "english_embedding"
# The theme model's (books.embedding.theme): candidates by it reach across languages and
# wordings e5 keeps apart (docs/evaluation.md, "theme candidates").
THEME_COLUMN = "theme_embedding"
# Pairs a passage keeps, best first by P(related): enough for the page's three of each
# strength once pairs found from either side meet.
KEPT_PER_HIGHLIGHT = 6
# Stored fields a new verdict rewrites.
VERDICT_FIELDS = [
    "distance",
    "probability",
    "same_probability",
    "strength",
    "judge_version",
    "wording_shared",
]


def current_judge() -> Judge:
    """The judge of the configured model's pairs: the pinned one trained for it, else its
    own cuts (EXOGRAM_CONNECTION_THRESHOLD, EXOGRAM_RELATED_THRESHOLD override them)."""
    from django.conf import settings

    from books.embedding.encoder import get_encoder

    spec = get_encoder().spec
    same: float | None = settings.EXOGRAM_CONNECTION_THRESHOLD
    related: float | None = settings.EXOGRAM_RELATED_THRESHOLD
    profile = spec.profile  # the model's own cuts (books.embedding.profiles)
    same = profile.same_idea_cut if same is None else same
    related = max(same, profile.related_cut if related is None else related)
    return judge_for(spec.name, same_idea_cut=same, related_cut=related)


def same_author(a: str, b: str) -> bool:
    """Two books by one author, by their normalized authors (books.importing.identity):
    `michael greger` and `greger, michael, m.d., faclm` normalized, co-authors, an initial
    for a given name, a family name alone (`identity.same_author_or_family_name`). Two books
    with no author known are not taken for one author's."""
    return identity.same_author_or_family_name(a, b)


@dataclass(frozen=True)
class _Passage:
    pk: int
    book_id: int
    language: str
    words: int
    note: bool
    in_english: bool
    stems: frozenset[str]
    numbers: frozenset[str]
    negated: bool
    wording: tuple[str, ...]


def highlights_connect(*, ids: list[int]) -> int:
    """Judge and store the candidate pairs of freshly embedded highlights. Returns pairs
    added.

    Idempotent: pairs are stored once (lower id first, unique); a pair found again gets the
    new verdict. Each library's spaces are read a few times a call, whatever the number of
    highlights (books.connections.neighbours.nearest_each).
    """
    asked = (
        Highlight.objects.alive()
        .passages()
        .filter(pk__in=ids, embedding_status=Highlight.EmbeddingStatus.DONE)
        .values_list("pk", "reader_id", "embedding_model")
    )
    libraries: dict[tuple[int, str], list[int]] = defaultdict(list)
    for pk, reader_id, model_id in asked:
        libraries[(reader_id, model_id)].append(pk)
    if not libraries:
        return 0
    judge = current_judge()
    version = judge_version()
    pairs: dict[tuple[int, int], Connection] = {}
    for (reader_id, model_id), found in libraries.items():
        for (a, b), kept in _library_pairs(reader_id, model_id, found, judge).items():
            pairs[(a, b)] = Connection(
                reader_id=reader_id,
                highlight_a_id=a,
                highlight_b_id=b,
                book_low_id=min(kept.books),
                book_high_id=max(kept.books),
                distance=kept.distance,
                probability=kept.verdict[0],
                same_probability=kept.verdict[1],
                strength=kept.verdict[2],
                judge_version=version,
                wording_shared=kept.wording_shared,
                embedding_model=model_id,
            )
    existing = set(
        Connection.objects.filter(Q(highlight_a_id__in=ids) | Q(highlight_b_id__in=ids))
        .filter(highlight_a_id__in={a for a, _ in pairs}, highlight_b_id__in={b for _, b in pairs})
        .values_list("highlight_a_id", "highlight_b_id")
    )
    # A worker connecting a neighbour at the same moment may have stored the same pair since
    # the read above: its verdict is replaced by this one, judged in the newer library.
    Connection.objects.bulk_create(
        list(pairs.values()),
        update_conflicts=True,
        unique_fields=["highlight_a", "highlight_b"],
        # A pair's books too: a merge of books may have moved one since it was stored.
        update_fields=[*VERDICT_FIELDS, "book_low", "book_high"],
        batch_size=1000,
    )
    return len(set(pairs) - existing)


def _load(ids: Iterable[int]) -> dict[int, tuple[_Passage, str]]:
    """Each passage's facts and its book's normalized authors."""
    rows = Highlight.objects.filter(pk__in=list(ids)).annotate(
        in_english=Q(english_embedding__isnull=False)
    )
    found = {}
    values = rows.values_list(
        "pk", "book_id", "language", "text", "kind", "in_english", "book__authors_normalized"
    )
    for pk, book_id, language, text, kind, in_english, authors in values:
        folded = wording(text)
        passage = _Passage(
            pk,
            book_id,
            language,
            len(words_of(text)),
            kind == NOTE,
            bool(in_english),
            stems_of_wording(folded),
            numbers_of(text),
            negated(text),
            folded,
        )
        found[pk] = (passage, authors or "")
    return found


# Stem frequencies of a few libraries, kept in the worker process: an import connects its
# passages a task at a time, and reading a 10,000-passage library's texts at each task cost
# more than the judging. A frequency counted on a library within FREQUENCY_DRIFT of today's
# size weighs a stem's rarity alike (its logarithm moves by under 0.1).
FREQUENCY_DRIFT = 0.1
_FREQUENCIES: "OrderedDict[int, tuple[dict[str, int], int]]" = OrderedDict()
_FREQUENCIES_KEPT = 4


def _library_frequency(reader_id: int) -> tuple[dict[str, int], int]:
    """How many of the reader's passages have each stem, and how many passages there are."""
    texts = Highlight.objects.alive().passages().filter(reader_id=reader_id)
    kept = _FREQUENCIES.get(reader_id)
    if kept is not None and abs(texts.count() - kept[1]) <= FREQUENCY_DRIFT * kept[1]:
        _FREQUENCIES.move_to_end(reader_id)
        return kept
    stem_sets = [stems(text) for text in texts.values_list("text", flat=True).iterator(2000)]
    found = stem_frequency(stem_sets), len(stem_sets)
    _FREQUENCIES[reader_id] = found
    while len(_FREQUENCIES) > _FREQUENCIES_KEPT:
        _FREQUENCIES.popitem(last=False)
    return found


@dataclass(frozen=True)
class _Kept:
    """A judged pair a passage keeps."""

    distance: float  # by the main model
    verdict: tuple[float, float, int]  # P(related), P(same idea), strength
    wording_shared: float
    books: tuple[int, int]  # the book of each side


def _library_pairs(
    reader_id: int, model_id: str, asked: list[int], judge: Judge
) -> dict[tuple[int, int], _Kept]:
    """The judged pairs these passages of one library keep, (a, b) lower id first."""
    facts = _load(asked)
    books = {pk: passage.book_id for pk, (passage, _) in facts.items()}

    queries = [Query(pk, books[pk]) for pk in asked]
    english = [q for q in queries if facts[q.highlight_id][0].in_english]
    # Each passage's nearest in other books by each vector it has.
    found = [
        nearest_each(
            reader_id=reader_id,
            model_id=model_id,
            queries=asking,
            column=column,
            limit=NEIGHBOURS,
        )
        for column, asking in (
            ("embedding", queries),
            (ENGLISH_COLUMN, english),
            (THEME_COLUMN, queries),
        )
    ]
    others = {n.highlight_id for lists in found for ns in lists.values() for n in ns}
    facts |= _load(others - set(asked))
    candidates: set[tuple[int, int]] = set()
    for pk in asked:
        for n in (n for lists in found for n in lists.get(pk, [])):
            if facts[pk][0].note and facts[n.highlight_id][0].note:
                continue  # a note connects to what books say, not to other notes
            candidates.add((min(pk, n.highlight_id), max(pk, n.highlight_id)))
    # Every candidate's cosine by each vector both sides have, in one statement.
    cosines, english_cosines, theme_cosines = _pair_cosines(
        sorted(candidates), ("embedding", ENGLISH_COLUMN, THEME_COLUMN)
    )
    frequency, passages = _library_frequency(reader_id)

    ordered = sorted(p for p in candidates if p in cosines)
    judged_facts = []
    for a, b in ordered:
        (first, first_authors), (second, second_authors) = facts[a], facts[b]
        has_english = (a, b) in english_cosines and first.language == second.language == ENGLISH
        rare, share = shared_rarity(first.stems, second.stems, frequency, passages)
        judged_facts.append(
            PairFacts(
                main=cosines[(a, b)],
                english=english_cosines[(a, b)] if has_english else None,
                theme=theme_cosines.get((a, b)),
                rare=rare,
                rare_share=share,
                words_a=first.words,
                words_b=second.words,
                language_a=first.language,
                language_b=second.language,
                same_author=same_author(first_authors, second_authors),
                numbers_differ=numbers_differ(first.numbers, second.numbers),
                negation_differs=first.negated != second.negated,
                same_words=same_words(first.wording, second.wording),
            )
        )
    verdicts = dict(zip(ordered, judge.judge(judged_facts), strict=True))
    # Each asking passage keeps its best few.
    kept: dict[tuple[int, int], _Kept] = {}
    by_passage: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for pair, verdict in verdicts.items():
        if verdict[0] < NEARBY_BAND:
            continue
        for side in pair:
            by_passage[side].append(pair)
    for pk in asked:
        best = sorted(by_passage.get(pk, []), key=lambda p: (-verdicts[p][0], p))
        for pair in best[:KEPT_PER_HIGHLIGHT]:
            shared = shared_wording(facts[pair[0]][0].wording, facts[pair[1]][0].wording)
            sides = (facts[pair[0]][0].book_id, facts[pair[1]][0].book_id)
            kept[pair] = _Kept(1.0 - cosines[pair], verdicts[pair], shared, sides)
    return kept


def _pair_cosines(
    pairs: list[tuple[int, int]], columns: Sequence[str]
) -> list[dict[tuple[int, int], float]]:
    """For each vector column, the cosine of each pair of highlights that both have one."""
    found: list[dict[tuple[int, int], float]] = [{} for _ in columns]
    if not pairs:
        return found
    cosines = ", ".join(f"1 - (a.{column} <=> b.{column})" for column in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT p.a, p.b, {cosines} "
            "FROM unnest(%s::bigint[], %s::bigint[]) AS p(a, b) "
            "JOIN books_highlight a ON a.id = p.a JOIN books_highlight b ON b.id = p.b",
            [[a for a, _ in pairs], [b for _, b in pairs]],
        )
        for a, b, *values in cursor.fetchall():
            for kept, value in zip(found, values, strict=True):
                if value is not None:
                    kept[(a, b)] = float(value)
    return found


def connections_rebuild(*, reader_id: int | None = None, batch: int = 500) -> int:
    """Forget and find again every connection of a reader (of every reader: None): what an
    upgrade of the candidates' rule runs once. Returns pairs stored."""
    passages = (
        Highlight.objects.alive().passages().filter(embedding_status=Highlight.EmbeddingStatus.DONE)
    )
    connections = Connection.objects.all()
    if reader_id is not None:
        passages = passages.filter(reader_id=reader_id)
        connections = connections.filter(reader_id=reader_id)
    ids = list(passages.order_by("pk").values_list("pk", flat=True))
    connections.delete()
    stored = 0
    for start in range(0, len(ids), batch):
        stored += highlights_connect(ids=ids[start : start + batch])
    return stored


def stale_connections(*, reader_id: int | None = None) -> QuerySet[Connection]:
    """Stored pairs judged by another version of the judge, or before their wording was
    measured."""
    pairs = Connection.objects.filter(
        ~Q(judge_version=judge_version()) | Q(wording_shared__isnull=True)
    )
    return pairs if reader_id is None else pairs.filter(reader_id=reader_id)


def connections_rejudge(*, reader_id: int | None = None, batch: int = 200) -> int:
    """Judge again, with the pinned judge, the highlights whose stored pairs another version
    judged, one batch of highlights; returns the stale pairs left. Idempotent: with none
    left it does nothing. Pairs not found again as candidates are dropped."""
    stale = stale_connections(reader_id=reader_id)
    ids = sorted(
        {
            pk
            for pair in stale.values_list("highlight_a_id", "highlight_b_id")[:batch]
            for pk in pair
        }
    )
    if not ids:
        return 0
    highlights_connect(ids=ids)
    stale.filter(Q(highlight_a_id__in=ids) | Q(highlight_b_id__in=ids)).delete()
    return stale.count()


def connections_follow_books(*, reader_id: int, books: Iterable[int]) -> None:
    """After highlights of these books moved to another book (a merge of books): their
    pairs' stored books follow them, and a pair now within one book, no connection, goes."""
    books = list(books)
    touching = Connection.objects.filter(reader_id=reader_id).filter(
        Q(book_low__in=books) | Q(book_high__in=books)
    )
    touching.filter(highlight_a__book=F("highlight_b__book")).delete()
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE books_connection AS c SET book_low_id = LEAST(a.book_id, b.book_id), "
            "book_high_id = GREATEST(a.book_id, b.book_id) "
            "FROM books_highlight AS a, books_highlight AS b "
            "WHERE a.id = c.highlight_a_id AND b.id = c.highlight_b_id AND c.reader_id = %s "
            "AND (c.book_low_id = ANY(%s) OR c.book_high_id = ANY(%s))",
            [reader_id, books, books],
        )


def connections_forget(*, ids: list[int]) -> None:
    """Drop the stored connections of highlights whose vector changed or went away."""
    Connection.objects.filter(Q(highlight_a_id__in=ids) | Q(highlight_b_id__in=ids)).delete()
