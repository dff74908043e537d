"""Deleted highlights kept EXOGRAM_DELETED_DAYS, then removed for good: the daily purge,
`manage.py purge_deleted`, the beat's schedule and what /deleted/ says."""

from datetime import date, timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import override

from accounts.models import User
from affinity.models import PassageEcho, ReaderCentroid
from affinity.services import centroid_refresh
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.models import Book, Connection, Highlight, HighlightMerge, Import, Tag
from books.services import highlight_delete, highlight_tag
from books.tasks import purge_deleted
from review.models import ReviewCard, ReviewState
from tests.beat import beat_schedule
from tests.books.kindle import BORGES, MEMORY_LIBRARY, Entry, clippings_file

LONG_AGO = timedelta(days=31)


def _import(reader: User, *entries: Entry, name: str = "c.txt") -> Import:
    return clippings_import(reader=reader, data=clippings_file(*entries), file_name=name)


def _think(reader: User) -> Highlight:
    return Highlight.objects.get(reader=reader, location_start=412, kind="highlight")


def _age(highlights: Any, by: timedelta = LONG_AGO) -> None:
    """Deleted `by` ago: as if the bin had held them that long."""
    highlights.update(deleted_at=timezone.now() - by)


def _borges(reader: User) -> Book:
    return Book.objects.get(reader=reader, title="Ficciones")


