"""The reader's library as a search sees it, on real PostgreSQL."""

from collections.abc import Iterator
from uuid import uuid4

import pytest
from django.db import connection

from accounts.models import User
from books.models import Book, Highlight
from books.search.filters import SearchFilters, forget_reader_shares, reader_library
from books.search.search import search


@pytest.fixture(autouse=True)
def _fresh_reader_shares() -> Iterator[None]:
    # The statistics are read once per few minutes per process; each test reads its own.
    forget_reader_shares()
    yield
    forget_reader_shares()


def _shelf(reader: User, count: int) -> None:
    book = Book.objects.create(reader=reader, title=f"Tides {reader.pk}", key=f"{reader.pk}")
    rows = [
        Highlight(reader=reader, book=book, text=f"The tide turns {n}", dedupe_key=uuid4().hex)
        for n in range(count)
    ]
    for row in rows:
        row.refresh_search_text()
    Highlight.objects.bulk_create(rows)


@pytest.mark.django_db
class ReaderLibraryTests:
    @pytest.mark.slow  # 3,600 rows, enough for the planner to leave the index
    def test_it_finds_a_reader_who_holds_most_highlights_without_the_reader_index(
        self, alice: User, bob: User
    ) -> None:
        """ANDing a word's bitmap with a reader's of 100,000 rows cost 4-9 ms a word, to
        leave out the few rows of others: such a reader's rows are told by a condition no
        index answers. A smaller reader keeps the index. The rows found are the same."""
        _shelf(alice, 3000)
        _shelf(bob, 600)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE books_highlight")
        assert '"reader_id" + 0)' in str(reader_library(alice, SearchFilters()).query)
        assert '"reader_id" + 0)' not in str(reader_library(bob, SearchFilters()).query)
        for reader in (alice, bob):
            found = search(reader, "tide", mode="keyword")
            assert found.keyword_capped
            assert {r.highlight.reader for r in found.results} == {reader}
