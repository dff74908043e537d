"""Writing connections: the neighbours of freshly embedded highlights, and forgetting them.

A passage connects to its few nearest passages of other books under the cut of the pair's
two languages (Thresholds); a pair found from either side is stored once and graded at read
time (selectors.Strength): under the *same idea* cut it is the same idea, else related.
Where a passage looks:
- an English passage, among English passages, by the English model's vectors when there is
  one (books.embedding.english: it tells a shared idea in English prose far better); such a
  pair is the same idea only when the model's own vectors agree (Thresholds.graded);
- any other passage by the model's own vectors: a Spanish one among Spanish and undetected
  passages, an undetected one among all;
- across English and Spanish, a pair counts only when mutual and clear (ACROSS_MARGIN).
Past a kind's plain related cut (Cuts.confirmed_from: two English passages past 0.37, two
Spanish ones past the same idea), a pair is related only as each other's nearest with a
rare word in common (books.connections.confirmed).
The reader's words (Highlight.is_word) never connect, from either side.
"""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.db.models import Q

from books.connections.confirmed import STEMMERS, confirmed_pairs
from books.connections.neighbours import Neighbour, Query, nearest_each
from books.language import ENGLISH, SPANISH, UNKNOWN
from books.library_cache import library_version_bump
from books.models import Connection, Highlight
from books.vocabulary import words_of

NOTE = Highlight.Kind.NOTE
# The English model's vectors (books.embedding.english), beside the main model's `embedding`.
ENGLISH_COLUMN = "english_embedding"

# Every pair's distance is graded on one scale, whatever model and languages made it:
# under SAME_IDEA_GRADE it is the same idea, under RELATED_GRADE related (Cuts.grade).
SAME_IDEA_GRADE = 1.0
RELATED_GRADE = 2.0
# Neighbours kept per highlight, the closest under the pair's cut (pairs found from either
# side are stored, so a highlight can end up with more). The page shows the best three of
# each strength; at 20, the bilingual evaluation library held 34,207 connections for 4,103
# passages, most of them one saying's twentieth-best echo.
CONNECTIONS_PER_HIGHLIGHT = 3
# How many of a passage's nearest are graded for those three: an undetected passage's
# nearest can be in any language, each graded under its own pair's cut.
NEIGHBOURS = 10
# Two English passages, one of them shorter than this many words, are related only closer:
# their distance counts SHORT_PAIR_MARGIN more against the related cuts (0.32 plain, 0.34
# confirmed); the same idea at any length. On the real library, of the judged pairs the
# English model connects at 0.30-0.46, those with a side under 12 words carried an idea 30 %
# of the time (27 pairs; 4 of the 8 under 0.36), the others 74 %: short highlights there
# are mostly fragments and headings ("How are decisions going to be made?"). An aphorism
# that says one thing with another ("Envy is concealed admiration.") still connects, closer.
SHORT_PASSAGE_WORDS = 12
SHORT_PAIR_MARGIN = 0.05
# A neighbour across languages counts only when each side is the other's nearest in its
# language, by this much over the runner-up: the margin rule of bitext mining. Without it,
# on `evaluate_library`, 2,548 English-Spanish pairs under the cut, four in ten sharing an
# idea; with it, 51 pairs, seven in twelve, and the exact translations keep connecting.
ACROSS_MARGIN = 0.01
# The languages a pair can be across (books.language); "unknown" is across none.
KNOWN_LANGUAGES = (ENGLISH, SPANISH)


@dataclass(frozen=True)
class Cuts:
    """The two cuts of one kind of pair, as cosine distances: same idea < related. Equal,
    the kind connects only as the same idea. From `confirmed_from` (None: nowhere) up to the
    related cut, a pair is related only when confirmed (books.connections.confirmed)."""

    same_idea: float
    related: float
    confirmed_from: float | None = None

    def needs_confirming(self, distance: float) -> bool:
        return self.confirmed_from is not None and distance >= self.confirmed_from

    @property
    def unconfirmed(self) -> "Cuts":
        """The cuts of what connects with no confirming: what a pair alone can tell."""
        if self.confirmed_from is None:
            return self
        return Cuts(self.same_idea, max(self.same_idea, self.confirmed_from))

    def grade(self, distance: float) -> float:
        """The distance on the common scale, piecewise linear: [0, same idea) onto [0, 1),
        [same idea, related) onto [1, 2), and on past 2."""
        if distance < self.same_idea:
            return SAME_IDEA_GRADE * distance / self.same_idea if self.same_idea > 0 else 0.0
        if distance < self.related:
            return SAME_IDEA_GRADE + (distance - self.same_idea) / (self.related - self.same_idea)
        return RELATED_GRADE + distance - self.related


