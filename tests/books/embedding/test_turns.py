"""An embedding task is a turn at the worker: it takes the highlights of the reader with the
fewest waiting, so a small import does not wait behind another reader's whole library.
Real database; the model only names the vectors (the embedding runs in test_pipeline.py)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import User
from books.embedding.encoder import active_model_id
from books.embedding.pipeline import EMBED_TASK_SIZE, embedding_turn_take
from books.models import Highlight
from tests.books.library import pending_backlog


def _model() -> str:
    model_id = active_model_id()
    assert model_id
    return model_id


@pytest.mark.django_db
class EmbeddingTurnTests:
    def test_it_takes_the_smallest_backlog_first(self, alice: User, bob: User) -> None:
        alices = pending_backlog(alice, 300)
        bobs = pending_backlog(bob, 3)
        # The task was sent for alice's first 256, before bob imported.
        turn = embedding_turn_take(ids=alices[:EMBED_TASK_SIZE], model_id=_model())
        assert turn == bobs + alices[: EMBED_TASK_SIZE - 3]

    def test_two_turns_never_take_the_same_highlight(self, alice: User, bob: User) -> None:
        alices = pending_backlog(alice, 300)
        bobs = pending_backlog(bob, 3)
        first = embedding_turn_take(ids=alices[:EMBED_TASK_SIZE], model_id=_model())
        second = embedding_turn_take(ids=alices[EMBED_TASK_SIZE:], model_id=_model())
        assert not set(first) & set(second)
        assert sorted(first + second) == sorted(alices + bobs)  # two turns cover all 303
        assert embedding_turn_take(ids=bobs, model_id=_model()) == []  # the third finds none

    def test_a_dead_turns_highlights_are_taken_again_after_the_lease(
        self, alice: User, bob: User
    ) -> None:
        bobs = pending_backlog(bob, 3)
        assert embedding_turn_take(ids=bobs, model_id=_model()) == bobs
        alices = pending_backlog(alice, 2)
        assert embedding_turn_take(ids=alices, model_id=_model()) == alices  # bob's left alone
        Highlight.objects.filter(pk__in=bobs).update(
            embedding_claimed_at=timezone.now() - timedelta(minutes=30)
        )
        assert embedding_turn_take(ids=[], model_id=_model()) == bobs

    def test_it_leaves_embedded_and_deleted_highlights(self, alice: User, bob: User) -> None:
        alices = pending_backlog(alice, 4)
        Highlight.objects.filter(pk=alices[0]).update(
            embedding_status=Highlight.EmbeddingStatus.DONE, embedding_model=_model()
        )
        Highlight.objects.filter(pk=alices[1]).update(deleted_at=timezone.now())
        assert embedding_turn_take(ids=alices, model_id=_model()) == alices[2:]
