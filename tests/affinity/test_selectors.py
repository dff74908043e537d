"""Kindred readers: nearest centroids, bridges and books in common, on real pgvector."""

import numpy as np
import pytest
from django.db import connection

from accounts.models import User
from affinity.bridges import bridges_between
from affinity.models import ReaderCentroid, SharingProfile
from affinity.selectors import (
    books_in_common,
    kindred_readers,
    nearest_readers,
    passages_in_common,
    public_profile,
    standing_for,
)
from affinity.services import centroid_refresh, sharing_update
from books.models import Highlight
from tests.affinity.library import (
    MODEL,
    book,
    direction,
    highlights,
    library,
    near,
    reader,
    share,
    unit,
)


def _refreshed(*readers: User) -> list[ReaderCentroid]:
    return [centroid_refresh(reader=who) for who in readers]


def _centroid(who: User) -> ReaderCentroid:
    return ReaderCentroid.objects.get(reader=who)


@pytest.mark.django_db
class NearestReadersTests:
    def test_it_ranks_sharing_readers_by_distance(self, alice: User) -> None:
        rng = np.random.default_rng(20)
        centre, away = direction(rng), direction(rng)
        library(alice, centre, rng)
        share(alice)
        # Each next reader's library sits further from alice's.
        others = [reader(f"r{i}") for i in range(4)]
        for i, who in enumerate(others):
            library(who, unit(centre + 0.6 * i * away), rng)
            share(who)
        _refreshed(alice, *others)
        found = nearest_readers(_centroid(alice), limit=10)
        assert [r for r, _ in found] == [who.pk for who in others]
        assert [d for _, d in found] == sorted(d for _, d in found)

    def test_it_never_lists_a_reader_who_does_not_share(self, alice: User, bob: User) -> None:
        rng = np.random.default_rng(21)
        centre = direction(rng)
        for who in (alice, bob):
            library(who, centre, rng)
        share(alice)
        carol = reader("carol")
        library(carol, centre, rng)
        share(carol)
        sharing_update(reader=carol, discoverable=False, display_name="Carol", excluded_books=[])
        _refreshed(alice, bob, carol)
        assert nearest_readers(_centroid(alice), limit=10) == []
        # and a reader who does not share has no kindred readers either
        assert kindred_readers(standing_for(bob)) == []

    def test_it_never_compares_two_models(self, alice: User, bob: User) -> None:
        rng = np.random.default_rng(22)
        centre = direction(rng)
        library(alice, centre, rng)
        shelf = book(bob, "Same Ideas, Another Model")
        highlights(shelf, near(centre, 0.5, rng, 30), model="other-model@1")
        for who in (alice, bob):
            share(who)
        _refreshed(alice, bob)
        assert _centroid(bob).embedding_model == "other-model@1"
        assert nearest_readers(_centroid(alice), limit=10) == []
        assert nearest_readers(_centroid(bob), limit=10) == []

    def test_it_skips_readers_with_too_few_highlights(self, alice: User, bob: User) -> None:
        rng = np.random.default_rng(23)
        centre = direction(rng)
        library(alice, centre, rng)
        library(bob, centre, rng, count=19)
        for who in (alice, bob):
            share(who)
        _refreshed(alice, bob)
        assert nearest_readers(_centroid(alice), limit=10) == []
        assert not standing_for(bob).ready
        assert standing_for(bob).missing == 1

    def test_it_agrees_with_the_exact_scan_when_using_hnsw(self, alice: User) -> None:
        rng = np.random.default_rng(24)
        library(alice, direction(rng), rng)
        share(alice)
        mine = _refreshed(alice)[0]
        # Centroids of 400 sharing readers, written directly (no highlights), around 20
        # tastes.
        topics = rng.normal(size=(20, 384))

        def centroid(centre: np.ndarray) -> list[float]:
            made: list[float] = unit(centre + rng.normal(scale=0.5, size=384)).tolist()
            return made

        for i in range(400):
            who = User.objects.create(username=f"synthetic{i}")
            SharingProfile.objects.create(reader=who, discoverable=True, display_name=f"S{i}")
            ReaderCentroid.objects.create(
                reader=who, vector=centroid(topics[i % 20]), highlight_count=50,
                embedding_model=MODEL,
            )  # fmt: skip
        mine.vector = centroid(topics[0])
        mine.save()
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE affinity_readercentroid")
        exact = nearest_readers(mine, limit=10, strategy="exact")
        hnsw = nearest_readers(mine, limit=10, strategy="hnsw")
        assert len(exact) == 10
        assert [d for _, d in hnsw] == sorted(d for _, d in hnsw)
        assert len({r for r, _ in exact} & {r for r, _ in hnsw}) >= 9
        assert alice.pk not in {r for r, _ in hnsw}