@pytest.mark.django_db
class PurgeTests:
    def test_it_removes_what_was_deleted_longer_ago_than_the_setting_and_keeps_the_rest(
        self, alice: User
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        think = _think(alice)
        highlight_delete(highlight=think)
        _age(Highlight.objects.filter(pk=think.pk))
        recent = Highlight.objects.get(reader=alice, location_start=380)
        highlight_delete(highlight=recent)  # deleted today: kept 30 days more
        alive = set(Highlight.objects.alive().filter(reader=alice).values_list("pk", flat=True))
        assert purge_deleted() == {"highlights": 1, "notes": 0, "books": 0}
        assert not Highlight.objects.filter(pk=think.pk).exists()
        assert Highlight.objects.get(pk=recent.pk).deleted_at is not None
        assert set(Highlight.objects.alive().values_list("pk", flat=True)) == alive
        # Called again (the beat, a retry): nothing more goes.
        assert purge_deleted() == {"highlights": 0, "notes": 0, "books": 0}

    def test_it_takes_every_row_that_hangs_on_a_removed_highlight(
        self, alice: User, bob: User
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        # A later version of the same passage: merged into it, the merge kept on record.
        longer = "To think is to forget differences, to generalize, to abstract. Funes could not."
        _import(alice, Entry(BORGES, longer, location="412-415"), name="later.txt")
        think = _think(alice)
        assert HighlightMerge.objects.filter(highlight=think).exists()
        highlights_embed(
            ids=list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        )
        think.refresh_from_db()
        other = Highlight.objects.alive().filter(reader=alice).exclude(book=think.book).first()
        assert other is not None
        low, high = sorted((think, other), key=lambda h: h.pk)
        Connection.objects.create(
            reader=alice, highlight_a=low, highlight_b=high, distance=0.1, probability=0.9,
            strength=Connection.Strength.RELATED, embedding_model=think.embedding_model,
        )  # fmt: skip
        only_here = highlight_tag(highlight=think, name="forgetting")
        shared = highlight_tag(highlight=think, name="memory")
        highlight_tag(highlight=other, name="memory")
        ReviewState.objects.create(reader=alice, highlight=think, due=date(2026, 12, 1))
        ReviewCard.objects.create(reader=alice, highlight=think, day=date(2026, 12, 1), position=0)
        _import(bob, *MEMORY_LIBRARY)
        PassageEcho.objects.create(
            highlight=_think(bob), echo=think, embedding_model=think.embedding_model, distance=0
        )
        highlight_delete(highlight=think)
        _age(Highlight.objects.filter(pk=think.pk))
        purge_deleted()
        assert not Highlight.objects.filter(pk=think.pk).exists()
        assert not Connection.objects.filter(reader=alice).exists()
        assert not HighlightMerge.objects.filter(highlight_id=think.pk).exists()
        assert not ReviewState.objects.filter(highlight_id=think.pk).exists()
        assert not ReviewCard.objects.filter(highlight_id=think.pk).exists()
        assert not PassageEcho.objects.filter(echo_id=think.pk).exists()
        # A tag left labelling nothing goes, as when its last highlight is untagged.
        assert not Tag.objects.filter(pk=only_here.pk).exists()
        assert list(Tag.objects.get(pk=shared.pk).highlights.all()) == [other]
        # Bob's library is his: untouched.
        assert Highlight.objects.alive().filter(reader=bob).count() == 5

    def test_a_book_deleted_whole_goes_with_its_last_highlight(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        book = _borges(alice)
        alice_client.post(reverse("book_delete", args=[book.code]))
        _age(book.highlights.all())
        sacks = Book.objects.get(reader=alice, title__startswith="The Man")
        highlight_delete(highlight=sacks.highlights.first())  # its other highlight stays
        assert purge_deleted() == {"highlights": 3, "notes": 0, "books": 1}
        assert not Book.objects.filter(pk=book.pk).exists()
        assert Book.objects.filter(pk=sacks.pk).exists()
        assert alice_client.get(reverse("library")).status_code == 200

    def test_a_book_with_a_highlight_deleted_later_stays_until_that_one_is_due(
        self, alice: User
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        book = _borges(alice)
        highlight_delete(highlight=_think(alice))
        _age(book.highlights.all(), by=timedelta(days=40))
        book.highlights.filter(location_start=380).update(
            deleted_at=timezone.now() - timedelta(days=10)
        )
        assert purge_deleted()["books"] == 0
        assert list(book.highlights.values_list("location_start", flat=True)) == [380]

    def test_what_an_undone_import_deleted_goes_and_its_report_stays(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        wrong = _import(
            alice,
            Entry("Wrong Book", "A passage of a book that was never read.", location="10-11"),
            Entry("Wrong Book", "A note typed on the wrong book.", kind="Note", location="5"),
            name="wrong.txt",
        )
        alice_client.post(reverse("import_delete", args=[wrong.code]))
        _age(Highlight.objects.filter(source_import=wrong))
        assert purge_deleted() == {"highlights": 1, "notes": 1, "books": 1}
        assert not Highlight.objects.filter(source_import=wrong).exists()
        report = alice_client.get(reverse("import_report", args=[wrong.code]))
        assert report.status_code == 200

    def test_it_keeps_everything_when_the_setting_is_zero(self, alice: User, settings: Any) -> None:
        settings.EXOGRAM_DELETED_DAYS = 0
        _import(alice, *MEMORY_LIBRARY)
        highlight_delete(highlight=_think(alice))
        _age(Highlight.objects.filter(reader=alice), by=timedelta(days=3650))
        assert purge_deleted() == {"highlights": 0, "notes": 0, "books": 0}
        assert Highlight.objects.filter(reader=alice).count() == 5

    def test_it_leaves_the_centroid_and_the_counts_as_the_delete_left_them(
        self, alice: User, alice_client: Client, django_capture_on_commit_callbacks: Any
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        highlights_embed(
            ids=list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        )
        with django_capture_on_commit_callbacks(execute=True):
            alice_client.post(reverse("book_delete", args=[_borges(alice).code]))
        centroid_refresh(reader=alice)
        before = ReaderCentroid.objects.get(reader=alice)
        home = alice_client.get(reverse("home")).context
        _age(Highlight.objects.filter(reader=alice, deleted_at__isnull=False))
        purge_deleted()
        centroid_refresh(reader=alice)
        after = ReaderCentroid.objects.get(reader=alice)
        assert after.highlight_count == before.highlight_count == 2
        assert list(after.vector) == pytest.approx(list(before.vector))
        again = alice_client.get(reverse("home")).context
        assert again["counts"] == home["counts"]


@pytest.mark.django_db
class PurgeCommandTests:
    def test_a_dry_run_counts_what_would_go_grouped_and_removes_nothing(
        self, alice: User, alice_client: Client
    ) -> None:
        # More than one batch (books.purging.PURGE_BATCH), and a count to group.
        _import(
            alice,
            *[Entry("Big Book", f"Passage number {n} of a long book.", location=f"{10 * n}")
              for n in range(1, 1002)],
        )  # fmt: skip
        big = Book.objects.get(reader=alice, title="Big Book")
        alice_client.post(reverse("book_delete", args=[big.code]))
        _age(big.highlights.all())
        out = StringIO()
        call_command("purge_deleted", "--dry-run", stdout=out)
        printed = out.getvalue()
        assert "alice: would remove 1,001 highlights, 0 notes and 1 book\n" in printed
        assert "Would remove for good 1,001 highlights, 0 notes and 1 book of 1 reader" in printed
        assert "deleted more than 30 days ago" in printed
        assert big.highlights.count() == 1001
        out = StringIO()
        call_command("purge_deleted", stdout=out)
        assert "alice: removed 1,001 highlights, 0 notes and 1 book\n" in out.getvalue()
        assert not Book.objects.filter(pk=big.pk).exists()
        out = StringIO()
        call_command("purge_deleted", stdout=out)
        assert "Removed for good 0 highlights, 0 notes and 0 books of 0 readers" in out.getvalue()

    def test_it_purges_one_reader_with_user(self, alice: User, bob: User) -> None:
        for who in (alice, bob):
            _import(who, *MEMORY_LIBRARY)
            highlight_delete(highlight=_think(who))
            _age(Highlight.objects.filter(reader=who, deleted_at__isnull=False))
        out = StringIO()
        call_command("purge_deleted", "--user", "bob", stdout=out)
        assert "bob: removed 1 highlight, 0 notes and 0 books" in out.getvalue()
        assert Highlight.objects.filter(reader=alice).count() == 5
        assert Highlight.objects.filter(reader=bob).count() == 4

    def test_it_says_nothing_goes_when_kept_forever(self, alice: User, settings: Any) -> None:
        settings.EXOGRAM_DELETED_DAYS = 0
        _import(alice, *MEMORY_LIBRARY)
        highlight_delete(highlight=_think(alice))
        _age(Highlight.objects.filter(reader=alice, deleted_at__isnull=False))
        out = StringIO()
        call_command("purge_deleted", stdout=out)
        assert "EXOGRAM_DELETED_DAYS is 0" in out.getvalue()
        assert Highlight.objects.filter(reader=alice).count() == 5

    def test_it_refuses_an_unknown_reader(self, db: None) -> None:
        with pytest.raises(CommandError, match="No reader named"):
            call_command("purge_deleted", "--user", "nobody", stdout=StringIO())


@pytest.mark.django_db
class DeletedPageTests:
    def test_it_says_how_long_deleted_highlights_stay_and_when_each_goes(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        think = _think(alice)
        highlight_delete(highlight=think)
        think.refresh_from_db()
        assert think.deleted_at is not None
        day = think.deleted_at + timedelta(days=30)
        page = alice_client.get(reverse("deleted")).content.decode()
        assert "Deleted highlights are kept for 30 days, then removed for good" in page
        assert f"kept until {date_format(day, 'DATE_FORMAT')}" in page

    def test_it_says_it_in_spanish(self, alice: User, alice_client: Client) -> None:
        _import(alice, *MEMORY_LIBRARY)
        think = _think(alice)
        highlight_delete(highlight=think)
        think.refresh_from_db()
        assert think.deleted_at is not None
        page = alice_client.get(reverse("deleted"), headers={"Accept-Language": "es"})
        content = page.content.decode()
        assert "Los subrayados borrados se guardan 30 días" in content
        with override("es"):
            day = date_format(think.deleted_at + timedelta(days=30), "DATE_FORMAT")
        assert f"se guarda hasta el {day}" in content

    def test_it_says_they_stay_when_kept_forever(
        self, alice: User, alice_client: Client, settings: Any
    ) -> None:
        settings.EXOGRAM_DELETED_DAYS = 0
        _import(alice, *MEMORY_LIBRARY)
        highlight_delete(highlight=_think(alice))
        page = alice_client.get(reverse("deleted")).content.decode()
        assert "Deleted highlights are kept until you bring them back" in page
        assert "kept until " not in page.replace("kept until you", "")

    def test_bob_sees_none_of_alices_rows_or_dates(self, alice: User, bob_client: Client) -> None:
        _import(alice, *MEMORY_LIBRARY)
        highlight_delete(highlight=_think(alice))
        page = bob_client.get(reverse("deleted")).content.decode()
        assert "To think is to forget" not in page
        assert "kept until " not in page

    def test_it_sends_an_anonymous_visitor_to_log_in(self, client: Client) -> None:
        response = client.get(reverse("deleted"))
        assert response.status_code == 302
        assert reverse("login") in response["Location"]


class PurgeScheduleTests:
    def test_the_beat_purges_daily_unless_deleted_highlights_are_kept_forever(self) -> None:
        assert beat_schedule()["purge-deleted"] == "<crontab: 15 4 * * * (m/h/dM/MY/d)>"
        assert beat_schedule(EXOGRAM_DELETED_DAYS="")["purge-deleted"]
        assert "purge-deleted" not in beat_schedule(EXOGRAM_DELETED_DAYS="0")
