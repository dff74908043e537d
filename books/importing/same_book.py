""" "This is the same book as…": the reader makes two of their books one.

A device may write a book's title without its subtitle (`The San Francisco Fallacy` beside
`The San Francisco Fallacy: The Ten Fallacies…`), or its author another way: two keys
(`identity.book_key`), two books, which `book_merge.books_merge_duplicates` rightly leaves
apart. The reader says they are one, and which one's title and authors stay:

- every highlight of the other book moves to the kept one (deleted ones too, with their
  deletion), and a passage both books held becomes one by the import's own join
  (`joining.highlights_join`: every word, note, tag and favourite of both, the longer review
  history), word for word or in two versions, one in each book (a re-selection, an
  extension, another device's copy: the import's rule for versions, _versions_across);
- connections between the two books go: a connection is between two books; every
  embedded passage of both is connected again after commit (the judge reads the authors,
  and the slots the dropped pairs held are free);
- a sharing exclusion of either keeps the kept book out of sharing, and the reader's
  centroid is recomputed in the merge's transaction (affinity.services.sharing_changed);
- the other book's key is kept as a `BookAlias` of the kept book, and the traces of its
  highlights removed for good are copied under the kept book's key, so a later import of
  the same file adds nothing, and a file naming the other title lands in the kept book;
  the purge writes what it removes from the kept book under the alias keys too
  (books.purging), so removed-for-good stays so after the kept book itself is gone.
"""

import hashlib
from collections import Counter
from dataclasses import dataclass
from functools import partial
from uuid import UUID

from django.db import transaction
from django.db.models import CharField, F, Q, QuerySet, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from accounts.models import User
from books.connections.services import connections_follow_books, connections_forget
from books.events import announce, highlights_to_embed
from books.importing.book_merge import _keep_exclusions, _rekey_highlights
from books.importing.identity import normalize_title, same_author
from books.importing.joining import highlights_join, highlights_update
from books.importing.library_index import Library, position
from books.importing.positions import sort_key
from books.importing.versions import VECTORS_RESET, stored_versions_merge
from books.library_cache import library_version_bump
from books.models import (
    EMPTY_NOTE,
    Book,
    BookAlias,
    Connection,
    Deletion,
    Highlight,
    PurgedHighlight,
)
from books.purging import lock_reader_for_change
from books.text import fold_spacing_and_bom

# The start of the key of an alias kept only for its code (never a Book.key: books.importing
# .book_merge steps keys aside with it only inside a transaction).
CODE_ONLY = "\x1e"

# How many of the reader's books the merge page names first, as likely the same book.
SUGGESTIONS_SHOWN = 8


@dataclass(frozen=True)
class BookMerge:
    """What a merge of two books does (before it) or did (after it)."""

    moved: int  # highlights (not deleted) of the merged-away book, now the kept book's
    joined: int  # passages both books held, now one
    connections_dropped: int  # connections between the two books
    # Either book is kept out of sharing: the kept one is (and what is shared changes).
    kept_out_of_sharing: bool = False


def _between(a: Book, b: Book) -> QuerySet[Connection]:
    """The connections of one book's highlight with the other's."""
    return Connection.objects.filter(
        Q(highlight_a__book=a, highlight_b__book=b) | Q(highlight_a__book=b, highlight_b__book=a),
        reader_id=a.reader_id,
    )


# The book key both books' highlights are keyed under to compare them (none): two
# highlights of the two books with one key there are one passage, and the merge joins them.
_EITHER_BOOK = ""


def _passage_keys(book: Book) -> set[str]:
    # book_id too: the related manager reads it on every row (a query each when deferred).
    rows = book.highlights.only("book_id", "kind", "page", "location_start", "location_end", "text")
    return {h.dedupe_key_from_fields(book_key=_EITHER_BOOK) for h in rows}


