"""The embedding progress a reader watches: it reaches 100 %, explains image highlights,
says "starting" before the first vector and estimates the time left."""

from datetime import datetime, timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.models import Highlight, Import
from books.selectors import EmbeddingProgress, import_progress
from books.tasks import QUEUE_UNREACHABLE
from tests.books.library import book_of, highlight_in

DONE = Highlight.EmbeddingStatus.DONE
FAILED = Highlight.EmbeddingStatus.FAILED


@pytest.fixture
def the_import(alice: User) -> Import:
    the_import = Import.objects.create(
        reader=alice, file_name="My Clippings.txt", sha256="ab" * 32, status=Import.Status.DONE
    )
    book = book_of(alice, "Ficciones")
    for i in range(10):
        text = "" if i >= 7 else f"Line {i}."
        highlight = highlight_in(book, text, location=i + 1)
        highlight.source_import = the_import
        highlight.save(update_fields=["source_import"])
    return the_import


def _settle(*, embedded: int) -> None:
    Highlight.objects.filter(text="").update(embedding_status=FAILED)
    ids = Highlight.objects.exclude(text="").order_by("pk").values_list("pk", flat=True)[:embedded]
    Highlight.objects.filter(pk__in=list(ids)).update(embedding_status=DONE)


@pytest.mark.django_db
class EmbeddingProgressTests:
    def test_it_reaches_100_with_image_highlights_left_out_of_the_count(
        self, the_import: Import
    ) -> None:
        _settle(embedded=7)
        progress = import_progress(the_import)
        assert (progress.highlights, progress.embedded) == (7, 7)
        assert (progress.no_text, progress.other_failures) == (3, 0)
        assert progress.done
        assert progress.percent_embedded == 100

    def test_an_image_highlight_waiting_for_the_worker_leaves_nothing_to_go(
        self, the_import: Import
    ) -> None:
        """The worker marks it only when it reaches it: until then it neither counts as
        waiting nor holds the count short of the whole ("1,163 of 1,164" for ever)."""
        Highlight.objects.exclude(text="").update(embedding_status=DONE)
        progress = import_progress(the_import)
        assert (progress.highlights, progress.embedded, progress.no_text) == (7, 7, 3)
        assert progress.done

    def test_it_counts_a_real_failure_apart_from_no_text(self, the_import: Import) -> None:
        _settle(embedded=6)
        Highlight.objects.filter(text="Line 6.").update(embedding_status=FAILED)
        progress = import_progress(the_import)
        assert (progress.no_text, progress.other_failures, progress.percent_embedded) == (3, 1, 100)

    def test_it_is_starting_until_something_settles(self, the_import: Import) -> None:
        assert import_progress(the_import).starting
        _settle(embedded=0)  # the highlights with no text settle: not what it waits for
        assert import_progress(the_import).starting
        _settle(embedded=1)
        assert not import_progress(the_import).starting

    def test_it_estimates_the_time_left_from_the_latest_writes(self) -> None:
        now = timezone.now()
        progress = EmbeddingProgress(highlights=1000, embedded=100, failed=0)
        # 100 written in the 70 s since the oldest write of the window: 900 more take 630 s.
        writes = _writes(now, (10, 50), (40, 50), (70, 50))
        assert progress.remaining(writes=writes, now=now) == "about 10 minutes left"
        quick = EmbeddingProgress(highlights=1000, embedded=990, failed=0)
        assert quick.remaining(writes=writes, now=now) == "less than a minute left"
        slow = EmbeddingProgress(highlights=100_000, embedded=100, failed=0)
        assert slow.remaining(writes=writes, now=now) == "about 19 hours left"

    def test_it_says_nothing_before_three_writes(self) -> None:
        # Two workers write their first groups a second apart: a pace read from that one
        # span said "less than a minute" of an hour's work.
        now = timezone.now()
        progress = EmbeddingProgress(highlights=10_000, embedded=512, failed=0)
        assert progress.remaining(writes=_writes(now, (1, 256), (2, 256)), now=now) == ""
        assert progress.remaining(writes=[], now=now) == ""
        done = EmbeddingProgress(highlights=100, embedded=100, failed=0)
        assert done.remaining(writes=_writes(now, (1, 50), (2, 25), (3, 25)), now=now) == ""

    def test_a_worker_that_stopped_makes_the_time_left_grow(self) -> None:
        progress = EmbeddingProgress(highlights=1000, embedded=100, failed=0)
        at = timezone.now()
        writes = _writes(at, (0, 50), (30, 50), (60, 50))
        assert progress.remaining(writes=writes, now=at) == "about 9 minutes left"
        later = at + timedelta(minutes=10)
        assert progress.remaining(writes=writes, now=later) == "about 2 hours left"


def _writes(now: datetime, *ago_counts: tuple[int, int]) -> list[tuple[datetime, int]]:
    """(when, how many) of groups written `seconds` ago, newest first."""
    return [(now - timedelta(seconds=ago), count) for ago, count in ago_counts]


