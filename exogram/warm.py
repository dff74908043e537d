"""Warm a web process before it serves: the first search after a start took 3.8-4.5 s (the
model loaded inside the request), the first highlight page and /connections/ about 2 s.

Called from gunicorn's post_worker_init hook (exogram/gunicorn_conf.py), so only web
processes pay for it (a Celery worker loads the model with its first batch anyway), and
each one before it accepts its first request. `python -m bench cold` measures the effect.
"""

import logging
import os
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

# Templates of the pages a reader opens first after a start.
TEMPLATES = (
    "books/home.html",
    "books/book.html",
    "books/highlight.html",
    "books/connections.html",
    "books/search.html",
    "review/review.html",
)


def warm_up() -> dict[str, float]:
    """Load what the first requests would otherwise load; returns seconds per step.
    A step that fails is logged and skipped: a cold process still serves."""
    from django.db import connection
    from django.template.loader import get_template
    from django.urls import get_resolver

    timings: dict[str, float] = {}

    def step(name: str, action: Callable[[], object]) -> None:
        started = time.perf_counter()
        try:
            action()
        except Exception:
            logger.exception("warming %s failed; the first request will load it", name)
        timings[name] = round(time.perf_counter() - started, 3)

    def database() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    def encoder() -> None:
        from books.embedding.encoder import get_encoder

        get_encoder().encode_one("warm up")

    def theme() -> None:
        # Search reads the theme model's nearest beside e5's (books.search.meaning): ~0.7 s
        # of CPU and ~100 MB to load, measured in docs/models.md.
        from books.embedding.encoder import get_encoders

        encoders = get_encoders()
        if encoders.with_theme:
            encoders.encode_theme(["warm up"])

    # Every view module imported at once, not inside the first request to each.
    step("urls", lambda: get_resolver().url_patterns)
    step("database", database)
    step("templates", lambda: [get_template(name) for name in TEMPLATES])
    step("encoder", encoder)
    step("theme", theme)
    return timings


def enabled() -> bool:
    # EXOGRAM_WARM_WEB=0 turns it off (the cold benchmark measures both ways).
    return os.environ.get("EXOGRAM_WARM_WEB", "1").strip() not in {"0", "false", "no", "off"}