@pytest.fixture
def kindred_pair(alice: User, bob: User) -> dict[str, list[Highlight]]:
    """alice and bob share, read alike, and each has one highlight of one idea in a
    book of their own; bob also has a private book closer to alice than anything."""
    rng = np.random.default_rng(30)
    centre, idea, other_idea = direction(rng), direction(rng), direction(rng)
    made = {
        "alice": library(alice, centre, rng),
        "bob": library(bob, centre, rng),
        "alice_idea": highlights(book(alice, "Ficciones"), near(idea, 0.1, rng, 2)),
        "bob_idea": highlights(book(bob, "El Aleph"), near(idea, 0.1, rng, 2)),
        "bob_private": highlights(book(bob, "Bob's Diary"), near(idea, 0.01, rng, 1)),
        # one passage of one book both read: the closest pair, but it explains nothing
        "alice_same": highlights(
            book(alice, "Shared Book", "Author"), near(other_idea, 0.01, rng, 1)
        ),
        "bob_same": highlights(book(bob, "Shared Book", "Author"), near(other_idea, 0.01, rng, 1)),
        # bob's own notes are his writing, not shared
        "bob_note": highlights(
            book(bob, "Notebook"), near(idea, 0.0, rng, 1), kind=Highlight.Kind.NOTE
        ),
    }
    share(alice)
    share(bob, excluded=[made["bob_private"][0].book])
    _refreshed(alice, bob)
    return made


