"""Centroids, passage echoes, the reading space and sharing settings, on real pgvector."""

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.utils import timezone

from accounts.models import User
from affinity.models import PassageEcho, ReaderCentroid, ReadingSpace, SharingProfile
from affinity.selectors import nearest_readers
from affinity.services import (
    ECHO_FULL,
    centroid_refresh,
    centroids_mark_stale,
    echo_weight,
    passage_echoes_forget,
    reading_space_refresh,
    sharing_profile_for,
    sharing_update,
    space_position,
)
from affinity.tasks import refresh_centroid
from books.embedding.encoder import get_encoder
from books.importing.services import clippings_import
from books.models import Highlight
from books.tasks import embed_highlights
from tests.affinity.library import (
    MODEL,
    book,
    direction,
    highlights,
    library,
    near,
    normalized_mean,
    reader,
    share,
    unit,
    vectors_of,
)
from tests.books.kindle import Entry, clippings_file

Capture = Callable[..., Any]


def _vector(centroid: ReaderCentroid) -> np.ndarray:
    assert centroid.vector is not None
    return np.asarray(centroid.vector, dtype=np.float64)


@pytest.mark.django_db
class CentroidRefreshTests:
    def test_it_is_the_normalized_mean_numpy_computes(self, alice: User) -> None:
        rng = np.random.default_rng(1)
        rows = library(alice, direction(rng), rng, count=30)
        centroid = centroid_refresh(reader=alice)
        assert centroid.highlight_count == 30
        assert centroid.embedding_model == MODEL
        assert np.allclose(_vector(centroid), normalized_mean(vectors_of(rows)), atol=1e-5)
        assert abs(np.linalg.norm(_vector(centroid)) - 1.0) < 1e-5

    def test_it_leaves_out_deleted_highlights_and_notes(self, alice: User) -> None:
        rng = np.random.default_rng(2)
        kept = library(alice, direction(rng), rng, count=20)
        shelf = kept[0].book
        gone = highlights(shelf, near(direction(rng), 0.5, rng, 3))
        Highlight.objects.filter(pk__in=[h.pk for h in gone]).update(deleted_at=timezone.now())
        highlights(shelf, near(direction(rng), 0.5, rng, 3), kind=Highlight.Kind.NOTE)
        centroid = centroid_refresh(reader=alice)
        assert centroid.highlight_count == 20
        assert np.allclose(_vector(centroid), normalized_mean(vectors_of(kept)), atol=1e-5)

    def test_it_never_counts_an_excluded_book(self, alice: User) -> None:
        rng = np.random.default_rng(3)
        kept = library(alice, direction(rng), rng, count=21)
        private = book(alice, "Diary of a Private Reader")
        highlights(private, near(direction(rng), 0.2, rng, 15))
        share(alice, excluded=[private])
        centroid = ReaderCentroid.objects.get(reader=alice)
        # sharing_update recomputed it at once, without the book
        assert centroid.highlight_count == 21
        assert np.allclose(_vector(centroid), normalized_mean(vectors_of(kept)), atol=1e-5)
        assert np.allclose(
            _vector(centroid_refresh(reader=alice)), normalized_mean(vectors_of(kept)), atol=1e-5
        )

    def test_it_never_mixes_two_models(self, alice: User) -> None:
        rng = np.random.default_rng(4)
        current = library(alice, direction(rng), rng, count=25)
        highlights(book(alice, "Older"), near(direction(rng), 0.3, rng, 10), model="old@1")
        centroid = centroid_refresh(reader=alice)
        assert centroid.embedding_model == MODEL
        assert centroid.highlight_count == 25
        assert np.allclose(_vector(centroid), normalized_mean(vectors_of(current)), atol=1e-5)

    def test_it_weighs_a_famous_passage_down(self, alice: User) -> None:
        rng = np.random.default_rng(5)
        famous = direction(rng)
        own = library(alice, direction(rng), rng, count=20)
        holders = [alice] + [reader(f"holder{i}") for i in range(7)]
        copies: dict[int, list[Highlight]] = {}
        for holder in holders:
            shelf = book(holder, "The Bestseller")
            copies[holder.pk] = highlights(shelf, near(famous, 0.05, rng, 1))
            if holder != alice:
                library(holder, direction(rng), rng, count=20)
            share(holder)
        for holder in holders:
            centroid_refresh(reader=holder)
        centroid = centroid_refresh(reader=alice)
        # Eight sharing readers hold it: it weighs ECHO_FULL/8, the others 1.
        assert echo_weight(8) == ECHO_FULL / 8
        vectors = np.vstack([vectors_of(own), vectors_of(copies[alice.pk])])
        expected = normalized_mean(vectors, [1.0] * 20 + [ECHO_FULL / 8])
        assert np.allclose(_vector(centroid), expected, atol=1e-5)
        assert centroid.highlight_count == 21

    def test_it_counts_only_sharing_readers_as_holders(self, alice: User) -> None:
        rng = np.random.default_rng(6)
        famous = direction(rng)
        own = library(alice, direction(rng), rng, count=20)
        mine = highlights(book(alice, "The Bestseller"), near(famous, 0.05, rng, 1))
        share(alice)
        for i in range(7):  # they hold it too, but do not share their reading
            highlights(book(reader(f"private{i}"), "The Bestseller"), near(famous, 0.05, rng, 1))
        centroid = centroid_refresh(reader=alice)
        expected = normalized_mean(np.vstack([vectors_of(own), vectors_of(mine)]))
        assert np.allclose(_vector(centroid), expected, atol=1e-5)

    def test_it_changes_nothing_the_second_time(self, alice: User, bob: User) -> None:
        rng = np.random.default_rng(7)
        centre = direction(rng)
        for who in (alice, bob):
            library(who, centre, rng, count=22)
            share(who)
        assert refresh_centroid(alice.pk) == 22
        first = ReaderCentroid.objects.get(reader=alice)
        echoes = set(PassageEcho.objects.values_list("highlight_id", "echo_id"))
        assert refresh_centroid(alice.pk) == 22
        second = ReaderCentroid.objects.get(reader=alice)
        assert np.allclose(_vector(first), _vector(second), atol=1e-7)
        assert set(PassageEcho.objects.values_list("highlight_id", "echo_id")) == echoes
        assert refresh_centroid(10**9) == 0  # a reader deleted since it was queued


