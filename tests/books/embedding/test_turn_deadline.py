"""An embedding turn is bounded in time as well as size: past its seconds it stops between
two groups, frees what it took and did not reach, and sends one more turn, so a worker
process is free for an upload at least that often. Real database, real model."""

import logging
from typing import Any

import pytest

from accounts.models import User
from books.embedding.encoder import active_model_id
from books.embedding.pipeline import EMBED_BATCH, embedding_turn_take, highlights_embed_turn
from books.models import Highlight
from books.tasks import embed_highlights
from tests.books.library import pending_backlog

DONE, PENDING = Highlight.EmbeddingStatus.DONE, Highlight.EmbeddingStatus.PENDING


def _model() -> str:
    model_id = active_model_id()
    assert model_id
    return model_id


def _statuses(ids: list[int]) -> dict[int, str]:
    return dict(Highlight.objects.filter(pk__in=ids).values_list("pk", "embedding_status"))


@pytest.mark.django_db
class EmbeddingTurnDeadlineTests:
    def test_it_embeds_one_group_and_frees_the_rest_when_its_time_is_up(self, alice: User) -> None:
        alices = pending_backlog(alice, 40)
        outcome = highlights_embed_turn(ids=alices, seconds=0)
        # One group at least (the first is one claim of EMBED_BATCH), and not the whole turn.
        assert outcome.embedded_ids == alices[:EMBED_BATCH]
        assert outcome.left_ids == alices[EMBED_BATCH:]
        statuses = _statuses(alices)
        assert {statuses[pk] for pk in outcome.embedded_ids} == {DONE}
        # Nothing lost, nothing left claimed: the rest is pending, and free for the next turn
        # at once rather than after the lease.
        left = Highlight.objects.filter(pk__in=outcome.left_ids)
        assert {statuses[pk] for pk in outcome.left_ids} == {PENDING}
        assert not left.filter(embedding_claimed_at__isnull=False).exists()
        assert embedding_turn_take(ids=outcome.left_ids, model_id=_model()) == outcome.left_ids
        # ...and taken once: a second turn choosing now finds them taken.
        assert embedding_turn_take(ids=outcome.left_ids, model_id=_model()) == []

    def test_the_next_turn_still_takes_the_smallest_reader_first(
        self, alice: User, bob: User
    ) -> None:
        alices = pending_backlog(alice, 40)
        left = highlights_embed_turn(ids=alices, seconds=0).left_ids
        bobs = pending_backlog(bob, 3)  # bob imports while alice's library embeds
        assert embedding_turn_take(ids=left, model_id=_model()) == bobs + left

    def test_the_task_sends_one_more_turn_until_all_are_embedded(
        self, alice: User, settings: Any, caplog: pytest.LogCaptureFixture
    ) -> None:
        settings.EXOGRAM_EMBEDDING_TURN_SECONDS = 0
        alices = pending_backlog(alice, 40)
        with caplog.at_level(logging.INFO, logger="books.tasks"):
            embed_highlights(alices)  # tests run the tasks it sends here, at once
        assert set(_statuses(alices).values()) == {DONE}
        turns = [r.getMessage() for r in caplog.records if "embedding turn" in r.getMessage()]
        # 16, 16 and 8: the first two sent the next.
        assert [t.endswith("left to the next turn") for t in turns] == [False, True, True]
        assert turns[-1].startswith("embedding turn: 16 embedded")
        assert turns[-1].endswith("24 left to the next turn")
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="books.tasks"):
            embed_highlights(alices)  # the second call changes nothing
        assert [r.getMessage() for r in caplog.records][-1].startswith("embedding turn: 0 ")
        assert set(_statuses(alices).values()) == {DONE}
