"""The library map: does it keep neighbourhoods, and how fast is it for 20,000 highlights?

Run it with `python -m bench.bench_map` (a few minutes on the 2-core machine), in a
throw-away database. The library is bench_search's (STS-B sentences and quotes from
EXOGRAM_EVAL_DIR, SEEDS of them embedded for real, the rest their seed's vector plus noise).

- **Neighbourhoods kept**: the share of each highlight's 10 nearest neighbours in 384-d that
  are among its 20 nearest on the map, for the principal-component view (the old map) and
  the layout (books.library_map.projection), on the real vectors of the seeds and on the
  20,000-highlight library.
- **Layout**: seconds for library_map_refresh at 20,000 highlights (runs in the worker).
- **Page**: the map page and its JSON through Django's test client (the server's time for
  the whole response, which for these small, unstreamed responses is the time to first
  byte), median of RUNS; the JSON's size.
- **Browser**: with Debian's Chromium (skipped with a message where it is missing), the
  page's first contentful paint and the moment all 20,000 points are drawn, from navigation
  start, median of RUNS.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_search import load_library, read_corpus
from bench.db import bench_database, setup_django

DATABASE = "exogram_bench_map"
SIZE = 20_000
SEEDS = 2_000
RUNS = 7
SEED = 11
CHROMIUM = Path("/usr/bin/chromium")
AIM_TTFB_MS = 200
AIM_PAINT_MS = 1000


def _median_ms(call: Any, runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        times.append((time.perf_counter() - began) * 1000)
    return round(statistics.median(times), 1)


def _kept(vectors: np.ndarray) -> dict[str, float]:
    from books.library_map.projection import layout, neighbourhood_kept, principal_components

    began = time.perf_counter()
    positions = layout(vectors)
    seconds = time.perf_counter() - began
    return {
        "points": len(vectors),
        "pca": round(neighbourhood_kept(vectors, principal_components(vectors)), 3),
        "layout": round(neighbourhood_kept(vectors, positions), 3),
        "layout_seconds": round(seconds, 1),
    }


def _browser(reader_id: int) -> dict[str, Any]:
    if not CHROMIUM.exists():
        print("bench_map: no Chromium at /usr/bin/chromium, browser timings skipped")
        return {"skipped": "no chromium"}
    from django.conf import settings
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test import Client
    from django.test.testcases import LiveServerThread
    from playwright.sync_api import sync_playwright

    from accounts.models import User

    client = Client(SERVER_NAME="localhost")  # a host ALLOWED_HOSTS has when DEBUG is off
    client.force_login(User.objects.get(pk=reader_id))
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    base = f"http://127.0.0.1:{server.port}"
    paints, drawn = [], []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM),
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.add_cookies(
                [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": base}]
            )
            page = context.new_page()
            for _ in range(RUNS):
                page.goto(f"{base}/map/")
                page.wait_for_selector(f"#map-canvas[data-points='{SIZE}']", timeout=60_000)
                timing = page.evaluate(
                    "() => ({paint: (performance.getEntriesByName('first-contentful-paint')[0]"
                    " || {}).startTime, now: performance.now()})"
                )
                paints.append(timing["paint"] or 0.0)
                drawn.append(timing["now"])
            browser.close()
    finally:
        server.terminate()
    return {
        "first_contentful_paint_ms": round(statistics.median(paints), 1),
        "all_points_drawn_ms": round(statistics.median(drawn), 1),
    }


def run() -> dict[str, Any]:
    setup_django()
    from django.conf import settings
    from django.test import override_settings

    # The page is rendered in-process, as `make run` would serve it but without running
    # collectstatic: static files by their plain names, as the tests link them.
    storages = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    with override_settings(STORAGES=storages):
        return _run()


def _run() -> dict[str, Any]:
    from books.embedding.encoder import get_encoder, get_encoders

    rng = random.Random(SEED)
    encoder = get_encoder()
    corpus = read_corpus(rng)
    corpus.seeds[:] = corpus.seeds[:SEEDS]
    seed_vectors = np.asarray(encoder.encode(corpus.seeds), dtype=np.float32)
    report: dict[str, Any] = {"model": get_encoders().model_id, "real_vectors": _kept(seed_vectors)}
    with bench_database(DATABASE):
        from django.db import connection
        from django.test import Client
        from django.urls import reverse

        from accounts.models import User
        from books.library_map.services import library_map_refresh
        from books.models import Highlight

        with connection.cursor() as cursor:
            # The map never uses the vector index; building it row by row only slows the load.
            cursor.execute("DROP INDEX IF EXISTS highlight_embedding_hnsw")
        library = load_library(SIZE, corpus, seed_vectors, get_encoders().model_id, rng)
        reader = User.objects.get(pk=library.reader_id)
        began = time.perf_counter()
        the_map = library_map_refresh(reader=reader)
        report["layout_seconds_20k"] = round(time.perf_counter() - began, 1)
        vectors = np.asarray(
            [
                v
                for v in Highlight.objects.filter(reader=reader)
                .order_by("book__title", "book_id", "location_start", "pk")
                .values_list("embedding", flat=True)
            ],
            dtype=np.float32,
        )
        from books.library_map.projection import neighbourhood_kept, principal_components

        positions = np.column_stack([the_map.points["x"], the_map.points["y"]]).astype(np.float32)
        report["library_20k"] = {
            "pca": round(neighbourhood_kept(vectors, principal_components(vectors)), 3),
            "layout": round(neighbourhood_kept(vectors, positions), 3),
            "regions": len(the_map.regions),
            "region_labels": [region["label"] for region in the_map.regions[:8]],
        }
        client = Client(SERVER_NAME="localhost")  # a host ALLOWED_HOSTS has when DEBUG is off
        client.force_login(reader)
        page_ms = _median_ms(lambda: client.get(reverse("map")))
        json_ms = _median_ms(lambda: client.get(reverse("map_data")))
        plain = client.get(reverse("map_data"))
        gzipped = client.get(reverse("map_data"), headers={"accept-encoding": "gzip"})
        report["page_ms"] = page_ms
        report["json_ms"] = json_ms
        report["json_points"] = len(plain.json()["points"]["x"])
        report["json_kb"] = round(len(plain.content) / 1024, 1)
        report["json_gzip_kb"] = round(len(gzipped.content) / 1024, 1)
        report["browser"] = _browser(reader.pk)
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    report["aims"] = {"page_ttfb_ms": AIM_TTFB_MS, "first_paint_ms": AIM_PAINT_MS}
    print(report)
    return report


if __name__ == "__main__":
    run()
