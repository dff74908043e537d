"""A background import's save says how far it has got while it runs: the count is written
from a connection of its own, outside the save's one transaction, so the page that polls
the import (read here on another connection, as a reader's browser would) sees it move,
and a save that fails still leaves nothing of the file in the library."""

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from bench.synthetic import make_clippings_file
from books.importing import background, services
from books.importing.background import import_queue
from books.models import Book, Highlight, Import, ImportSaving, ImportUpload
from books.tasks import run_import
from tests.threads import run_in_threads
from tests.worker import tasks_sent_nowhere

# About 1,100 highlights (and a few notes and bookmarks): a count written every 250.
DATA = make_clippings_file(1_200)
# Every book-sized part of the file saved in a part of its own.
PART = 300
# The page is read every this many highlights matched.
EVERY = 100


@pytest.fixture(autouse=True)
def embedding_left_queued() -> Iterator[None]:
    """The embedding the import sends goes to a broker in memory that nothing reads: the
    save is what is tested here, and embedding a thousand highlights takes a minute."""
    with tasks_sent_nowhere():
        yield


def _percent(page: str) -> int | None:
    shown = re.search(r'aria-valuenow="(\d+)"', page)
    return int(shown.group(1)) if shown else None


def _count(page: str) -> tuple[int, int]:
    shown = re.search(r"([\d,]+) of ([\d,]+) highlights gone through", page)
    assert shown, page
    done, total = (int(n.replace(",", "")) for n in shown.groups())
    return done, total


def _poll_while_matching(
    client: Client, the_import: Import, monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """The real matching step, with the import's progress page read every EVERY highlights
    from another thread (its own database connection: the save's transaction is open)."""
    poll = reverse("import_progress", args=[the_import.code]) + "?under_way=1"
    pages: list[str] = []
    match: Callable[..., Any] = services._match_clipping
    calls = 0

    def match_and_look(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls % EVERY == 0:
            run_in_threads(lambda: pages.append(client.get(poll).content.decode()), count=1)
        return match(*args, **kwargs)

    monkeypatch.setattr(services, "_match_clipping", match_and_look)
    return pages


@pytest.mark.django_db(transaction=True)
class SavingProgressTests:
    def test_the_page_shows_the_save_moving_on_while_it_runs(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(background, "IMPORT_PART", PART)
        the_import = import_queue(reader=alice, data=DATA, file_name="My Clippings.txt")
        pages = _poll_while_matching(alice_client, the_import, monkeypatch)
        assert run_import(the_import.pk) == Import.Status.DONE
        percents = [_percent(page) for page in pages]
        assert None not in percents, "a page read while saving showed no percentage"
        shown = [p for p in percents if p is not None]
        # It moves on, never back, and never says 100% before the save is committed.
        assert shown == sorted(shown), shown
        assert shown[0] < 25 < 50 < shown[-1] < 100, shown
        assert len(set(shown)) >= 4
        counts = [_count(page) for page in pages]
        assert len({total for _done, total in counts}) == 1  # of the whole file
        assert [done for done, _total in counts] == sorted(done for done, _total in counts)
        # Done: the page reloads on the report, which counts what the file brought.
        poll = reverse("import_progress", args=[the_import.code]) + "?under_way=1"
        assert alice_client.get(poll).headers["HX-Refresh"] == "true"
        assert Highlight.objects.filter(reader=alice).count() > 1_000

    def test_a_save_that_fails_halfway_leaves_nothing_in_the_library(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(background, "IMPORT_PART", PART)
        the_import = import_queue(reader=alice, data=DATA, file_name="My Clippings.txt")
        pages = _poll_while_matching(alice_client, the_import, monkeypatch)
        looking = services._match_clipping
        calls = 0

        def match_then_break(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls == 700:  # in the third part, after two were saved
                raise RuntimeError("the worker's disk is full")
            return looking(*args, **kwargs)

        monkeypatch.setattr(services, "_match_clipping", match_then_break)
        with pytest.raises(RuntimeError):
            run_import(the_import.pk)
        # The count had moved on, and stays with the failed import (it is no part of the
        # library) ...
        assert max(p or 0 for p in map(_percent, pages)) > 25
        assert ImportSaving.objects.get(the_import=the_import).done >= 500
        # ... but nothing of the file was saved, and the file is gone.
        the_import.refresh_from_db()
        assert the_import.status == Import.Status.FAILED
        assert not Highlight.objects.filter(reader=alice).exists()
        assert not Book.objects.filter(reader=alice).exists()
        assert not ImportUpload.objects.exists()
        report = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "gone through" not in report

    def test_a_count_that_cannot_be_written_leaves_the_import_to_finish(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The count's row held by another transaction (nothing does so, but a write that
        waited on it would hang the worker): the count gives up, the import goes on."""
        monkeypatch.setattr(background, "IMPORT_PART", PART)
        the_import = import_queue(reader=alice, data=DATA, file_name="My Clippings.txt")
        match = services._match_clipping
        calls = 0

        def match_with_the_row_held(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls == 1:
                # In the save's own transaction: the other connection's write must wait.
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT 1 FROM books_importsaving WHERE the_import_id = %s FOR UPDATE",
                        [the_import.pk],
                    )
            return match(*args, **kwargs)

        monkeypatch.setattr(services, "_match_clipping", match_with_the_row_held)
        assert run_import(the_import.pk) == Import.Status.DONE
        assert ImportSaving.objects.get(the_import=the_import).done == 0
        assert Highlight.objects.filter(reader=alice).count() > 1_000


def _saving(reader: User, *, done: int, total: int) -> Import:
    the_import = Import.objects.create(
        reader=reader,
        file_name="My Clippings.txt",
        sha256="0" * 64,
        status=Import.Status.SAVING,
        counts={"saving_highlights": total, "saving_notes": 0},
        finished_at=timezone.now(),  # when saving started (import_run's _advance)
    )
    ImportSaving.objects.create(
        the_import=the_import, done=done, total=total, updated_at=the_import.started_at
    )
    return the_import


@pytest.mark.django_db
class SavingShownTests:
    def test_the_report_and_the_home_page_show_how_far_in_a_bar(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = _saving(alice, done=12_000, total=40_000)
        poll = reverse("import_progress", args=[the_import.code]) + "?under_way=1"
        for url in (the_import.get_absolute_url(), reverse("home"), poll):
            page = alice_client.get(url).content.decode()
            assert "12,000 of 40,000 highlights gone through (30%)." in page, url
            # The width is a class: the bar stands on a page without JavaScript.
            assert 'aria-valuenow="30"><span class="pct-30"></span>' in page, url
            assert "there is no count until it is done" not in page, url

    def test_it_says_it_in_spanish(self, alice: User, alice_client: Client) -> None:
        alice.language = "es"
        alice.save(update_fields=["language"])
        the_import = _saving(alice, done=1, total=1)
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "1 de 1 subrayado revisado (99\N{NO-BREAK SPACE}%)." in page
        assert 'aria-label="Guardando los subrayados"' in page

    def test_an_import_saving_without_a_count_says_so_as_before(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = _saving(alice, done=0, total=10)
        ImportSaving.objects.all().delete()
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "there is no count until it is done" in page
        assert "gone through" not in page

    def test_a_file_of_notes_only_shows_no_count_of_highlights(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = _saving(alice, done=0, total=0)
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "gone through" not in page
        assert "there is no count until it is done" in page
