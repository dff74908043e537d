"""The keyword half on real PostgreSQL: which highlights have the words, read how."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from books.models import Book, Highlight
from books.search.search import search


@pytest.mark.django_db
class KeywordReadTests:
    def test_it_reads_the_candidates_without_parallel_workers(self, alice: User) -> None:
        """A parallel scan hands the LIMIT whichever rows its workers return first: at
        100,000 highlights the same query found other highlights from run to run. A table
        this small never gets a parallel plan, so the setting itself is what is checked."""
        book = Book.objects.create(reader=alice, title="Tides", key="tides")
        highlight = Highlight(reader=alice, book=book, text="The tide turns.", dedupe_key="1")
        highlight.refresh_search_text()
        highlight.save()
        with CaptureQueriesContext(connection) as queries:
            found = search(alice, "tide", mode="keyword")
        assert [r.highlight for r in found.results] == [highlight]
        reads = [query["sql"] for query in queries.captured_queries if "query_0" in query["sql"]]
        assert reads
        for read in reads:
            assert read.startswith("SET LOCAL max_parallel_workers_per_gather = 0; ")
