"""The meaning half on real PostgreSQL + pgvector, with the real model's query vectors."""

from uuid import uuid4

import numpy as np
import numpy.typing as npt
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from books.connections.neighbours import EXACT_SCAN_MAX
from books.embedding.encoder import get_encoder, get_encoders
from books.importing.clippings import normalize_author
from books.models import Book, Highlight
from books.search.meaning import FILTERED_EXACT_SCAN_MAX, in_reading_case, reads_as_fragments
from books.search.search import search

Vector = npt.NDArray[np.float64]


def _unit(vector: Vector) -> Vector:
    unit: Vector = vector / np.linalg.norm(vector)
    return unit


def _embedded(reader: User, book: Book, text: str, vector: Vector, model_id: str) -> Highlight:
    return Highlight(
        reader=reader, book=book, text=text, dedupe_key=uuid4().hex,
        embedding=vector.tolist(), embedding_model=model_id,
        embedding_status=Highlight.EmbeddingStatus.DONE,
    )  # fmt: skip


def _library(reader: User, query: str) -> Book:
    """A book past the unfiltered exact scan's reach, whose first five highlights sit near
    `query` at growing distances and the rest anywhere on the sphere; and another book
    holding the same five near highlights, which a filter must leave out."""
    encoder = get_encoder()
    wanted = _unit(np.asarray(encoder.encode_one(query), dtype=np.float64))
    size = EXACT_SCAN_MAX + 500
    assert size <= FILTERED_EXACT_SCAN_MAX
    book = Book.objects.create(
        reader=reader, title="Harbour logs", authors="Ada Quennell",
        authors_normalized=normalize_author("Ada Quennell"), key="harbour logs",
    )  # fmt: skip
    other = Book.objects.create(reader=reader, title="Other", key="other")
    rng = np.random.default_rng(3)
    near = [_unit(wanted + step / 40 * _unit(rng.normal(size=384))) for step in range(1, 6)]
    far = [_unit(vector) for vector in rng.normal(size=(size - len(near), 384))]
    rows = [
        _embedded(reader, book, f"Log entry {n}", vector, get_encoders().model_id)
        for n, vector in enumerate([*near, *far])
    ]
    rows += [
        _embedded(reader, other, f"Elsewhere {n}", vector, get_encoders().model_id)
        for n, vector in enumerate(near)
    ]
    Highlight.objects.bulk_create(rows)
    return book


# Slow: a library past the exact scan's reach, built into the HNSW index row by row.
@pytest.mark.slow
@pytest.mark.django_db
class FilteredMeaningTests:
    """A filtered library past the unfiltered exact scan's reach is still sorted exactly: a
    filtered HNSW scan walks past every other book's rows to find its own."""

    def test_it_sorts_a_filtered_library_exactly(self, alice: User) -> None:
        query = "the lighthouse keeper counted the ships every night"
        book = _library(alice, query)
        with CaptureQueriesContext(connection) as queries:
            found = search(alice, query, mode="meaning", book=book)
        assert [r.highlight.text for r in found.results] == [f"Log entry {n}" for n in range(5)]
        assert not any("hnsw" in q["sql"] for q in queries.captured_queries)

    def test_it_sorts_the_books_a_query_names_exactly(self, alice: User) -> None:
        query = "what did Ada Quennell say about the ships the keeper counted every night"
        _library(alice, query)
        with CaptureQueriesContext(connection) as queries:
            found = search(alice, query, mode="meaning")
        assert found.named == ("Harbour logs",)
        named = [r.highlight.text for r in found.results[: found.named_first]]
        assert named[:5] == [f"Log entry {n}" for n in range(5)]
        # Only the searches of the whole library (by e5's vector and by the theme model's)
        # walk an HNSW graph; the named books are sorted exactly.
        walks = [q["sql"] for q in queries.captured_queries if "iterative_scan" in q["sql"]]
        assert len(walks) == 2
        assert sum("theme_embedding" in sql for sql in walks) == 1


