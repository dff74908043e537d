"""Centroids, passage echoes and sharing settings, on real pgvector."""

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.utils import timezone

from accounts.models import User
from affinity.models import PassageEcho, ReaderCentroid, SharingProfile
from affinity.reading import ECHO_FULL, echo_weight
from affinity.selectors import nearest_readers
from affinity.services import (
    centroid_refresh,
    centroids_mark_stale,
    echo_distance,
    passage_echoes_forget,
    sharing_profile_for,
    sharing_update,
)
from affinity.tasks import refresh_centroid
from books.embedding.encoder import get_encoder, get_encoders
from books.importing.services import clippings_import
from books.models import Highlight
from books.tasks import embed_highlights
from exogram.queues import queued_tasks, reader_queue_name, refresh_queue_name
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
from tests.worker import tasks_kept_in

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
        assert centroid.embedding_model == get_encoders().model_id
        assert centroid.refresh_queued_at is None


def _apart(base: np.ndarray, distance: float, rng: np.random.Generator) -> np.ndarray:
    """A unit vector exactly `distance` (cosine) away from the unit vector `base`."""
    other = direction(rng)
    other = unit(other - (other @ base) * base)
    return unit((1 - distance) * base + np.sqrt(1 - (1 - distance) ** 2) * other)


@pytest.mark.django_db
class EchoDistanceTests:
    def test_it_is_well_inside_the_models_same_idea_cut(self) -> None:
        # multilingual-e5 packs passages close: a near-identical passage sits under 0.05,
        # two sayings on one subject past 0.06 (affinity.services.ECHO_DISTANCE).
        assert echo_distance() < get_encoder().threshold
        assert 0.04 < echo_distance() < 0.06

    def test_it_takes_one_passage_but_not_one_subject_for_an_echo(
        self, alice: User, bob: User
    ) -> None:
        rng = np.random.default_rng(21)
        passage = direction(rng)
        alices = highlights(book(alice, "Ficciones"), passage[None, :])[0]
        same = highlights(book(bob, "Ficciones"), _apart(passage, 0.02, rng)[None, :])[0]
        subject = highlights(book(bob, "Essays"), _apart(passage, 0.08, rng)[None, :])[0]
        for who in (alice, bob):
            share(who)
            centroid_refresh(reader=who)
        pairs = set(PassageEcho.objects.values_list("highlight_id", "echo_id"))
        assert (alices.pk, same.pk) in pairs
        assert (alices.pk, subject.pk) not in pairs


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


class RefreshQueueTests:
    def test_a_refresh_goes_to_the_refresh_queue_not_behind_embedding(self) -> None:
        """A reader who turned sharing on waited eight minutes for their place behind
        another reader's embedding turns: the refresh goes to the refresh queue, taken
        before the embedding turns (and after the imports, which waited behind refreshes)."""
        from exogram.celery import app

        default = app.conf.task_default_queue
        for task, queue in (
            ("affinity.tasks.refresh_centroid", refresh_queue_name(default)),
            ("books.tasks.run_import", reader_queue_name(default)),
            ("books.tasks.embed_highlights", default),
        ):
            assert app.amqp.router.route({}, task)["queue"].name == queue, task

    def test_a_probe_left_unfinished_goes_on_behind_the_embedding_turns(
        self, alice: User, tmp_path: Path, django_capture_on_commit_callbacks: Capture
    ) -> None:
        """A sharing reader's long echo probe went on in refresh after refresh, each up to
        its budget, all taken before any embedding turn: on a worker of one process,
        embedding waited for the whole probe. Its next turn waits behind the turns."""
        from exogram.celery import app

        rng = np.random.default_rng(21)
        library(alice, direction(rng), rng, count=24)
        share(alice)
        default = app.conf.task_default_queue
        with tasks_kept_in(tmp_path):
            with django_capture_on_commit_callbacks(execute=True):
                centroid_refresh(reader=alice, probe_seconds=0)
            assert queued_tasks() == {
                reader_queue_name(default): 0,
                refresh_queue_name(default): 0,
                default: 1,
            }
        # Claimed like any refresh: the embedding turns that land meanwhile queue nothing.
        with django_capture_on_commit_callbacks(execute=True) as sent:
            centroids_mark_stale(reader_ids={alice.pk})
        assert sent == []
        # And the next turn, given its time, finishes the probe and queues nothing more.
        with django_capture_on_commit_callbacks(execute=True) as sent:
            centroid_refresh(reader=alice)
        assert sent == []
        assert PassageEcho.objects.filter(highlight__reader=alice).count() >= 24