@pytest.mark.django_db
class PassageEchoTests:
    def test_it_pairs_near_identical_highlights_both_ways(self, alice: User, bob: User) -> None:
        rng = np.random.default_rng(8)
        passage = direction(rng)
        alices = highlights(book(alice, "Ficciones"), near(passage, 0.02, rng, 1))[0]
        bobs = highlights(book(bob, "Ficciones"), near(passage, 0.02, rng, 1))[0]
        other = highlights(book(bob, "Gardening"), near(direction(rng), 0.02, rng, 1))[0]
        for who in (alice, bob):
            library(who, direction(rng), rng, count=20)
            share(who)
            centroid_refresh(reader=who)
        pairs = set(PassageEcho.objects.values_list("highlight_id", "echo_id"))
        assert {(alices.pk, bobs.pk), (bobs.pk, alices.pk)} <= pairs
        assert (alices.pk, other.pk) not in pairs
        # every probed highlight echoes itself, and only alive, shared highlights are probed
        assert (other.pk, other.pk) in pairs

    def test_it_probes_a_changed_vector_again(self, alice: User, bob: User) -> None:
        rng = np.random.default_rng(14)
        passage = direction(rng)
        alices = highlights(book(alice, "Ficciones"), near(passage, 0.02, rng, 1))[0]
        bobs = highlights(book(bob, "Ficciones"), near(passage, 0.02, rng, 1))[0]
        for who in (alice, bob):
            share(who)
            centroid_refresh(reader=who)
        # alice's highlight got new words and a new vector, about something else
        Highlight.objects.filter(pk=alices.pk).update(
            embedding=near(direction(rng), 0.02, rng, 1)[0].astype(np.float32).tolist()
        )
        passage_echoes_forget(ids=[alices.pk])
        assert not PassageEcho.objects.filter(highlight=alices).exists()
        centroid_refresh(reader=alice)
        pairs = set(PassageEcho.objects.values_list("highlight_id", "echo_id"))
        assert (alices.pk, alices.pk) in pairs
        assert (alices.pk, bobs.pk) not in pairs