def _versions_across(kept: Book, absorbed: Book) -> list[tuple[Highlight, Highlight]]:
    """The versions of one passage the two books hold one in each (a Kindle's 100-101 and
    100-102, a Kindle's copy and a Kobo's), joined in memory by the import's own rule
    (versions.stored_versions_merge): as (the highlight that stays, now holding every word
    of both, the one that goes), in the order they join. Read before the merge changes
    anything, so that the page says beforehand what the merge then does.

    Alive highlights only: a deleted version stays deleted, and its words stay out of the
    one the reader sees. Versions across the two books only: two within one book are the
    import's business, which leaves two stored highlights apart, and a passage held word
    for word more than once (in both books, which _rekey_highlights joins) is held within
    one book already. A highlight
    that took in the other book's version may take in another of the other book's (A and C,
    each a version of B), never a second of the kept book's: those two are two within one
    book, which the import leaves apart. Of two, the kept book's highlight stays (its code,
    its page)."""
    library = Library(kept.reader, {kept.key: kept, absorbed.key: absorbed})
    rows = list(library.keys.values())
    held = Counter(h.dedupe_key_from_fields(book_key=_EITHER_BOOK) for h in rows)
    # The books each highlight holds the passage of, by id(): one, or both once joined.
    books: dict[int, set[int]] = {
        id(h): {h.book_id}
        for h in rows
        if h.kind == Highlight.Kind.HIGHLIGHT
        and h.deleted_at is None
        and held[h.dedupe_key_from_fields(book_key=_EITHER_BOOK)] == 1
    }

    def stays_first(h: Highlight) -> tuple[bool, int]:
        # The kept book's, and of those the one that took in a version already.
        return kept.pk in books[id(h)], len(books[id(h)])

    joins: list[tuple[Highlight, Highlight]] = []
    for highlight in sorted((h for h in rows if id(h) in books), key=_in_reading_order):
        if id(highlight) not in books:
            continue  # taken in by an earlier one
        joining = True
        while joining:
            joining = False
            for other in _versions_near(library, highlight, (kept.pk, absorbed.pk)):
                if id(other) not in books or books[id(other)] == books[id(highlight)]:
                    continue
                if kept.pk in books[id(other)] and kept.pk in books[id(highlight)]:
                    continue  # two of the kept book's: the import's business
                stays, goes = sorted((highlight, other), key=stays_first, reverse=True)
                if not stored_versions_merge(library=library, kept=stays, other=goes):
                    continue
                books[id(stays)] |= books.pop(id(goes))
                joins.append((stays, goes))
                highlight, joining = stays, True
                break
    return joins


def _in_reading_order(highlight: Highlight) -> tuple[tuple[int, int], str, int]:
    """Where a highlight is in the book, the same whichever of the two books is kept."""
    return position(highlight), sort_key(highlight.position), highlight.pk


def _versions_near(
    library: Library, highlight: Highlight, book_ids: tuple[int, int]
) -> list[Highlight]:
    """The highlights of either book that could be versions of this one (the import's
    neighbours: placed near it, or another device's sharing a run of its words)."""
    found = {
        id(h): h
        for book_id in book_ids
        for h in library.neighbours(
            book_id,
            highlight.location_start,
            highlight.location_end,
            highlight.page,
            highlight.position,
            library.folded(highlight),
        )
        if h is not highlight
    }
    return sorted(found.values(), key=_in_reading_order)


def _versions_join(joins: list[tuple[Highlight, Highlight]], kept: Book) -> list[int]:
    """Write what _versions_across joined, once both books' highlights are the kept
    book's: what the reader added to the one that goes moves to the one that stays
    (joining.highlights_join, as for a passage both held word for word), which then takes the
    text, places and date the import's merge gave it. Returns the highlights whose words
    changed: their vectors and the connections found with them are void, as after an
    import's merge, and so are those of the highlights that go."""
    if not joins:
        return []
    # The connections of the one that goes were found with its vector, which goes with it:
    # forgotten, as an import forgets those of a highlight whose vector went.
    connections_forget(ids=[goes.pk for _, goes in joins])
    # Joined, and the ones that go gone, before the keys: one that stays may now hold a
    # gone one's words.
    rows = highlights_join([(stays.pk, goes.pk) for stays, goes in joins])
    merged_rows = {stays.pk: stays for stays, _ in joins}
    taken = _keys_taken(
        list(rows.values()),
        wanted={h.dedupe_key_from_fields(book_key=kept.key) for h in merged_rows.values()},
    )
    # Keys about to change step aside first: the unique (reader, dedupe_key) holds after
    # each row of one statement, and a row's new key may be another's old one.
    Highlight.objects.filter(pk__in=list(rows)).update(
        dedupe_key=Concat(Value(CODE_ONLY), Cast("pk", output_field=CharField()))
    )
    now, reworded = timezone.now(), []
    for merged in merged_rows.values():
        row = rows[merged.pk]
        if fold_spacing_and_bom(row.text) != fold_spacing_and_bom(merged.text):
            for name, value in VECTORS_RESET.items():
                setattr(row, name, value)
            reworded.append(row)
        for name in _VERSION_FIELDS:
            setattr(row, name, getattr(merged, name))
        row.refresh_search_text()
        row.refresh_reading_key()
        row.updated = now  # auto_now, which a bulk update leaves alone
        taken.discard(row.dedupe_key)
        row.dedupe_key = _free_key(row, book_key=kept.key, taken=taken)
        taken.add(row.dedupe_key)
    fields = [*_VERSION_FIELDS, "search_text", "reading_key", "dedupe_key", "updated"]
    highlights_update(rows.values(), fields)
    Highlight.objects.bulk_update(reworded, list(VECTORS_RESET))  # vectors: not by unnest
    changed = [row.pk for row in reworded]
    connections_forget(ids=changed)
    return changed


