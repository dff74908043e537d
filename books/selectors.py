"""Reads of a reader's library that more than one view or command needs."""

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TypeVar, overload

from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet
from django.db.models.expressions import OrderBy
from django.utils.formats import number_format
from django.utils.translation import gettext, gettext_lazy, ngettext

from accounts.models import User
from books.embedding import pipeline
from books.language import UNKNOWN
from books.models import EMPTY_NOTE, Book, Highlight, Import, Tag
from books.text import WORD, author_sort_key, dotted, fold, literal, literal_pattern, search_words
from books.vocabulary import WordKind, is_look_up, opens_on_elision, word_key

# The time left is read from the pace of the latest vectors written (EmbeddingProgress.
# remaining): the last ETA_WRITES groups a worker wrote, each in one statement with one
# time (books.embedding.pipeline._write_vectors). The pace since the import started said
# "about 64 hours left" of a 110,938-highlight import: its clock had run through the
# minutes of saving, the model loading and the first, slowest turns.
ETA_WRITES = 8
# At least this many writes (two spans between them) before anything is said: two workers
# write their first groups a moment apart, and a pace read from that one span is wild.
ETA_MIN_WRITES = 3
# Writes older than this are not asked for (the query stays on recent rows); a worker
# slower than three groups an hour is not estimated at all.
ETA_LOOKBACK = timedelta(hours=1)


@dataclass(frozen=True)
class EmbeddingProgress:
    highlights: int
    embedded: int
    # Every highlight the pipeline gave up on.
    failed: int
    # Highlights with no text (a Kindle image highlight): nothing to connect, so not among
    # `highlights` at all, said apart with a word of explanation.
    no_text: int = 0
    # Why highlights wait, when the pipeline knows (e.g. the model cannot load).
    reason: str = ""
    # Of `highlights`, the reader's standalone notes: a file of notes only must not read
    # as "8 highlights waiting" beside "New highlights 0".
    notes: int = 0
    # They wait while the worker embeds another reader's highlights (the page says so).
    behind_others: bool = False
    # Of what an import added, those deleted since: its report's table counts them among
    # its new highlights, while the progress counts alive ones only. Said beside the count
    # ("5,484 highlights (1 deleted since)"), or the two numbers contradict each other.
    deleted_since: int = 0
    # Of `highlights`, the reader's words (Highlight.is_word): made ready for search like
    # the rest, never connected, so "all 5,488 ready for connections" is not said of them.
    words: int = 0

    @property
    def passages(self) -> int:
        """What connections are found between: every highlight and note but the words."""
        return self.highlights - self.words

    @property
    def noun(self) -> str:
        """What is being embedded, in the reader's words: notes, highlights, or both."""
        one = self.highlights == 1
        if self.notes and self.notes == self.highlights:
            return gettext("note") if one else gettext("notes")
        if self.notes == 0:
            return gettext("highlight") if one else gettext("highlights")
        return gettext("highlights and notes")

    @property
    def noun_ready(self) -> str:
        """The noun with "ready for connections", in one message: Spanish makes the
        adjective agree ("subrayados listos", "notas listas").

        "Ready for connections", never "read": a reader took "5,484 read" as what they had
        read, not what the model had embedded."""
        one = self.highlights == 1
        if self.notes and self.notes == self.highlights:
            if one:
                return gettext("note ready for connections")
            return gettext("notes ready for connections")
        if self.notes == 0:
            if one:
                return gettext("highlight ready for connections")
            return gettext("highlights ready for connections")
        return gettext("highlights and notes ready for connections")

    @property
    def what(self) -> str:
        """ "8 notes", "1 highlight", "12 highlights and notes", and "(1 deleted since)"
        after them when some of an import's were."""
        said = f"{number_format(self.highlights, force_grouping=True)} {self.noun}"
        if self.deleted_since:
            said = f"{said} {self.deleted_since_said}"
        return said

    @property
    def deleted_since_said(self) -> str:
        """ "(1 deleted since)", or "" when none was."""
        if not self.deleted_since:
            return ""
        return ngettext(
            "(%(count)s deleted since)", "(%(count)s deleted since)", self.deleted_since
        ) % {"count": number_format(self.deleted_since, force_grouping=True)}

    @property
    def pending(self) -> int:
        return self.highlights - self.embedded - self.failed

    @property
    def settled(self) -> int:
        return self.embedded + self.failed

    @property
    def done(self) -> bool:
        return self.pending == 0

    @property
    def starting(self) -> bool:
        """Nothing settled yet: the first batch is still queued or the model is loading."""
        return self.pending > 0 and self.settled == 0

    @property
    def other_failures(self) -> int:
        return self.failed

    @property
    def total(self) -> int:
        """Every highlight and note, those with no text too: the library's count."""
        return self.highlights + self.no_text

    @property
    def percent_embedded(self) -> int:
        return 100 if self.highlights == 0 else (100 * self.settled) // self.highlights

    @property
    def percent_step(self) -> int:
        """The bar's width in steps of 5, a CSS class rather than an inline style (CSP)."""
        return self.percent_embedded // 5 * 5

    def remaining(self, *, writes: list[tuple[datetime, int]], now: datetime) -> str:
        """A rough time left, at the pace of the latest writes; "" until there is one.

        `writes` are (when, how many) of the latest groups of vectors written, newest first
        (recent_vector_writes). The pace is what the writes after the oldest one brought
        since it, counted up to now: a worker that stopped makes the time left grow rather
        than freeze, and the first slow turns (the model loading) leave the window."""
        if self.done or len(writes) < ETA_MIN_WRITES:
            return ""
        since = (now - writes[-1][0]).total_seconds()
        written = sum(count for _, count in writes[:-1])
        if since <= 0 or written <= 0:
            return ""
        seconds = self.pending * since / written
        if seconds < 60:
            return gettext("less than a minute left")
        minutes = round(seconds / 60)
        if minutes < 90:
            return ngettext(
                "about %(count)d minute left", "about %(count)d minutes left", minutes
            ) % {"count": minutes}
        return gettext("about %(count)d hours left") % {"count": round(minutes / 60)}


