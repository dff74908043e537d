"""The reader's "This is the same book as…": two books made one, nothing of theirs lost, and
later imports of either title land in the book kept."""

import threading
import time
from datetime import timedelta
from functools import partial
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, connections
from django.utils import timezone

from accounts.models import User
from affinity.models import ReaderCentroid, SharingProfile
from affinity.services import embedded_shared_count, sharing_update
from books.embedding.pipeline import highlights_embed
from books.events import highlights_to_embed
from books.importing import background
from books.importing.background import import_queue
from books.importing.same_book import (
    book_merge_preview,
    books_merge,
    merge_suggestions,
    merged_into,
)
from books.importing.services import clippings_import
from books.models import Book, BookAlias, Connection, Deletion, Highlight, Import
from books.purging import deleted_purge
from books.selectors import books_for
from books.services import (
    book_bring_back,
    book_delete,
    highlight_delete,
    highlight_note_update,
    highlight_tag,
)
from books.tasks import run_import
from tests.books.kindle import Entry, clippings_file

# One book from two devices: one wrote the title without its subtitle, and the author
# "Last, First".
SHORT = "The San Francisco Fallacy (Siegel, Jonathan)"
LONG = "The San Francisco Fallacy: The Ten Fallacies That San Francisco Makes (Jonathan Siegel)"
OTHER = "Meditations (Marcus Aurelius)"
SHARED = "A city that forbids building forbids its own future."
ONLY_SHORT = "Rent is what the permit office charges, passed on."
ONLY_LONG = "Every fallacy is a kindness to someone already housed."
GONE = "A sentence the reader deleted in the short copy."
STOIC = "You have power over your mind, not outside events."

SHORT_FILE = [
    Entry(SHORT, SHARED, location="100-101"),
    Entry(SHORT, ONLY_SHORT, location="200-202"),
    Entry(SHORT, GONE, location="250-251"),
]
LONG_FILE = [
    Entry(LONG, SHARED, location="100-101"),
    Entry(LONG, ONLY_LONG, location="300-302"),
    Entry(OTHER, STOIC, location="50-51"),
]


def _import(reader: User, entries: list[Entry], name: str) -> int:
    the_import = clippings_import(reader=reader, data=clippings_file(*entries), file_name=name)
    return int(the_import.counts.get("new_highlights", 0))


def _connect(reader: User, a: Highlight, b: Highlight) -> Connection:
    return Connection.objects.create(
        reader=reader,
        highlight_a_id=min(a.pk, b.pk),
        highlight_b_id=max(a.pk, b.pk),
        distance=0.2,
        embedding_model="test",
    )


@pytest.fixture
def two_copies(alice: User) -> tuple[Book, Book]:
    _import(alice, SHORT_FILE, "kindle.txt")
    _import(alice, LONG_FILE, "kobo.txt")
    short = Book.objects.get(reader=alice, title="The San Francisco Fallacy")
    long = Book.objects.get(reader=alice, title__startswith="The San Francisco Fallacy:")
    highlight_delete(highlight=short.highlights.get(text=GONE))
    return short, long


def _alive_texts(book: Book) -> list[str]:
    return sorted(book.highlights.alive().values_list("text", flat=True))