class FragmentsTests:
    def test_random_letters_read_as_fragments_and_words_do_not(self) -> None:
        encoder = get_encoders().main
        for query in ["xyzzyqwrtplk", "bcdfg hjklm", "qwertyuiop", "zxcvbnm"]:
            assert reads_as_fragments(encoder, query), query
        for query in [
            "xyzzyqwrtplk friendship",  # a word among the letters: the model reads it
            "friendship", "la muerte", "Freiheit", "happines", "memory and forgetting",
            "fear", "脳を休ませる", "Достоевский", "!!!", "ok",
        ]:  # fmt: skip
            assert not reads_as_fragments(encoder, query), query

    # Short words of the readers' languages that e5 cuts into two or three pieces, as it
    # cuts keyboard mash: "swan" is "▁s" + "wan", "hjkl" "▁hj" + "kl".
    @pytest.mark.parametrize(
        ("query", "letters"),
        [
            ("swan", False), ("envy", False), ("luto", False), ("cisne", False),
            ("étre", False), ("ennui", False), ("Zorn", False), ("mágoa", False),
            ("deuil", False), ("hymn", False), ("dogs", False), ("knee", False),
            ("asdf", True), ("hjkl", True), ("xkcdq", True), ("jjjj", True),
            ("zxcvbn", True), ("xqzv", True), ("asdfgh", True), ("ghjk", True),
            ("asdf ghjk", True), ("luto hjkl", False),
        ],
    )  # fmt: skip
    def test_short_words_are_words_and_keyboard_mash_is_letters(
        self, query: str, letters: bool
    ) -> None:
        assert reads_as_fragments(get_encoders().main, query) is letters


class ReadingCaseTests:
    def test_a_word_typed_in_capitals_is_read_in_lower_case(self) -> None:
        encoder = get_encoders().main
        assert reads_as_fragments(encoder, "LÍDER")  # three pieces to e5: letters, not a word
        assert in_reading_case(encoder, "LÍDER") == "líder"
        assert in_reading_case(encoder, "el LÍDER sabe ESCUCHAR") == "el líder sabe escuchar"
        assert not reads_as_fragments(encoder, in_reading_case(encoder, "HAPPINESS"))

    def test_an_acronym_the_model_knows_and_a_capitalised_word_are_left_as_typed(self) -> None:
        encoder = get_encoders().main
        assert in_reading_case(encoder, "la NASA y la UNESCO") == "la NASA y la UNESCO"
        assert in_reading_case(encoder, "Líder del equipo") == "Líder del equipo"


@pytest.mark.django_db
class CapitalsSearchTests:
    def test_a_query_in_capitals_finds_what_its_lower_case_finds_by_meaning(
        self, alice: User
    ) -> None:
        from books.embedding.pipeline import highlights_embed

        book = Book.objects.create(reader=alice, title="Equipos", key="equipos")
        rows = []
        for text in ["Un buen jefe escucha antes de mandar.", "Prune the roses in March."]:
            highlight = Highlight(reader=alice, book=book, text=text, dedupe_key=uuid4().hex)
            highlight.refresh_search_text()
            highlight.save()
            rows.append(highlight)
        highlights_embed(ids=[h.pk for h in rows])
        shouted = search(alice, "LÍDER", mode="meaning")
        assert shouted.notice == ""
        assert [r.highlight for r in shouted.results] == [
            r.highlight for r in search(alice, "líder", mode="meaning").results
        ]


@pytest.mark.django_db
class NonsenseQueryTests:
    def test_a_query_of_random_letters_gets_no_results_by_meaning(self, alice: User) -> None:
        from books.embedding.pipeline import highlights_embed

        book = Book.objects.create(reader=alice, title="Sounds", key="sounds")
        rows = []
        # e5 puts "xyzzyqwrtplk" within its floor of short passages like these (0.08-0.14).
        for text in [
            "Kwrt zzz qrtz.",
            "Plop, plop, plop.",
            "Zzz, said the cat.",
            "Prune the roses.",
        ]:
            highlight = Highlight(reader=alice, book=book, text=text, dedupe_key=uuid4().hex)
            highlight.refresh_search_text()
            highlight.save()
            rows.append(highlight)
        highlights_embed(ids=[h.pk for h in rows])
        for mode in ["auto", "meaning"]:
            found = search(alice, "xyzzyqwrtplk", mode=mode)
            assert found.total == 0, mode
            assert found.notice == (
                "The model reads “xyzzyqwrtplk” as letters, not words: searched by words only."
            )
        # A word the model reads still finds its passages by meaning.
        assert search(alice, "snoring cat", mode="meaning").total


