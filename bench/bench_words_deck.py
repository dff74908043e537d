"""The words deck on a large vocabulary: how long the day's choice and the page take.

Run it with `DEBUG=1 python -m bench words` (about a minute on the 2-core
machine), in a throw-away database. The reader has WORDS looked-up words (a heavy reader:
the real library behind books.vocabulary had ~1,000) in 50 books, half of them with the
sentence highlighted 2 locations away, and as many passages again elsewhere.

- **Choice**: the first word_queue() of a day reads every word of the reader and chooses in
  Python (review.words.words_choose); median of RUNS days, each chosen afresh, with a
  third of the words already scheduled.
- **Page**: /review/words/ through Django's test client once the day is chosen (the
  sentences found and marked), median of RUNS.

Each figure comes with this process's CPU time (the database's own work is not in it) and
the machine's load average, since the machine is shared.
"""

from __future__ import annotations

import os
import random
import statistics
import time
import uuid
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from bench.db import bench_database, setup_django

if TYPE_CHECKING:
    from accounts.models import User

DATABASE = "exogram_bench_words"
WORDS = 5_000
BOOKS = 50
RUNS = 7
SEED = 5
AIM_CHOICE_MS = 300
AIM_PAGE_MS = 150


def _pseudo_word(rng: random.Random) -> str:
    syllables = ["al", "lay", "os", "ten", "si", "bly", "io", "ta", "py", "re", "qu", "ell"]
    return "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))


def _library(reader: User, rng: random.Random) -> None:
    from books.models import Book, Highlight

    books = [
        Book.objects.create(reader=reader, title=f"Book {i}", key=f"book-{i}", authors="Author")
        for i in range(BOOKS)
    ]
    rows = []
    seen: set[str] = set()
    while len(seen) < WORDS:
        seen.add(_pseudo_word(rng))
    for i, word in enumerate(sorted(seen)):
        book = books[i % BOOKS]
        location = 10 * (i // BOOKS) + 5
        rows.append((book, word, location, True))
        text = f"A sentence in which {word} is read, number {i}."
        rows.append((book, text, location + 2 if i % 2 else location + 500, False))
    highlights = []
    for book, text, location, is_word in rows:
        highlight = Highlight(
            reader_id=book.reader_id,
            book=book,
            text=text,
            location_start=location,
            location_end=location + 1,
            dedupe_key=uuid.uuid4().hex,
            is_word=is_word,
        )
        highlight.refresh_search_text()
        highlights.append(highlight)
    Highlight.objects.bulk_create(highlights, batch_size=2_000)


def run() -> dict[str, Any]:
    setup_django()
    rng = random.Random(SEED)
    with bench_database(DATABASE):
        from django.test import Client

        from accounts.models import User
        from books.vocabulary import word_key
        from review.models import WordState
        from review.services import word_queue

        reader = User.objects.create_user("bench-reader", password="x")
        _library(reader, rng)
        keys = sorted(
            {
                word_key(w)
                for w in reader.highlights.filter(is_word=True).values_list("text", flat=True)
            }
        )
        start = date(2026, 1, 5)
        WordState.objects.bulk_create(
            WordState(reader=reader, word=key, due=start + timedelta(days=rng.randint(-30, 60)))
            for key in rng.sample(keys, len(keys) // 3)
        )
        choice_ms, choice_cpu_ms = [], []
        for run in range(RUNS):
            day = start + timedelta(days=run)
            wall, cpu = time.perf_counter(), time.process_time()
            cards = word_queue(reader=reader, today=day)
            choice_ms.append((time.perf_counter() - wall) * 1000)
            choice_cpu_ms.append((time.process_time() - cpu) * 1000)
            assert len(cards) == 10
        client = Client(HTTP_HOST="localhost")  # an allowed host, unlike the test client's
        client.force_login(reader)
        client.get("/review/words/")  # today's choice, made once
        page_ms, page_cpu_ms = [], []
        for _ in range(RUNS):
            wall, cpu = time.perf_counter(), time.process_time()
            response = client.get("/review/words/")
            page_ms.append((time.perf_counter() - wall) * 1000)
            page_cpu_ms.append((time.process_time() - cpu) * 1000)
            assert response.status_code == 200, (response.status_code, response.content[:300])
        load = os.getloadavg()
        report: dict[str, Any] = {
            "words": WORDS,
            "books": BOOKS,
            "load_average": [round(x, 2) for x in load],
            "cores": os.cpu_count(),
            "choice_ms": round(statistics.median(choice_ms)),
            "choice_cpu_ms": round(statistics.median(choice_cpu_ms)),
            "page_ms": round(statistics.median(page_ms)),
            "page_cpu_ms": round(statistics.median(page_cpu_ms)),
            "words_marked_of_10": response.content.decode().count("<mark>"),
        }
    print(
        f"words deck, {WORDS:,} words in {BOOKS} books; load average "
        f"{report['load_average']} on {report['cores']} cores\n"
        f"day's choice: median {report['choice_ms']} ms wall, {report['choice_cpu_ms']} ms CPU "
        f"in this process (aim <= {AIM_CHOICE_MS} ms wall)\n"
        f"/review/words/: median {report['page_ms']} ms wall, {report['page_cpu_ms']} ms CPU, "
        f"{report['words_marked_of_10']} of 10 words marked (aim <= {AIM_PAGE_MS} ms wall)"
    )
    return report


if __name__ == "__main__":
    run()