# A highlight with no text (an image highlighted on a Kindle): kept for its place, its date
# and a note the reader may add; listed with the passages, said as what it is. Not a word:
# there is none to list among the words.
WITHOUT_TEXT = Q(kind=Highlight.Kind.HIGHLIGHT, text="")


@dataclass(frozen=True)
class LibraryCounts(EmbeddingProgress):
    books: int = 0


def _progress(highlights: QuerySet[Highlight], *, reader_id: int) -> EmbeddingProgress:
    status = Highlight.EmbeddingStatus
    highlights = highlights.exclude(EMPTY_NOTE)
    # Highlights with no text are left out of the counts: nothing of theirs to make ready
    # (a note on one is kept, not connected), so "1,163 of 1,164" never stays short of the
    # whole; said apart (no_text) instead.
    nothing = WITHOUT_TEXT
    totals = highlights.aggregate(
        highlights=Count("id", filter=~nothing),
        embedded=Count("id", filter=Q(embedding_status=status.DONE) & ~nothing),
        failed=Count("id", filter=Q(embedding_status=status.FAILED) & ~nothing),
        no_text=Count("id", filter=nothing),
        notes=Count("id", filter=Q(kind=Highlight.Kind.NOTE)),
        words=Count("id", filter=Q(is_word=True) & ~nothing),
    )
    progress = EmbeddingProgress(**totals)
    if not progress.done:
        reason = (
            highlights.filter(embedding_status__in=[status.PENDING, status.CLAIMED])
            .exclude(embedding_error="")
            .values_list("embedding_error", flat=True)
            .first()
        )
        progress = EmbeddingProgress(
            **totals,
            reason=reason or "",
            behind_others=not reason and pipeline.embedding_elsewhere(reader_id=reader_id),
        )
    return progress