def _written(the_import: Import, *ago_counts: tuple[int, int]) -> None:
    """Mark the import's highlights embedded in groups, each written `seconds` ago."""
    now = timezone.now()
    pending = list(
        Highlight.objects.filter(source_import=the_import)
        .exclude(text="")
        .exclude(embedding_status=DONE)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for ago, count in ago_counts:
        group, pending = pending[:count], pending[count:]
        Highlight.objects.filter(pk__in=group).update(
            embedding_status=DONE, updated=now - timedelta(seconds=ago)
        )


@pytest.mark.django_db
class ImportReportProgressTests:
    def test_it_never_says_done_while_embedding_is_at_zero(
        self, the_import: Import, alice_client: Client
    ) -> None:
        content = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "Imported; starting to make the highlights ready for connections" in content
        assert "Done</span>" not in content
        assert "<strong>Starting</strong>" in content
        _settle(embedded=7)
        done = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert '<span id="import-status">Done</span>' in done
        assert (
            "3 highlights have no text (images, perhaps): kept on their books\u2019 pages, with "
            "nothing to connect."
        ) in done
        # Done: said in words, no full bar left standing, and the highlights with no text
        # out of the count (never "7 of 10" for good).
        assert "All 7 highlights ready: connections and search by meaning work" in done
        assert "of 10" not in done
        assert 'role="progressbar"' not in done

    def test_it_shows_a_time_estimate_while_embedding(
        self, the_import: Import, alice_client: Client
    ) -> None:
        _written(the_import, (10, 1), (70, 1), (130, 1))
        url = reverse("import_progress", args=[the_import.code])
        # 2 in the 130 s since the oldest write; 4 more take about 4 minutes (the 3 with no
        # text are not waited for).
        assert "about 4 minutes left" in alice_client.get(url).content.decode()

    def test_the_time_left_leaves_out_the_saving_and_the_first_slow_turns(
        self, the_import: Import, alice_client: Client
    ) -> None:
        # A large import: saved for minutes, then the first turns slow; the pace since it
        # started said "about 64 hours left" of a 110,938-highlight import.
        Import.objects.filter(pk=the_import.pk).update(
            started_at=timezone.now() - timedelta(hours=2)
        )
        _written(the_import, (130, 1), (70, 1), (10, 1))
        url = reverse("import_progress", args=[the_import.code])
        # 2 in the 130 s since the first write; 4 more take about 4 minutes (the pace
        # since the start, 3 in 2 hours, said 3 hours).
        assert "about 4 minutes left" in alice_client.get(url).content.decode()
        home = alice_client.get(reverse("library_progress")).content.decode()
        assert "about 4 minutes left" in home

    def test_the_polled_progress_updates_the_header_too(
        self, the_import: Import, alice_client: Client
    ) -> None:
        # A page left open kept "embedding is starting" in its header while the bar moved.
        url = reverse("import_progress", args=[the_import.code])
        starting = alice_client.get(url).content.decode()
        starting_status = "Imported; starting to make the highlights ready for connections"
        assert f'<span id="import-status" hx-swap-oob="true">{starting_status}' in starting
        _settle(embedded=4)  # 4 of 7: the 3 with no text are not waited for
        moving = alice_client.get(url).content.decode()
        moving_status = "Imported; making the highlights ready for connections: 57%"
        assert f'<span id="import-status" hx-swap-oob="true">{moving_status}' in moving
        assert 'aria-valuenow="57"' in moving
        _settle(embedded=7)
        done = alice_client.get(url).content.decode()
        assert '<span id="import-status" hx-swap-oob="true">Done</span>' in done

    def test_it_hides_the_sha256_behind_a_toggle(
        self, the_import: Import, alice_client: Client
    ) -> None:
        content = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "<summary>File fingerprint</summary>" in content
        assert f"<code>{'ab' * 32}</code>" in content

    def test_the_progress_bar_has_no_inline_style(
        self, the_import: Import, alice_client: Client
    ) -> None:
        _settle(embedded=4)
        content = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert 'class="pct-55"' in content
        assert "style=" not in content.split('id="embedding-progress"')[1].split("</div>")[0]


@pytest.mark.django_db
class LibraryProgressTests:
    def test_home_shows_the_time_left_at_the_latest_imports_pace(
        self, the_import: Import, alice_client: Client
    ) -> None:
        _written(the_import, (130, 1), (70, 1), (10, 1))
        assert "minutes left" in alice_client.get(reverse("home")).content.decode()
        assert "minutes left" in alice_client.get(reverse("library_progress")).content.decode()
        _settle(embedded=7)
        assert "left" not in alice_client.get(reverse("library_progress")).content.decode()

    def test_the_polled_progress_updates_the_home_counts_too(
        self, the_import: Import, alice_client: Client
    ) -> None:
        _settle(embedded=2)
        polled = alice_client.get(reverse("library_progress")).content.decode()
        counts = polled.split('<div class="cards" id="library-counts" hx-swap-oob="true">')[1]
        numbers = [part.split("</span>")[0] for part in counts.split('class="number">')[1:]]
        # books, highlights (the 3 with no text too), embedded, waiting (not those 3)
        assert numbers == ["1", "10", "2", "5"]
        home = alice_client.get(reverse("home")).content.decode()
        assert 'id="library-counts">' in home
        assert "hx-swap-oob" not in home


def _worker_busy_with(reader: User, *, claimed_at: datetime | None = None) -> None:
    """The worker holds a claim on one of `reader`'s highlights (now, by default)."""
    highlight = highlight_in(book_of(reader, "Walden"), "Simplify, simplify.", location=1)
    Highlight.objects.filter(pk=highlight.pk).update(
        embedding_status=Highlight.EmbeddingStatus.CLAIMED,
        embedding_claimed_at=claimed_at or timezone.now(),
    )


OTHER_LIBRARY = "Waiting for the worker: it is preparing another library just now."
SPANISH = {"Accept-Language": "es"}


@pytest.mark.django_db
class WaitingBehindAnotherLibraryTests:
    def test_the_report_says_the_worker_is_preparing_another_library(
        self, the_import: Import, alice_client: Client, bob: User
    ) -> None:
        _worker_busy_with(bob)
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert OTHER_LIBRARY in page
        assert '<span id="import-status">Imported; waiting for the worker</span>' in page
        assert "waiting for the model" not in page
        polled = alice_client.get(reverse("library_progress")).content.decode()
        assert OTHER_LIBRARY in polled
        assert "the library with the fewest highlights left goes first" in page
        assert "smallest import" not in page

    def test_it_says_so_in_spanish(
        self, the_import: Import, alice_client: Client, bob: User
    ) -> None:
        _worker_busy_with(bob)
        url = reverse("import_progress", args=[the_import.code])
        page = alice_client.get(url, headers=SPANISH).content.decode()
        assert "Esperando al proceso de fondo: ahora mismo está preparando otra biblioteca." in page
        assert "Tus subrayados están guardados y van después" in page
        # It said the smallest *import* goes first: the worker takes, each turn, the
        # library with the fewest highlights waiting (embedding_turn_take).
        assert "en cada turno va primero la biblioteca a la que le quedan menos subrayados" in page
        assert "importación más pequeña" not in page
        assert "Importado; esperando al proceso de fondo" in page

    def test_it_says_nothing_of_others_while_its_own_are_being_embedded(
        self, the_import: Import, alice: User, alice_client: Client, bob: User
    ) -> None:
        _worker_busy_with(bob)
        assert OTHER_LIBRARY in alice_client.get(the_import.get_absolute_url()).content.decode()
        _worker_busy_with(alice)  # the worker reads both libraries in one turn
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert OTHER_LIBRARY not in page
        assert "Imported; starting to make the highlights ready for connections" in page

    def test_a_dead_workers_claim_on_another_library_is_not_a_reason(
        self, the_import: Import, alice_client: Client, bob: User
    ) -> None:
        _worker_busy_with(bob)
        assert OTHER_LIBRARY in alice_client.get(the_import.get_absolute_url()).content.decode()
        Highlight.objects.filter(reader=bob).update(
            embedding_claimed_at=timezone.now() - timedelta(hours=1)  # past the lease
        )
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert OTHER_LIBRARY not in page
        assert "highlights waiting for the model." in page

    def test_it_says_nothing_once_its_highlights_are_embedded(
        self, the_import: Import, alice_client: Client, bob: User
    ) -> None:
        _worker_busy_with(bob)
        assert OTHER_LIBRARY in alice_client.get(the_import.get_absolute_url()).content.decode()
        _settle(embedded=7)
        assert OTHER_LIBRARY not in alice_client.get(the_import.get_absolute_url()).content.decode()

    def test_waiting_behind_another_library_reads_as_news_not_as_a_problem(
        self, the_import: Import, alice_client: Client, bob: User
    ) -> None:
        """512 of 5,485 embedded and a red box beside it: a turn in the queue looked like
        a failure. It is a plain note; a real problem keeps its warning box."""
        _worker_busy_with(bob)
        for url in (the_import.get_absolute_url(), reverse("home")):
            page = alice_client.get(url).content.decode()
            assert f'<p class="waiting-note">{OTHER_LIBRARY}' in page, url
            assert "waiting-reason" not in page, url

    def test_a_queue_that_cannot_be_reached_keeps_its_warning(
        self, the_import: Import, alice_client: Client, bob: User
    ) -> None:
        _worker_busy_with(bob)
        Highlight.objects.filter(source_import=the_import).update(embedding_error=QUEUE_UNREACHABLE)
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert '<p class="waiting-reason">Waiting: Embedding is delayed' in page
        assert "waiting-note" not in page
