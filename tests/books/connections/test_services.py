"""Writing judged pairs and reading them, on real pgvector with vectors built to known
distances (no model needed to make them; the pinned judge weighs them). Each highlight's
theme vector is its vector seen through one fixed projection (tests.theme_vectors)."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection as db
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import User
from books.connections.judge import NEIGHBOURS, RELATED, judge_version
from books.connections.neighbours import nearest_highlights
from books.connections.selectors import (
    connected_books,
    connections_for,
    library_connections,
    nearest_in_library,
)
from books.connections.services import (
    connections_forget,
    connections_rejudge,
    current_judge,
    highlights_connect,
    same_author,
    stale_connections,
)
from books.importing.identity import normalize_author
from books.models import Book, Connection, Highlight
from exogram.counting import counted
from tests.theme_vectors import theme_of

MODEL = "test-model@00000000"
RNG = np.random.default_rng(42)


def _unit(vector: np.ndarray) -> list[float]:
    return (vector / np.linalg.norm(vector)).astype(np.float32).tolist()


def _near(base: np.ndarray, noise: float) -> list[float]:
    return _unit(base + RNG.normal(scale=noise, size=384))


def _book(reader: User, title: str, authors: str = "") -> Book:
    return Book.objects.create(
        reader=reader, title=title, authors=authors, authors_normalized=normalize_author(authors),
        key=f"{title}|{authors}".casefold(),
    )  # fmt: skip


def _highlight(reader: User, book: Book, text: str, vector: list[float]) -> Highlight:
    return Highlight.objects.create(
        reader=reader, book=book, text=text, dedupe_key=f"{book.pk}:{text}",
        embedding=vector, theme_embedding=theme_of(vector), embedding_model=MODEL,
        embedding_status=Highlight.EmbeddingStatus.DONE,
    )  # fmt: skip


@pytest.fixture
def memory() -> np.ndarray:
    return RNG.normal(size=384)


@pytest.fixture
def library(alice: User, memory: np.ndarray) -> dict[str, Highlight]:
    ficciones = _book(alice, "Ficciones", "Borges, Jorge Luis")
    aleph = _book(alice, "El Aleph", "Borges, Jorge Luis")
    sacks = _book(alice, "The Man Who Mistook His Wife for a Hat", "Sacks, Oliver")
    gardening = _book(alice, "Gardening", "Somebody Else")
    rows = {
        "funes": _highlight(alice, ficciones, "Funes remembered everything he ever saw.",
                            _near(memory, 0.02)),
        "funes2": _highlight(alice, ficciones, "Same book, the same memory again.",
                             _near(memory, 0.02)),
        "aleph": _highlight(alice, aleph, "The Aleph holds all places and every memory.",
                            _near(memory, 0.03)),
        "sacks": _highlight(alice, sacks, "Memory is our life-story, remembered every day.",
                            _near(memory, 0.04)),
        "roses": _highlight(alice, gardening, "Prune roses in March.", _unit(RNG.normal(size=384))),
    }  # fmt: skip
    highlights_connect(ids=[h.pk for h in rows.values()])
    return rows


def _verdicts() -> list[tuple[int, int, float, float, int, int]]:
    return list(
        Connection.objects.order_by("highlight_a_id", "highlight_b_id").values_list(
            "highlight_a_id", "highlight_b_id", "probability", "same_probability", "strength",
            "judge_version",
        )
    )  # fmt: skip


@pytest.mark.django_db
class HighlightsConnectTests:
    def test_it_stores_each_pair_once_with_the_judges_verdict(
        self, library: dict[str, Highlight]
    ) -> None:
        rows = _verdicts()
        assert rows
        assert len({(a, b) for a, b, *_ in rows}) == len(rows)
        for a, b, related, same, strength, version in rows:
            assert a < b
            assert 0 <= same <= related <= 1
            assert strength == current_judge().strength_of(related, same)
            assert version == judge_version()

    def test_the_passages_on_one_theme_connect_across_books(
        self, library: dict[str, Highlight]
    ) -> None:
        found = connections_for(library["funes"])
        texts = [c.highlight.text for c in found]
        # Sacks before Borges's own El Aleph: other authors first.
        assert texts[0] == "Memory is our life-story, remembered every day."
        assert "The Aleph holds all places and every memory." in texts
        assert [c.same_author for c in found] == sorted(c.same_author for c in found)
        assert "Same book, the same memory again." not in texts  # never its own book

    def test_it_never_connects_an_unrelated_passage(self, library: dict[str, Highlight]) -> None:
        assert connections_for(library["roses"]) == []
        roses = library["roses"].pk
        assert not Connection.objects.filter(strength__gte=RELATED, highlight_a_id=roses).exists()
        assert not Connection.objects.filter(strength__gte=RELATED, highlight_b_id=roses)

    def test_it_is_idempotent(self, library: dict[str, Highlight]) -> None:
        before = _verdicts()
        assert highlights_connect(ids=[h.pk for h in library.values()]) == 0
        assert _verdicts() == before

    def test_it_can_leave_out_the_same_author(self, library: dict[str, Highlight]) -> None:
        found = connections_for(library["funes"], other_authors_only=True)
        assert [c.highlight.text for c in found] == [
            "Memory is our life-story, remembered every day."
        ]

    def test_it_never_crosses_readers(
        self, library: dict[str, Highlight], bob: User, memory: np.ndarray
    ) -> None:
        bobs = _highlight(bob, _book(bob, "Bob's book"), "Bob on memory.", _near(memory, 0.01))
        assert highlights_connect(ids=[bobs.pk]) == 0
        assert all(c.highlight.reader_id != bob.pk for c in connections_for(library["funes"]))
        assert not Connection.objects.filter(reader=bob).exists()

    def test_it_hides_a_deleted_highlight_at_once(self, library: dict[str, Highlight]) -> None:
        library["aleph"].deleted_at = timezone.now()
        library["aleph"].save(update_fields=["deleted_at"])
        texts = [c.highlight.text for c in connections_for(library["funes"])]
        assert texts == ["Memory is our life-story, remembered every day."]
        assert all(
            library["aleph"].pk not in (p.highlight_a_id, p.highlight_b_id)
            for p in library_connections(library["funes"].reader)
        )

    def test_it_forgets_and_recomputes_after_a_new_vector(
        self, library: dict[str, Highlight]
    ) -> None:
        sacks = library["sacks"]
        connections_forget(ids=[sacks.pk])
        assert connections_for(sacks) == []
        vector = _unit(RNG.normal(size=384))
        Highlight.objects.filter(pk=sacks.pk).update(
            embedding=vector, theme_embedding=theme_of(vector)
        )
        highlights_connect(ids=[sacks.pk])
        assert connections_for(sacks) == []  # its new vector is about something else

    def test_a_passage_the_theme_model_finds_is_judged_too(
        self, alice: User, memory: np.ndarray
    ) -> None:
        asking = _highlight(alice, _book(alice, "Ficciones"), "Funes.", _near(memory, 0.01))
        # More passages than a passage's candidates by one vector, nearer by the main model
        # but about something else by the theme model...
        for i in range(NEIGHBOURS + 1):
            decoy = _highlight(
                alice, _book(alice, f"Decoy {i}"), f"Decoy {i}.", _near(memory, 0.02)
            )
            decoy.theme_embedding = theme_of(RNG.normal(size=384))
            decoy.save(update_fields=["theme_embedding"])
        # ...and one the main model puts behind them all, the theme model beside it.
        kin = _highlight(alice, _book(alice, "Sacks"), "Memory.", _near(memory, 0.035))
        kin.theme_embedding = _unit(np.asarray(theme_of(asking.embedding)) + 0.001)
        kin.save(update_fields=["theme_embedding"])
        by_main = nearest_highlights(
            reader_id=alice.pk, vector=asking.embedding, model_id=MODEL, limit=NEIGHBOURS,
            exclude_book_id=asking.book_id,
        )  # fmt: skip
        assert kin.pk not in {n.highlight_id for n in by_main}

        highlights_connect(ids=[asking.pk])

        low, high = sorted((asking.pk, kin.pk))
        pair = Connection.objects.get(highlight_a_id=low, highlight_b_id=high)
        assert pair.probability >= current_judge().related_band

    def test_it_ranks_the_books_a_book_connects_to(self, library: dict[str, Highlight]) -> None:
        ranked = connected_books(library["funes"].book)
        assert {c.book.title for c in ranked} == {
            "El Aleph",
            "The Man Who Mistook His Wife for a Hat",
        }
        assert all(c.connections >= 1 and 0.5 <= c.best_probability <= 1 for c in ranked)


@pytest.mark.django_db
class StoredVerdictReadTests:
    """Reads filter on the stored strength: what a pair's distance says is never re-graded."""

    def test_a_close_pair_the_judge_called_nearby_is_no_connection(
        self, library: dict[str, Highlight]
    ) -> None:
        sacks = library["sacks"]
        Connection.objects.filter(highlight_b=sacks).update(strength=Connection.Strength.NEARBY)
        Connection.objects.filter(highlight_a=sacks).update(strength=Connection.Strength.NEARBY)
        assert all(c.highlight != sacks for c in connections_for(library["funes"]))
        assert all(
            sacks.pk not in (p.highlight_a_id, p.highlight_b_id)
            for p in library_connections(sacks.reader)
        )

    def test_one_passage_quoted_in_two_books_comes_after_the_other_pairs(
        self, library: dict[str, Highlight], memory: np.ndarray
    ) -> None:
        reader = library["funes"].reader
        quoted = _highlight(
            reader, _book(reader, "An Anthology", "Editor, An"),
            "Funes remembered everything he ever saw!", _near(memory, 0.02),
        )  # fmt: skip
        highlights_connect(ids=[quoted.pk])
        low, high = sorted((library["funes"].pk, quoted.pk))
        copy = Connection.objects.get(highlight_a_id=low, highlight_b_id=high)
        assert copy.wording_shared == 1.0  # the same words, punctuation aside
        # However probable, it is listed after the pairs that say something new.
        Connection.objects.filter(pk=copy.pk).update(probability=1.0, same_probability=1.0)
        pairs = list(library_connections(reader))
        across = [p for p in pairs if not p.same_author]
        assert across[-1].pk == copy.pk
        assert across[-1].near_copy
        assert not any(p.near_copy for p in across[:-1])
        # Stored before its wording was measured: a pair like any other until re-judged.
        Connection.objects.filter(pk=copy.pk).update(wording_shared=None)
        assert next(p for p in library_connections(reader) if not p.same_author).pk == copy.pk

    def test_a_far_pair_the_judge_called_the_same_idea_is_one(
        self, library: dict[str, Highlight]
    ) -> None:
        funes, roses = library["funes"], library["roses"]
        low, high = sorted((funes.pk, roses.pk))
        Connection.objects.update_or_create(
            highlight_a_id=low, highlight_b_id=high,
            defaults={"reader": funes.reader, "distance": 0.9, "probability": 0.97,
                      "same_probability": 0.9, "strength": Connection.Strength.SAME_IDEA,
                      "judge_version": judge_version(), "embedding_model": MODEL},
        )  # fmt: skip
        found = {c.highlight.pk: c for c in connections_for(funes)}
        assert str(found[roses.pk].strength) == "same idea"
        assert found[roses.pk].probability == 0.97
        pairs = {(p.highlight_a_id, p.highlight_b_id): p for p in library_connections(funes.reader)}
        assert pairs[(low, high)].same_idea

    def test_the_library_read_is_two_queries_whatever_the_pairs(
        self, library: dict[str, Highlight], memory: np.ndarray
    ) -> None:
        reader = library["funes"].reader
        with CaptureQueriesContext(db) as few:
            list(library_connections(reader)[:25])
        more = _book(reader, "More on memory", "Another, Author")
        added = [_highlight(reader, more, f"memory {i} of many", _near(memory, 0.03))
                 for i in range(6)]  # fmt: skip
        highlights_connect(ids=[h.pk for h in added])
        with CaptureQueriesContext(db) as many:
            list(library_connections(reader)[:25])
        # The reader's books by one author (compared in Python, as the import identifies
        # authors), then the pairs.
        assert len(few) == len(many) == 2
        sql = many.captured_queries[1]["sql"]
        # An indexed filter on the stored strength; the distance grades nothing.
        assert '"books_connection"."strength" >= 1' in sql
        assert '"books_connection"."distance"' not in sql.split("FROM")[1]


