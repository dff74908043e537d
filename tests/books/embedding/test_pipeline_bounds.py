"""Bounds of the embedding pipeline: the work per highlight, the lease, the sweep's queue.

A 5 MB highlight once ran for 8-10 minutes, past the claim's lease, and was claimed again
by the sweep forever; every sweep re-sent every pending highlight still in the queue.
"""

import os
import socket
import subprocess
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.utils import timezone

from accounts.models import User
from books.embedding import pipeline
from books.embedding.encoder import get_encoder, get_encoders
from books.embedding.pipeline import (
    EMBED_MAX_CHARS,
    QUEUED_LEASE,
    STALE_CLAIM,
    highlights_embed,
    pending_highlight_ids,
)
from books.importing.services import clippings_import
from books.models import Book, Highlight
from books.tasks import QUEUE_UNREACHABLE, enqueue_embedding, sweep_pending_embeddings
from exogram.celery import app
from tests.books.kindle import MEMORY_LIBRARY, clippings_file

# Varied words, so that the windows of the long text do not all read the same.
WORDS = [f"w{n}" for n in range(5000)]


def _long_text(chars: int) -> str:
    words = []
    total = 0
    for n in range(chars):
        word = WORDS[(n * 7919) % len(WORDS)]
        words.append(word)
        total += len(word) + 1
        if total >= chars:
            break
    return " ".join(words)[:chars]


def _highlight(reader: User, text: str, key: str = "k") -> Highlight:
    book, _ = Book.objects.get_or_create(reader=reader, key="b", defaults={"title": "B"})
    return Highlight.objects.create(reader=reader, book=book, text=text, dedupe_key=key)


