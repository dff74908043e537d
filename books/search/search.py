"""Search one reader's library by words and by meaning, fused by weights that suit the query.

The service (`search`) and how its parts meet; each part is a module of its own:
- **The query** (books.search.query): words, "quoted phrases" (exact, and required of every
  result), `-word` and `-"a phrase"` (left out of every result), `or` between two terms,
  `author:` / `book:` / `tag:` prefixes (Spanish too), and each word's English and Spanish
  stems.
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

import dataclasses
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum

from django.contrib.humanize.templatetags.humanize import intcomma
from django.db.models import Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop, ngettext

from accounts.models import User
from books.connections.neighbours import Neighbour
from books.library_cache import LibraryCache
from books.models import Book, Highlight, Tag, search_document
from books.search.filters import SearchFilters, reader_library
from books.search.fusion import (
    DEPTH,
    RRF_K,
    Fused,
    FusionWeights,
    fuse,
    fused_order,
    fusion_weights,
    recency_factor,
)
from books.search.keyword import KeywordHits, forget_word_shares, keyword_hits, written_pattern
from books.search.language import language_notice, model_languages
from books.search.meaning import (
    clear_query_cache,
    close_distance,
    in_books_distance,
    in_reading_case,
    library_bound,
    nearest_meaning,
    nearest_theme,
    query_vector,
    reads_as_fragments,
    theme_query_vector,
    with_theme,
)
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
    FEW_WORDS,
    QUERY_MAX_LENGTH,
    ParsedQuery,
    enforced_clauses,
    has_letters_or_digits,
    is_few_words,
    meaning_text,
    only_stop_words,
    parse_query,
    prefix_field,
    prefix_value,
    prefixes_in,
    query_terms,
    tsquery,
)
from books.search.results import LISTING_MAX, PAGE_SIZE, SearchResult, SearchResults, page_results
from books.text import WORD, fold, literal_pattern

# What the search's callers (views, the JSON API, the MCP server, the commands, the
# benchmarks) import from here: the service, its results, its limits and its caches.
__all__ = [
    "MODES",
    "NOTICE_MODEL_UNAVAILABLE",
    "PAGE_SIZE",
    "QUERY_MAX_LENGTH",
    "Mode",
    "SearchRequest",
    "SearchResult",
    "SearchResults",
    "clear_query_cache",
    "forget_word_shares",
    "search",
    "search_run",
    "tag_named",
]


class Mode(StrEnum):
    """What the reader asked for: both halves fused where they can be, or one of them."""

    AUTO = "auto"
    KEYWORD = "keyword"
    MEANING = "meaning"


MODES = tuple(mode.value for mode in Mode)
NOTICE_MODEL_UNAVAILABLE = gettext_noop("Keyword results only: the model is unavailable.")
NOTICE_NO_BOOK = gettext_noop("No book of yours matches %(fields)s.")
NOTICE_NO_TAG = gettext_noop("You have no tag called %(tags)s.")
NOTICE_NO_LETTERS = gettext_noop("Searches need letters or digits.")
NOTICE_FRAGMENTS = gettext_noop(
    "The model reads “%(query)s” as letters, not words: searched by words only."
)
NOTICE_SHORTENED = gettext_noop("Your search was shortened to its first %(count)s characters.")
NOTICE_STOP_WORDS = gettext_noop(
    "Only common words: searched for “%(phrase)s” as written, by words only."
)


@dataclass(frozen=True, kw_only=True)
class SearchRequest:
    """One search, as data: who asks, what, within which filters, and which page.

    `exclude_ids` leaves highlights out before ranking (the evaluation's query highlight).
    """

    reader: User
    query: str
    mode: Mode = Mode.AUTO
    filters: SearchFilters = field(default_factory=SearchFilters)
    recency_boost: bool = False
    limit: int = PAGE_SIZE
    offset: int = 0
    clock: Callable[[], datetime] = timezone.now
    exclude_ids: Sequence[int] = ()


@dataclass
class _Ranked:
    fused: dict[int, Fused]
    order: list[int]
    keyword: KeywordHits
    mode_used: str
    weights: FusionWeights | None = None
    # The meaning half found DEPTH close matches: more may be close than were read.
    meaning_capped: bool = False
    # The theme model's close matches (nearer than its own floor): never loosely related,
    # whatever e5's distance (a translation's partner, a passage on a one-word topic).
    theme_close: frozenset[int] = frozenset()


@dataclass(frozen=True)
class _Scope:
    """The highlights a query can find and what it names: the first step."""

    library: QuerySet[Highlight]
    filtered: bool
    named: NamedBooks
    # Narrowed to books the reader chose (book:, author:, a book's or an author's filter).
    in_books: bool = False


@dataclass(frozen=True)
class _QueryMeaning:
    """The query's vector (None without the model or in keyword mode) and what it says."""

    vector: list[float] | None = None
    # The theme model's vector of the query (books.search.meaning.with_theme), if it has one.
    theme_vector: list[float] | None = None
    model_id: str = ""
    model_reads: bool = True
    notices: tuple[str, ...] = ()


def _scope(request: SearchRequest, parsed: ParsedQuery) -> _Scope | str:
    """The reader's highlights that the filters, the `author:`/`book:` fields, the `tag:`s,
    the quoted phrases and the exclusions leave; a notice instead when the fields match no
    book or a tag none of the reader's."""
    library = reader_library(request.reader, request.filters)
    if request.exclude_ids:
        library = library.exclude(pk__in=list(request.exclude_ids))
    filtered = bool(request.filters)
    in_books = request.filters.book is not None or bool(request.filters.author.strip())
    named = NamedBooks(frozenset(), ())
    books = reader_books(request.reader)
    if parsed.authors or parsed.books:
        # author: and book: are filters: the reader said which field the words are in.
        by_field = books_with_fields(books, parsed.authors, parsed.books)
        if not by_field.book_ids:
            asked = _typed_prefixes(request.query, ("author", "book"))
            return gettext(NOTICE_NO_BOOK) % {"fields": asked}
        library = library.filter(book_id__in=by_field.book_ids)
        filtered = in_books = True
    elif parsed.units:
        capitalized = capitalized_words(request.query)
        named = names_in(parsed, books, capitalized=capitalized, library=library)
    if parsed.tags:
        library, unknown = _tagged(request.reader, library, parsed.tags)
        if unknown:
            typed = _typed_prefixes(request.query, ("tag",), values=unknown)
            return gettext(NOTICE_NO_TAG) % {"tags": typed}
        filtered = True
    # PostgreSQL's parser leaves emoji and symbols out of the index: the text itself says
    # whether a highlight has one (read row by row, the reader's rows only).
    for symbol in parsed.symbols:
        library = library.filter(search_text__contains=symbol)
        filtered = True
    for symbol in parsed.excluded_symbols:
        library = library.exclude(search_text__contains=symbol)
        filtered = True
    # So does it of a name written with symbols the index reads as a word ("c++" as "c").
    for name in parsed.excluded_literals:
        library = library.exclude(search_text__regex=literal_pattern(name))
        filtered = True
    terms = query_terms(parsed) if parsed.units or parsed.exclusions else None
    if terms and terms.constraint:
        # Quoted phrases and exclusions hold for the meaning half too.
        library = library.alias(constrained=search_document()).filter(
            constrained=tsquery(terms.constraint)
        )
        # The index holds stems beside the words as written ("habits" is there as "habit"
        # too) and no symbols ("c++" is there as "c"): the text itself tells that a quoted
        # phrase or a name with symbols is there exactly, the clause's other units by the
        # index ("c++ or java": C++ as written, or java).
        for k in enforced_clauses(parsed):
            either = Q()
            for i in parsed.clauses[k]:
                text, words = parsed.units[i]
                either |= (
                    Q(search_text__regex=written_pattern(text, words, name=i in parsed.names))
                    if i in parsed.as_written
                    else Q(constrained=tsquery(terms.units[i]))
                )
            library = library.filter(either)
        filtered = True
    return _Scope(library, filtered, named, in_books)


def _typed_prefixes(
    query: str, fields: tuple[str, ...], values: Collection[str] | None = None
) -> str:
    """The query's prefixes of those fields as the reader typed them ("libro:jardín"); only
    those whose value folds to one of `values` when given."""
    found = (
        m
        for m in prefixes_in(query[:QUERY_MAX_LENGTH])
        if prefix_field(m.group(1)) in fields and (values is None or prefix_value(m) in values)
    )
    return " ".join(m.group(0) for m in found)


def tag_named(reader: User, query: str, shelf: LibraryCache | None = None) -> str:
    """The reader's tag whose name is the whole query ("liderazgo" when they have a tag
    "Liderazgo"), or "": the page offers its filter (`tag:`). A search by words reads the
    text and notes, never the tags: a tag is the reader's word *about* a highlight, and one
    named like a common word ("vida", "work") would lead every search for that word. The
    names are kept under the library's version (a tag's change bumps it): the page reads
    that version for its book choices anyway."""
    parsed = parse_query(query)
    if len(parsed.units) > FEW_WORDS or parsed.authors or parsed.books or parsed.tags:
        return ""
    words = " ".join(word for _, unit in parsed.units for word in WORD.findall(" ".join(unit)))
    if not words or parsed.exclusions:
        return ""
    shelf = shelf or LibraryCache(reader.pk)
    names = shelf.get(
        "tag-names",
        lambda: {
            " ".join(WORD.findall(fold(name))): name
            for name in Tag.objects.filter(reader=reader).values_list("name", flat=True)
        },
    )
    return names.get(words, "")


def _tagged(
    reader: User, library: QuerySet[Highlight], tags: Sequence[str]
) -> tuple[QuerySet[Highlight], tuple[str, ...]]:
    """The highlights of `library` with each of `tags` (folded words, as `tag:` values are):
    the reader's own tags whose names fold to those words; and the values that name none of
    them (the notice names those alone)."""
    names = Tag.objects.filter(reader=reader).values_list("pk", "name")
    by_words: dict[str, list[int]] = {}
    for pk, name in names:
        by_words.setdefault(" ".join(WORD.findall(fold(name))), []).append(pk)
    unknown = tuple(value for value in tags if value not in by_words)
    for value in tags:
        if value in unknown:
            continue
        # A subquery, not a join: a highlight with "Liderazgo" and "liderazgo" is one result.
        with_tag = Highlight.tags.through.objects.filter(tag_id__in=by_words[value])
        library = library.filter(pk__in=with_tag.values("highlight_id"))
    return library, unknown


def _query_meaning(request: SearchRequest) -> _QueryMeaning:
    """The query's vector from the process's encoder, or a notice that keyword results are
    all there is; a notice too when the query's language is one the model reads poorly."""
    if request.mode == Mode.KEYWORD:
        return _QueryMeaning()
    from books.embedding.encoder import EncoderUnavailable, get_encoders

    try:
        encoders = get_encoders()
    except EncoderUnavailable:
        return _QueryMeaning(notices=(gettext(NOTICE_MODEL_UNAVAILABLE),))
    text = meaning_text(request.query) or request.query.strip()[:QUERY_MAX_LENGTH]
    text = in_reading_case(encoders.main, text)
    # Measured for a model of many languages; an English model cuts a Spanish word into
    # pieces as well (the language notice says what is wrong then).
    if model_languages(encoders) is None and reads_as_fragments(encoders.main, text):
        # Its vector means nothing, and sits near short passages all the same.
        return _QueryMeaning(notices=(gettext(NOTICE_FRAGMENTS) % {"query": text},))
    language = language_notice(request.query, encoders)
    waiting = _waiting_notice(request.reader)
    return _QueryMeaning(
        vector=query_vector(encoders.main, text),
        theme_vector=theme_query_vector(encoders, text),
        model_id=encoders.model_id,
        model_reads=not language,
        notices=tuple(notice for notice in (language, waiting) if notice),
    )


def _waiting_notice(reader: User) -> str:
    """Said while some of the reader's passages wait for their vectors (an import still
    embedding, a model change once the worker has swept it): meaning cannot find them, and
    "nothing found" alone would read as "nothing there". Counted through the embedding
    queue's partial index (0.2 ms where the reader's rows cost 33 ms on 8,423 highlights)."""
    waiting = (
        Highlight.objects.alive()
        .filter(reader=reader, is_word=False)
        .exclude(embedding_status=Highlight.EmbeddingStatus.DONE)
        .count()
    )
    if not waiting:
        return ""
    return ngettext(
        "%(count)s of your highlights is still being embedded: search by meaning finds it "
        "once it is done; search by words finds it now.",
        "%(count)s of your highlights are still being embedded: search by meaning finds them "
        "once they are done; search by words finds them now.",
        waiting,
    ) % {"count": intcomma(waiting)}


def _mode_used(mode: Mode, vector: Sequence[float] | None, meaning: list[Neighbour]) -> str:
    if vector is None or mode == Mode.KEYWORD:
        return "keyword"
    if mode == Mode.MEANING:
        return "meaning"
    return "hybrid" if meaning else "keyword"


def _rank(
    request: SearchRequest,
    meaning_of_query: _QueryMeaning,
    library: QuerySet[Highlight],
    parsed: ParsedQuery,
    *,
    filtered: bool,
    named: frozenset[int] | None = None,
    known: KeywordHits | None = None,
    in_books: bool = False,
) -> _Ranked:
    """One library's results for one query, fused: the heart of `search`. `named`: the
    books the query names, when the library is their highlights; `known`: the whole
    library's keyword hits then, whose words read whole are not read again. `in_books`:
    the library is books the reader chose (book:, author:)."""
    if not parsed.units:
        return _listing(library)
    vector, model_id = meaning_of_query.vector, meaning_of_query.model_id
    meaning: list[Neighbour] = []
    theme_close: frozenset[int] = frozenset()
    capped = False
    size: int | None = None
    if vector is not None and request.mode != Mode.KEYWORD:
        # Counted once for both halves: each would count the same rows.
        size = library_bound(request.reader, library, filtered, model_id, named)
        meaning = nearest_meaning(
            request.reader,
            library,
            filtered,
            vector,
            model_id,
            request.exclude_ids,
            absolute_floor=named is None,
            book_ids=named,
            size=size,
        )
        theme_vector = meaning_of_query.theme_vector
        if theme_vector is not None:
            theme = nearest_theme(
                request.reader,
                library,
                filtered,
                theme_vector,
                model_id,
                request.exclude_ids,
                book_ids=named,
                size=size,
            )
            # Either list read to its depth, or the two together past it: more may be close.
            capped = len(meaning) >= DEPTH or len(theme) >= DEPTH
            theme_close = frozenset(n.highlight_id for n in theme)
            meaning = with_theme(meaning, theme, vector)
            capped = capped or len(meaning) > DEPTH
            meaning = meaning[:DEPTH]
        else:
            capped = len(meaning) >= DEPTH
    mode_used = _mode_used(request.mode, vector, meaning)
    keyword = KeywordHits([], "")
    if mode_used != "meaning":
        # In a hybrid search of a sentence, highlights with only some of its words (the
        # any-word fallback) outvote the meaning half rather than add to it: the fallback
        # runs for a few words only (see fusion_weights).
        fallback = mode_used == "keyword" or is_few_words(parsed)
        # Where the model could answer too, a highlight that shares only "and" with the
        # query is no match, even when the meaning half found nothing close.
        common_alone = vector is None or request.mode == Mode.KEYWORD
        keyword = keyword_hits(
            library,
            parsed,
            fallback=fallback,
            common_alone=common_alone,
            known=known,
            book_ids=named or (),
        )
    if (
        vector is not None
        and request.mode != Mode.KEYWORD
        and in_books
        and not meaning
        and not keyword.ranked
    ):
        # Within books the reader chose, when neither half found anything: their passages
        # nearer than the model's looser distance for them (listed as loosely related past
        # the close distance). e5 puts a passage in another language past its floor
        # ("miedo" and "Fear is the great enemy of the student", 0.164 to a floor of 0.15);
        # in the whole library a nearer one in the query's language is there, within one
        # book often none is. A word of no topic of the book ("tractor") is farther, and
        # finds nothing; a word the book has is found by words, and nothing is added.
        meaning = _in_books_meaning(request, library, filtered, vector, model_id, size)
        mode_used = _mode_used(request.mode, vector, meaning)
    if mode_used != "hybrid":
        fused = fuse(keyword.ranked, meaning, depth=None)
        return _Ranked(fused, fused_order(fused), keyword, mode_used, None, capped, theme_close)
    weights = fusion_weights(
        parsed,
        keyword.passed,
        model_reads=meaning_of_query.model_reads,
        best_distance=min(n.distance for n in meaning),
        model_id=model_id,
    )
    fused = fuse(
        keyword.ranked if weights.keyword else [],
        meaning,
        keyword_weight=weights.keyword,
        meaning_weight=weights.meaning,
    )
    return _Ranked(fused, fused_order(fused), keyword, mode_used, weights, capped, theme_close)


def _in_books_meaning(
    request: SearchRequest,
    library: QuerySet[Highlight],
    filtered: bool,
    vector: Sequence[float],
    model_id: str,
    size: int | None,
) -> list[Neighbour]:
    """The chosen books' best passages by meaning past the floor, within the model's
    `search_in_books_distance` (books.embedding.profiles) and its margin of the best."""
    reach = in_books_distance(model_id)
    if reach is None:
        return []
    found = nearest_meaning(
        request.reader,
        library,
        filtered,
        vector,
        model_id,
        request.exclude_ids,
        absolute_floor=False,
        size=size,
    )
    return [n for n in found if n.distance < reach]


def _listing(library: QuerySet[Highlight]) -> _Ranked:
    """A name with no other words ("Pessoa", "author:borges"): the books' highlights in
    reading order, as their book pages list them."""
    ordered = library.order_by("book__title_sort", "book_id", "location_start", "pk")
    ids = list(ordered.values_list("pk", flat=True)[:LISTING_MAX])
    fused = {pk: Fused(score=1 / (RRF_K + rank)) for rank, pk in enumerate(ids, start=1)}
    return _Ranked(fused, ids, KeywordHits([], ""), "keyword")


def _promote_named(
    request: SearchRequest,
    meaning_of_query: _QueryMeaning,
    scope: _Scope,
    parsed: ParsedQuery,
    ranked: _Ranked,
) -> tuple[_Ranked, int]:
    """The named books' highlights that match the rest of the query first, then everything
    else the whole query finds (a highlight that quotes the name); and how many lead."""
    named = scope.named
    topic = parsed.without(named.words | NAME_FILLER)
    # The reader named them: their best match on the topic shows, however far it is.
    first = _rank(
        request,
        meaning_of_query,
        scope.library.filter(book_id__in=named.book_ids),
        topic,
        filtered=True,
        named=named.book_ids,
        known=ranked.keyword,
    )
    # Only those close to the query, when the library has something closer: a sentence
    # about Colin Powell with a paraphrase in the library is not a question for Powell.
    distances = (e.distance for e in ranked.fused.values() if e.distance is not None)
    best = min(distances, default=None)
    if best is not None and topic.units:
        reach = best + NAMED_MARGIN
        first.order = [
            pk
            for pk in first.order
            if first.fused[pk].keyword_rank is not None
            or (first.fused[pk].distance or math.inf) <= reach
        ]
        first.fused = {pk: first.fused[pk] for pk in first.order}
    if not first.order:
        return ranked, 0
    rest = [pk for pk in ranked.order if pk not in first.fused]
    # With a topic, the named books' ranking says how the search ran; a name alone keeps
    # the whole query's.
    how = first if topic.units else ranked
    promoted = _Ranked(
        fused={**ranked.fused, **first.fused},
        order=[*first.order, *rest],
        keyword=how.keyword,
        mode_used=how.mode_used,
        weights=how.weights,
        meaning_capped=ranked.meaning_capped or (first.meaning_capped and bool(topic.units)),
        theme_close=ranked.theme_close | first.theme_close,
    )
    return promoted, len(first.order)


def _boost_recency(ranked: _Ranked, named_first: int, now: datetime) -> None:
    """Newer highlights a little higher; within each part, so the named books' stay first."""
    fused, ordered = ranked.fused, ranked.order
    added = Highlight.objects.filter(pk__in=list(fused)).values_list(
        "pk", Coalesce("added_at", "created")
    )
    for pk, when in added:
        fused[pk].score *= recency_factor(when, now)
    head = fused_order({pk: fused[pk] for pk in ordered[:named_first]})
    ranked.order = [*head, *fused_order({pk: fused[pk] for pk in ordered[named_first:]})]


def _loosely_related(ranked: _Ranked, named_first: int, model_id: str) -> frozenset[int]:
    """The results found by meaning alone farther than the model's close distance, moved
    below the rest, in their order: a reader reads them as "loosely related", apart. The
    named books' highlights stay first: the reader asked for them."""
    cut = close_distance(model_id) if model_id else None
    if cut is None or ranked.mode_used == "keyword":
        return frozenset()
    fused = ranked.fused

    def is_loose(pk: int) -> bool:
        entry = fused[pk]
        return (
            entry.keyword_rank is None
            and entry.distance is not None
            and entry.distance > cut
            and pk not in ranked.theme_close
        )

    rest = ranked.order[named_first:]
    loose = [pk for pk in rest if is_loose(pk)]
    if loose:
        close = [pk for pk in rest if not is_loose(pk)]
        ranked.order = [*ranked.order[:named_first], *close, *loose]
    return frozenset(loose)


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
    `page` (from 1) sets the offset in pages of `limit`. The keywords build a
    `SearchRequest` for `search_run`.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if book is not None and book.reader_id != reader.pk:
        raise ValueError("the book filter must be one of the reader's books")
    limit = max(1, limit)
    if page is not None:
        offset = (max(1, page) - 1) * limit
    request = SearchRequest(
        reader=reader,
        query=query,
        mode=Mode(mode),
        filters=SearchFilters(book, author, added_from, added_to, has_note),
        recency_boost=recency_boost,
        limit=limit,
        offset=max(0, offset),
        clock=clock,
        exclude_ids=exclude_ids,
    )
    return search_run(request)


def search_run(request: SearchRequest) -> SearchResults:
    """The steps of a search: scope → rank → promote the named books → recency → page."""
    said: list[str] = []
    if len(request.query) > QUERY_MAX_LENGTH:
        # A passage pasted whole: its first characters say what it is about, and a query
        # of a hundred words would read each word's matches.
        request = dataclasses.replace(request, query=request.query[:QUERY_MAX_LENGTH])
        said.append(gettext(NOTICE_SHORTENED) % {"count": QUERY_MAX_LENGTH})
    query, mode, limit, offset = request.query, request.mode.value, request.limit, request.offset
    parsed = parse_query(query)
    if not (parsed.units or parsed.authors or parsed.books or parsed.tags or parsed.symbols):
        # An empty query (or one of exclusions only) finds nothing, never everything.
        if query.strip() and not has_letters_or_digits(query) and not parsed.excluded_symbols:
            said.append(gettext(NOTICE_NO_LETTERS))  # "!!!", "—"
        return SearchResults(
            query, mode, "", [], total=0, offset=offset, limit=limit, notice=" ".join(said)
        )
    if request.mode != Mode.MEANING and only_stop_words(parsed):
        # "the of", "de la": the words of every other passage, and a vector that means
        # nothing. Where they stand together, as written, is all they can ask for.
        parsed = parsed.as_phrase()
        request = dataclasses.replace(request, mode=Mode.KEYWORD)
        said.append(gettext(NOTICE_STOP_WORDS) % {"phrase": " ".join(parsed.units[0][1])})
    scope = _scope(request, parsed)
    if isinstance(scope, str):
        return SearchResults(
            query, mode, "keyword", [], total=0, offset=offset, limit=limit,
            notice=" ".join([*said, scope]),
        )  # fmt: skip
    # Emoji alone list the highlights that have them: there are no words to rank by.
    meaning_of_query = _query_meaning(request) if parsed.units else _QueryMeaning()
    ranked = _rank(
        request,
        meaning_of_query,
        scope.library,
        parsed,
        filtered=scope.filtered,
        in_books=scope.in_books,
    )
    named_first = 0
    if scope.named.book_ids:
        ranked, named_first = _promote_named(request, meaning_of_query, scope, parsed, ranked)
    if request.recency_boost and ranked.fused:
        _boost_recency(ranked, named_first, request.clock())
    loose = _loosely_related(ranked, named_first, meaning_of_query.model_id)
    page_ids = ranked.order[offset : offset + limit]
    # Nothing found in a library with nothing in it: the reader is told to import, not to
    # try other words. Asked only when nothing was found.
    empty = (
        not ranked.order and not Highlight.objects.alive().filter(reader=request.reader).exists()
    )
    return SearchResults(
        query=query,
        mode=mode,
        mode_used=ranked.mode_used,
        results=page_results(ranked.fused, page_ids, parsed.words, loose),
        total=len(ranked.order),
        offset=offset,
        limit=limit,
        words=parsed.words,
        keyword_pass=ranked.keyword.passed,
        joins_or=parsed.joins_or,
        words_found=len(ranked.keyword.ranked),
        notice=" ".join([*said, *meaning_of_query.notices]),
        ids=ranked.order,
        named=scope.named.names if named_first else (),
        named_words=scope.named.words if named_first else frozenset(),
        named_first=named_first,
        # A hybrid search fuses the words' first DEPTH: beyond them, more have the words.
        keyword_capped=ranked.keyword.capped
        or (ranked.mode_used == "hybrid" and len(ranked.keyword.ranked) > DEPTH),
        meaning_capped=ranked.meaning_capped,
        fusion=ranked.weights.why if ranked.weights else "",
        library_empty=empty,
        loose=len(loose),
        meaning_close=_meaning_close(ranked, meaning_of_query.model_id),
    )


def _meaning_close(ranked: _Ranked, model_id: str) -> int:
    """How many results the model put within its close distance."""
    cut = close_distance(model_id) if model_id else None
    if cut is None or ranked.mode_used == "keyword":
        return 0
    return sum(
        1 for entry in ranked.fused.values() if entry.distance is not None and entry.distance <= cut
    )