def recent_vector_writes(the_import: Import, *, now: datetime) -> list[tuple[datetime, int]]:
    """The latest groups of the import's vectors written: (when, how many), newest first.

    A group's vectors are written in one statement, which sets one `updated` on them all
    (PostgreSQL's now() is the transaction's time); a reader's edit meanwhile counts as
    a group of one, which moves the pace by little."""
    rows = (
        Highlight.objects.filter(
            source_import=the_import,
            embedding_status=Highlight.EmbeddingStatus.DONE,
            updated__gte=now - ETA_LOOKBACK,
        )
        .values("updated")
        .annotate(written=Count("id"))
        .order_by("-updated")
        .values_list("updated", "written")[:ETA_WRITES]
    )
    return list(rows)


def import_time_left(the_import: Import, progress: "EmbeddingProgress", *, now: datetime) -> str:
    """The time left to embed what the import brought, or "" (EmbeddingProgress.remaining)."""
    if progress.done:
        return ""
    return progress.remaining(writes=recent_vector_writes(the_import, now=now), now=now)


def import_progress(the_import: Import) -> EmbeddingProgress:
    """How far the embedding of what an import added has got, over the highlights it added
    that are still alive, and how many it added were deleted since (as its report's "bring
    them back" counts them: HighlightQuerySet.deleted_since). One removed for good since has
    no row left to count."""
    progress = _progress(
        Highlight.objects.alive().filter(source_import=the_import), reader_id=the_import.reader_id
    )
    deleted_since = Highlight.objects.deleted_since(the_import).exclude(EMPTY_NOTE).count()
    return replace(progress, deleted_since=deleted_since)


def library_counts(reader: User) -> LibraryCounts:
    progress = _progress(Highlight.objects.alive().filter(reader=reader), reader_id=reader.pk)
    # Books with something to show, as the exports hold them: not a book whose every
    # highlight the reader deleted.
    shown = Highlight.objects.alive().exclude(EMPTY_NOTE).filter(book=OuterRef("pk"))
    books = Book.objects.filter(reader=reader).filter(Exists(shown)).count()
    return LibraryCounts(**vars(progress), books=books)


@dataclass(frozen=True)
class ReadPassages:
    """Why a library has no connection yet, in the reader's terms: how many books have a
    passage the model has read, how many passages still wait, and one read passage whose
    page shows its nearest in the other books."""

    books: int
    waiting: int
    example: Highlight | None
    # Books with a passage, ready or not: with one, a connection waits for another book,
    # not for its passages ("connections appear as your highlights get ready" was said to
    # a library of one book).
    library_books: int = 0


def read_passages(reader: User) -> ReadPassages:
    """For the connections page's empty state only: a library with no pair. "Connections
    appear once highlights from at least two books have been read" was said to a reader
    with 11 books read and no pair close enough."""
    passages = Highlight.objects.alive().passages().filter(reader=reader).exclude(text="")
    done = passages.filter(embedding_status=Highlight.EmbeddingStatus.DONE)
    return ReadPassages(
        books=done.values("book_id").distinct().count(),
        # Waiting as passages_waiting says it: a passage that failed is not retried, and
        # "not ready yet" said of it stayed forever.
        waiting=passages_waiting(reader.pk),
        example=done.filter(kind=Highlight.Kind.HIGHLIGHT).listed().order_by("-pk").first(),
        library_books=passages.values("book_id").distinct().count(),
    )


# What a passage waits in for its vector and its connections: a failed one is not retried.
_WAITING = (Highlight.EmbeddingStatus.PENDING, Highlight.EmbeddingStatus.CLAIMED)


def passages_waiting(
    reader_id: int, *, book: Book | None = None, besides: Book | None = None
) -> int:
    """The reader's passages still waiting for their vector and their connections (pending
    or being embedded): of `book`, or of every book but `besides`. While some wait, "no
    connection yet" is true; once none does, "yet" promises one that is not coming."""
    waiting = (
        Highlight.objects.alive()
        .passages()
        .filter(reader_id=reader_id, embedding_status__in=_WAITING)
    )
    if book is not None:
        waiting = waiting.filter(book=book)
    if besides is not None:
        waiting = waiting.exclude(book=besides)
    return waiting.count()