@pytest.mark.django_db
class RejudgeTests:
    def test_a_new_judge_version_rejudges_every_stale_pair_idempotently(
        self, library: dict[str, Highlight]
    ) -> None:
        before = _verdicts()
        Connection.objects.update(judge_version=0, probability=0.0, strength=0)
        assert stale_connections().count() == len(before)
        while connections_rejudge(batch=2):
            pass
        assert stale_connections().count() == 0
        assert _verdicts() == before
        # Once more: nothing left, nothing changed.
        assert connections_rejudge() == 0
        assert _verdicts() == before

    def test_a_pair_stored_before_its_wording_was_measured_is_measured_again(
        self, library: dict[str, Highlight]
    ) -> None:
        measured = dict(Connection.objects.values_list("pk", "wording_shared"))
        assert all(share is not None and 0 <= share <= 1 for share in measured.values())
        Connection.objects.update(wording_shared=None)
        assert stale_connections().count() == len(measured)
        while connections_rejudge(batch=2):
            pass
        assert dict(Connection.objects.values_list("pk", "wording_shared")) == measured

    def test_the_command_rejudges_here_or_counts(self, library: dict[str, Highlight]) -> None:
        Connection.objects.update(judge_version=0)
        out = StringIO()
        call_command("rejudge_connections", "--status", stdout=out)
        assert out.getvalue().startswith(counted(Connection.objects.count(), "stored pair"))
        call_command("rejudge_connections", "--now", stdout=StringIO())
        assert stale_connections().count() == 0

    def test_the_task_rejudges_in_the_worker_and_reports_what_is_left(
        self, library: dict[str, Highlight], settings: object
    ) -> None:
        from books.tasks import rejudge_connections

        Connection.objects.update(judge_version=0)
        settings.CELERY_TASK_ALWAYS_EAGER = True  # type: ignore[attr-defined]
        assert rejudge_connections.apply().get() == 0
        assert stale_connections().count() == 0


