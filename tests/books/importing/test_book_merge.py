"""A library imported under the older rule: its twin books become one, nothing lost."""

import threading
import time
from datetime import UTC, date, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, connections

from accounts.models import User
from affinity.models import SharingProfile
from books.importing.book_merge import books_merge_duplicates
from books.importing.identity import highlight_dedupe_key
from books.importing.same_book import books_merge, merged_into
from books.importing.services import clippings_import
from books.models import Book, Connection, Highlight, Tag
from books.services import highlight_note_update
from review.models import ReviewState
from tests.books.kindle import Entry, clippings_file

# Real title lines, one device's straight apostrophe and another's curly one.
STRAIGHT = "It Doesn't Have to Be Crazy at Work (Jason Fried)"
CURLY = "It Doesn\u2019t Have to Be Crazy at Work (Jason Fried)"
CALM = "Calm is a choice, like anything else."
HOURS = "Long hours are not a badge of honour."
DAWN = "La alba llega despacio sobre el río."
OTHER = "Anger passes if you let it; venting only feeds it."


def _import(reader: User, *entries: Entry, name: str = "clips.txt"):  # type: ignore[no-untyped-def]
    return clippings_import(reader=reader, data=clippings_file(*entries), file_name=name)


def _old_rule_twin(reader: User) -> Book:
    """The curly-apostrophe book as the older rule stored it: its own key, its own rows."""
    key = "it doesn\u2019t have to be crazy at work\x1fjason fried"
    twin = Book.objects.create(
        reader=reader,
        key=key,
        title="It Doesn\u2019t Have to Be Crazy at Work",
        authors="Jason Fried",
        authors_normalized="jason fried",
    )
    for text, where in ((CALM, (100, 101)), (HOURS, (200, 202))):
        Highlight.objects.create(
            reader=reader,
            book=twin,
            text=text,
            location_start=where[0],
            location_end=where[1],
            dedupe_key=highlight_dedupe_key(
                book_key=key, kind="highlight", page="", start=where[0], end=where[1], text=text
            ),
        )
    return twin


def _stored_book(reader: User, *, key: str, title: str, authors: str, normalized: str) -> Book:
    """A book as an older rule stored it, under its own key, with the HOURS passage."""
    book = Book.objects.create(
        reader=reader, key=key, title=title, authors=authors, authors_normalized=normalized
    )
    Highlight.objects.create(
        reader=reader, book=book, text=HOURS, location_start=200, location_end=202,
        dedupe_key=highlight_dedupe_key(
            book_key=key, kind="highlight", page="", start=200, end=202, text=HOURS
        ),
    )  # fmt: skip
    return book


@pytest.fixture
def twins(alice: User) -> tuple[Book, Book]:
    _import(
        alice,
        Entry(STRAIGHT, CALM, location="100-101"),
        Entry("Meditations (Marcus Aurelius)", OTHER, location="50-51"),
    )
    kept = Book.objects.get(reader=alice, title__startswith="It Doesn't")
    return kept, _old_rule_twin(alice)


def _merge(**options: str) -> str:
    out = StringIO()
    call_command("merge_duplicate_books", stdout=out, **options)
    return out.getvalue()


