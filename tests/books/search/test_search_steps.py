"""The search service's steps one at a time: the request as data, which half runs, the
named books promoted, recency within each part."""

from uuid import uuid4

import pytest

from accounts.models import User
from books.connections.neighbours import Neighbour
from books.importing.clippings import normalize_author
from books.models import Book, Highlight
from books.search.filters import SearchFilters
from books.search.search import Mode, SearchRequest, _mode_used, search, search_run


def _highlight(reader: User, title: str, authors: str, text: str) -> Highlight:
    book, _ = Book.objects.get_or_create(
        reader=reader,
        key=f"{title}|{authors}".casefold(),
        defaults={
            "title": title,
            "authors": authors,
            "authors_normalized": normalize_author(authors),
        },
    )
    highlight = Highlight(reader=reader, book=book, text=text, dedupe_key=uuid4().hex)
    highlight.refresh_search_text()
    highlight.save()
    return highlight


class ModeUsedTests:
    NEAR = [Neighbour(highlight_id=1, distance=0.1)]

    @pytest.mark.parametrize(
        ("mode", "vector", "meaning", "used"),
        [
            (Mode.KEYWORD, [0.1], NEAR, "keyword"),
            (Mode.AUTO, None, [], "keyword"),
            (Mode.MEANING, None, [], "keyword"),
            (Mode.MEANING, [0.1], [], "meaning"),
            (Mode.AUTO, [0.1], [], "keyword"),
            (Mode.AUTO, [0.1], NEAR, "hybrid"),
        ],
    )
    def test_it_says_which_half_ran(
        self, mode: Mode, vector: list[float] | None, meaning: list[Neighbour], used: str
    ) -> None:
        assert _mode_used(mode, vector, meaning) == used


@pytest.mark.django_db
class SearchRequestTests:
    def test_it_gives_the_same_results_as_the_keywords(self, alice: User) -> None:
        for n in range(5):
            _highlight(alice, "Ficciones", "Borges", f"The river of time, number {n}.")
        _highlight(alice, "Awakenings", "Sacks", "A river that does not forget.")
        request = SearchRequest(reader=alice, query="river", mode=Mode.KEYWORD, limit=2, offset=2)
        by_request = search_run(request)
        by_keywords = search(alice, "river", mode="keyword", limit=2, page=2)
        assert [r.highlight.pk for r in by_request.results] == [
            r.highlight.pk for r in by_keywords.results
        ]
        assert (by_request.total, by_request.offset, by_request.limit) == (6, 2, 2)

    def test_it_promotes_the_named_authors_highlights(self, alice: User) -> None:
        _highlight(alice, "Ficciones", "Borges, Jorge Luis", "Memory is a labyrinth.")
        sacks = _highlight(alice, "Awakenings", "Sacks, Oliver", "Memory fails us slowly.")
        found = search_run(SearchRequest(reader=alice, query="Sacks memory", mode=Mode.KEYWORD))
        assert found.results[0].highlight.pk == sacks.pk
        assert found.named_first == 1

    def test_it_says_when_a_field_names_no_book(self, alice: User) -> None:
        _highlight(alice, "Ficciones", "Borges", "Memory is a labyrinth.")
        found = search_run(SearchRequest(reader=alice, query="author:pessoa memory"))
        assert found.results == []
        assert found.notice == "No book of yours matches author:pessoa."

    def test_it_keeps_the_filters_as_data(self, alice: User) -> None:
        theirs = _highlight(alice, "Ficciones", "Borges", "Memory is a labyrinth.")
        _highlight(alice, "Awakenings", "Sacks", "Memory fails us slowly.")
        request = SearchRequest(
            reader=alice, query="memory", mode=Mode.KEYWORD, filters=SearchFilters(book=theirs.book)
        )
        assert [r.highlight.pk for r in search_run(request).results] == [theirs.pk]
