"""The embedding pipeline: real model, real database, and a real worker at the end."""

from datetime import timedelta
from pathlib import Path

import numpy as np
import psutil
import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone

from accounts.models import User
from books.embedding.encoder import get_encoder, get_encoders
from books.embedding.pipeline import (
    EMBED_TASK_SIZE,
    EmbedOutcome,
    highlights_embed,
    pending_highlight_ids,
)
from books.importing.services import clippings_import
from books.models import Highlight, Import
from books.tasks import embed_highlights, sweep_pending_embeddings
from tests.books.kindle import MEMORY_LIBRARY, Entry, clippings_file
from tests.books.library import pending_backlog
from tests.threads import run_in_threads
from tests.worker import celery_worker, embedding_turns_held, wait_for


def _import(reader: User) -> Import:
    return clippings_import(reader=reader, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")


def _peak_kb(pid: int) -> int:
    """VmHWM, the process's peak resident size: what billiard compares with the limit."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM for process {pid}")


def _ids(reader: User) -> list[int]:
    return list(Highlight.objects.filter(reader=reader).values_list("pk", flat=True))


@pytest.mark.django_db
class EmbedTaskTests:
    def test_it_embeds_every_highlight_with_a_unit_vector(self, alice: User) -> None:
        _import(alice)
        result = embed_highlights(_ids(alice))
        assert result == {"embedded": 5, "skipped": 0}
        model_id = get_encoders().model_id
        for highlight in Highlight.objects.filter(reader=alice):
            assert highlight.embedding_status == Highlight.EmbeddingStatus.DONE
            assert highlight.embedding_model == model_id
            vector = np.asarray(highlight.embedding)
            assert vector.shape == (384,)
            assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4

    def test_it_changes_nothing_the_second_time(self, alice: User) -> None:
        _import(alice)
        embed_highlights(_ids(alice))
        before = {h.pk: (h.updated, list(h.embedding)) for h in Highlight.objects.all()}
        assert embed_highlights(_ids(alice)) == {"embedded": 0, "skipped": 5}
        after = {h.pk: (h.updated, list(h.embedding)) for h in Highlight.objects.all()}
        assert after == before

    def test_it_reembeds_vectors_of_another_model(self, alice: User) -> None:
        _import(alice)
        embed_highlights(_ids(alice))
        Highlight.objects.filter(location_start=412).update(embedding_model="old-model@0")
        assert pending_highlight_ids() == list(
            Highlight.objects.filter(location_start=412).values_list("pk", flat=True)
        )
        assert embed_highlights(_ids(alice)) == {"embedded": 1, "skipped": 4}
        assert not pending_highlight_ids()

    def test_it_skips_deleted_highlights(self, alice: User) -> None:
        _import(alice)
        Highlight.objects.filter(location_start=412).update(deleted_at=timezone.now())
        assert embed_highlights(_ids(alice))["embedded"] == 4
        assert Highlight.objects.get(location_start=412).embedding is None

    def test_it_enqueues_only_after_the_import_commits(
        self, alice: User, django_capture_on_commit_callbacks: object
    ) -> None:
        with django_capture_on_commit_callbacks() as callbacks:  # type: ignore[operator]
            _import(alice)
            # inside the transaction: nothing was sent, so nothing is embedded yet
            assert len(pending_highlight_ids()) == 5
        assert callbacks
        for callback in callbacks:  # what the commit would run
            callback()
        assert not pending_highlight_ids()

    def test_it_enqueues_nothing_when_the_import_rolls_back(
        self, alice: User, django_capture_on_commit_callbacks: object
    ) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE FUNCTION refuse_all() RETURNS trigger AS $$ BEGIN "
                "RAISE EXCEPTION 'refused'; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                "CREATE TRIGGER refuse_all BEFORE INSERT ON books_highlight "
                "FOR EACH ROW EXECUTE FUNCTION refuse_all()"
            )
        with (
            django_capture_on_commit_callbacks(execute=True) as callbacks,  # type: ignore[operator]
            pytest.raises(Exception, match="refused"),
        ):
            _import(alice)
        assert callbacks == []


def _big_import(reader: User, count: int) -> Import:
    entries = [
        Entry(
            f"Book {i % 5} (Author {i % 5})",
            f"Passage {i}: a reader's library is long, and the worker reads it {i} times.",
            location=f"{10 * i}-{10 * i + 2}",
        )
        for i in range(count)
    ]
    return clippings_import(reader=reader, data=clippings_file(*entries), file_name="big.txt")


def _done(ids: list[int]) -> int:
    return Highlight.objects.filter(
        pk__in=ids, embedding_status=Highlight.EmbeddingStatus.DONE
    ).count()


@pytest.mark.django_db
class FairTurnTests:
    def test_a_big_imports_task_embeds_another_readers_small_import_first(
        self, alice: User, bob: User
    ) -> None:
        alices = pending_backlog(alice, 300)  # queued first: two tasks
        bobs = pending_backlog(bob, 3)  # then bob's one task
        result = embed_highlights(alices[:EMBED_TASK_SIZE])  # the first task in the queue
        assert _done(bobs) == 3
        assert _done(alices) == EMBED_TASK_SIZE - 3
        assert result == {"embedded": EMBED_TASK_SIZE, "skipped": 3}  # 3 of its own left

    def test_the_tasks_sent_embed_every_highlight_once(self, alice: User, bob: User) -> None:
        alices = pending_backlog(alice, 300)
        bobs = pending_backlog(bob, 3)
        queue = [alices[:EMBED_TASK_SIZE], alices[EMBED_TASK_SIZE:], bobs]  # first in, first out
        embedded = [embed_highlights(ids)["embedded"] for ids in queue]
        # Bob's went in the first turn, filled up with alice's; his own task found none left.
        assert embedded == [EMBED_TASK_SIZE, 303 - EMBED_TASK_SIZE, 0]
        assert not pending_highlight_ids()
        assert embed_highlights(alices[:EMBED_TASK_SIZE]) == {"embedded": 0, "skipped": 256}


@pytest.mark.django_db
class SweepTests:
    def test_it_picks_up_a_claim_left_by_a_killed_worker(self, alice: User) -> None:
        _import(alice)
        long_ago = timezone.now() - timedelta(minutes=30)
        Highlight.objects.update(
            embedding_status=Highlight.EmbeddingStatus.CLAIMED,
            embedding_claimed_at=long_ago,
            updated=long_ago,
        )
        assert sweep_pending_embeddings() == 5
        assert set(Highlight.objects.values_list("embedding_status", flat=True)) == {"done"}

    def test_it_leaves_a_fresh_claim_alone(self, alice: User) -> None:
        _import(alice)
        Highlight.objects.update(
            embedding_status=Highlight.EmbeddingStatus.CLAIMED, embedding_claimed_at=timezone.now()
        )
        assert embed_highlights(_ids(alice)) == {"embedded": 0, "skipped": 5}


@pytest.mark.django_db(transaction=True)
class RaceTests:
    def test_two_workers_racing_on_the_same_ids_embed_each_once(self, alice: User) -> None:
        _import(alice)  # commits, so its own embed task already ran (eagerly): undo that
        ids = _ids(alice)
        get_encoder()  # load the model once, before the race
        # Several rounds: a lock-order deadlock between the two (once seen between the
        # name-taking UPDATE and the claim) shows only in some interleavings.
        for _ in range(4):
            Highlight.objects.update(
                embedding=None,
                embedding_model="",
                embedding_status=Highlight.EmbeddingStatus.PENDING,
                embedding_claimed_by="",
            )
            outcomes: list[EmbedOutcome] = []

            def work(outcomes: list[EmbedOutcome] = outcomes) -> None:
                outcomes.append(highlights_embed(ids=ids))

            run_in_threads(work)
            assert len(outcomes) == 2  # neither raised
            assert sum(o.embedded for o in outcomes) == 5
            assert sum(o.skipped for o in outcomes) == 5
            assert not pending_highlight_ids()


@pytest.mark.django_db(transaction=True)
class PipelineEndToEndTests:
    def test_a_real_worker_embeds_an_imported_file(self, alice: User, tmp_path: Path) -> None:
        with celery_worker(broker_url="filesystem://", data_dir=tmp_path):
            the_import = _import(alice)
            wait_for(
                lambda: (
                    not Highlight.objects.filter(source_import=the_import)
                    .exclude(embedding_status=Highlight.EmbeddingStatus.DONE)
                    .exists()
                ),
                timeout=120,
                what="every highlight to be embedded",
            )
        assert Highlight.objects.filter(reader=alice, embedding__isnull=False).count() == 5

    def test_a_small_import_is_embedded_before_another_readers_backlog(
        self, alice: User, bob: User, tmp_path: Path
    ) -> None:
        # Which highlight was embedded when: a trigger numbers each vector written.
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE TABLE embed_log (seq bigserial, highlight_id bigint, reader_id bigint);"
                "CREATE FUNCTION log_embed() RETURNS trigger AS $$ BEGIN "
                "INSERT INTO embed_log (highlight_id, reader_id) VALUES (NEW.id, NEW.reader_id);"
                "RETURN NEW; END $$ LANGUAGE plpgsql;"
                "CREATE TRIGGER log_embed AFTER UPDATE ON books_highlight FOR EACH ROW "
                "WHEN (NEW.embedding_status = 'done' AND OLD.embedding_status <> 'done') "
                "EXECUTE FUNCTION log_embed()"
            )
        try:
            with celery_worker(broker_url="filesystem://", data_dir=tmp_path):
                # The worker's first turn waits (on the lock turns choose under) until both
                # imports are in its queue, alice's 300 highlights first, then bob's 5:
                # without it a quick worker could finish alice's before bob imports.
                with embedding_turns_held() as release:
                    _big_import(alice, 300)
                    _import(bob)
                    release()
                wait_for(
                    lambda: (
                        not Highlight.objects.exclude(
                            embedding_status=Highlight.EmbeddingStatus.DONE
                        ).exists()
                    ),
                    timeout=600,
                    what="every highlight to be embedded",
                )
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT reader_id, max(seq), count(*), count(DISTINCT highlight_id) "
                    "FROM embed_log GROUP BY reader_id"
                )
                log = {reader: (last, n, distinct) for reader, last, n, distinct in cursor}
        finally:
            with connection.cursor() as cursor:
                cursor.execute(
                    "DROP TRIGGER IF EXISTS log_embed ON books_highlight;"
                    "DROP FUNCTION IF EXISTS log_embed(); DROP TABLE IF EXISTS embed_log"
                )
        assert log[bob.pk][0] < log[alice.pk][0]  # bob's all embedded before alice's last
        assert log[bob.pk][1:] == (5, 5)  # each once
        assert log[alice.pk][1:] == (300, 300)

    def test_its_processes_embed_task_after_task_without_being_replaced(
        self, alice: User, tmp_path: Path
    ) -> None:
        # A pool process whose peak RSS passes CELERY_WORKER_MAX_MEMORY_PER_CHILD is replaced
        # after its task, and the next one loads the model again. While e5's tokenizer was a
        # `tokenizers` Unigram (273 MB), every embedding process peaked past the limit.
        entries = [
            Entry(
                f"Book {i % 7} (Author {i % 7})",
                f"Passage {i}: what we remember of a book is rarely what it said, {i} times over.",
                location=f"{10 * i}-{10 * i + 2}",
            )
            for i in range(600)
        ]
        with celery_worker(broker_url="filesystem://", data_dir=tmp_path, concurrency=2) as worker:
            parent = psutil.Process(worker.pid)
            first = wait_for(
                lambda: {c.pid for c in parent.children()} if len(parent.children()) == 2 else None,
                what="the two pool processes",
            )
            clippings_import(reader=alice, data=clippings_file(*entries), file_name="c.txt")
            wait_for(
                lambda: (
                    not Highlight.objects.filter(reader=alice)
                    .exclude(embedding_status=Highlight.EmbeddingStatus.DONE)
                    .exists()
                ),
                timeout=900,
                what="600 highlights to be embedded (three tasks)",
            )
            peaks = {child.pid: _peak_kb(child.pid) for child in parent.children()}
        assert set(peaks) == first  # the same two processes did every task
        assert all(kb < django_settings.CELERY_WORKER_MAX_MEMORY_PER_CHILD for kb in peaks.values())


@pytest.mark.django_db
class ModelUnavailableTests:
    def test_highlights_stay_pending_with_the_reason(
        self, alice: User, settings: object, tmp_path: Path
    ) -> None:
        settings.EXOGRAM_EMBEDDING_MODEL_DIR = tmp_path  # type: ignore[attr-defined]
        the_import = _import(alice)  # the import itself still works
        assert the_import.status == Import.Status.DONE
        assert embed_highlights(_ids(alice)) == {"embedded": 0, "skipped": 5}
        highlight = Highlight.objects.filter(reader=alice).first()
        assert highlight is not None
        assert highlight.embedding_status == Highlight.EmbeddingStatus.PENDING
        assert "missing" in highlight.embedding_error
        assert str(tmp_path) in highlight.embedding_error
        assert len(pending_highlight_ids()) == 5