@pytest.mark.django_db
class BookMergeTests:
    def test_it_merges_twin_books_into_the_older_one(
        self, alice: User, twins: tuple[Book, Book]
    ) -> None:
        kept, twin = twins

        out = _merge()

        assert "merged 'It Doesn\u2019t Have to Be Crazy at Work'" in out
        assert not Book.objects.filter(pk=twin.pk).exists()
        assert sorted(kept.highlights.values_list("text", flat=True)) == [CALM, HOURS]

    def test_a_book_the_reader_merged_into_a_copy_follows_it(
        self, alice: User, twins: tuple[Book, Book]
    ) -> None:
        kept, twin = twins
        meditations = Book.objects.get(reader=alice, title="Meditations")
        books_merge(kept=twin, absorbed=meditations)

        _merge()

        assert merged_into(reader=alice, code=meditations.code) == kept
        _import(
            alice, Entry("Meditations (Marcus Aurelius)", "Waste no more time.", location="60-61")
        )
        assert kept.highlights.filter(text="Waste no more time.").exists()

    def test_it_keeps_everything_the_reader_did_on_either_copy(
        self, alice: User, twins: tuple[Book, Book]
    ) -> None:
        kept, twin = twins
        mine = kept.highlights.get(text=CALM)
        theirs = twin.highlights.get(text=CALM)
        hours = twin.highlights.get(text=HOURS)
        other = Highlight.objects.get(reader=alice, text=OTHER)
        theirs.note, theirs.favourite = "Remember this on Mondays.", True
        theirs.save()
        theirs.tags.add(Tag.objects.create(reader=alice, name="calm"))
        ReviewState.objects.create(reader=alice, highlight=theirs, due=date(2026, 1, 5), reviews=4)
        SharingProfile.objects.create(reader=alice).excluded_books.add(twin)
        for a, b in ((theirs, other), (hours, other), (mine, theirs)):
            Connection.objects.create(
                reader=alice,
                highlight_a_id=min(a.pk, b.pk),
                highlight_b_id=max(a.pk, b.pk),
                distance=0.2,
                embedding_model="test",
            )

        _merge(user="alice")

        joined = Highlight.objects.get(pk=mine.pk)
        assert joined.note == "Remember this on Mondays."
        assert joined.favourite
        assert list(joined.tags.values_list("name", flat=True)) == ["calm"]
        assert ReviewState.objects.get(highlight=joined).reviews == 4
        pairs = set(Connection.objects.values_list("highlight_a_id", "highlight_b_id"))
        assert pairs == {
            (min(mine.pk, other.pk), max(mine.pk, other.pk)),
            (min(hours.pk, other.pk), max(hours.pk, other.pk)),
        }
        assert Highlight.objects.get(pk=hours.pk).book_id == kept.pk
        assert list(SharingProfile.objects.get(reader=alice).excluded_books.all()) == [kept]

    def test_it_adds_nothing_on_a_re_import_afterwards(
        self, alice: User, twins: tuple[Book, Book]
    ) -> None:
        _merge()

        again = _import(
            alice,
            Entry(CURLY, CALM, location="100-101"),
            Entry(CURLY, HOURS, location="200-202"),
            Entry(STRAIGHT, CALM, location="100-101"),
            name="again.txt",
        )

        assert again.counts["new_highlights"] == 0
        assert Book.objects.filter(reader=alice).count() == 2
        assert Highlight.objects.filter(reader=alice).count() == 3

    def test_it_merges_on_the_next_import_without_the_command(
        self, alice: User, twins: tuple[Book, Book]
    ) -> None:
        again = _import(alice, Entry(CURLY, HOURS, location="200-202"), name="again.txt")

        assert again.counts["new_highlights"] == 0
        assert Book.objects.filter(reader=alice, title__contains="Crazy").count() == 1

    def test_it_merges_one_title_whose_authors_are_spelt_two_ways(self, alice: User) -> None:
        _import(
            alice,
            Entry("Surely You're Joking, Mr. Feynman! (Richard P. Feynman and Ralph Leighton)",
                  CALM, location="100-101"),
        )  # fmt: skip
        older = Book.objects.get(reader=alice)
        # As the older rule stored the other device's line: a book of its own.
        title = "\u201cSurely You\u2019re Joking, Mr. Feynman\u201d"
        authors = "Richard Phillips Feynman; Edward Hutchings; Ralph Leighton"
        key = "surely you re joking mr feynman\x1fedward hutchings; feynman phillips richard"
        _stored_book(
            alice, key=key, title=title, authors=authors,
            normalized="richard phillips feynman; edward hutchings; ralph leighton",
        )  # fmt: skip

        out = _merge()

        assert "merged" in out
        assert list(Book.objects.filter(reader=alice)) == [older]
        assert Highlight.objects.filter(book=older).count() == 2

    def test_it_turns_round_a_book_read_the_wrong_way(self, alice: User) -> None:
        _import(alice, Entry("La Plaisanterie (Milan Kundera)", "Un optimiste.", location="10"))
        Book.objects.create(
            reader=alice, key="old", title="Milan Kundera", authors="La Fête de l'insignifiance"
        )
        Highlight.objects.create(
            reader=alice, book=Book.objects.get(key="old"), text="L'essence.", dedupe_key="x"
        )

        out = _merge()

        assert 'turned round: "La Fête de l\'insignifiance"' in out
        fete = Book.objects.get(reader=alice, title="La Fête de l'insignifiance")
        assert (fete.authors, fete.authors_normalized) == ("Milan Kundera", "milan kundera")

    def test_a_line_naming_its_author_first_is_turned_and_read_again_as_one_book(
        self, alice: User
    ) -> None:
        # Stored by the older rule: the author as the title, the title as the author.
        line = "Ira Vance - Ada's Lantern"
        _stored_book(
            alice, key="ira vance\x1fada s lantern", title="Ira Vance", authors="Ada's Lantern",
            normalized="ada s lantern",
        )  # fmt: skip

        out = _merge()
        report = _import(alice, Entry(line, HOURS, location="200-202"))

        assert 'turned round: "Ada\'s Lantern"' in out
        book = Book.objects.get(reader=alice)
        assert (book.title, book.authors) == ("Ada's Lantern", "Ira Vance")
        assert report.counts["new_highlights"] == 0
        assert Highlight.objects.filter(book=book).count() == 1

    def test_a_book_named_by_its_file_joins_the_book_by_its_title(self, alice: User) -> None:
        old_key = "oreilly charting the tides apr 2012\x1fines marlow"
        older = Book.objects.create(
            reader=alice, key=old_key, title="Oreilly.Charting.the.Tides.Apr.2012",
            authors="Ines Marlow", authors_normalized="ines marlow",
        )  # fmt: skip
        Highlight.objects.create(reader=alice, book=older, text=HOURS, dedupe_key="x")
        _import(alice, Entry("Charting the Tides (Ines Marlow)", OTHER, location="40"))

        book = Book.objects.get(reader=alice)
        assert (book.pk, book.title) == (older.pk, "Charting the Tides")
        assert book.highlights.count() == 2

    def test_it_removes_books_with_no_highlight_and_renormalizes_authors(
        self, alice: User, bob: User
    ) -> None:
        Book.objects.create(reader=alice, key="k", title="Bookmarked Only", authors="A")
        _import(bob, Entry("How Not to Diet (Michael Greger, M.D., FACLM)", OTHER))
        Book.objects.filter(reader=bob).update(authors_normalized="michael greger, m d, faclm")

        out = _merge()

        assert "removed 'Bookmarked Only'" in out
        assert not Book.objects.filter(reader=alice).exists()
        assert Book.objects.get(reader=bob).authors_normalized == "michael greger"

    def test_it_changes_nothing_the_second_time(
        self, alice: User, twins: tuple[Book, Book]
    ) -> None:
        _merge()
        keys = sorted(Highlight.objects.values_list("dedupe_key", flat=True))

        assert _merge().strip().startswith("0 libraries changed")
        assert sorted(Highlight.objects.values_list("dedupe_key", flat=True)) == keys

    def test_a_note_the_reader_cleared_stays_cleared_after_merge_duplicate_books(
        self, alice: User
    ) -> None:
        # One passage in two copies of a book (one key each, as before the identity rule
        # folded them): the reader cleared the device's note on one, the other copy has an
        # older device note.
        title = "Walden (Thoreau, Henry David)"
        text = "I went to the woods because I wished to live deliberately."
        walden = [
            Entry(title, text, location="10-11", added="Monday, 1 March 2021 10:00:00"),
            Entry(title, "Simplify, simplify.", kind="Note", location="11",
                  added="Monday, 1 March 2021 10:05:00"),
        ]  # fmt: skip
        _import(alice, *walden, name="a.txt")
        highlight_note_update(highlight=Highlight.objects.get(reader=alice, text=text), note="")
        Book.objects.filter(reader=alice).update(title="Walden", key="older key a")
        other_book = Book.objects.create(
            reader=alice, title="Walden", authors="Thoreau, Henry David", key="older key b"
        )
        Highlight.objects.create(
            reader=alice,
            book=other_book,
            text=text,
            location_start=10,
            location_end=11,
            note="An older note.",
            note_added_at=datetime(2020, 1, 1, tzinfo=UTC),
            dedupe_key="older rule b",
        )
        books_merge_duplicates(reader=alice)
        (one,) = Highlight.objects.filter(reader=alice, kind=Highlight.Kind.HIGHLIGHT)
        assert one.note == "An older note."

        _import(alice, *walden, name="a.txt")

        one.refresh_from_db()
        assert "Simplify" not in one.note  # the note the reader cleared stays out

    @pytest.mark.parametrize("first", ["kindle", "readwise"])
    def test_a_merged_highlight_keeps_what_either_file_listed_as_its_tags(
        self, alice: User, first: str
    ) -> None:
        # One passage under two titles the reader merges into one book, the copy that goes
        # from a Readwise CSV (its Tags column), the one that stays from a Kindle (no list)
        # or from a Readwise CSV too (its own list): the lists are joined.
        def readwise(title: str, tags: str) -> bytes:
            return (
                "Highlight,Title,Author,Note,Location,Date,Tags\n"
                f'"{DAWN}",{title},Ana Ruiz,,10,2021-05-04 12:34:56,"{tags}"\n'
            ).encode()

        stays = (
            clippings_file(Entry("Amanecer: una novela (Ana Ruiz)", DAWN, location="10"))
            if first == "kindle"
            else readwise("Amanecer: una novela", "río, luz")
        )
        goes = readwise("Amanecer", "luz, alba")
        clippings_import(reader=alice, data=stays, file_name="a")
        clippings_import(reader=alice, data=goes, file_name="b.csv")
        assert Highlight.objects.filter(reader=alice).count() == 2
        books_merge(
            kept=Book.objects.get(reader=alice, title="Amanecer: una novela"),
            absorbed=Book.objects.get(reader=alice, title="Amanecer"),
        )
        Tag.objects.filter(reader=alice, name__in=["alba", "río"]).delete()

        listed = ["luz", "alba"] if first == "kindle" else ["río", "luz", "alba"]
        assert Highlight.objects.get(reader=alice, deleted_at__isnull=True).file_tags == listed
        again = clippings_import(reader=alice, data=goes, file_name="b.csv")

        (one,) = Highlight.objects.filter(reader=alice, deleted_at__isnull=True)
        assert sorted(one.tags.values_list("name", flat=True)) == ["luz"]
        assert again.counts.get("tags_added", 0) == 0