@pytest.mark.django_db
class BridgesTests:
    def test_it_pairs_close_highlights_from_different_books(
        self, alice: User, bob: User, kindred_pair: dict[str, list[Highlight]]
    ) -> None:
        bridges = bridges_between(_centroid(alice), [_centroid(bob)])[bob.pk]
        # The two pairs of the one idea, each highlight once; the passages around the
        # libraries' centre sit closer to each other than any random two, but the judge
        # calls none of them related, and a pair it does not call related is never shown.
        assert len(bridges) == 2
        assert {b.mine for b in bridges} == set(kindred_pair["alice_idea"])
        assert {b.theirs for b in bridges} == set(kindred_pair["bob_idea"])
        assert all(b.strength is not None for b in bridges)
        assert bridges[0].distance <= bridges[1].distance
        same = {kindred_pair["alice_same"][0].pk, kindred_pair["bob_same"][0].pk}
        assert not any({b.mine.pk, b.theirs.pk} == same for b in bridges)
        for bridge in bridges:
            assert bridge.mine.reader_id == alice.pk
            assert bridge.theirs.reader_id == bob.pk
            assert bridge.mine.book.key != bridge.theirs.book.key

    def test_it_never_shows_an_excluded_book_nor_a_note(
        self, alice: User, bob: User, kindred_pair: dict[str, list[Highlight]]
    ) -> None:
        hidden = {kindred_pair["bob_private"][0].pk, kindred_pair["bob_note"][0].pk}
        for mine, theirs in ((alice, bob), (bob, alice)):
            found = bridges_between(_centroid(mine), [_centroid(theirs)])[theirs.pk]
            assert hidden.isdisjoint({b.mine.pk for b in found} | {b.theirs.pk for b in found})

    def test_it_uses_each_highlight_once(
        self, alice: User, bob: User, kindred_pair: dict[str, list[Highlight]]
    ) -> None:
        bridges = bridges_between(_centroid(alice), [_centroid(bob)])[bob.pk]
        assert len({b.mine.pk for b in bridges}) == len(bridges)
        assert len({b.theirs.pk for b in bridges}) == len(bridges)

    def test_it_shows_a_pair_once_when_both_readers_hold_both_passages(
        self, alice: User, bob: User
    ) -> None:
        # Both read both books and marked the same two passages: "my Stoics, your Buddha"
        # and "my Buddha, your Stoics" are one bridge, not two mirrored ones.
        rng = np.random.default_rng(31)
        centre, idea = direction(rng), direction(rng)
        for who in (alice, bob):
            library(who, centre, rng)
        stoic, buddha = near(idea, 0.1, rng, 2)
        texts = {
            ("Meditations", "Marcus Aurelius"): "You have power over your mind, not events.",
            ("Dhammapada", "Buddha"): "The mind is everything: what you think, you become.",
        }
        for who in (alice, bob):
            for ((title, author), text), vector in zip(texts.items(), (stoic, buddha), strict=True):
                highlights(book(who, title, author), np.asarray([vector]), texts=[text])
            share(who)
        _refreshed(alice, bob)
        bridges = bridges_between(_centroid(alice), [_centroid(bob)])[bob.pk]
        shown = [(b.mine.text, b.theirs.text) for b in bridges if b.mine.text in texts.values()]
        assert len(shown) == 1
        assert set(shown[0]) == set(texts.values())

    def test_it_lists_books_both_read_but_not_an_excluded_one(
        self, alice: User, bob: User, kindred_pair: dict[str, list[Highlight]]
    ) -> None:
        assert books_in_common(alice.pk, [bob.pk]) == {bob.pk: ["Shared Book"]}
        private = kindred_pair["alice_same"][0].book
        sharing_update(reader=alice, discoverable=True, display_name="A", excluded_books=[private])
        assert books_in_common(alice.pk, [bob.pk]) == {}
        assert books_in_common(bob.pk, [alice.pk]) == {}

    def test_it_counts_the_passages_both_highlighted_word_for_word(
        self, alice: User, bob: User, kindred_pair: dict[str, list[Highlight]]
    ) -> None:
        # "Shared Book, passage 0" in the one book both read; the rest differ.
        assert passages_in_common(alice.pk, [bob.pk]) == {bob.pk: 1}
        assert passages_in_common(bob.pk, [alice.pk]) == {alice.pk: 1}
        [found] = kindred_readers(standing_for(alice))
        assert found.passages_in_common == 1
        # A book left out of sharing shares none of its passages.
        private = kindred_pair["alice_same"][0].book
        sharing_update(reader=alice, discoverable=True, display_name="A", excluded_books=[private])
        assert passages_in_common(bob.pk, [alice.pk]) == {}

    def test_it_explains_each_reader_of_the_kindred_list(
        self, alice: User, bob: User, kindred_pair: dict[str, list[Highlight]]
    ) -> None:
        [found] = kindred_readers(standing_for(alice))
        assert found.profile.reader_id == bob.pk
        assert found.books_in_common == ["Shared Book"]
        assert found.bridges[0].theirs in kindred_pair["bob_idea"]
        assert 0 < found.percent <= 100


@pytest.mark.django_db
class PublicProfileTests:
    def test_it_counts_shared_books_only(
        self, bob: User, kindred_pair: dict[str, list[Highlight]]
    ) -> None:
        public = public_profile(SharingProfile.objects.get(reader=bob))
        # library (3 books, 24) + El Aleph (2) + Shared Book; not the diary, not the notebook
        assert (public.books, public.highlights) == (5, 27)
        titles = [top.book.title for top in public.top_books]
        assert "Bob's Diary" not in titles
        assert "Notebook" not in titles
        assert [top.highlights for top in public.top_books] == sorted(
            (top.highlights for top in public.top_books), reverse=True
        )