@pytest.mark.django_db
class DebounceTests:
    def test_it_queues_one_refresh_for_a_burst_of_batches(
        self, alice: User, django_capture_on_commit_callbacks: Capture
    ) -> None:
        rng = np.random.default_rng(9)
        library(alice, direction(rng), rng, count=20)
        with django_capture_on_commit_callbacks() as callbacks:
            for _ in range(5):
                centroids_mark_stale(reader_ids={alice.pk})
        assert len(callbacks) == 1
        assert ReaderCentroid.objects.get(reader=alice).refresh_queued_at is not None
        callbacks[0]()  # the refresh runs (eagerly, in tests)
        centroid = ReaderCentroid.objects.get(reader=alice)
        assert centroid.refresh_queued_at is None
        assert centroid.highlight_count == 20

    def test_it_queues_the_next_refresh_once_one_started(
        self, alice: User, django_capture_on_commit_callbacks: Capture
    ) -> None:
        with django_capture_on_commit_callbacks(execute=True) as first:
            centroids_mark_stale(reader_ids={alice.pk})
        with django_capture_on_commit_callbacks() as second:
            centroids_mark_stale(reader_ids={alice.pk})
        assert (len(first), len(second)) == (1, 1)

    def test_it_is_not_blocked_by_a_refresh_lost_with_its_worker(
        self, alice: User, django_capture_on_commit_callbacks: Capture
    ) -> None:
        ReaderCentroid.objects.create(
            reader=alice, refresh_queued_at=timezone.now() - timedelta(hours=1)
        )
        with django_capture_on_commit_callbacks() as callbacks:
            centroids_mark_stale(reader_ids={alice.pk})
        assert len(callbacks) == 1

    def test_it_refreshes_once_per_embedding_task(
        self, alice: User, django_capture_on_commit_callbacks: Capture
    ) -> None:
        entries = [
            Entry(f"Book {i % 3} (Author {i % 3})", f"Sentence {i} on the sea and its tides.",
                  location=f"{100 + 10 * i}-{102 + 10 * i}")
            for i in range(40)
        ]  # fmt: skip
        the_import = clippings_import(reader=alice, data=clippings_file(*entries), file_name="c")
        ids = list(the_import.highlights.values_list("pk", flat=True))
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            # Sub-batches of 16: three batches, one task, one refresh.
            embed_highlights(ids)
        refreshes = [c for c in callbacks if "refresh_centroid" in repr(c)]
        assert len(refreshes) == 1
        centroid = ReaderCentroid.objects.get(reader=alice)
        assert centroid.highlight_count == 40
        assert centroid.embedding_model == get_encoder().model_id
        assert centroid.refresh_queued_at is None


