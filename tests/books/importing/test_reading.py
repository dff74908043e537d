"""A background import of a Kindle file says how far its reading has got: the file is parsed
in pieces (background.parse_in_pieces) and, after each, the bytes parsed and the entries read
are written on the import, which the page that polls it shows as a bar and a sentence.
Other formats are parsed whole and keep the fixed bar."""

import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import OperationalError, connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from bench.synthetic import make_clippings_file
from books.importing import background
from books.importing.background import (
    IMPORT_STALE,
    READING_WRITES,
    ReadingCount,
    import_queue,
    imports_to_resend,
)
from books.importing.clippings import parse_clippings
from books.importing.selectors import Reading
from books.models import Highlight, Import
from books.tasks import run_import
from tests.worker import tasks_sent_nowhere

# About 1,200 entries, some 300 KB: read in many pieces of PIECE bytes.
DATA = make_clippings_file(1_200)
PIECE = 10_000
READWISE = (Path(__file__).parent / "fixtures" / "readwise.csv").read_bytes()


@pytest.fixture(autouse=True)
def embedding_left_queued() -> Iterator[None]:
    """The embedding the import sends goes to a broker in memory that nothing reads."""
    with tasks_sent_nowhere():
        yield


def _read_progress(page: str) -> tuple[int, int] | None:
    shown = re.search(r"Read (\d+)% of the file \(([\d,]+) entries so far\)", page)
    return (int(shown.group(1)), int(shown.group(2).replace(",", ""))) if shown else None


def _poll_while_reading(
    client: Client,
    the_import: Import,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    language: str = "en",
) -> list[str]:
    """The real parser `name` of the background import, with the import's progress page
    read before each call: what the page shows while the file is read."""
    poll = reverse("import_progress", args=[the_import.code]) + "?under_way=1"
    pages: list[str] = []
    parse: Callable[..., Any] = getattr(background, name)

    def look_and_parse(*args: Any, **kwargs: Any) -> Any:
        pages.append(client.get(poll, headers={"Accept-Language": language}).content.decode())
        return parse(*args, **kwargs)

    monkeypatch.setattr(background, name, look_and_parse)
    return pages


