""" "This is the same book as…": the reader makes two of their books one.

A device may write a book's title without its subtitle (`The San Francisco Fallacy` beside
`The San Francisco Fallacy: The Ten Fallacies…`), or its author another way: two keys
(`identity.book_key`), two books, which `book_merge.books_merge_duplicates` rightly leaves
apart. The reader says they are one, and which one's title and authors stay:

- every highlight of the other book moves to the kept one (deleted ones too, with their
  deletion), and a passage both books held becomes one by the import's own join
  (`book_merge._join`: every word, note, tag and favourite of both, the longer review
  history);
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

from dataclasses import dataclass
from functools import partial
from uuid import UUID

from django.db import transaction
from django.db.models import CharField, F, Q, QuerySet, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from accounts.models import User
from books.connections.services import connections_follow_books
from books.events import announce, highlights_to_embed
from books.importing.book_merge import _keep_exclusions, _rekey_highlights
from books.importing.identity import highlight_dedupe_key, normalize_title, same_author
from books.library_cache import library_version_bump
from books.models import Book, BookAlias, Connection, Deletion, Highlight, PurgedHighlight
from books.purging import lock_reader_for_change

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


def _passage_keys(book: Book) -> set[str]:
    """Each highlight's dedupe key under one book key for both books: two highlights of two
    books with one key there are one passage, and the merge joins them."""
    rows = book.highlights.only("kind", "page", "location_start", "location_end", "text")
    return {
        highlight_dedupe_key(
            book_key="",
            kind=h.kind,
            page=h.page,
            start=h.location_start,
            end=h.location_end,
            text=h.text,
        )
        for h in rows
    }


def book_merge_preview(*, kept: Book, absorbed: Book) -> BookMerge:
    """What books_merge would do, said on the page before it does."""
    return BookMerge(
        moved=absorbed.highlights.alive().count(),
        joined=len(_passage_keys(kept) & _passage_keys(absorbed)),
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
        moved = absorbed.highlights.alive().count()
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
        joined = _rekey_highlights(kept)
        # Pairs within one book are not connections (as books_merge_duplicates ends).
        Connection.objects.filter(
            reader_id=kept.reader_id, highlight_a__book=F("highlight_b__book")
        ).delete()
        _connect_again(kept)
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


def _connect_again(kept: Book) -> list[int]:
    """Send the kept book's embedded passages (both books' now) back to the embedding
    pipeline, which forgets their connections and finds them again once committed: the
    judge reads the authors (same_author), which changed for one book's passages, and each
    passage's slots held by pairs with the other book are free again. Their vectors leave
    the read paths until then, as after a model change. Returns their ids."""
    done = (
        kept.highlights.alive().passages().filter(embedding_status=Highlight.EmbeddingStatus.DONE)
    )
    ids = list(done.values_list("pk", flat=True))
    Highlight.objects.filter(pk__in=ids).update(
        embedding_status=Highlight.EmbeddingStatus.PENDING, embedding_claimed_at=None
    )
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
            PurgedHighlight(
                reader_id=t.reader_id,
                book_key=to_key,
                kind=t.kind,
                dedupe_key=t.dedupe_key,
                text_hashes=t.text_hashes,
                runs=t.runs,
                on_device=t.on_device,
                added_at=t.added_at,
            )
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