@dataclass(frozen=True)
class UnconnectedBook:
    """Why a book whose passages are ready connects to no other book, for its page: some
    passages of its own or of other books are still being embedded (then "yet" is true),
    there is no other book's passage to compare with, or none is close enough. "No passage
    of this book connects to another book yet" was said of a Portuguese book with nothing
    left to embed anywhere."""

    waiting_here: int
    waiting_elsewhere: int
    other_books_ready: bool

    @property
    def alone(self) -> bool:
        """No other book has a passage ready or on its way: a connection waits for another
        book, not for this one's passages ("yet" was said of a library of one book)."""
        return not self.other_books_ready and not self.waiting_elsewhere


@dataclass(frozen=True)
class OtherBooks:
    """What the reader's other books hold for one book's passages to connect with."""

    waiting: int
    ready: bool

    @property
    def none(self) -> bool:
        """No other book has a passage ready or on its way."""
        return not self.waiting and not self.ready


def other_books(book: Book) -> OtherBooks:
    """The passages of the reader's books but `book`, waiting (passages_waiting) or ready:
    one aggregate."""
    counts = (
        Highlight.objects.alive()
        .passages()
        .filter(reader_id=book.reader_id)
        .exclude(book=book)
        .aggregate(
            waiting=Count("pk", filter=Q(embedding_status__in=_WAITING)),
            ready=Count("pk", filter=Q(embedding_status=Highlight.EmbeddingStatus.DONE)),
        )
    )
    return OtherBooks(waiting=counts["waiting"], ready=counts["ready"] > 0)


def unconnected_book(book: Book) -> UnconnectedBook | None:
    """None when none of the book's passages is ready yet (nothing to say), else why it
    connects to nothing; only asked of a book connected_books found nothing for."""
    here, done = Q(book=book), Q(embedding_status=Highlight.EmbeddingStatus.DONE)
    waiting = Q(embedding_status__in=_WAITING)
    counts = (
        Highlight.objects.alive()
        .passages()
        .filter(reader_id=book.reader_id)
        .aggregate(
            done_here=Count("pk", filter=here & done),
            done_elsewhere=Count("pk", filter=~here & done),
            waiting_here=Count("pk", filter=here & waiting),
            waiting_elsewhere=Count("pk", filter=~here & waiting),
        )
    )
    if not counts["done_here"]:
        return None
    return UnconnectedBook(
        waiting_here=counts["waiting_here"],
        waiting_elsewhere=counts["waiting_elsewhere"],
        other_books_ready=counts["done_elsewhere"] > 0,
    )


BOOK_SORTS = {
    "title": ("title_sort", "pk"),
    "author": ("title_sort", "pk"),
    "highlights": ("-highlight_count", "title_sort", "pk"),
    "recent": (F("last_added").desc(nulls_last=True), "title_sort", "pk"),
}


def books_for(reader: User, *, sort: str = "title", query: str = "") -> list[Book]:
    """The reader's books with their highlight count and last highlight date.

    Titles sort by their stored key (no leading article, numbers by value); authors by
    family name, in Python: the folding rules (books.text) are not PostgreSQL's collation.
    """
    alive = Q(highlights__deleted_at__isnull=True) & ~Q(
        highlights__kind=Highlight.Kind.NOTE, highlights__text="", highlights__note=""
    )
    books = (
        Book.objects.filter(reader=reader)
        .annotate(
            highlight_count=Count("highlights", filter=alive),
            last_added=Max("highlights__added_at", filter=alive),
        )
        # A book with nothing left to show (every highlight deleted) is not listed, as
        # library_counts does not count it and the exports do not hold it.
        .filter(highlight_count__gt=0)
    )
    if query:
        books = books.filter(pk__in=books_matching(reader, query))
    found: list[Book] = list(books.order_by(*BOOK_SORTS.get(sort, BOOK_SORTS["title"])))
    if sort == "author":
        # Books with no author go last, not first under "".
        found.sort(
            key=lambda b: (
                not b.authors_normalized,
                author_sort_key(b.authors_normalized),
                b.title_sort,
            )
        )
    return found


