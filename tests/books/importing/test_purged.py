"""A highlight removed for good by the purge stays gone: a later import of a file that still
holds it (a Kindle keeps every clipping) leaves it out and says so."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from accounts.services import reader_delete
from books.importing.services import clippings_import
from books.models import Book, Deletion, Highlight, Import, PurgedHighlight
from books.services import highlight_delete
from books.tasks import purge_deleted
from tests.books.kindle import BORGES, MEMORY_LIBRARY, Entry, clippings_file

THINK = "To think is to forget differences, to generalize, to abstract."
# The first version of THINK, 8 words: the Kindle keeps it when the reader extends it.
THINK_SHORT = Entry(BORGES, "To think is to forget differences, to generalize,", location="412-413")


def _import(reader: User, *entries: Entry, name: str = "c.txt") -> Import:
    return clippings_import(reader=reader, data=clippings_file(*entries), file_name=name)


def _purge(highlights: object) -> None:
    """Deleted long ago, then the daily purge."""
    Highlight.objects.filter(pk__in=highlights).update(  # type: ignore[misc]
        deleted_at=timezone.now() - timedelta(days=31)
    )
    purge_deleted()


def _texts(reader: User) -> set[str]:
    return {h.text or h.note for h in Highlight.objects.filter(reader=reader)}


@pytest.mark.django_db
class PurgedReimportTests:
    def test_the_same_file_again_does_not_bring_a_purged_highlight_back(self, alice: User) -> None:
        _import(alice, *MEMORY_LIBRARY)
        funes = Highlight.objects.get(reader=alice, text__startswith="Funes")
        highlight_delete(highlight=funes)
        _purge([funes.pk])
        again = _import(alice, *MEMORY_LIBRARY, name="again.txt")
        assert not Highlight.objects.filter(reader=alice, text__startswith="Funes").exists()
        assert again.counts["new_highlights"] == 0
        assert again.counts["already_deleted"] == 1
        assert again.counts["duplicates_skipped"] == 5

    def test_every_version_merged_into_it_stays_out_too(self, alice: User) -> None:
        _import(alice, THINK_SHORT)
        full = Entry(BORGES, THINK, location="412-414", added="Tuesday, 4 March 2025 10:00:00")
        _import(alice, full, name="later.txt")  # extends it: one highlight, the longer text
        think = Highlight.objects.get(reader=alice)
        assert think.text == THINK
        highlight_delete(highlight=think)
        _purge([think.pk])
        # The Kindle's file holds both versions; the first one's own text was never kept.
        again = _import(alice, THINK_SHORT, full, name="again.txt")
        assert not Highlight.objects.filter(reader=alice).exists()
        assert again.counts["already_deleted"] == 2

    def test_its_note_does_not_come_back_as_a_note_of_its_own(self, alice: User) -> None:
        _import(alice, *MEMORY_LIBRARY)
        think = Highlight.objects.get(reader=alice, location_start=412)
        assert think.note == "Read this twice."
        highlight_delete(highlight=think)
        _purge([think.pk])
        again = _import(alice, *MEMORY_LIBRARY, name="again.txt")
        assert "Read this twice." not in _texts(alice)
        assert THINK not in _texts(alice)
        assert again.counts["already_deleted"] == 2
        assert again.counts["standalone_notes"] == 0

    def test_a_purged_book_is_not_made_again_empty(self, alice: User, alice_client: Client) -> None:
        _import(alice, *MEMORY_LIBRARY)
        book = Book.objects.get(reader=alice, title="Ficciones")
        alice_client.post(reverse("book_delete", args=[book.code]))
        _purge(book.highlights.values_list("pk", flat=True))
        assert not Book.objects.filter(reader=alice, title="Ficciones").exists()
        # The record of the delete goes with its last highlight.
        assert not Deletion.objects.filter(reader=alice).exists()
        again = _import(alice, *MEMORY_LIBRARY, name="again.txt")
        assert not Book.objects.filter(reader=alice, title="Ficciones").exists()
        assert again.counts["new_books"] == 0
        assert again.counts["already_deleted"] == 4  # three highlights and the note on one
        assert again.counts["books_touched"] == 1

    def test_the_report_says_how_many_were_already_deleted(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        funes = Highlight.objects.get(reader=alice, text__startswith="Funes")
        highlight_delete(highlight=funes)
        _purge([funes.pk])
        again = _import(alice, *MEMORY_LIBRARY, name="again.txt")
        url = reverse("import_report", args=[again.code])
        page = alice_client.get(url).content.decode()
        assert "Already deleted and removed for good, left out</th>" in page
        spanish = alice_client.get(url, headers={"Accept-Language": "es"}).content.decode()
        assert "Ya borrados y eliminados para siempre, omitidos</th>" in spanish

    def test_a_selection_reaching_beyond_the_purged_one_is_imported(self, alice: User) -> None:
        """Not caught (docs/operations.md): new words are a new selection."""
        _import(alice, THINK_SHORT)
        short = Highlight.objects.get(reader=alice)
        highlight_delete(highlight=short)
        _purge([short.pk])
        again = _import(alice, Entry(BORGES, THINK, location="412-414"), name="again.txt")
        assert _texts(alice) == {THINK}
        assert again.counts["already_deleted"] == 0

    def test_another_readers_purge_changes_nothing_of_mine(self, alice: User, bob: User) -> None:
        _import(alice, *MEMORY_LIBRARY)
        _import(bob, *MEMORY_LIBRARY)
        funes = Highlight.objects.get(reader=alice, text__startswith="Funes")
        highlight_delete(highlight=funes)
        _purge([funes.pk])
        Highlight.objects.filter(reader=bob, text__startswith="Funes").delete()
        again = _import(bob, *MEMORY_LIBRARY, name="again.txt")
        assert again.counts["new_highlights"] == 1
        assert again.counts["already_deleted"] == 0


@pytest.mark.django_db
class PurgedTraceTests:
    def test_it_keeps_no_words_of_the_highlight(self, alice: User) -> None:
        _import(alice, *MEMORY_LIBRARY)
        think = Highlight.objects.get(reader=alice, location_start=412)
        highlight_delete(highlight=think)
        _purge([think.pk])
        trace = PurgedHighlight.objects.get(reader=alice)
        kept = " ".join(str(value) for value in trace.__dict__.values()).casefold()
        for word in ["think", "forget", "generalize", "twice"]:
            assert word not in kept

    def test_deleting_the_reader_deletes_their_traces(self, alice: User, bob: User) -> None:
        for reader in (alice, bob):
            _import(reader, *MEMORY_LIBRARY)
            funes = Highlight.objects.get(reader=reader, text__startswith="Funes")
            highlight_delete(highlight=funes)
            _purge([funes.pk])
        reader_delete(reader_id=alice.pk)
        assert not PurgedHighlight.objects.filter(reader_id=alice.pk).exists()
        assert PurgedHighlight.objects.filter(reader=bob).count() == 1
