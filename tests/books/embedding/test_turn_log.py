"""The embedding task logs each turn's wall and CPU seconds: what tells an operator a slow
turn from a busy machine."""

import logging
import re

import pytest

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight
from books.tasks import embed_highlights
from tests.books.kindle import BORGES, Entry, clippings_file


@pytest.mark.django_db
class EmbeddingTurnLogTests:
    def test_it_logs_the_turns_wall_and_cpu_seconds(
        self, alice: User, caplog: pytest.LogCaptureFixture
    ) -> None:
        clippings_import(
            reader=alice, data=clippings_file(Entry(BORGES, "Memory is a river of ash.")),
            file_name="c.txt",
        )  # fmt: skip
        ids = list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        with caplog.at_level(logging.INFO, logger="books.tasks"):
            embed_highlights(ids)
            embed_highlights(ids)  # the second turn finds nothing to do, and says so
        turns = [r.getMessage() for r in caplog.records if "embedding turn" in r.getMessage()]
        assert len(turns) == 2
        assert re.fullmatch(
            r"embedding turn: 1 embedded in \d+\.\d s \(\d+\.\d CPU s in this process\)", turns[0]
        )
        assert turns[1].startswith("embedding turn: 0 embedded in ")
