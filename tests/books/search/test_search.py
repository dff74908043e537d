"""Search on real PostgreSQL: full-text through the GIN index, vectors from the real model."""

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from uuid import uuid4

import pytest
from django.db import connection
from django.utils import timezone

from accounts.models import User
from books.connections.neighbours import Neighbour
from books.embedding.pipeline import highlights_embed
from books.importing.clippings import normalize_author
from books.models import Book, Highlight
from books.search.search import (
    COMMON_WORD_SHARE,
    DEPTH,
    NOTICE_MODEL_UNAVAILABLE,
    SearchFilters,
    _library,
    clear_query_cache,
    forget_word_shares,
    fuse,
    fused_order,
    keyword_candidates_sql,
    parse_query,
    recency_factor,
    search,
    word_shares,
)

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def _book(reader: User, title: str, authors: str = "") -> Book:
    return Book.objects.create(
        reader=reader, title=title, authors=authors, authors_normalized=normalize_author(authors),
        key=f"{title}|{authors}".casefold(),
    )  # fmt: skip


def _highlight(
    reader: User, book: Book, text: str, *, note: str = "", added_at: datetime | None = None
) -> Highlight:
    highlight = Highlight(
        reader=reader, book=book, text=text, note=note, added_at=added_at,
        dedupe_key=uuid4().hex,
    )  # fmt: skip
    highlight.refresh_search_text()
    highlight.save()
    return highlight


def _texts(reader: User, query: str, **kwargs: object) -> list[str]:
    return [r.highlight.text for r in search(reader, query, **kwargs).results]  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _fresh_word_shares() -> Iterator[None]:
    # The statistics are read once per few minutes per process; each test reads its own.
    forget_word_shares()
    yield
    forget_word_shares()


@pytest.fixture
def ficciones(alice: User) -> Book:
    return _book(alice, "Ficciones", "Borges, Jorge Luis")


@pytest.fixture
def sacks(alice: User) -> Book:
    return _book(alice, "The Man Who Mistook His Wife for a Hat", "Sacks, Oliver")


@pytest.mark.django_db
class FoldingTests:
    def test_it_ignores_accents_and_case_both_ways(self, alice: User, ficciones: Book) -> None:
        _highlight(alice, ficciones, "La liquidación del Ärger llegó en otoño.")
        for query in ["liquidacion", "LIQUIDACIÓN", "Ärger", "arger", "ARGER otono"]:
            assert _texts(alice, query, mode="keyword") == [
                "La liquidación del Ärger llegó en otoño."
            ], query

    def test_it_finds_words_of_the_note_the_title_and_the_author(
        self, alice: User, ficciones: Book
    ) -> None:
        _highlight(alice, ficciones, "He remembered every leaf.", note="Memoria total")
        for query in ["memoria", "ficciones", "borges leaf"]:
            assert _texts(alice, query, mode="keyword") == ["He remembered every leaf."], query

    def test_it_marks_the_folded_words_of_the_query(self, alice: User, ficciones: Book) -> None:
        _highlight(alice, ficciones, "Ärger und Liquidación")
        found = search(alice, 'ÄRGER "liquidación" -zebra', mode="keyword")
        assert found.words == frozenset({"arger", "liquidacion"})
        assert found.results[0].marked_words == found.words