@dataclass(frozen=True)
class Thresholds:
    """The cuts of each kind of pair (books.embedding.encoder, books.embedding.english):
    two passages of one language by the model's vectors (`within`; two Spanish ones have
    their own, `spanish`), a pair across English and Spanish (`across`), and two English
    passages by the English model's vectors when there is one (`english`)."""

    within: Cuts
    spanish: Cuts
    across: Cuts
    english: Cuts | None = None

    def in_english(self, first: str, second: str) -> bool:
        """Whether a pair of these languages is judged by the English model's vectors."""
        return self.english is not None and first == second == ENGLISH

    def cuts(self, first: str, second: str) -> Cuts:
        if self.english is not None and first == second == ENGLISH:
            return self.english
        if across(first, second):
            return self.across
        if first == second == SPANISH:
            return self.spanish
        return self.within

    def graded(
        self, distance: float, first: str, second: str, main_distance: float | None = None
    ) -> float:
        """The pair's distance on the common scale (SAME_IDEA_GRADE, RELATED_GRADE).

        Two English passages judged by the English model are the same idea only when the
        model's own vectors put them under its same-idea cut too (`main_distance`, None when
        unknown): else they are related, at the top of the band. The English model tells a
        shared theme (related) far better; the main model tells a paraphrase better, and the
        two together best. On STS-B English (score >= 4 the same idea, <= 2 different), F1
        0.907 train / 0.898 dev for the English model alone at 0.27, 0.925 / 0.924 for the
        main model alone at 0.07, 0.912 / 0.919 for both, at precision 0.946 / 0.955.
        """
        graded = self.cuts(first, second).grade(distance)
        agreed = main_distance is not None and main_distance < self.within.same_idea
        if graded < SAME_IDEA_GRADE and self.in_english(first, second) and not agreed:
            return SAME_IDEA_GRADE
        return graded

    @property
    def loosest(self) -> float:
        """No pair of the model's own vectors connects at or past this distance."""
        return max(self.within.related, self.spanish.related, self.across.related)

    @property
    def loosest_stored(self) -> float:
        """No stored distance of a connection is at or past this, whichever model made it."""
        return max(self.loosest, self.english.related if self.english is not None else 0.0)


def across(first: str, second: str) -> bool:
    return first != second and first in KNOWN_LANGUAGES and second in KNOWN_LANGUAGES


def connection_threshold() -> float:
    """The cosine distance below which two passages of one language are the same idea by
    the model's vectors: the setting, else the model's."""
    from books.embedding.encoder import get_encoder

    override: float | None = settings.EXOGRAM_CONNECTION_THRESHOLD
    return override if override is not None else get_encoder().threshold


def related_threshold() -> float:
    """The cosine distance below which two passages of one language are related by the
    model's vectors: the setting, else the model's; never tighter than the same-idea one."""
    from books.embedding.encoder import get_encoder

    override: float | None = settings.EXOGRAM_RELATED_THRESHOLD
    related = override if override is not None else get_encoder().related_threshold
    return max(related, connection_threshold())


def thresholds() -> Thresholds:
    """The model's cuts. The environment's overrides move the cuts within a language; the
    Spanish and across-language ones keep their offsets from them."""
    from books.embedding.encoder import get_encoder

    encoder = get_encoder()
    same, related = connection_threshold(), related_threshold()
    return cuts_of(
        same_idea=same,
        related=related,
        spanish_shift=encoder.spanish_shift,
        spanish_related=None
        if encoder.spanish_related is None
        else encoder.spanish_related + (related - encoder.related_threshold),
        across_shift=encoder.across_shift,
        across_related=None
        if encoder.across_related is None
        else encoder.across_related + (related - encoder.related_threshold),
        english=encoder.english_thresholds,
    )