# What the import's merge of two versions changes on the highlight it keeps.
_VERSION_FIELDS = [
    "text", "page", "location_start", "location_end", "position", "added_at", "added_raw",
    "is_word", "language",
]  # fmt: skip


def _keys_taken(rows: list[Highlight], *, wanted: set[str]) -> set[str]:
    """The reader's dedupe keys among those the rows will ask for (`wanted`), and the rows'
    own now: read once, for every _free_key."""
    keys = Highlight.objects.filter(reader_id=rows[0].reader_id, dedupe_key__in=wanted)
    return {*keys.values_list("dedupe_key", flat=True), *(row.dedupe_key for row in rows)}


def _free_key(highlight: Highlight, *, book_key: str, taken: set[str]) -> str:
    """The highlight's dedupe key, stepped aside (as the import's _free_key) in the unlikely
    case another highlight of the reader's holds it (`taken`: _keys_taken, less its own).
    A stepped-aside key is asked of the database: as rare as the step."""
    key = highlight.dedupe_key_from_fields(book_key=book_key)
    if key not in taken:
        return key
    others = Highlight.objects.filter(reader_id=highlight.reader_id).exclude(pk=highlight.pk)
    key = hashlib.sha256(f"{key}+".encode()).hexdigest()
    while key in taken or others.filter(dedupe_key=key).exists():
        key = hashlib.sha256(f"{key}+".encode()).hexdigest()
    return key


def book_merge_preview(*, kept: Book, absorbed: Book) -> BookMerge:
    """What books_merge would do, said on the page before it does."""
    return BookMerge(
        moved=absorbed.highlights.alive().exclude(EMPTY_NOTE).count(),
        joined=len(_passage_keys(kept) & _passage_keys(absorbed))
        + len(_versions_across(kept, absorbed)),
        connections_dropped=_between(kept, absorbed).count(),
        kept_out_of_sharing=_out_of_sharing(kept, absorbed),
    )


def _out_of_sharing(*books: Book) -> bool:
    from affinity.models import SharingProfile

    return SharingProfile.excluded_books.through.objects.filter(book__in=books).exists()


