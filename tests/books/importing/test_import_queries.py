"""A re-import's queries do not grow with the rows it changes."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight
from tests.books.kindle import Entry, clippings_file

BOOK = "Book (Author, A)"


def _passage(i: int, more: str = "") -> Entry:
    text = f"Passage number {i} says a thing of its own.{more}"
    return Entry(BOOK, text, location=f"{10 * i}-{10 * i + 3 if more else 10 * i + 2}")


def _first_import(reader: User, size: int) -> None:
    clippings_import(
        reader=reader,
        data=clippings_file(*[_passage(i) for i in range(size)]),
        file_name="first.txt",
    )


def _queries_of_a_reimport(reader: User, entries: list[Entry]) -> int:
    with CaptureQueriesContext(connection) as queries:
        clippings_import(reader=reader, data=clippings_file(*entries), file_name="again.txt")
    return len(queries)


@pytest.mark.django_db
class ReimportQueriesTests:
    def test_notes_added_to_existing_highlights_cost_no_query_a_row(
        self, alice: User, bob: User
    ) -> None:
        counts = []
        for reader, size in ((alice, 5), (bob, 25)):
            _first_import(reader, size)
            notes = [Entry(BOOK, f"note {i}", kind="Note", location=f"{10 * i + 2}")
                     for i in range(size)]  # fmt: skip
            counts.append(_queries_of_a_reimport(reader, notes))
            assert Highlight.objects.filter(reader=reader).exclude(note="").count() == size
        assert counts[0] == counts[1]

    def test_extended_highlights_lose_their_vectors_in_one_statement(
        self, alice: User, bob: User
    ) -> None:
        counts = []
        for reader, size in ((alice, 5), (bob, 25)):
            _first_import(reader, size)
            Highlight.objects.filter(reader=reader).update(
                embedding_status=Highlight.EmbeddingStatus.DONE, embedding_model="m@1"
            )
            counts.append(
                _queries_of_a_reimport(reader, [_passage(i, " And more.") for i in range(size)])
            )
            mine = Highlight.objects.filter(reader=reader)
            assert mine.count() == size
            assert set(mine.values_list("embedding_status", "embedding_model")) == {
                (Highlight.EmbeddingStatus.PENDING, "")
            }
        assert counts[0] == counts[1]
