"""Search one reader's library by words and by meaning, fused by weights that suit the query.

The service (`search`) and how its parts meet; each part is a module of its own:
- **The query** (books.search.query): words, "quoted phrases" (exact, and required of every
  result), `-word` and `-"a phrase"` (left out of every result), `or` between two terms,
  `author:` / `book:` prefixes, and each word's English and Spanish stems.
- **Names** (books.search.names): titles and authors are fields, never searchable text; a
  name typed among the words ("what did Kierkegaard say about despair") is recognised and
  that author's or book's highlights that match the rest of the query come first.
- **Keyword** (books.search.keyword): PostgreSQL full-text search through the GIN index
  decides which highlights match; BM25 computed there decides their order.
- **Meaning** (books.search.meaning): the query's vector, the nearest highlights, cut at a
  relevance floor (per model) so that the count is of close matches, not of the top 100.
- **Hybrid** (books.search.fusion): weighted reciprocal rank fusion, the weights from the
  query itself, measured on the three tasks of `evaluate_search`. Without the model,
  keyword results come back with a notice: search never fails because the model is missing.
- **Results** (books.search.results): the page's highlights, the words to mark, the count.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import User
from books.connections.neighbours import Neighbour
from books.models import Book, Highlight, search_document
from books.search.filters import SearchFilters, reader_library
from books.search.fusion import (
    DEPTH,
    FEW_WORDS,
    RRF_K,
    Fused,
    FusionWeights,
    fuse,
    fused_order,
    fusion_weights,
    recency_factor,
)
from books.search.keyword import KeywordHits, forget_word_shares, keyword_hits, word_pattern
from books.search.language import language_notice
from books.search.meaning import clear_query_cache, nearest_meaning, query_vector
from books.search.names import (
    NAME_FILLER,
    NAMED_MARGIN,
    NamedBooks,
    books_with_fields,
    capitalized_words,
    names_in,
    reader_books,
)
from books.search.query import (
    QUERY_MAX_LENGTH,
    ParsedQuery,
    meaning_text,
    parse_query,
    query_terms,
    tsquery,
)
from books.search.results import LISTING_MAX, PAGE_SIZE, SearchResult, SearchResults, page_results

# What the search's callers (views, the JSON API, the MCP server, the commands, the
# benchmarks) import from here: the service, its results, its limits and its caches.
__all__ = [
    "MODES",
    "NOTICE_MODEL_UNAVAILABLE",
    "PAGE_SIZE",
    "QUERY_MAX_LENGTH",
    "SearchResult",
    "SearchResults",
    "clear_query_cache",
    "forget_word_shares",
    "search",
]

MODES = ("auto", "keyword", "meaning")
NOTICE_MODEL_UNAVAILABLE = "Keyword results only: the model is unavailable."


@dataclass
class _Ranked:
    fused: dict[int, Fused]
    order: list[int]
    keyword: KeywordHits
    mode_used: str
    weights: FusionWeights | None = None
    # The meaning half found DEPTH close matches: more may be close than were read.
    meaning_capped: bool = False


def _rank(
    reader: User,
    library: QuerySet[Highlight],
    parsed: ParsedQuery,
    *,
    mode: str,
    filtered: bool,
    vector: Sequence[float] | None,
    model_id: str,
    exclude_ids: Sequence[int],
    model_reads: bool,
    named: frozenset[int] | None = None,
    known: KeywordHits | None = None,
) -> _Ranked:
    """One library's results for one query, fused: the heart of `search`. `named`: the
    books the query names, when the library is their highlights; `known`: the whole
    library's keyword hits then, whose words read whole are not read again."""
    meaning: list[Neighbour] = []
    if vector is not None and mode != "keyword":
        meaning = nearest_meaning(
            reader, library, filtered, vector, model_id, exclude_ids,
            absolute_floor=named is None, book_ids=named,
        )  # fmt: skip
    if vector is None or mode == "keyword":
        mode_used = "keyword"
    elif mode == "meaning":
        mode_used = "meaning"
    else:
        mode_used = "hybrid" if meaning else "keyword"
    keyword = KeywordHits([], "")
    words = sum(len(words) for _, words in parsed.units)
    if mode_used != "meaning":
        # In a hybrid search of a sentence, highlights with only some of its words (the
        # any-word fallback) outvote the meaning half rather than add to it: the fallback
        # runs for a few words only (see fusion_weights).
        fallback = mode_used == "keyword" or words <= FEW_WORDS
        # Where the model could answer too, a highlight that shares only "and" with the
        # query is no match, even when the meaning half found nothing close.
        common_alone = vector is None or mode == "keyword"
        keyword = keyword_hits(
            library, parsed, fallback=fallback, common_alone=common_alone,
            known=known, book_ids=named or (),
        )  # fmt: skip
    weights = None
    if mode_used == "hybrid":
        weights = fusion_weights(
            parsed,
            keyword.passed,
            model_reads=model_reads,
            best_distance=min(n.distance for n in meaning),
            model_id=model_id,
        )
        fused = fuse(
            keyword.ranked if weights.keyword else [],
            meaning,
            keyword_weight=weights.keyword,
            meaning_weight=weights.meaning,
        )
    else:
        fused = fuse(keyword.ranked, meaning)
    return _Ranked(fused, fused_order(fused), keyword, mode_used, weights, len(meaning) >= DEPTH)