def cuts_of(
    *,
    same_idea: float,
    related: float,
    spanish_shift: float = 0.0,
    spanish_related: float | None = None,
    across_shift: float = 0.0,
    across_related: float | None = None,
    english: tuple[float, float, float | None] | None = None,
) -> Thresholds:
    """Thresholds from a model's figures (books.embedding.encoder.ModelSpec)."""

    def cut(value: float) -> float:
        return round(value, 6)  # 0.07 + 0.005 is 0.075, not 0.07500000000000001

    spanish_same = cut(same_idea + spanish_shift)
    spanish_loose = related + spanish_shift if spanish_related is None else spanish_related
    across_same = cut(same_idea + across_shift)
    across_loose = related + across_shift if across_related is None else across_related
    return Thresholds(
        within=Cuts(same_idea, related),
        # A Spanish related band of its own is all confirmed (books.connections.confirmed).
        spanish=Cuts(
            spanish_same,
            max(spanish_same, cut(spanish_loose)),
            confirmed_from=None if spanish_related is None else spanish_same,
        ),
        across=Cuts(across_same, max(across_same, cut(across_loose))),
        english=None if english is None else Cuts(*english),
    )


def thresholds_for_display() -> Thresholds | None:
    """Both thresholds, or None when the model cannot load."""
    from books.embedding.encoder import EncoderUnavailable

    try:
        return thresholds()
    except EncoderUnavailable:
        return None


def connection_threshold_for_display() -> float | None:
    """The threshold for pages to show, or None when the model cannot load."""
    from books.embedding.encoder import EncoderUnavailable

    try:
        return connection_threshold()
    except EncoderUnavailable:
        return None


@dataclass(frozen=True)
class _Passage:
    pk: int
    reader_id: int
    book_id: int
    model_id: str
    language: str
    in_english: bool  # it has the English model's vector
    words: int
    note: bool  # a standalone note: the reader's words, not a book's


def highlights_connect(*, ids: list[int]) -> int:
    """Find and store the connections of freshly embedded highlights. Returns pairs added.

    Idempotent: pairs are stored once (lower id first, unique), so running it twice adds
    nothing the second time. Each library is read once a call, whatever the number of
    highlights (books.connections.neighbours.nearest_each).
    """
    cuts = thresholds()
    passages = [
        _Passage(pk, reader, book, model, language, english, len(words_of(text)), kind == NOTE)
        for pk, reader, book, model, language, english, text, kind in Highlight.objects.alive()
        .passages()
        .filter(pk__in=ids, embedding_status=Highlight.EmbeddingStatus.DONE)
        .annotate(in_english=Q(english_embedding__isnull=False))
        .values_list(
            "pk", "reader_id", "book_id", "embedding_model", "language", "in_english", "text",
            "kind",
        )
    ]  # fmt: skip
    libraries: dict[tuple[int, str], list[_Passage]] = defaultdict(list)
    for passage in passages:
        libraries[(passage.reader_id, passage.model_id)].append(passage)
    pairs: dict[tuple[int, int], Connection] = {}
    for (reader_id, model_id), found in libraries.items():
        for pair in _library_pairs(reader_id, model_id, found, cuts):
            a, b = sorted((pair.passage, pair.other))
            pairs[(a, b)] = Connection(
                reader_id=reader_id,
                highlight_a_id=a,
                highlight_b_id=b,
                distance=pair.distance,
                main_distance=pair.main_distance,
                embedding_model=model_id,
            )
    existing = set(
        Connection.objects.filter(
            Q(highlight_a_id__in=ids) | Q(highlight_b_id__in=ids)
        ).values_list("highlight_a_id", "highlight_b_id")
    )
    new = [pair for key, pair in pairs.items() if key not in existing]
    # ignore_conflicts: a worker connecting a neighbour at the same moment may have
    # stored the same pair since the read above.
    Connection.objects.bulk_create(new, ignore_conflicts=True, batch_size=1000)
    return len(new)


@dataclass(frozen=True)
class _Pair:
    passage: int
    other: int
    distance: float
    main_distance: float | None = None  # two English passages: the main model's distance