@pytest.mark.django_db
class SameBookTests:
    def test_it_moves_every_highlight_and_joins_the_passage_both_held(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        mine, theirs = long.highlights.get(text=SHARED), short.highlights.get(text=SHARED)
        highlight_note_update(highlight=mine, note="The long copy's note.")
        highlight_note_update(highlight=theirs, note="The short copy's note.")
        highlight_tag(highlight=theirs, name="housing")
        Highlight.objects.filter(pk=theirs.pk).update(favourite=True)

        done = books_merge(kept=long, absorbed=short)

        assert done is not None
        assert (done.moved, done.joined) == (2, 1)
        assert not Book.objects.filter(pk=short.pk).exists()
        assert _alive_texts(long) == sorted([SHARED, ONLY_SHORT, ONLY_LONG])
        joined = long.highlights.get(text=SHARED)
        assert "The long copy's note." in joined.note
        assert "The short copy's note." in joined.note
        assert joined.favourite
        assert list(joined.tags.values_list("name", flat=True)) == ["housing"]
        # The deleted highlight moved with its deletion: still deleted, in the kept book.
        assert long.highlights.get(text=GONE).deleted_at is not None

    def test_it_drops_the_connections_between_the_two_books_only(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        stoic = Highlight.objects.get(reader=alice, text=STOIC)
        only_short = short.highlights.get(text=ONLY_SHORT)
        between = _connect(alice, only_short, long.highlights.get(text=ONLY_LONG))
        outward = _connect(alice, only_short, stoic)
        assert book_merge_preview(kept=long, absorbed=short).connections_dropped == 1

        done = books_merge(kept=long, absorbed=short)

        assert done is not None
        assert done.connections_dropped == 1
        assert not Connection.objects.filter(pk=between.pk).exists()
        assert Connection.objects.filter(pk=outward.pk).exists()
        assert not Connection.objects.filter(
            reader=alice, highlight_a__book=long, highlight_b__book=long
        ).exists()

    def test_it_says_beforehand_what_it_does(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies

        preview = book_merge_preview(kept=short, absorbed=long)

        assert (preview.moved, preview.joined, preview.connections_dropped) == (2, 1, 0)

    def test_a_reimport_of_either_file_adds_nothing(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        books_merge(kept=long, absorbed=short)
        before = sorted(Highlight.objects.filter(reader=alice).values_list("pk", "deleted_at"))

        assert _import(alice, SHORT_FILE, "kindle.txt") == 0
        assert _import(alice, LONG_FILE, "kobo.txt") == 0

        assert not Book.objects.filter(reader=alice, title="The San Francisco Fallacy").exists()
        after = sorted(Highlight.objects.filter(reader=alice).values_list("pk", "deleted_at"))
        assert after == before  # the one deleted in the short copy stays deleted

    def test_a_new_highlight_under_the_merged_away_title_lands_in_the_kept_book(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        books_merge(kept=long, absorbed=short)

        _import(alice, [Entry(SHORT, "A new sentence, read later.", location="400-401")], "k2")

        assert Book.objects.filter(reader=alice).count() == 2  # the kept one and Meditations
        assert long.highlights.filter(text="A new sentence, read later.").exists()

    def test_the_reader_may_keep_the_shorter_title(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies

        books_merge(kept=short, absorbed=long)

        assert not Book.objects.filter(pk=long.pk).exists()
        short.refresh_from_db()
        assert short.title == "The San Francisco Fallacy"
        assert _alive_texts(short) == sorted([SHARED, ONLY_SHORT, ONLY_LONG])
        assert _import(alice, LONG_FILE, "kobo.txt") == 0
        assert Book.objects.filter(reader=alice).count() == 2

    def test_a_second_merge_of_the_same_books_changes_nothing(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        books_merge(kept=long, absorbed=short)
        before = sorted(Highlight.objects.filter(reader=alice).values_list("pk", "book_id", "note"))

        assert books_merge(kept=long, absorbed=short) is None

        after = sorted(Highlight.objects.filter(reader=alice).values_list("pk", "book_id", "note"))
        assert after == before
        assert BookAlias.objects.filter(reader=alice).count() == 1

    def test_books_merged_into_the_absorbed_one_follow_it(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        meditations = Book.objects.get(reader=alice, title="Meditations")
        books_merge(kept=short, absorbed=meditations)  # a reader's mistake, then another merge
        books_merge(kept=long, absorbed=short)

        _import(alice, [Entry(OTHER, "Waste no more time arguing.", location="60-61")], "m")

        assert Book.objects.filter(reader=alice).count() == 1
        assert long.highlights.filter(text="Waste no more time arguing.").exists()

    def test_a_book_kept_out_of_sharing_keeps_the_merged_book_out(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        profile = SharingProfile.objects.create(reader=alice)
        profile.excluded_books.add(short)

        books_merge(kept=long, absorbed=short)

        assert list(profile.excluded_books.all()) == [long]

    def test_it_suggests_the_same_title_with_a_subtitle_and_the_same_author_first(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        others = [b for b in books_for(alice) if b.pk != short.pk]

        assert merge_suggestions(book=short, others=others) == [long]


def _command(*args: str) -> str:
    out = StringIO()
    call_command("merge_books", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
class MergeBooksCommandTests:
    def test_it_merges_a_book_into_another_as_the_page_does(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies

        out = _command("--user", "alice", str(short.code), str(long.code))

        assert "Merged “The San Francisco Fallacy” into" in out
        assert "2 highlights moved, 1 passage both held joined" in out
        assert _alive_texts(long) == sorted([SHARED, ONLY_SHORT, ONLY_LONG])
        again = _command("--user", "alice", str(short.code), str(long.code))
        assert "is already part of" in again

    def test_it_refuses_another_readers_book(
        self, alice: User, bob: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies

        with pytest.raises(CommandError, match="bob has no book"):
            _command("--user", "bob", str(short.code), str(long.code))
        assert Book.objects.filter(pk=short.pk).exists()


@pytest.mark.django_db
class SameBookInPartsTests:
    def test_a_large_file_saved_in_parts_lands_in_the_kept_book_too(
        self,
        alice: User,
        two_copies: tuple[Book, Book],
        monkeypatch: pytest.MonkeyPatch,
        django_capture_on_commit_callbacks: Any,
    ) -> None:
        short, long = two_copies
        books_merge(kept=long, absorbed=short)
        monkeypatch.setattr(background, "IMPORT_PART", 1)  # every book a part of its own
        new = Entry(SHORT, "A sentence read on the Kindle later.", location="500-501")
        data = clippings_file(*SHORT_FILE, *LONG_FILE, new)
        the_import = import_queue(reader=alice, data=data, file_name="big.txt")

        with django_capture_on_commit_callbacks(execute=True):
            assert run_import(the_import.pk) == Import.Status.DONE

        the_import.refresh_from_db()
        assert the_import.counts["new_highlights"] == 1
        assert the_import.counts["new_books"] == 0
        assert long.highlights.filter(text=new.text).exists()
        assert Book.objects.filter(reader=alice).count() == 2


@pytest.mark.django_db
class SameBookDeletedCopyTests:
    def test_the_passage_alive_in_one_book_stays_the_one_the_reader_sees(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        highlight_delete(highlight=short.highlights.get(text=SHARED))
        seen = long.highlights.get(text=SHARED)

        books_merge(kept=long, absorbed=short)

        kept = long.highlights.get(text=SHARED)
        assert kept.code == seen.code  # its page, its links, still lead to it
        assert kept.deleted_at is None


@pytest.mark.django_db
class SameBookRemovedForGoodTests:
    def test_the_kept_book_removed_for_good_keeps_the_merged_away_file_out(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        books_merge(kept=long, absorbed=short)
        book_delete(book=long)
        deleted_purge(reader_id=alice.pk, before=timezone.now() + timedelta(days=1))
        assert not Book.objects.filter(pk=long.pk).exists()

        assert _import(alice, SHORT_FILE, "kindle.txt") == 0
        assert _import(alice, LONG_FILE[:2], "kobo.txt") == 0

    def test_what_was_removed_for_good_before_the_merge_stays_out_after_the_kept_book_goes(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        deleted_purge(reader_id=alice.pk, before=timezone.now() + timedelta(days=1))  # GONE
        books_merge(kept=long, absorbed=short)
        assert _import(alice, SHORT_FILE, "kindle.txt") == 0  # the alias is followed
        book_delete(book=long)
        deleted_purge(reader_id=alice.pk, before=timezone.now() + timedelta(days=1))

        assert _import(alice, SHORT_FILE, "kindle.txt") == 0


@pytest.mark.django_db
class SameBookConnectionsTests:
    def test_no_pair_within_one_book_can_be_stored(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        # As a worker judging the two books apart might insert one after the merge: the
        # database refuses it, so none can outlive a merge.
        _, long = two_copies
        with pytest.raises(IntegrityError, match="connection_books_ordered"):
            _connect(alice, long.highlights.get(text=SHARED), long.highlights.get(text=ONLY_LONG))

    def test_the_pairs_of_the_absorbed_book_follow_it_into_the_kept_one(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        other = Book.objects.create(reader=alice, title="Another", key="another", authors="Z")
        theirs = Highlight.objects.create(
            reader=alice, book=other, text="Another passage.", dedupe_key="another-1"
        )
        pair = _connect(alice, short.highlights.get(text=ONLY_SHORT), theirs)

        books_merge(kept=long, absorbed=short)

        pair.refresh_from_db()
        assert sorted((pair.book_low_id, pair.book_high_id)) == sorted((long.pk, other.pk))
        assert pair.book_low_id < pair.book_high_id


@pytest.mark.django_db(transaction=True)
class SameBookRaceTests:
    def test_the_merge_waits_for_an_embedding_write_in_flight(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        # The worker writing vectors and connections holds the reader's row FOR SHARE
        # (books.embedding.pipeline._lock_live_readers) until it commits.
        short, long = two_copies
        worker = connections["default"].copy()
        worker.connect()
        worker.set_autocommit(False)
        with worker.cursor() as cursor:
            cursor.execute("SELECT id FROM accounts_user WHERE id = %s FOR SHARE", [alice.pk])
            cursor.execute("SELECT pg_backend_pid()")
            worker_pid = cursor.fetchone()[0]
        merging = threading.Thread(target=_merge_then_close, args=(long, short))
        merging.start()
        try:
            waiting = False
            deadline = time.monotonic() + 30
            while merging.is_alive() and not waiting and time.monotonic() < deadline:
                # Asked outside the worker's transaction: within one, pg_stat_activity is read
                # once and kept, and a merge that connected later would never show.
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT count(*) FROM pg_locks WHERE NOT granted AND pid IN"
                        " (SELECT pid FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid)))",
                        [worker_pid],
                    )
                    waiting = cursor.fetchone()[0] > 0
        finally:
            worker.rollback()
            worker.close()
            merging.join()
        assert waiting  # the merge waited for the write, not raced it
        assert not Book.objects.filter(pk=short.pk).exists()


def _merge_then_close(kept: Book, absorbed: Book) -> None:
    try:
        books_merge(kept=kept, absorbed=absorbed)
    finally:
        connection.close()


@pytest.mark.django_db
class SameBookConnectedAgainTests:
    def test_every_embedded_passage_of_both_books_is_connected_again_after_the_merge(
        self, alice: User, two_copies: tuple[Book, Book], django_capture_on_commit_callbacks: Any
    ) -> None:
        short, long = two_copies
        highlights_embed(
            ids=list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        )
        both = {h.pk for h in Highlight.objects.filter(book__in=[short, long]).alive()}

        with django_capture_on_commit_callbacks() as callbacks:
            books_merge(kept=long, absorbed=short)

        queued = {
            pk
            for callback in callbacks
            if isinstance(callback, partial) and callback.args == (highlights_to_embed,)
            for pk in callback.keywords["ids"]
        }
        kept = set(long.highlights.alive().values_list("pk", flat=True))
        assert queued == kept
        assert kept < both  # the passage both held is one now
        highlights_embed(ids=sorted(queued))
        assert not long.highlights.alive().exclude(embedding_status="done").exists()


@pytest.mark.django_db
class SameBookSharingTests:
    def test_the_centroid_leaves_out_at_once_a_book_the_merge_keeps_out_of_sharing(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        highlights_embed(
            ids=list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        )
        sharing_update(
            reader=alice, discoverable=True, display_name="Alice", excluded_books=[short]
        )
        assert ReaderCentroid.objects.get(reader=alice).highlight_count == 3  # long's two, STOIC

        done = books_merge(kept=long, absorbed=short)

        assert done is not None
        assert done.kept_out_of_sharing
        assert ReaderCentroid.objects.get(reader=alice).highlight_count == 1  # STOIC
        assert ReaderCentroid.objects.get(reader=alice).highlight_count == embedded_shared_count(
            alice.pk
        )


@pytest.mark.django_db
class SameBookOldCodesTests:
    def test_every_code_merged_away_under_one_key_still_leads_to_its_book(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        # The short copy's key comes back as a book's (a later identity rule), and that
        # book is merged away again: both old codes still lead somewhere.
        short, long = two_copies
        first_code = short.code
        books_merge(kept=long, absorbed=short)
        again = Book.objects.create(
            reader=alice, title=short.title, authors=short.authors, key=short.key
        )

        books_merge(kept=long, absorbed=again)

        assert merged_into(reader=alice, code=first_code) == long
        assert merged_into(reader=alice, code=again.code) == long
        new = Entry(SHORT, "A sentence read on the Kindle later.", location="500-501")
        _import(alice, [new], "k3")
        assert long.highlights.filter(text=new.text).exists()

    def test_a_merged_away_book_deleted_whole_is_not_the_kept_book_deleted_whole(
        self, alice: User, two_copies: tuple[Book, Book]
    ) -> None:
        short, long = two_copies
        _, at = book_delete(book=short)

        books_merge(kept=long, absorbed=short)

        assert not Deletion.objects.filter(reader=alice, book=long).exists()
        gone = long.highlights.filter(deleted_at=at)
        assert sorted(gone.values_list("text", flat=True)) == [ONLY_SHORT]  # SHARED joined
        assert book_bring_back(book=long, at=at).total == 1