@pytest.mark.django_db
class ReadingSpaceTests:
    def _population(self, rng: np.random.Generator, count: int = 6) -> list[User]:
        readers = [reader(f"reader{i}") for i in range(count)]
        common = direction(rng)  # what every reader's vectors share
        for who in readers:
            library(who, unit(3 * common + direction(rng)), rng, count=30, noise=1.5)
            share(who)
        return readers

    def test_it_whitens_positions_as_numpy_does(self) -> None:
        rng = np.random.default_rng(10)
        readers = self._population(rng)
        for who in readers:
            centroid_refresh(reader=who)
        space = reading_space_refresh(model_id=MODEL, force=True)
        assert space is not None
        assert space.version == 1
        sample = np.asarray(
            [np.asarray(v) for v in Highlight.objects.values_list("embedding", flat=True)],
            dtype=np.float64,
        )
        mean = sample.mean(axis=0)
        variances, axes = np.linalg.eigh(np.cov(sample - mean, rowvar=False))
        order = np.argsort(variances)[::-1][: space.dimensions]
        units, scales = axes[:, order].T, 1 / np.sqrt(variances[order])
        for centroid in ReaderCentroid.objects.filter(reader__in=readers):
            # the whitened coordinates, up to each axis's sign (eigh may flip any)
            expected = unit((units @ (_vector(centroid) - mean)) * scales)
            position = np.asarray(centroid.position)
            assert centroid.space_version == 1
            assert position.shape == (32,)
            assert np.allclose(np.abs(position), np.abs(expected), atol=1e-4)
        # and so the cosines between readers, which is what is compared
        positions = {c.reader_id: np.asarray(c.position) for c in ReaderCentroid.objects.all()}
        first, second = readers[0].pk, readers[1].pk
        a = unit((units @ (_vector(ReaderCentroid.objects.get(reader_id=first)) - mean)) * scales)
        b = unit((units @ (_vector(ReaderCentroid.objects.get(reader_id=second)) - mean)) * scales)
        assert abs(float(positions[first] @ positions[second]) - float(a @ b)) < 1e-4

    def test_it_moves_every_centroid_into_a_new_version_at_once(self) -> None:
        rng = np.random.default_rng(11)
        readers = self._population(rng)
        for who in readers:
            centroid_refresh(reader=who)
        reading_space_refresh(model_id=MODEL, force=True)
        space = reading_space_refresh(model_id=MODEL, force=True)
        assert space is not None
        assert space.version == 2
        versions = set(ReaderCentroid.objects.values_list("space_version", flat=True))
        assert versions == {2}
        assert ReadingSpace.objects.count() == 1

    def test_a_centroid_at_the_centre_of_the_space_gets_no_position(self) -> None:
        rng = np.random.default_rng(13)
        readers = self._population(rng)
        for who in readers:
            centroid_refresh(reader=who)
        space = reading_space_refresh(model_id=MODEL, force=True)
        assert space is not None
        # A centroid exactly at the mean has no direction in the space.
        ReaderCentroid.objects.filter(reader=readers[0]).update(vector=list(space.mean))
        space = reading_space_refresh(model_id=MODEL, force=True)
        assert space is not None
        centre = ReaderCentroid.objects.get(reader=readers[0])
        assert (centre.position, centre.space_version) == (None, 0)
        others = ReaderCentroid.objects.exclude(reader=readers[0])
        assert set(others.values_list("space_version", flat=True)) == {space.version}

    def test_it_waits_for_enough_readers(self, alice: User) -> None:
        rng = np.random.default_rng(12)
        library(alice, direction(rng), rng, count=30)
        share(alice)
        centroid = centroid_refresh(reader=alice)
        assert reading_space_refresh(model_id=MODEL) is None
        # no space: no position, and the raw centroids are compared meanwhile
        assert (centroid.position, centroid.space_version) == (None, 0)
        assert space_position(None, list(_vector(centroid))) == (None, 0)


@pytest.mark.django_db
class SharingUpdateTests:
    def test_it_is_off_by_default(self, alice: User) -> None:
        profile = sharing_profile_for(alice)
        assert not profile.discoverable
        assert profile.display_name == ""
        assert SharingProfile.objects.filter(discoverable=True).count() == 0

    def test_it_refuses_another_readers_book(self, alice: User, bob: User) -> None:
        bobs = book(bob, "Not Yours")
        with pytest.raises(ValueError, match="their own books"):
            sharing_update(reader=alice, discoverable=True, display_name="A", excluded_books=[bobs])
        assert not sharing_profile_for(alice).excluded_books.exists()

    def test_it_removes_a_reader_who_turns_it_off_at_once(self, alice: User, bob: User) -> None:
        rng = np.random.default_rng(13)
        centre = direction(rng)
        for who in (alice, bob):
            library(who, centre, rng, count=22)
            share(who)
            centroid_refresh(reader=who)
        alices = ReaderCentroid.objects.get(reader=alice)
        assert [r for r, _ in nearest_readers(alices, limit=5)] == [bob.pk]
        sharing_update(reader=bob, discoverable=False, display_name="Bob", excluded_books=[])
        assert nearest_readers(alices, limit=5) == []