def _library_pairs(
    reader_id: int, model_id: str, passages: list[_Passage], cuts: Thresholds
) -> list[_Pair]:
    """The connections these passages of one library make: within their languages, then
    across."""
    found: list[_Pair] = []
    languages: dict[int, str] = {}
    book: dict[int, int] = {}
    words: dict[int, int] = {}
    notes: set[int] = set()

    def nearest(
        group: list[_Passage], column: str, within: Sequence[str] | None
    ) -> dict[int, list[Neighbour]]:
        neighbours = nearest_each(
            reader_id=reader_id,
            model_id=model_id,
            queries=[Query(p.pk, p.book_id) for p in group],
            column=column,
            languages=within,
            limit=NEIGHBOURS,
        )
        unseen = {n.highlight_id for ns in neighbours.values() for n in ns} - set(languages)
        for pk, language, book_id, text, kind in Highlight.objects.filter(
            pk__in=unseen
        ).values_list("pk", "language", "book_id", "text", "kind"):
            languages[pk], book[pk], words[pk] = language, book_id, len(words_of(text))
            if kind == NOTE:
                notes.add(pk)
        return neighbours

    # Within a language: each group of passages that look in the same place, in one query.
    groups: dict[tuple[str, tuple[str, ...] | None], list[_Passage]] = defaultdict(list)
    for passage in passages:
        languages[passage.pk], words[passage.pk] = passage.language, passage.words
        book[passage.pk] = passage.book_id
        if passage.note:
            notes.add(passage.pk)
        groups[_where_to_look(passage, cuts)].append(passage)
    for (column, within), group in groups.items():
        neighbours = nearest(group, column, within)
        main: dict[tuple[int, int], float] = {}
        if column == ENGLISH_COLUMN:
            main = _main_distances(
                (passage.pk, n.highlight_id)
                for passage in group
                for n in neighbours[passage.pk]
                if n.distance < cuts.loosest_stored
            )
        bests: dict[int, list[tuple[float, int, float, float | None]]] = {}
        # Pairs past their kind's plain related cut: only a passage's nearest passage of its
        # own language, and only if confirmed (books.connections.confirmed), per language.
        unconfirmed: dict[str, dict[tuple[int, int], tuple[float, int, float, float | None]]]
        unconfirmed = defaultdict(dict)
        for passage in group:
            best = bests[passage.pk] = []
            ids = [n.highlight_id for n in neighbours[passage.pk]]
            nearest_alike = next((pk for pk in ids if languages[pk] == passage.language), None)
            for neighbour in neighbours[passage.pk]:
                other = neighbour.highlight_id
                if across(passage.language, languages[other]):
                    continue
                # A note connects to what books say, not to the reader's other notes: the
                # same note written in three books ("Use this in the talk.") is no idea
                # two books share.
                if passage.pk in notes and other in notes:
                    continue
                pair_cuts = cuts.cuts(passage.language, languages[other])
                judged = neighbour.distance
                if cuts.in_english(passage.language, languages[other]) and (
                    min(words[passage.pk], words[other]) < SHORT_PASSAGE_WORDS
                ):
                    judged += SHORT_PAIR_MARGIN
                if judged >= pair_cuts.related:
                    continue
                main_distance = main.get((passage.pk, other))
                graded = cuts.graded(
                    neighbour.distance, passage.language, languages[other], main_distance
                )
                chosen = (graded, other, neighbour.distance, main_distance)
                if pair_cuts.needs_confirming(judged):
                    if other == nearest_alike and passage.language in STEMMERS:
                        unconfirmed[passage.language][(passage.pk, other)] = chosen
                    continue
                best.append(chosen)
        for language, pending in unconfirmed.items():
            for pk, other in confirmed_pairs(
                reader_id=reader_id,
                model_id=model_id,
                column=column,
                language=language,
                candidates=[
                    (Query(pk, book[pk]), Query(other, book[other])) for pk, other in pending
                ],
            ):
                bests[pk].append(pending[(pk, other)])
        for pk, best in bests.items():
            best.sort(key=lambda chosen: chosen[:2])
            found += [
                _Pair(pk, other, d, main_distance)
                for _, other, d, main_distance in best[:CONNECTIONS_PER_HIGHLIGHT]
            ]
    # Across English and Spanish: each the other's clear nearest in its language.
    for language in KNOWN_LANGUAGES:
        askers = [p for p in passages if p.language in KNOWN_LANGUAGES and p.language != language]
        if not askers:
            continue
        for passage_id, other_id, distance in _clear_nearest_pairs(
            reader_id, model_id, askers, language, cuts
        ):
            found.append(_Pair(passage_id, other_id, distance))
    return found


def _main_distances(pairs: Iterable[tuple[int, int]]) -> dict[tuple[int, int], float]:
    """The main model's distance of each pair of highlights, by pgvector: both vectors are
    in the rows (books.migrations.0018), one statement for a task's pairs."""
    wanted = list(dict.fromkeys(pairs))
    if not wanted:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.a, p.b, a.embedding <=> b.embedding "
            "FROM unnest(%s::bigint[], %s::bigint[]) AS p(a, b) "
            "JOIN books_highlight a ON a.id = p.a JOIN books_highlight b ON b.id = p.b "
            "WHERE a.embedding IS NOT NULL AND b.embedding IS NOT NULL",
            [[a for a, _ in wanted], [b for _, b in wanted]],
        )
        return {(a, b): float(distance) for a, b, distance in cursor.fetchall()}