@pytest.mark.django_db
class KeywordPassTests:
    def test_it_prefers_highlights_with_every_word(self, alice: User, ficciones: Book) -> None:
        _highlight(alice, ficciones, "Memory is a palace with many rooms.")
        _highlight(alice, ficciones, "Memory fades.")
        _highlight(alice, ficciones, "The palace was cold.")
        found = search(alice, "memory palace", mode="keyword")
        assert found.keyword_pass == "all"
        assert [r.highlight.text for r in found.results] == ["Memory is a palace with many rooms."]

    def test_it_falls_back_to_any_word_when_none_has_all(
        self, alice: User, ficciones: Book
    ) -> None:
        _highlight(alice, ficciones, "Memory fades.")
        _highlight(alice, ficciones, "The palace was cold.")
        _highlight(alice, ficciones, "Gardening in March.")
        found = search(alice, "memory palace library", mode="keyword")
        assert found.keyword_pass == "any"
        assert sorted(r.highlight.text for r in found.results) == [
            "Memory fades.",
            "The palace was cold.",
        ]

    def test_the_fallback_ranks_rare_words_above_common_ones(
        self, alice: User, ficciones: Book
    ) -> None:
        for number in range(6):
            _highlight(alice, ficciones, f"The river number {number} was cold.")
        _highlight(alice, ficciones, "A cartographer drew it.")
        found = search(alice, "the cartographer sleeps", mode="keyword")
        assert found.keyword_pass == "any"
        assert found.results[0].highlight.text == "A cartographer drew it."
        assert found.total == 7

    def test_the_fallback_does_not_read_words_most_highlights_have(
        self, alice: User, ficciones: Book
    ) -> None:
        rows = [Highlight(reader=alice, book=ficciones, text=f"The river {n}.") for n in range(300)]
        rows.append(Highlight(reader=alice, book=ficciones, text="A cartographer drew the map."))
        for number, row in enumerate(rows):
            row.dedupe_key = str(number)
            row.refresh_search_text()
        Highlight.objects.bulk_create(rows)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE books_highlight")
        forget_word_shares()
        assert word_shares()["the"] > COMMON_WORD_SHARE
        found = search(alice, "the cartographer sleeps", mode="keyword")
        assert found.keyword_pass == "any"
        assert [r.highlight.text for r in found.results] == ["A cartographer drew the map."]
        # A query of common words only still finds them.
        assert search(alice, "the sleeps", mode="keyword").total == DEPTH

    def test_it_matches_a_quoted_phrase_in_order_only(self, alice: User, sacks: Book) -> None:
        _highlight(alice, sacks, "We each have an inner narrative.")
        _highlight(alice, sacks, "The narrative is inner and silent.")
        assert _texts(alice, '"inner narrative"', mode="keyword") == [
            "We each have an inner narrative."
        ]
        assert len(_texts(alice, "inner narrative", mode="keyword")) == 2

    def test_it_leaves_out_excluded_words_in_both_passes(
        self, alice: User, ficciones: Book
    ) -> None:
        _highlight(alice, ficciones, "Memory is a palace.")
        _highlight(alice, ficciones, "Memory is a river.")
        _highlight(alice, ficciones, "A river of sand.")
        assert _texts(alice, "memory -palace", mode="keyword") == ["Memory is a river."]
        # No highlight has both words, so the any-word pass runs, still without "palace".
        found = search(alice, 'memory sand -"a palace"', mode="keyword")
        assert found.keyword_pass == "any"
        assert sorted(r.highlight.text for r in found.results) == [
            "A river of sand.",
            "Memory is a river.",
        ]

    def test_it_understands_or(self, alice: User, ficciones: Book) -> None:
        _highlight(alice, ficciones, "Memory is a palace.")
        _highlight(alice, ficciones, "A river of sand.")
        _highlight(alice, ficciones, "Gardening in March.")
        found = search(alice, "palace or sand", mode="keyword")
        assert found.keyword_pass == "all"
        assert sorted(r.highlight.text for r in found.results) == [
            "A river of sand.",
            "Memory is a palace.",
        ]

    def test_an_empty_query_finds_nothing(self, alice: User, ficciones: Book) -> None:
        _highlight(alice, ficciones, "Memory is a palace.")
        for query in ["", "   ", "-palace", '-"a palace"', "!!", "or"]:
            found = search(alice, query)
            assert found.results == [], query
            assert found.mode_used == "", query

    def test_it_reads_the_gin_index(self, alice: User, ficciones: Book) -> None:
        rows = [Highlight(reader=alice, book=ficciones, text=f"River {n}") for n in range(2000)]
        rows.append(Highlight(reader=alice, book=ficciones, text="The cartographer's palace"))
        for number, row in enumerate(rows):
            row.dedupe_key = str(number)
            row.refresh_search_text()
        Highlight.objects.bulk_create(rows)
        library = _library(alice, SearchFilters())
        sql, params = keyword_candidates_sql(library, ["palace"], limit=10)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE books_highlight")
            cursor.execute(f"EXPLAIN {sql}", params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "Bitmap Index Scan on highlight_search_gin" in plan


class ParseQueryTests:
    def test_it_cuts_the_query_into_words_phrases_and_exclusions(self) -> None:
        parsed = parse_query('Memoria "Inner Narrative" -palace -"the end" or río')
        assert parsed.units == (
            ("memoria", ("memoria",)),
            ('"inner narrative"', ("inner", "narrative")),
            ("rio", ("rio",)),
        )
        assert parsed.exclusions == ("-palace", '-"the end"')
        assert parsed.words == frozenset({"memoria", "inner", "narrative", "rio"})


class FusionTests:
    def test_it_fuses_by_reciprocal_rank(self) -> None:
        # 3 is second by words and first by meaning; 1 is first by words only.
        fused = fuse([1, 3, 2], [Neighbour(3, 0.1), Neighbour(4, 0.2), Neighbour(2, 0.3)])
        assert fused[3].score == pytest.approx(1 / 62 + 1 / 61)
        assert fused[2].score == pytest.approx(1 / 63 + 1 / 63)
        assert fused[1].score == pytest.approx(1 / 61)
        assert fused[4].score == pytest.approx(1 / 62)
        assert fused_order(fused) == [3, 2, 1, 4]
        assert (fused[3].keyword_rank, fused[3].meaning_rank, fused[3].distance) == (2, 1, 0.1)
        assert (fused[4].keyword_rank, fused[4].meaning_rank) == (None, 2)

    def test_it_fuses_only_the_top_hundred_of_each(self) -> None:
        fused = fuse(list(range(1, 151)), [])
        assert len(fused) == 100

    def test_the_recency_boost_has_a_fourteen_day_half_life(self) -> None:
        assert recency_factor(NOW, NOW) == pytest.approx(1.15)
        assert recency_factor(NOW - timedelta(days=14), NOW) == pytest.approx(1.075)
        assert recency_factor(NOW - timedelta(days=28), NOW) == pytest.approx(1.0375)
        assert recency_factor(NOW + timedelta(days=1), NOW) == pytest.approx(1.15)


@pytest.mark.django_db
class FilterTests:
    @pytest.fixture
    def shelf(self, alice: User, ficciones: Book, sacks: Book) -> dict[str, Highlight]:
        return {
            "funes": _highlight(
                alice,
                ficciones,
                "Funes remembered memory itself.",
                added_at=NOW - timedelta(days=40),
            ),
            "noted": _highlight(
                alice,
                ficciones,
                "Memory as a labyrinth.",
                note="see Sacks",
                added_at=NOW - timedelta(days=3),
            ),
            "sacks": _highlight(alice, sacks, "Memory is our life-story.", added_at=NOW),
        }

    def test_it_filters_by_book(self, alice: User, sacks: Book, shelf: object) -> None:
        assert _texts(alice, "memory", mode="keyword", book=sacks) == ["Memory is our life-story."]

    def test_it_refuses_another_readers_book(self, alice: User, bob: User) -> None:
        with pytest.raises(ValueError, match="reader's books"):
            search(alice, "memory", book=_book(bob, "Bob's"))

    def test_it_filters_by_author_in_either_name_order(self, alice: User, shelf: object) -> None:
        for author in ["Oliver Sacks", "sacks", "Sacks, Oliver"]:
            assert _texts(alice, "memory", mode="keyword", author=author) == [
                "Memory is our life-story."
            ], author

    def test_it_filters_by_date_added(self, alice: User, shelf: object) -> None:
        recent = _texts(
            alice, "memory", mode="keyword", added_from=(NOW - timedelta(days=7)).date()
        )
        assert sorted(recent) == ["Memory as a labyrinth.", "Memory is our life-story."]
        old = _texts(alice, "memory", mode="keyword", added_to=date(2025, 5, 1))
        assert old == ["Funes remembered memory itself."]
        window = _texts(
            alice,
            "memory",
            mode="keyword",
            added_from=date(2025, 5, 20),
            added_to=date(2025, 5, 31),
        )
        assert window == ["Memory as a labyrinth."]

    def test_it_filters_by_note(self, alice: User, shelf: object) -> None:
        assert _texts(alice, "memory", mode="keyword", has_note=True) == ["Memory as a labyrinth."]
        assert len(_texts(alice, "memory", mode="keyword", has_note=False)) == 2

    def test_the_recency_boost_lifts_recent_highlights(self, alice: User, ficciones: Book) -> None:
        recent = _highlight(alice, ficciones, "Memory fades.", added_at=NOW - timedelta(days=1))
        # Created later, so it wins the tie without the boost.
        old = _highlight(alice, ficciones, "Memory fades.", added_at=NOW - timedelta(days=400))
        plain = search(alice, "memory", mode="keyword")
        boosted = search(alice, "memory", mode="keyword", recency_boost=True, clock=lambda: NOW)
        assert [r.highlight.pk for r in plain.results] == [old.pk, recent.pk]
        assert [r.highlight.pk for r in boosted.results] == [recent.pk, old.pk]
        assert boosted.results[0].score == pytest.approx(
            plain.results[1].score * recency_factor(NOW - timedelta(days=1), NOW)
        )


@pytest.mark.django_db
class PrivacyTests:
    def test_it_never_returns_another_readers_highlights(
        self, alice: User, bob: User, ficciones: Book
    ) -> None:
        mine = _highlight(alice, ficciones, "Memory is a palace.")
        theirs = _highlight(bob, _book(bob, "Bob's book"), "Memory is a palace.")
        highlights_embed(ids=[mine.pk, theirs.pk])
        for mode in ["auto", "keyword", "meaning"]:
            found = search(alice, "memory palace", mode=mode)
            assert [r.highlight.pk for r in found.results] == [mine.pk], mode
        assert [r.highlight.pk for r in search(bob, "memory").results] == [theirs.pk]

    def test_it_never_returns_deleted_highlights(self, alice: User, ficciones: Book) -> None:
        gone = _highlight(alice, ficciones, "Memory is a palace.")
        highlights_embed(ids=[gone.pk])
        Highlight.objects.filter(pk=gone.pk).update(deleted_at=timezone.now())
        for mode in ["auto", "keyword", "meaning"]:
            assert search(alice, "memory palace", mode=mode).results == [], mode


@pytest.mark.django_db
class MeaningTests:
    @pytest.fixture
    def embedded(self, alice: User, ficciones: Book, sacks: Book) -> dict[str, Highlight]:
        shelf = {
            "names": _highlight(
                alice, sacks, "Every night I lose the names of the people I met that day."
            ),
            "roses": _highlight(alice, ficciones, "Prune the roses in early March."),
            "market": _highlight(alice, ficciones, "The stock market fell sharply on Tuesday."),
            "forget": _highlight(alice, ficciones, "To think is to forget differences."),
        }
        highlights_embed(ids=[h.pk for h in shelf.values()])
        return shelf

    def test_it_finds_a_highlight_that_shares_only_the_idea(
        self, alice: User, embedded: dict[str, Highlight]
    ) -> None:
        found = search(alice, "why can't I remember who I met", mode="meaning")
        assert found.mode_used == "meaning"
        assert found.results[0].highlight == embedded["names"]
        assert found.results[0].halves == ("meaning",)
        # No word made the match, so none is marked (not even the "i" and "met" it shares).
        assert found.results[0].marked_words == frozenset()
        assert 0 <= (found.results[0].distance or 2) < 0.75

    def test_auto_fuses_both_halves_and_ranks_the_double_match_first(
        self, alice: User, embedded: dict[str, Highlight]
    ) -> None:
        found = search(alice, "forget differences")
        assert found.mode_used == "hybrid"
        assert found.keyword_pass == "all"
        top = found.results[0]
        assert top.highlight == embedded["forget"]
        assert top.halves == ("keyword", "meaning")
        assert top.score == pytest.approx(1 / 61 + 1 / 61)
        assert [r.score for r in found.results] == sorted(
            (r.score for r in found.results), reverse=True
        )

    def test_a_hybrid_search_never_ranks_highlights_with_only_some_words(
        self, alice: User, embedded: dict[str, Highlight]
    ) -> None:
        # Not embedded, so only its word "names" could find it.
        rivers = _highlight(alice, embedded["roses"].book, "The names of rivers.")
        hybrid = search(alice, "forget names")
        assert hybrid.mode_used == "hybrid"
        assert hybrid.keyword_pass == ""  # no highlight has both words: no fusion
        assert rivers not in [r.highlight for r in hybrid.results]
        assert all(r.halves == ("meaning",) for r in hybrid.results)
        words = search(alice, "forget names", mode="keyword")
        assert words.keyword_pass == "any"
        assert rivers in [r.highlight for r in words.results]

    def test_it_leaves_out_unrelated_highlights(
        self, alice: User, embedded: dict[str, Highlight]
    ) -> None:
        found = search(alice, "why we forget", mode="meaning")
        assert embedded["market"] not in [r.highlight for r in found.results]

    def test_it_caches_the_query_vector(self, alice: User, embedded: dict[str, Highlight]) -> None:
        from books.search import search as search_module

        clear_query_cache()
        search(alice, "why we forget", mode="meaning")
        search(alice, "why we forget", mode="meaning", page=2)
        assert len(search_module._query_vectors) == 1

    def test_it_excludes_given_highlights_before_ranking(
        self, alice: User, embedded: dict[str, Highlight]
    ) -> None:
        other = _highlight(alice, embedded["forget"].book, "Differences matter.")
        found = search(
            alice, "forget differences", mode="keyword", exclude_ids=[embedded["forget"].pk]
        )
        assert embedded["forget"] not in [r.highlight for r in found.results]
        # Only the excluded highlight has both words: the any-word pass runs.
        assert found.keyword_pass == "any"
        assert other in [r.highlight for r in found.results]

    def test_it_pages_through_the_fused_list(
        self, alice: User, embedded: dict[str, Highlight]
    ) -> None:
        for number in range(5):
            _highlight(alice, embedded["roses"].book, f"The river {number} keeps its counsel.")
        whole = search(alice, "river", mode="keyword", limit=100)
        pages = [search(alice, "river", mode="keyword", limit=2, page=n) for n in (1, 2, 3)]
        assert [r.highlight for p in pages for r in p.results] == [
            r.highlight for r in whole.results
        ]
        assert [p.page for p in pages] == [1, 2, 3]
        assert (pages[0].has_previous, pages[0].has_next) == (False, True)
        assert (pages[2].has_previous, pages[2].has_next) == (True, False)
        assert pages[1].offset == 2
        assert pages[2].pages == 3


@pytest.mark.django_db
class ModelUnavailableTests:
    def test_it_answers_with_keyword_results_and_a_notice(
        self, alice: User, ficciones: Book, settings: object, tmp_path: Path
    ) -> None:
        _highlight(alice, ficciones, "Memory is a palace.")
        settings.EXOGRAM_EMBEDDING_MODEL_DIR = tmp_path  # type: ignore[attr-defined]
        for mode in ["auto", "meaning"]:
            found = search(alice, "memory", mode=mode)
            assert found.mode_used == "keyword"
            assert found.notice == NOTICE_MODEL_UNAVAILABLE
            assert [r.highlight.text for r in found.results] == ["Memory is a palace."]
        assert search(alice, "memory", mode="keyword").notice == ""
