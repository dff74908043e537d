"""Merging two big copies of one book: how many queries, how long the request holds.

Run it with `DEBUG=1 python -m bench merge`, in a throw-away database. One reader holds a
book twice, HIGHLIGHTS highlights in each copy, SHARED of them the same passages (a Kindle's
copy and a Kobo's of one long book); on some the reader added something: notes, tags,
favourites, a review history, the day's card, merge records, connections with another book.

- **Reader's merge**: books.importing.same_book.books_merge, as "This is the same book as…"
  posts it; every passage both held is joined.
- **Duplicates**: the two copies under one title, as an older identity rule left them;
  books.importing.book_merge.books_merge_duplicates (each import runs it first) joins them.

Each is run RUNS times on the same rows, in a transaction rolled back after it. Reported:
queries (counted as they run), wall time and this process's CPU time (the database's own
work is not in it), medians, with the machine's load average: the machine is shared.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections.abc import Callable
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from bench.db import bench_database, setup_django

if TYPE_CHECKING:
    from accounts.models import User
    from books.models import Book

DATABASE = "exogram_bench_merge"
HIGHLIGHTS = 1_500
SHARED = 1_350
RUNS = 3
SEED = 7
TITLE = "The Power Broker"


class _Rollback(Exception):
    """Leaves the measured transaction without a trace, for the next run."""


class _QueryCount:
    """Counts the queries as they run (CaptureQueriesContext keeps the last 9,000 only)."""

    def __init__(self) -> None:
        self.queries = 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.queries += 1
        return execute(sql, params, many, context)


def _copies(reader: User, rng: random.Random) -> tuple[Book, Book]:
    from books.importing.identity import highlight_dedupe_key
    from books.models import Book, Connection, Highlight, HighlightMerge, Import, Tag
    from review.models import ReviewCard, ReviewState

    kept = Book.objects.create(reader=reader, key="kept", title=f"{TITLE}: Robert Moses")
    absorbed = Book.objects.create(reader=reader, key="absorbed", title=TITLE)
    other = Book.objects.create(reader=reader, key="other", title="The Death and Life")
    rows = []
    only = HIGHLIGHTS - SHARED
    for book, first in ((kept, 0), (absorbed, only)):
        # The kept copy's own passages come first, the absorbed copy's last: SHARED between.
        for n in range(first, first + HIGHLIGHTS):
            text = f"Passage {n} of the long book, with words enough to be a passage."
            highlight = Highlight(
                reader=reader, book=book, text=text, location_start=10 * n,
                location_end=10 * n + 2,
                dedupe_key=highlight_dedupe_key(
                    book_key=book.key, kind="highlight", page="", start=10 * n,
                    end=10 * n + 2, text=text,
                ),
                note=f"A note on {n}." if rng.random() < 0.3 else "",
                favourite=rng.random() < 0.1,
            )  # fmt: skip
            highlight.refresh_search_text()
            rows.append(highlight)
    others = [
        Highlight(reader=reader, book=other, text=f"Elsewhere {n}.", dedupe_key=f"other-{n}")
        for n in range(200)
    ]
    Highlight.objects.bulk_create(rows + others, batch_size=2_000)
    tags = [Tag.objects.create(reader=reader, name=f"tag {n}") for n in range(10)]
    through = Highlight.tags.through
    the_import = Import.objects.create(reader=reader, file_name="kindle.txt", sha256="0")
    links, states, cards, merges, pairs = [], [], [], [], set()
    day = date(2026, 12, 7)
    for position, highlight in enumerate(rows, start=1):
        if rng.random() < 0.2:
            links.append(through(highlight_id=highlight.pk, tag_id=rng.choice(tags).pk))
        if rng.random() < 0.25:
            due = day + timedelta(days=rng.randint(0, 30))
            states.append(ReviewState(reader=reader, highlight=highlight, due=due,
                                      reviews=rng.randint(1, 6)))  # fmt: skip
        if rng.random() < 0.05:
            cards.append(ReviewCard(reader=reader, highlight=highlight, day=day, position=position))
        if rng.random() < 0.05:
            merges.append(HighlightMerge(reader=reader, source_import=the_import,
                                         highlight=highlight, how="extended",
                                         merged_text=highlight.text[:20]))  # fmt: skip
        if rng.random() < 0.3:
            pairs.add((highlight.pk, highlight.book_id, rng.choice(others).pk))
    through.objects.bulk_create(links, ignore_conflicts=True)
    ReviewState.objects.bulk_create(states)
    ReviewCard.objects.bulk_create(cards)
    HighlightMerge.objects.bulk_create(merges)
    # The other book and its highlights came last: the lower ids are the copies'.
    Connection.objects.bulk_create(
        Connection(
            reader=reader,
            highlight_a_id=mine,
            highlight_b_id=theirs,
            book_low_id=book_id,
            book_high_id=other.pk,
            distance=0.3,
            embedding_model="bench",
        )
        for mine, book_id, theirs in sorted(pairs)
    )
    return kept, absorbed


def _measure(merge: Callable[[], int]) -> dict[str, Any]:
    from django.db import connection, transaction

    walls, cpus, counts, joined = [], [], [], 0
    for _ in range(RUNS):
        count = _QueryCount()
        try:
            with transaction.atomic(), connection.execute_wrapper(count):
                wall, cpu = time.perf_counter(), time.process_time()
                joined = merge()
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
                counts.append(count.queries)
                raise _Rollback
        except _Rollback:
            pass
    return {
        "joined": joined,
        "queries": statistics.median(counts),
        "wall_s": round(statistics.median(walls), 2),
        "wall_s_all": [round(w, 2) for w in walls],
        "cpu_s": round(statistics.median(cpus), 2),
    }


def run() -> dict[str, Any]:
    setup_django()
    rng = random.Random(SEED)
    with bench_database(DATABASE):
        from accounts.models import User
        from books.importing.book_merge import books_merge_duplicates
        from books.importing.same_book import books_merge
        from books.models import Book

        reader = User.objects.create_user("bench-reader", password="x")
        kept, absorbed = _copies(reader, rng)

        def readers_merge() -> int:
            done = books_merge(kept=kept, absorbed=absorbed)
            assert done is not None
            return done.joined

        def duplicates() -> int:
            Book.objects.filter(pk__in=[kept.pk, absorbed.pk]).update(title=TITLE)
            return books_merge_duplicates(reader=reader).highlights_joined

        report: dict[str, Any] = {
            "highlights_per_copy": HIGHLIGHTS,
            "readers_merge": _measure(readers_merge),
            "duplicates": _measure(duplicates),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "cores": os.cpu_count(),
        }
    for name in ("readers_merge", "duplicates"):
        figures = report[name]
        print(
            f"{name}: {figures['joined']:,} joined, {figures['queries']:,} queries, "
            f"median {figures['wall_s']} s wall ({figures['wall_s_all']}), "
            f"{figures['cpu_s']} s CPU in this process"
        )
    print(f"load average {report['load_average']} on {report['cores']} cores")
    return report


if __name__ == "__main__":
    run()