def _listing(library: QuerySet[Highlight]) -> _Ranked:
    """A name with no other words ("Pessoa", "author:borges"): the books' highlights in
    reading order, as their book pages list them."""
    ids = list(
        library.order_by("book__title", "location_start", "pk").values_list("pk", flat=True)[
            :LISTING_MAX
        ]
    )
    fused = {pk: Fused(score=1 / (RRF_K + rank)) for rank, pk in enumerate(ids, start=1)}
    return _Ranked(fused, ids, KeywordHits([], ""), "keyword")


def search(
    reader: User,
    query: str,
    *,
    mode: str = "auto",
    book: Book | None = None,
    author: str = "",
    added_from: date | None = None,
    added_to: date | None = None,
    has_note: bool | None = None,
    recency_boost: bool = False,
    limit: int = PAGE_SIZE,
    offset: int = 0,
    page: int | None = None,
    clock: Callable[[], datetime] = timezone.now,
    exclude_ids: Sequence[int] = (),
) -> SearchResults:
    """A reader's highlights for a query, best first; never another reader's, never deleted.

    `mode`: "auto" (hybrid when the model is there and highlights have vectors), "keyword"
    or "meaning"; `SearchResults.mode_used` says what ran and `notice` why, if it differs.
    `exclude_ids` leaves highlights out before ranking (the evaluation's query highlight).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if book is not None and book.reader_id != reader.pk:
        raise ValueError("the book filter must be one of the reader's books")
    limit = max(1, limit)
    if page is not None:
        offset = (max(1, page) - 1) * limit
    offset = max(0, offset)
    parsed = parse_query(query)
    if not parsed.units and not parsed.authors and not parsed.books:
        # An empty query (or one of exclusions only) finds nothing, never everything.
        return SearchResults(query, mode, "", [], total=0, offset=offset, limit=limit)

    filters = SearchFilters(book, author, added_from, added_to, has_note)
    library = reader_library(reader, filters)
    if exclude_ids:
        library = library.exclude(pk__in=list(exclude_ids))
    filtered = bool(filters)
    books = reader_books(reader)
    named = NamedBooks(frozenset(), ())
    if parsed.authors or parsed.books:
        # author: and book: are filters: the reader said which field the words are in.
        by_field = books_with_fields(books, parsed.authors, parsed.books)
        if not by_field.book_ids:
            asked = [*(f"author:{a}" for a in parsed.authors), *(f"book:{b}" for b in parsed.books)]
            return SearchResults(
                query, mode, "keyword", [], total=0, offset=offset, limit=limit,
                notice=f"No book of yours matches {' '.join(asked)}.",
            )  # fmt: skip
        library = library.filter(book_id__in=by_field.book_ids)
        filtered = True
    elif parsed.units:
        named = names_in(parsed, books, capitalized=capitalized_words(query), library=library)
    terms = query_terms(parsed) if parsed.units or parsed.exclusions else None
    if terms and terms.constraint:
        # Quoted phrases and exclusions hold for the meaning half too.
        library = library.alias(constrained=search_document()).filter(
            constrained=tsquery(terms.constraint)
        )
        # The index holds stems beside the words as written ("habits" is there as "habit"
        # too): the text itself tells that a quoted phrase is there exactly.
        for i in parsed.phrases:
            if (i,) in parsed.clauses:
                library = library.filter(search_text__regex=word_pattern(parsed.units[i][1]))
        filtered = True

    notices: list[str] = []
    vector: list[float] | None = None
    model_id = ""
    model_reads = True
    if mode != "keyword":
        from books.embedding.encoder import EncoderUnavailable, get_encoder

        try:
            encoder = get_encoder()
        except EncoderUnavailable:
            notices.append(NOTICE_MODEL_UNAVAILABLE)
        else:
            vector = query_vector(encoder, meaning_text(query) or query.strip()[:QUERY_MAX_LENGTH])
            model_id = encoder.model_id
            language = language_notice(query, encoder)
            if language:
                notices.append(language)
                model_reads = False

    def rank(
        highlights: QuerySet[Highlight],
        asked: ParsedQuery,
        narrowed: bool,
        named: frozenset[int] | None = None,
        known: KeywordHits | None = None,
    ) -> _Ranked:
        if not asked.units:
            return _listing(highlights)
        return _rank(
            reader, highlights, asked, mode=mode, filtered=narrowed, vector=vector,
            model_id=model_id, exclude_ids=exclude_ids, model_reads=model_reads, named=named,
            known=known,
        )  # fmt: skip

    ranked = rank(library, parsed, filtered)
    fused, ordered = ranked.fused, ranked.order
    named_first = 0
    if named.book_ids:
        # The named books' highlights that match the rest of the query come first; then
        # everything else the whole query finds (a highlight that quotes the name).
        topic = parsed.without(named.words | NAME_FILLER)
        # The reader named them: their best match on the topic shows, however far it is.
        first = rank(
            library.filter(book_id__in=named.book_ids), topic, True,
            named=named.book_ids, known=ranked.keyword,
        )  # fmt: skip
        # Only those close to the query, when the library has something closer: a sentence
        # about Colin Powell with a paraphrase in the library is not a question for Powell.
        best = min((e.distance for e in fused.values() if e.distance is not None), default=None)
        if best is not None and topic.units:
            reach = best + NAMED_MARGIN
            first.order = [
                pk
                for pk in first.order
                if first.fused[pk].keyword_rank is not None
                or (first.fused[pk].distance or math.inf) <= reach
            ]
            first.fused = {pk: first.fused[pk] for pk in first.order}
        if first.order:
            named_first = len(first.order)
            rest = [pk for pk in ordered if pk not in first.fused]
            fused = {**fused, **first.fused}
            ordered = [*first.order, *rest]
            if topic.units:
                ranked = _Ranked(
                    fused, ordered, first.keyword, first.mode_used, first.weights,
                    first.meaning_capped or ranked.meaning_capped,
                )  # fmt: skip
            else:
                ranked = _Ranked(
                    fused, ordered, ranked.keyword, ranked.mode_used, ranked.weights,
                    ranked.meaning_capped,
                )  # fmt: skip
    if recency_boost and fused:
        now = clock()
        added = Highlight.objects.filter(pk__in=list(fused)).values_list(
            "pk", Coalesce("added_at", "created")
        )
        for pk, when in added:
            fused[pk].score *= recency_factor(when, now)
        # Within each part: the named books' highlights stay first.
        head = fused_order({pk: fused[pk] for pk in ordered[:named_first]})
        ordered = [*head, *fused_order({pk: fused[pk] for pk in ordered[named_first:]})]
    page_ids = ordered[offset : offset + limit]
    results = page_results(fused, page_ids, parsed.words)
    return SearchResults(
        query=query,
        mode=mode,
        mode_used=ranked.mode_used,
        results=results,
        total=len(ordered),
        offset=offset,
        limit=limit,
        words=parsed.words,
        keyword_pass=ranked.keyword.passed,
        notice=" ".join(notices),
        ids=ordered,
        named=named.names if named_first else (),
        named_words=named.words if named_first else frozenset(),
        named_first=named_first,
        keyword_capped=ranked.keyword.capped,
        meaning_capped=ranked.meaning_capped,
        fusion=ranked.weights.why if ranked.weights else "",
    )