class SameAuthorTests:
    @pytest.mark.parametrize(
        ("a", "b", "same"),
        [
            ("Greger, Michael", "Michael Greger", True),
            # The shared corpus's own pair: How Not to Die and How Not to Diet.
            ("Michael Greger", "Michael Greger, M.D., FACLM", True),
            ("Séneca", "SENECA", True),
            ("J. K. Rowling", "Joanne Rowling", True),
            ("Richard P. Feynman; Robert B. Leighton", "Feynman, Richard", True),
            ("", "", False),
            ("Borges, Jorge Luis", "Oliver Sacks", False),
            ("Michael Greger", "Michael Pollan", False),
        ],
    )
    def test_it_compares_the_authors_as_the_import_identifies_them(
        self, a: str, b: str, same: bool
    ) -> None:
        assert same_author(normalize_author(a), normalize_author(b)) is same


@pytest.mark.django_db
class SameAuthorVariantsTests:
    """One author written two ways is one author on every page: never "other authors"."""

    @pytest.fixture
    def greger(self, alice: User, memory: np.ndarray) -> dict[str, Highlight]:
        die = _book(alice, "How Not to Die", "Michael Greger")
        diet = _book(alice, "How Not to Diet", "Michael Greger, M.D., FACLM")
        pollan = _book(alice, "In Defense of Food", "Pollan, Michael")
        rows = {
            "die": _highlight(alice, die, "Memory and diet: what we eat, we remember.",
                              _near(memory, 0.02)),
            "diet": _highlight(alice, diet, "What we eat shapes what we remember.",
                               _near(memory, 0.02)),
            "pollan": _highlight(alice, pollan, "Eat food, mostly plants, and remember it.",
                                 _near(memory, 0.03)),
        }  # fmt: skip
        highlights_connect(ids=[h.pk for h in rows.values()])
        return rows

    def test_a_same_author_pair_is_never_shown_as_other_authors(
        self, alice: User, greger: dict[str, Highlight]
    ) -> None:
        die, diet, pollan = greger["die"], greger["diet"], greger["pollan"]
        pairs = list(library_connections(alice))
        by_books = {
            frozenset((p.highlight_a.book_id, p.highlight_b.book_id)): p.same_author for p in pairs
        }
        assert by_books[frozenset((die.book_id, diet.book_id))] is True
        assert by_books[frozenset((die.book_id, pollan.book_id))] is False
        # Other authors first: the Greger pair comes last.
        assert [p.same_author for p in pairs] == [False, False, True]
        found = {c.highlight.pk: c.same_author for c in connections_for(die)}
        assert found == {diet.pk: True, pollan.pk: False}
        others = connections_for(die, other_authors_only=True)
        assert [c.highlight.pk for c in others] == [pollan.pk]
        nearest = {c.highlight.pk: c.same_author for c in nearest_in_library(die)}
        assert nearest[diet.pk] is True


@pytest.mark.django_db
class StrategyTests:
    def test_the_exact_scan_respects_the_filters(self, library: dict[str, Highlight]) -> None:
        funes = library["funes"]
        found = nearest_highlights(
            reader_id=funes.reader_id, vector=list(funes.embedding), model_id=MODEL,
            limit=10, max_distance=0.45, exclude_book_id=funes.book_id, strategy="exact",
        )  # fmt: skip
        assert {n.highlight_id for n in found} == {library["aleph"].pk, library["sacks"].pk}


@pytest.mark.django_db
class ConnectionsCommandTests:
    def test_it_prints_json(self, library: dict[str, Highlight]) -> None:
        out = StringIO()
        call_command("connections", str(library["sacks"].code), "--user", "alice", "--json",
                     stdout=out)  # fmt: skip
        rows = json.loads(out.getvalue())
        assert {r["book"] for r in rows} == {"Ficciones", "El Aleph"}
        assert set(rows[0]) >= {"code", "book", "author", "text", "strength", "same_author"}
        assert {r["strength"] for r in rows} <= {"same idea", "related"}
