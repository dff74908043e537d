"""The delete and bring_back commands: what the reader's delete buttons and Recently
deleted list do, for an operator."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Book, Deletion, Highlight, Import
from tests.books.kindle import MEMORY_LIBRARY, Entry, clippings_file


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def _alive(reader: User) -> int:
    return Highlight.objects.alive().filter(reader=reader).count()


@pytest.fixture
def first_import(alice: User) -> Import:
    return clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")


def _borges(reader: User) -> Book:
    return Book.objects.get(reader=reader, title="Ficciones")


@pytest.mark.django_db
class DeleteCommandTests:
    def test_it_deletes_a_book_as_one_delete_and_brings_it_back(
        self, alice: User, first_import: Import
    ) -> None:
        before = _alive(alice)
        book = _borges(alice)
        out = _run("delete", "--user", "alice", "--book", str(book.code))
        assert "Deleted “Ficciones”: 3 highlights (1 with its note)." in out
        deletion = Deletion.objects.get(reader=alice)
        assert f"bring_back --user alice --deletion {deletion.code}" in out
        assert _alive(alice) == before - 3
        assert str(deletion.code) in _run("bring_back", "--user", "alice", "--list")
        assert "Brought back 3 highlights." in _run(
            "bring_back", "--user", "alice", "--deletion", str(deletion.code)
        )
        assert _alive(alice) == before
        assert not Deletion.objects.exists()

    def test_it_deletes_what_an_import_added_and_brings_it_back(
        self, alice: User, first_import: Import
    ) -> None:
        wrong = clippings_import(
            reader=alice,
            data=clippings_file(Entry("Wrong Book", "A passage never read.", location="10-11")),
            file_name="wrong.txt",
        )
        before = _alive(alice)
        out = _run("delete", "--user", "alice", "--import", str(wrong.code))
        assert "Deleted what wrong.txt added: 1 highlight." in out
        assert _alive(alice) == before - 1
        assert "Brought back 1 highlight." in _run(
            "bring_back", "--user", "alice", "--import", str(wrong.code)
        )
        assert _alive(alice) == before

    def test_it_deletes_one_highlight_and_brings_it_back_any_time_later(
        self, alice: User, first_import: Import
    ) -> None:
        highlight = Highlight.objects.filter(reader=alice, book__title="Ficciones").first()
        assert highlight is not None
        out = _run("delete", "--user", "alice", "--highlight", str(highlight.code))
        assert "Deleted a highlight of “Ficciones”." in out
        highlight.refresh_from_db()
        assert highlight.deleted_at is not None
        Highlight.objects.filter(pk=highlight.pk).update(deleted_at="2020-01-01T00:00:00Z")
        _run("bring_back", "--user", "alice", "--highlight", str(highlight.code))
        highlight.refresh_from_db()
        assert highlight.deleted_at is None

    def test_it_brings_back_every_deleted_highlight_of_a_book(
        self, alice: User, first_import: Import
    ) -> None:
        book = _borges(alice)
        for highlight in Highlight.objects.filter(book=book)[:2]:
            _run("delete", "--user", "alice", "--highlight", str(highlight.code))
        assert "Brought back 2 highlights." in _run(
            "bring_back", "--user", "alice", "--book", str(book.code)
        )

    def test_it_never_touches_another_readers_rows(
        self, alice: User, bob: User, first_import: Import
    ) -> None:
        book = _borges(alice)
        with pytest.raises(CommandError, match=f"bob has no book {book.code}"):
            _run("delete", "--user", "bob", "--book", str(book.code))
        _run("delete", "--user", "alice", "--book", str(book.code))
        deletion = Deletion.objects.get(reader=alice)
        with pytest.raises(CommandError, match="bob has no deletion"):
            _run("bring_back", "--user", "bob", "--deletion", str(deletion.code))
        assert "bob has 0 deletes" in _run("bring_back", "--user", "bob", "--list")
        assert Highlight.objects.filter(book=book, deleted_at__isnull=False).count() == 3

    def test_it_refuses_a_code_that_is_not_one(self, alice: User) -> None:
        with pytest.raises(CommandError, match="'nope' is not a book's code"):
            _run("delete", "--user", "alice", "--book", "nope")