# Longer than any title and its authors, as a search's author filter.
BOOK_QUERY_MAX = 200


def books_matching(reader: User, query: str) -> list[int]:
    """The reader's books whose title or authors hold every word of `query`, in any order,
    accents and case aside (books.text.fold): a word anywhere in a word ("antolog" finds
    `Antología`), a number as a whole one ("tomo 1" is not `tomo 12`). Folded in Python, as
    keyword search folds, since `icontains` minded accents and wanted the query whole:
    "antologia" found none of 24 `Antología de …`, and "refranes tomo 1" not `Antología de
    Refranes, tomo 1`. A name written with symbols is found whole, as written ("c++" in `C++
    Primer`, not the "c" of `Cosmos`: books.text.literal)."""
    # Each word once, within BOOK_QUERY_MAX characters: a query of one word repeated 2,000
    # times held a web process 3 s over 5,000 books.
    folded = fold(query[:BOOK_QUERY_MAX])
    names: dict[str, str] = {}  # a name written with symbols, or dotted: its pattern
    words: dict[str, None] = {}
    for token in folded.split():
        if name := literal(token):
            names[name] = literal_pattern(name)
        elif joined := dotted(token):
            # Its words side by side, by a dot or a space: "j.k." in "J. K. Rowling", not
            # the "j" of "Jungle" and the "k" of "Kipling".
            apart = r"(?:\.\s*|\s+)".join(re.escape(word) for word in joined.split("."))
            names[joined] = rf"(?<!\w){apart}(?!\w)"
        else:
            words.update(dict.fromkeys(WORD.findall(token)))
    patterns = [re.compile(pattern) for pattern in names.values()] + [
        re.compile(rf"(?<!\d){word}(?!\d)" if word.isdecimal() else re.escape(word))
        for word in words
    ] or [re.compile(re.escape(folded.strip()))]

    def holds(title: str, authors: str) -> bool:
        named = fold(f"{title} {authors}")
        return all(pattern.search(named) for pattern in patterns)

    books = Book.objects.filter(reader=reader).values_list("pk", "title", "authors")
    return [pk for pk, title, authors in books if holds(title, authors)]


BOOK_HIGHLIGHT_SORTS: dict[str, tuple[str | OrderBy, ...]] = {
    "location": ("location_start", "reading_key", "created"),
    "added": (F("added_at").desc(nulls_last=True), "location_start", "reading_key", "created"),
    "favourites": ("-favourite", "location_start", "reading_key", "created"),
}


# A short highlight the reader wrote a note on is part of the reading: a book page lists it
# with the passages, to be read with its note, not as a word among the others.
WITH_A_NOTE = ~Q(note="")


def book_highlights(
    book: Book,
    *,
    query: str = "",
    sort: str = "location",
    favourite: bool = False,
    notes: bool = False,
    tag: str = "",
) -> QuerySet[Highlight]:
    """A book's passages as the book page filters and sorts them, its words with a note
    (WITH_A_NOTE) and its highlights with no text (WITHOUT_TEXT); its other words are listed
    apart (words_for). Not an empty note an older import kept (EMPTY_NOTE): the page's
    header does not count it either."""
    listed = Q(is_word=False) | WITH_A_NOTE | WITHOUT_TEXT
    highlights = book.highlights.alive().filter(listed).exclude(EMPTY_NOTE)
    if query:
        for word in fold(query).split():
            # As the keyword text stores it: Chinese and Japanese as pairs (books.text).
            stored = " ".join(search_words([word]))
            highlights = highlights.filter(search_text__contains=stored)
    if favourite:
        highlights = highlights.filter(favourite=True)
    if notes:
        highlights = highlights.exclude(note="")
    if tag:
        highlights = highlights.filter(tags__name=tag)
    order = BOOK_HIGHLIGHT_SORTS.get(sort, BOOK_HIGHLIGHT_SORTS["location"])
    return highlights.order_by(*order).prefetch_related("tags")