def _where_to_look(passage: _Passage, cuts: Thresholds) -> tuple[str, tuple[str, ...] | None]:
    """(vector column, languages) of the passages a passage's connections are sought among."""
    if passage.language == ENGLISH and cuts.english is not None:
        # Never two English passages by the main model's distances, which would then be
        # graded on the English model's scale: without its vector, among undetected ones.
        if passage.in_english:
            return ENGLISH_COLUMN, (ENGLISH,)
        return "embedding", (UNKNOWN,)
    if passage.language == UNKNOWN:
        return "embedding", None
    return "embedding", (passage.language, UNKNOWN)


def _clear_nearest_pairs(
    reader_id: int, model_id: str, askers: list[_Passage], language: str, cuts: Thresholds
) -> list[tuple[int, int, float]]:
    """Pairs of an asker and its nearest passage in `language`, when each is the other's
    nearest (in the other's language) under the cut across languages, by ACROSS_MARGIN over
    the runner-up."""
    cut = cuts.across.related
    forth = _clear_nearest(reader_id, model_id, [Query(p.pk, p.book_id) for p in askers],
                           language, cut)  # fmt: skip
    if not forth:
        return []
    others = dict(
        Highlight.objects.filter(pk__in=[other for other, _ in forth.values()]).values_list(
            "pk", "book_id"
        )
    )
    by_language: dict[str, list[Query]] = defaultdict(list)
    asker_language = {p.pk: p.language for p in askers}
    for asker, (other, _) in forth.items():
        by_language[asker_language[asker]].append(Query(other, others[other]))
    back: dict[int, tuple[int, float]] = {}
    for asked_language, queries in by_language.items():
        back |= _clear_nearest(reader_id, model_id, queries, asked_language, cut)
    return [
        (asker, other, distance)
        for asker, (other, distance) in forth.items()
        if back.get(other, (None, 0.0))[0] == asker
    ]


def _clear_nearest(
    reader_id: int, model_id: str, queries: list[Query], language: str, cut: float
) -> dict[int, tuple[int, float]]:
    """Each query's nearest passage in `language` (other books), if under `cut` and closer
    than the runner-up by ACROSS_MARGIN."""
    nearest = nearest_each(
        reader_id=reader_id,
        model_id=model_id,
        queries=list({q.highlight_id: q for q in queries}.values()),
        languages=[language],
        limit=2,
    )
    found = {}
    for query_id, neighbours in nearest.items():
        if not neighbours or neighbours[0].distance >= cut:
            continue
        if len(neighbours) > 1 and neighbours[1].distance < neighbours[0].distance + ACROSS_MARGIN:
            continue
        found[query_id] = (neighbours[0].highlight_id, neighbours[0].distance)
    return found


def connections_rebuild(*, reader_id: int | None = None, batch: int = 500) -> int:
    """Forget and find again every connection of a reader (of every reader: None) under the
    current rule: what an upgrade of the rule, or of the cuts, runs once. Returns pairs
    stored."""
    passages = (
        Highlight.objects.alive().passages().filter(embedding_status=Highlight.EmbeddingStatus.DONE)
    )
    connections = Connection.objects.all()
    if reader_id is not None:
        passages = passages.filter(reader_id=reader_id)
        connections = connections.filter(reader_id=reader_id)
    ids = list(passages.order_by("pk").values_list("pk", flat=True))
    readers = set(connections.values_list("reader_id", flat=True).distinct())
    connections.delete()
    stored = 0
    for start in range(0, len(ids), batch):
        stored += highlights_connect(ids=ids[start : start + batch])
    # The cached connection pages of these readers are stale all at once, not in 30 s.
    readers |= set(passages.values_list("reader_id", flat=True).distinct())
    library_version_bump(reader_ids=readers)
    return stored


def connections_forget(*, ids: list[int]) -> None:
    """Drop the stored connections of highlights whose vector changed or went away."""
    Connection.objects.filter(Q(highlight_a_id__in=ids) | Q(highlight_b_id__in=ids)).delete()