@pytest.mark.django_db(transaction=True)
class ReadingProgressTests:
    def test_the_page_shows_the_reading_moving_on_while_it_runs(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(background, "PARSE_PIECE_BYTES", PIECE)
        the_import = import_queue(reader=alice, data=DATA, file_name="My Clippings.txt")
        pages = _poll_while_reading(alice_client, the_import, monkeypatch, "parse_clippings")
        assert run_import(the_import.pk) == Import.Status.DONE
        assert len(pages) > 20  # read in many pieces
        # Before the first piece is read, nothing is counted yet: the fixed bar.
        assert "Reading the entries of your file." in pages[0]
        assert _read_progress(pages[0]) is None
        read = [_read_progress(page) for page in pages[1:]]
        shown = [progress for progress in read if progress is not None]
        assert len(shown) == len(read), "a page read between pieces showed no progress"
        percents = [percent for percent, _entries in shown]
        entries = [entries for _percent, entries in shown]
        # It moves on, never back, and never says 100% before the file is read.
        assert percents == sorted(percents), percents
        assert entries == sorted(entries), entries
        assert percents[0] < 10, percents
        assert 90 <= percents[-1] < 100, percents
        assert 1_000 < entries[-1] < 1_200
        page = pages[-1]
        assert 'role="progressbar"' in page
        assert 'aria-label="Reading the file"' in page
        assert f'aria-valuenow="{percents[-1]}"' in page
        assert f'class="pct-{percents[-1] // 5 * 5}"' in page
        assert "indeterminate" not in page
        assert "style=" not in page
        assert Highlight.objects.filter(reader=alice).count() > 1_000
        # The save's counts took the place of the reading's.
        the_import.refresh_from_db()
        assert "reading_done" not in the_import.counts

    def test_the_page_says_it_in_spanish(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(background, "PARSE_PIECE_BYTES", PIECE)
        the_import = import_queue(reader=alice, data=DATA, file_name="My Clippings.txt")
        pages = _poll_while_reading(
            alice_client, the_import, monkeypatch, "parse_clippings", language="es"
        )
        run_import(the_import.pk)
        said = re.search(
            r"Leído el (\d+)\s% del archivo \(([\d.,\s]+) entradas hasta ahora\)\.", pages[-1]
        )
        assert said, pages[-1]
        assert 'aria-label="Leyendo el archivo"' in pages[-1]

    def test_a_long_file_is_counted_in_a_few_writes(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(background, "PARSE_PIECE_BYTES", 1_000)  # some 300 pieces
        the_import = import_queue(reader=alice, data=DATA, file_name="My Clippings.txt")
        with CaptureQueriesContext(connection) as queries:
            run_import(the_import.pk)
        writes = [q["sql"] for q in queries if "reading_done" in q["sql"]]
        assert 25 <= len(writes) <= READING_WRITES, len(writes)

    def test_a_format_read_whole_keeps_the_fixed_bar(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        the_import = import_queue(reader=alice, data=READWISE, file_name="readwise.csv")
        pages = _poll_while_reading(alice_client, the_import, monkeypatch, "upload_parse")
        assert run_import(the_import.pk) == Import.Status.DONE
        assert len(pages) == 1
        assert "Reading the entries of your file." in pages[0]
        assert 'class="indeterminate" data-width="40"' in pages[0]
        assert "% of the file" not in pages[0]

    def test_a_long_reading_whose_count_moves_is_not_taken_for_dead(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        the_import = import_queue(reader=alice, data=DATA, file_name="My Clippings.txt")
        long_ago = timezone.now() - IMPORT_STALE - timedelta(minutes=1)
        Import.objects.filter(pk=the_import.pk).update(
            status=Import.Status.READING, finished_at=long_ago
        )
        assert imports_to_resend() == [the_import.pk]
        # The reading moves on: its worker is alive.
        ReadingCount(the_import=the_import, size=len(DATA), attempt=0)(len(DATA) // 2, 600)
        assert imports_to_resend() == []
        # Then it stops: its worker died, and the one that starts over counts afresh.
        Import.objects.filter(pk=the_import.pk).update(finished_at=long_ago)
        assert imports_to_resend() == [the_import.pk]
        pages: list[str] = []
        poll = reverse("import_progress", args=[the_import.code]) + "?under_way=1"

        def claim_then_look(*, import_id: int) -> int | None:
            claimed = claim(import_id=import_id)
            pages.append(alice_client.get(poll).content.decode())
            return claimed

        claim = background.import_claim
        monkeypatch.setattr(background, "import_claim", claim_then_look)
        assert run_import(the_import.pk) == Import.Status.DONE
        assert "Reading the entries of your file." in pages[0]
        assert "% of the file" not in pages[0]

    def test_a_count_that_cannot_be_written_leaves_the_file_to_be_read(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(background, "PARSE_PIECE_BYTES", PIECE)
        the_import = import_queue(reader=alice, data=DATA, file_name="My Clippings.txt")
        writes = 0

        def third_count_fails(execute: Callable[..., Any], sql: str, *args: Any) -> Any:
            nonlocal writes
            if "reading_done" in repr(args[0]):  # the count, among the query's parameters
                writes += 1
                if writes == 3:  # a cancelled statement, a lock that timed out
                    raise OperationalError("canceling statement due to statement timeout")
            return execute(sql, *args)

        with connection.execute_wrapper(third_count_fails):
            assert run_import(the_import.pk) == Import.Status.DONE
        assert writes == 3  # and no more: the count gave up, the reading went on
        assert Highlight.objects.filter(reader=alice).count() > 1_000

    def test_a_reading_taken_over_leaves_the_new_attempts_count_alone_and_stops(
        self, alice: User, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        monkeypatch.setattr(background, "PARSE_PIECE_BYTES", PIECE)
        the_import = import_queue(reader=alice, data=DATA, file_name="My Clippings.txt")
        pieces = 0

        def taken_over_after_five_pieces(data: bytes) -> Any:
            # The first worker is slow: the sweep takes it for dead after five pieces, and
            # a second worker takes the import again and counts its own reading.
            nonlocal pieces
            pieces += 1
            if pieces == 6:
                long_ago = timezone.now() - IMPORT_STALE - timedelta(minutes=1)
                Import.objects.filter(pk=the_import.pk).update(finished_at=long_ago)
                assert imports_to_resend() == [the_import.pk]
                assert background.import_claim(import_id=the_import.pk) == 2
                ReadingCount(the_import=the_import, size=len(DATA), attempt=2)(PIECE, 40)
            return parse_clippings(data)

        monkeypatch.setattr(background, "parse_clippings", taken_over_after_five_pieces)
        run_import(the_import.pk)
        the_import.refresh_from_db()
        assert the_import.status == Import.Status.READING
        assert the_import.attempts == 2
        # The first worker's next count found the import taken: it wrote nothing on the
        # second's, stopped reading there, and saved nothing.
        assert the_import.counts == {
            "reading_done": PIECE, "reading_size": len(DATA), "reading_entries": 40
        }  # fmt: skip
        assert pieces < 10, pieces  # of some 30
        assert not Highlight.objects.exists()
        assert "stopped being attempt 1's while it read the file" in caplog.text


@pytest.mark.django_db
class ReadingShownTests:
    def test_the_bar_stops_short_of_the_end_until_the_entries_are_screened(self) -> None:
        assert Reading(done=500, size=500, entries=10).percent == 99
        assert Reading(done=250, size=500, entries=5).percent == 50

    def test_the_home_page_shows_how_far_the_reading_is(
        self, alice: User, alice_client: Client
    ) -> None:
        Import.objects.create(
            reader=alice, file_name="My Clippings.txt", sha256="0" * 64,
            status=Import.Status.READING, finished_at=timezone.now(),
            counts={"reading_done": 400, "reading_size": 1_000, "reading_entries": 1_234},
        )  # fmt: skip
        page = alice_client.get(reverse("home")).content.decode()
        assert "Read 40% of the file (1,234 entries so far)." in page
        assert 'class="pct-40"' in page