def favourites_for(reader: User) -> QuerySet[Highlight]:
    return (
        Highlight.objects.alive()
        .filter(reader=reader, favourite=True)
        .select_related("book")
        .prefetch_related("tags")
        .order_by("book__title_sort", "book_id", "location_start", "reading_key", "created", "pk")
    )


def tags_for(reader: User) -> list[Tag]:
    return list(
        Tag.objects.filter(reader=reader)
        .annotate(count=Count("highlights", filter=Q(highlights__deleted_at__isnull=True)))
        .order_by("name")
    )


def book_languages(book_ids: Iterable[int]) -> dict[int, str]:
    """Each book's language: the one most of its passages are in (books.language), "" for a
    book whose passages say none. One word alone seldom tells its language ("Menschen"),
    and German capitalises its nouns: whether a capitalised word was looked up depends on
    the book's language (books.vocabulary.word_kind)."""
    rows = (
        Highlight.objects.alive()
        .passages()
        .filter(book_id__in=set(book_ids))
        .exclude(language=UNKNOWN)
        .values_list("book_id", "language")
        .annotate(count=Count("id"))
        .order_by("book_id", "-count", "language")
    )
    languages: dict[int, str] = {}
    for book_id, language, _ in rows:
        languages.setdefault(book_id, language)
    return languages


def with_book_languages(words: Iterable[Highlight]) -> list[Highlight]:
    """The words, each told its book's language (`Highlight.word_kind` reads it)."""
    listed = list(words)
    languages = book_languages(word.book_id for word in listed)
    for word in listed:
        word.book_language = languages.get(word.book_id, "")  # type: ignore[attr-defined]
    return listed


def words_for(
    reader: User, *, book: Book | None = None, with_a_note: bool = True
) -> QuerySet[Highlight]:
    """The reader's words (books.vocabulary), by book and in reading order; without those
    the reader wrote a note on when not `with_a_note` (a book page lists them as passages:
    WITH_A_NOTE)."""
    words = Highlight.objects.alive().words().filter(reader=reader)
    if book is not None:
        words = words.filter(book=book)
    if not with_a_note:
        words = words.exclude(WITH_A_NOTE)
    return words.select_related("book").order_by(
        "book__title_sort", "book", "location_start", "reading_key", "pk"
    )


@dataclass(frozen=True)
class ListedWord:
    """One row of a words page: a heading or a fragment, or a word the reader looked up once
    or more often, with every highlight of it in reading order (the first places the row)."""

    highlights: list[Highlight]

    @property
    def highlight(self) -> Highlight:
        return self.highlights[0]

    @property
    def times(self) -> int:
        return len(self.highlights)

    @property
    def several(self) -> bool:
        return len(self.highlights) > 1

    @property
    def note(self) -> str:
        """The reader's definition: the first note among its highlights."""
        return next((h.note for h in self.highlights if h.note), "")

    @property
    def books(self) -> list[tuple[Book, list[Highlight]]]:
        """The books it was met in, in order, each with its highlights there."""
        found: dict[int, tuple[Book, list[Highlight]]] = {}
        for highlight in self.highlights:
            found.setdefault(highlight.book_id, (highlight.book, []))[1].append(highlight)
        return list(found.values())


_T = TypeVar("_T")


def _repeated(keys: Iterable[str]) -> set[str]:
    return {key for key, count in Counter(keys).items() if key and count > 1}


def one_row_per_look_up(
    items: Sequence[_T], keys: Sequence[str], looked_up: Callable[[_T], bool]
) -> list[list[_T]]:
    """The items in their order, a row each, but a word looked up more than once (in one
    book or several: the same `word_key`, each `looked_up`) is one row where it was first
    looked up, as it is one card in the words deck. A heading or a fragment is a row of its
    own, a place in its book. `looked_up` is asked only where a key repeats."""
    repeated = _repeated(keys)
    rows: list[list[_T]] = []
    words: dict[str, list[_T]] = {}
    for item, key in zip(items, keys, strict=True):
        if key in repeated and looked_up(item):
            if key not in words:
                words[key] = []
                rows.append(words[key])
            words[key].append(item)
        else:
            rows.append([item])
    return rows