@pytest.mark.django_db
class LongHighlightTests:
    def test_it_embeds_only_the_beginning_of_a_long_highlight_and_says_so(
        self, alice: User
    ) -> None:
        text = _long_text(100_000)
        highlight = _highlight(alice, text)
        outcome = highlights_embed(ids=[highlight.pk])
        assert outcome.embedded == 1
        highlight.refresh_from_db()
        assert highlight.embedding_status == Highlight.EmbeddingStatus.DONE
        embedded_part = pipeline._embedded_part(text)
        assert len(embedded_part) <= EMBED_MAX_CHARS
        assert text.startswith(embedded_part)
        # The vector is that of the beginning alone, not of the whole text.
        expected = get_encoder().encode([embedded_part])[0]
        assert np.allclose(np.asarray(highlight.embedding), expected, atol=1e-4)
        assert f"first {len(embedded_part):,} of its 100,000 characters" in (
            highlight.embedding_error
        )

    def test_its_page_tells_the_reader_what_was_left_out(
        self, alice: User, alice_client: object
    ) -> None:
        highlight = _highlight(alice, _long_text(40_000))
        highlights_embed(ids=[highlight.pk])
        page = alice_client.get(highlight.get_absolute_url()).content.decode()  # type: ignore[attr-defined]
        assert "of its 40,000 characters were embedded" in page

    def test_a_short_highlight_carries_no_notice(self, alice: User) -> None:
        highlight = _highlight(alice, "To think is to forget differences.")
        highlights_embed(ids=[highlight.pk])
        highlight.refresh_from_db()
        assert highlight.embedding_status == Highlight.EmbeddingStatus.DONE
        assert highlight.embedding_error == ""

    def test_a_task_is_encoded_in_bounded_groups(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Smaller bounds than the real ones, to keep the test quick; the logic is the same.
        monkeypatch.setattr(pipeline, "EMBED_BATCH", 1)
        monkeypatch.setattr(pipeline, "EMBED_GROUP_CHARS", 5_000)
        highlights = [_highlight(alice, _long_text(3_000), key=f"k{i}") for i in range(6)]
        encoder = get_encoder()
        calls: list[int] = []
        encode = encoder.encode

        def counting_encode(texts: list[str]) -> object:
            calls.append(sum(len(t) for t in texts))
            return encode(texts)

        monkeypatch.setattr(encoder, "encode", counting_encode)
        outcome = highlights_embed(ids=[h.pk for h in highlights])
        assert outcome.embedded == 6
        assert calls == [6_000, 6_000, 6_000]  # each group closed once past 5,000


class LeaseTests:
    def test_a_claim_outlives_any_task(self) -> None:
        # A task is killed by Celery at its hard time limit, so a claim older than that
        # belongs to no live task, and a live task's claim is never taken from it.
        assert STALE_CLAIM.total_seconds() > settings.CELERY_TASK_TIME_LIMIT
        assert QUEUED_LEASE >= STALE_CLAIM


@pytest.mark.django_db
class ClaimLeaseTests:
    def test_a_claim_younger_than_the_lease_is_not_taken_again(self, alice: User) -> None:
        highlight = _highlight(alice, "a passage")
        Highlight.objects.filter(pk=highlight.pk).update(
            embedding_status=Highlight.EmbeddingStatus.CLAIMED,
            embedding_claimed_at=timezone.now() - timedelta(minutes=10),
        )
        assert highlights_embed(ids=[highlight.pk]).embedded == 0
        Highlight.objects.filter(pk=highlight.pk).update(
            embedding_claimed_at=timezone.now() - STALE_CLAIM - timedelta(seconds=1)
        )
        assert highlights_embed(ids=[highlight.pk]).embedded == 1


def _queued_messages(folder: Path) -> int:
    return sum(1 for _ in (folder / "queue").glob("*.msg"))


@pytest.fixture
def queue_without_worker(tmp_path: Path) -> object:
    """Tasks really sent to a filesystem broker that no worker consumes."""
    for sub in ("queue", "control"):
        (tmp_path / sub).mkdir()
    saved = (app.conf.broker_url, app.conf.broker_transport_options, app.conf.task_always_eager)
    app.conf.update(
        broker_url="filesystem://localhost//",
        broker_transport_options={
            "data_folder_in": str(tmp_path / "queue"),
            "data_folder_out": str(tmp_path / "queue"),
            "control_folder": str(tmp_path / "control"),
        },
        task_always_eager=False,
    )
    app._pool = None
    app.amqp._producer_pool = None
    yield tmp_path
    app.conf.update(
        broker_url=saved[0], broker_transport_options=saved[1], task_always_eager=saved[2]
    )
    app._pool = None
    app.amqp._producer_pool = None


@pytest.mark.django_db
class SweepQueueTests:
    def test_it_does_not_resend_what_is_still_queued(
        self, alice: User, queue_without_worker: Path
    ) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c")
        assert sweep_pending_embeddings() == 5
        assert _queued_messages(queue_without_worker) == 1
        for _ in range(3):  # later sweeps, while the task still waits in the queue
            assert sweep_pending_embeddings() == 0
        assert _queued_messages(queue_without_worker) == 1
        # A task lost from the queue: after the lease, the sweep sends it again.
        Highlight.objects.update(embedding_enqueued_at=timezone.now() - QUEUED_LEASE)
        assert sweep_pending_embeddings() == 5
        assert _queued_messages(queue_without_worker) == 2

    def test_a_task_taken_by_a_process_that_died_is_sent_again_at_once(
        self, alice: User, queue_without_worker: Path
    ) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c")
        assert sweep_pending_embeddings() == 5
        ids = pending_highlight_ids()
        # A worker took the task and died before claiming every batch of it: the file
        # broker cannot deliver the message again, and the rows look freshly queued.
        dead = subprocess.Popen(["true"])
        dead.wait()
        Highlight.objects.filter(pk__in=ids[2:]).update(
            embedding_claimed_by=f"{socket.gethostname()}:{dead.pid}"
        )
        Highlight.objects.filter(pk__in=ids[:2]).update(
            embedding_claimed_by=f"{socket.gethostname()}:{os.getpid()}"  # alive: its own
        )
        assert pending_highlight_ids(queued_before=QUEUED_LEASE) == []
        assert sweep_pending_embeddings() == 3  # the dead one's, not the live one's
        assert _queued_messages(queue_without_worker) == 2

    def test_a_task_marks_what_it_took_with_its_process(self, alice: User) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c")
        ids = pending_highlight_ids()
        pipeline._take(ids, get_encoders().model_id)
        claimers = set(Highlight.objects.values_list("embedding_claimed_by", flat=True))
        assert claimers == {pipeline._claimer()}
        assert set(Highlight.objects.values_list("embedding_status", flat=True)) == {"pending"}

    def test_a_broker_that_is_down_leaves_the_highlights_saved_and_explained(
        self, alice: User, queue_without_worker: Path
    ) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c")
        ids = pending_highlight_ids()
        # Nothing listens on this port: every send is refused.
        app.conf.update(broker_url="redis://127.0.0.1:9/0", broker_transport_options={})
        app._pool = None
        app.amqp._producer_pool = None
        assert enqueue_embedding(ids) is False
        reasons = set(Highlight.objects.values_list("embedding_error", flat=True))
        assert reasons == {QUEUE_UNREACHABLE}
        assert set(Highlight.objects.values_list("embedding_enqueued_at", flat=True)) == {None}
        # The next sweep sends them at once: nothing says they are queued.
        assert pending_highlight_ids(queued_before=QUEUED_LEASE) == ids