@pytest.mark.django_db
class ScopedMeaningTests:
    """Within a book the reader chose, its best passages on the query, in any language."""

    ART = [
        "Don't be afraid of making mistakes; the fear of them is what keeps a painter timid.",
        "Fear is the great enemy of the student: it makes him paint what he thinks he should.",
        "Paint the thing you love with all the energy you have.",
        "Henri wrote the word gasolina on the margin of a sketch.",
    ]
    ELSEWHERE = ["Tenía miedo de la oscuridad desde niño.", "The garden was full of roses in June."]

    def _library(self, reader: User) -> Book:
        from books.embedding.pipeline import highlights_embed

        art = Book.objects.create(reader=reader, title="The Art Spirit", key="the art spirit")
        other = Book.objects.create(reader=reader, title="Varios", key="varios")
        rows = []
        for book, texts in [(art, self.ART), (other, self.ELSEWHERE)]:
            for text in texts:
                highlight = Highlight(reader=reader, book=book, text=text, dedupe_key=uuid4().hex)
                highlight.refresh_search_text()
                highlight.refresh_language()
                highlight.save()
                rows.append(highlight)
        highlights_embed(ids=[h.pk for h in rows])
        return art

    def test_a_spanish_query_finds_a_books_english_passages_on_it(self, alice: User) -> None:
        art = self._library(alice)
        # e5 puts them past its floor of 0.15 (0.158, 0.164), the Spanish passage elsewhere
        # at 0.109: the whole library finds only that one.
        assert [r.highlight.text for r in search(alice, "miedo", mode="meaning").results] == [
            self.ELSEWHERE[0]
        ]
        for query in ['libro:"the art spirit" miedo', 'book:"The Art Spirit" el miedo']:
            for mode in ["meaning", "auto"]:
                found = search(alice, query, mode=mode)
                texts = [r.highlight.text for r in found.results]
                assert set(texts[:2]) == set(self.ART[:2]), (query, mode)
                assert {r.highlight.book_id for r in found.results} == {art.pk}
        # A book's own search narrows the same way.
        found = search(alice, "miedo", mode="meaning", book=art)
        assert set(r.highlight.text for r in found.results[:2]) == set(self.ART[:2])

    def test_what_is_within_the_floor_is_all_that_is_shown(self, alice: User) -> None:
        self._library(alice)
        found = search(alice, 'libro:"the art spirit" fear', mode="meaning")
        assert {r.highlight.text for r in found.results} == set(self.ART[:2])

    def test_a_word_the_book_has_is_found_by_words_alone(self, alice: User) -> None:
        # "margin" is 0.184 from its passage by meaning, past the floor: the words find it,
        # and no passage of the book is added beside it as loosely related.
        self._library(alice)
        found = search(alice, 'libro:"the art spirit" margin')
        assert [r.highlight.text for r in found.results] == [self.ART[3]]
        assert found.loose == 0

    def test_a_word_of_no_topic_of_the_book_finds_nothing(self, alice: User) -> None:
        # "June" is in a passage of another book (0.113 from it); the art book's are 0.21
        # from it, "tractor"'s 0.22: nothing, not every passage of the book.
        self._library(alice)
        for query in ['libro:"the art spirit" June', 'libro:"the art spirit" tractor']:
            for mode in ["auto", "meaning"]:
                found = search(alice, query, mode=mode)
                assert found.total == 0, (query, mode, [r.highlight.text for r in found.results])
        assert search(alice, "June").total == 1  # the whole library has it