def books_merge(*, kept: Book, absorbed: Book) -> BookMerge | None:
    """Make `absorbed` part of `kept` (module docstring), in one transaction. None when
    there was nothing to do: `absorbed` is already gone (a second POST of the same merge),
    or is `kept`."""
    if kept.reader_id != absorbed.reader_id:
        raise ValueError("two readers' books are never one")
    with transaction.atomic():
        # One change of a reader's books at a time, imports included (the import's lock):
        # a double POST waits here for the first merge to commit, then finds the book
        # gone; an import never matches its file against a book being merged away.
        # The reader's row too, as the purge takes it: the embedding worker share-locks it
        # to write connections, so no pair judged while the two were two books is
        # inserted after the merge, within one book.
        if not lock_reader_for_change(kept.reader_id):
            return None
        found = Book.objects.filter(reader_id=kept.reader_id, pk__in=[kept.pk, absorbed.pk])
        books = {book.pk: book for book in found}
        if kept.pk == absorbed.pk or absorbed.pk not in books or kept.pk not in books:
            return None
        kept, absorbed = books[kept.pk], books[absorbed.pk]
        moved = absorbed.highlights.alive().exclude(EMPTY_NOTE).count()
        versions = _versions_across(kept, absorbed)
        dropped, _ = _between(kept, absorbed).delete()
        # `updated` too: the library map is laid out again, with the kept book's title.
        absorbed.highlights.update(book=kept, updated=timezone.now())
        connections_follow_books(reader_id=kept.reader_id, books=[kept.pk, absorbed.pk])
        out_of_sharing = _out_of_sharing(kept, absorbed)
        _keep_exclusions(kept, [absorbed])
        # The absorbed book's deletes of itself whole: their highlights stay deleted, as
        # deletes of some of the kept book's (/deleted/ groups them by book and moment),
        # not as a delete of the kept book, which is alive.
        whole = Deletion.objects.filter(reader_id=kept.reader_id, book=absorbed)
        Highlight.objects.filter(deletion__in=whole).update(deletion=None)
        whole.delete()
        _traces_copy(reader_id=kept.reader_id, from_key=absorbed.key, to_key=kept.key)
        # Books merged into the absorbed one before are the kept one's now.
        BookAlias.objects.filter(book=absorbed).update(book=kept)
        # A key once merged away may have come back as a book's key under a later identity
        # rule (merge_duplicate_books), and be merged away again: the earlier alias steps
        # aside to a key no title line has, so its code still leads where it led.
        BookAlias.objects.filter(reader_id=kept.reader_id, key=absorbed.key).update(
            key=Concat(Value(CODE_ONLY), Cast("code", output_field=CharField()))
        )
        BookAlias.objects.create(
            reader_id=kept.reader_id,
            key=absorbed.key,
            code=absorbed.code,
            title=absorbed.title,
            book=kept,
        )
        absorbed.delete()
        joined = _rekey_highlights(kept) + len(versions)
        reworded = _versions_join(versions, kept)
        # Pairs within one book are not connections (as books_merge_duplicates ends).
        Connection.objects.filter(
            reader_id=kept.reader_id, highlight_a__book=F("highlight_b__book")
        ).delete()
        _connect_again(kept, reworded)
        if out_of_sharing:
            # The kept book may have left sharing, or the absorbed one's highlights with
            # it: the centroid follows now, as a change of the sharing settings does.
            from affinity.services import sharing_changed

            sharing_changed(reader=kept.reader)
        library_version_bump(reader_ids={kept.reader_id})
    return BookMerge(
        moved=moved,
        joined=joined,
        connections_dropped=dropped,
        kept_out_of_sharing=out_of_sharing,
    )


def _connect_again(kept: Book, reworded: list[int]) -> list[int]:
    """Send the kept book's embedded passages (both books' now) back to the embedding
    pipeline, which forgets their connections and finds them again once committed: the
    judge reads the authors (same_author), which changed for one book's passages, and each
    passage's slots held by pairs with the other book are free again. Their vectors leave
    the read paths until then, as after a model change. `reworded`: highlights whose words
    a version joined to them changed, their vectors gone; embedded again too. Returns the
    ids sent."""
    done = (
        kept.highlights.alive().passages().filter(embedding_status=Highlight.EmbeddingStatus.DONE)
    )
    ids = list(done.values_list("pk", flat=True))
    Highlight.objects.filter(pk__in=ids).update(
        embedding_status=Highlight.EmbeddingStatus.PENDING, embedding_claimed_at=None
    )
    ids += reworded
    if ids:
        transaction.on_commit(partial(announce, highlights_to_embed, ids=ids))
    return ids


def _traces_copy(*, reader_id: int, from_key: str, to_key: str) -> None:
    """The traces of the highlights removed for good under `from_key`, copied under
    `to_key`: an import following the alias leaves them out, and an import of the old title
    once the kept book (and its aliases) is gone too (books.purging keeps both keys for what
    it removes later)."""
    PurgedHighlight.objects.bulk_create(
        [
            t.filed_under(to_key)
            for t in PurgedHighlight.objects.filter(reader_id=reader_id, book_key=from_key)
        ],
        batch_size=1000,
    )


def merged_into(*, reader: User, code: UUID) -> Book | None:
    """The book a merged-away book's code now leads to, or None."""
    alias = BookAlias.objects.filter(reader=reader, code=code).select_related("book").first()
    return alias.book if alias is not None else None


def _titles_alike(a: str, b: str) -> bool:
    """One title is the other with more words after it: a subtitle one device left out."""
    short, long = sorted((a, b), key=len)
    return bool(short) and (long == short or long.startswith(short + " "))


def merge_suggestions(*, book: Book, others: list[Book]) -> list[Book]:
    """The books most likely the same as `book`: a title that is the other's with or
    without a subtitle (`identity.normalize_title`), then the same author
    (`identity.same_author`); both first."""
    title = normalize_title(book.title)
    scored = []
    for other in others:
        alike = _titles_alike(title, normalize_title(other.title))
        author = bool(book.authors_normalized) and same_author(
            book.authors_normalized, other.authors_normalized
        )
        if alike or author:
            scored.append((not alike, not author, other.title_sort, other.pk, other))
    return [row[-1] for row in sorted(scored)[:SUGGESTIONS_SHOWN]]