def word_rows(reader: User, *, book: Book | None = None) -> list[list[int]]:
    """The ids of the rows a words page lists, in reading order (`words_for`), one per
    looked-up word (`one_row_per_look_up`). Reads one short row per word."""
    rows = list(words_for(reader, book=book).values_list("pk", "text", "book_id", "language"))
    if any(opens_on_elision(text) for _, text, _, _ in rows):
        # Whether "l'esprit" is the word "esprit" is its book's language's say (an English
        # book's "s'mores" is no "mores"), and so which other rows it is one row with.
        languages = book_languages({book_id for _, _, book_id, _ in rows})
        keys = [word_key(text, language=languages.get(b) or own) for _, text, b, own in rows]
    else:
        keys = [word_key(text) for _, text, _, _ in rows]
        # The kind is read only where a key repeats: word_kind is the slow part of a long list.
        repeated = _repeated(keys)
        languages = book_languages(
            {book_id for (_, _, book_id, _), key in zip(rows, keys, strict=True) if key in repeated}
        )
    grouped = one_row_per_look_up(
        rows,
        keys,
        lambda row: is_look_up(row[1], language=languages.get(row[2]) or row[3]),
    )
    return [[pk for pk, _, _, _ in row] for row in grouped]


def listed_words(rows: Iterable[list[int]]) -> list[ListedWord]:
    """The rows of one page of `word_rows`, with their highlights and books: one query, and
    one for the books' languages (`Highlight.word_kind`)."""
    rows = list(rows)
    ids = [pk for row in rows for pk in row]
    found = Highlight.objects.listed().select_related("book").in_bulk(ids)
    by_id = {highlight.pk: highlight for highlight in with_book_languages(found.values())}
    # A highlight purged between the two reads leaves its row, or only its place, out.
    found_rows = ([by_id[pk] for pk in row if pk in by_id] for row in rows)
    return [ListedWord(highlights) for highlights in found_rows if highlights]


class WordPages:
    """`word_rows` for a Paginator, which reads them by slices: only the rows of the page
    shown are read whole. A row whose highlights were purged between the two reads is left
    out of its page (`listed_words`)."""

    def __init__(self, rows: list[list[int]]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[ListedWord]:
        return iter(self[:])

    @overload
    def __getitem__(self, index: int) -> ListedWord: ...
    @overload
    def __getitem__(self, index: slice) -> list[ListedWord]: ...
    def __getitem__(self, index: int | slice) -> ListedWord | list[ListedWord]:
        if isinstance(index, slice):
            return listed_words(self._rows[index])
        found = listed_words([self._rows[index]])
        if not found:
            raise LookupError(f"the words of row {index} were purged after the rows were read")
        return found[0]


# The kinds of a reader's words as a book page lists them, in this order.
WORD_KIND_LABELS = {
    WordKind.LOOK_UP: gettext_lazy("Words you looked up"),
    WordKind.HEADING: gettext_lazy("Headings"),
    WordKind.FRAGMENT: gettext_lazy("Fragments"),
}


def words_by_kind(
    words: Iterable[Highlight], *, shown: int
) -> list[tuple[str, str, list[Highlight], int]]:
    """A book's words grouped by what they are (books.vocabulary.word_kind): (kind, label,
    the first `shown`, how many in all) for each kind the book has. A word looked up twice
    ("oneself", "Oneself,") is one word, as in the words deck: listed once, where first
    (`one_row_per_look_up`)."""
    kinds = [(word, word.word_kind) for word in with_book_languages(words)]
    rows = one_row_per_look_up(
        kinds,
        [word.word_key for word, _ in kinds],
        lambda word_and_kind: word_and_kind[1] == WordKind.LOOK_UP,
    )
    groups: dict[str, list[Highlight]] = {kind: [] for kind in WORD_KIND_LABELS}
    for (word, kind), *_ in rows:
        groups[kind].append(word)
    return [
        (kind, str(WORD_KIND_LABELS[kind]), found[:shown], len(found))
        for kind, found in groups.items()
        if found
    ]