def _two_copies_and_another(reader: User) -> tuple[Book, Highlight, Highlight]:
    """Two copies of one book under an older rule (two stored keys) and another book: the
    younger copy, one of its passages and one of the other book's."""
    for key in ("old-1", "old-2"):
        Book.objects.create(reader=reader, title="Meditations", authors="Marcus Aurelius",
                            authors_normalized="marcus aurelius", key=key)  # fmt: skip
    older, copy = Book.objects.filter(reader=reader).order_by("pk")
    other = Book.objects.create(reader=reader, title="Letters", authors="Seneca",
                                authors_normalized="seneca", key="letters|seneca")  # fmt: skip
    Highlight.objects.create(reader=reader, book=older, text="Kept.", dedupe_key="kept-1")
    mine = Highlight.objects.create(reader=reader, book=copy, text="The obstacle is the way.",
                                    dedupe_key="copy-1")  # fmt: skip
    theirs = Highlight.objects.create(reader=reader, book=other, text="Difficulties show men.",
                                      dedupe_key="other-1")  # fmt: skip
    return copy, mine, theirs


def _merge_duplicates_then_close(reader: User) -> None:
    try:
        books_merge_duplicates(reader=reader)
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
class BookMergeRaceTests:
    def test_the_merge_waits_for_a_connection_write_in_flight(self, alice: User) -> None:
        copy, mine, theirs = _two_copies_and_another(alice)
        # The embedding worker's write: the reader's row FOR SHARE
        # (books.embedding.pipeline._lock_live_readers), then each passage's book read and
        # the pair inserted with them.
        worker = connections["default"].copy()
        worker.connect()
        worker.set_autocommit(False)
        with worker.cursor() as cursor:
            cursor.execute("SELECT id FROM accounts_user WHERE id = %s FOR SHARE", [alice.pk])
            cursor.execute("SELECT pg_backend_pid()")
            worker_pid = cursor.fetchone()[0]
            cursor.execute(
                "INSERT INTO books_connection (reader_id, highlight_a_id, highlight_b_id,"
                " book_low_id, book_high_id, distance, probability, same_probability, strength,"
                " judge_version, embedding_model, created)"
                " VALUES (%s, %s, %s, %s, %s, 0.1, 0.9, 0.5, 1, 1, 'm', now())",
                [alice.pk, min(mine.pk, theirs.pk), max(mine.pk, theirs.pk),
                 min(copy.pk, theirs.book_id), max(copy.pk, theirs.book_id)],
            )  # fmt: skip
        # An import's first step (or merge_duplicate_books) starts meanwhile.
        merging = threading.Thread(target=_merge_duplicates_then_close, args=(alice,))
        merging.start()
        try:
            blockers: list[list[int]] = []
            deadline = time.monotonic() + 30
            while merging.is_alive() and not blockers and time.monotonic() < deadline:
                # Asked outside the worker's transaction: within one, pg_stat_activity is read
                # once and kept, and a merge that connected later would never show.
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_blocking_pids(pid) FROM pg_stat_activity"
                        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
                    )
                    blockers = [row[0] for row in cursor.fetchall()]
            assert blockers, "the merge went on without waiting for the worker's write"
            assert blockers == [[worker_pid]], "the merge waits, but not for the worker"
            worker.commit()
        finally:
            worker.close()
        merging.join(timeout=60)
        assert not merging.is_alive()
        assert not Book.objects.filter(pk=copy.pk).exists()
        pair = Connection.objects.get()
        moved_to = Highlight.objects.get(pk=mine.pk).book_id
        assert (pair.book_low_id, pair.book_high_id) == tuple(sorted((moved_to, theirs.book_id)))
