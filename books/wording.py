"""Messages stored in English, said in the reader's language when a page shows them.

An import's problems and failure, an embedding's waiting reason: the parsers and workers
that write them run without a reader's language (a parser is pure, a worker serves every
reader), and the record stays English for logs, the admin and the tests. Each such
message is built from a template with named placeholders, marked for the catalogue where
it is written (`gettext_noop`). Here a stored message is matched back to its template,
its placeholders read out, and the template said in the active language with them. A
placeholder that is itself a message (`%(problem)s` after a zip member's name) is said
the same way. A message no template matches is shown as it was stored.
"""

import re
from functools import lru_cache

from django.utils.translation import gettext

from books import tasks
from books.embedding import pipeline
from books.importing import (
    apple_books,
    background,
    bookcision_json,
    clippings,
    devices,
    exogram_json,
    formats,
    kobo,
    koreader,
    notebook_html,
    readwise_csv,
    rich,
    services,
)

__all__ = ["translated"]

# The placeholders whose value is a message of its own, said in the reader's language too.
_NESTED = {"problem", "error"}
_TWO_WORDS = re.compile(r"[A-Za-z]+ [A-Za-z]+")
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def _templates() -> list[str]:
    """Every template, the most specific first: a template that is only a prefix and a
    nested message (`%(name)s: %(problem)s`) comes after those with more fixed words."""
    modules = [
        clippings, notebook_html, readwise_csv, bookcision_json, exogram_json, formats,
        koreader, kobo, apple_books, devices, rich, services, background, pipeline, tasks,
    ]  # fmt: skip
    found = {
        value
        for module in modules
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, str) and _is_wording(value)
    }
    return sorted(found, key=lambda t: (-len(_PLACEHOLDER.sub("", t)), t))


def _is_wording(value: str) -> bool:
    # Constants that are messages: words, or placeholders; not SQL, names or patterns.
    if value.lstrip().upper().startswith(("SELECT", "CREATE")):
        return False
    return _TWO_WORDS.search(value) is not None or _PLACEHOLDER.search(value) is not None


@lru_cache(maxsize=1)
def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    patterns = []
    for template in _templates():
        pieces = _PLACEHOLDER.split(template)
        # split() alternates text and placeholder names: text, name, text, name, …
        regex = "".join(
            re.escape(piece.replace("%%", "%")) if index % 2 == 0 else f"(?P<{piece}>.+?)"
            for index, piece in enumerate(pieces)
        )
        try:
            patterns.append((template, re.compile(f"^{regex}$", re.DOTALL)))
        except re.error:  # a placeholder used twice: not matchable back, shown as stored
            continue
    return patterns


def translated(message: str, *, depth: int = 0) -> str:
    """The stored English message in the active language, or as stored."""
    if not message or depth > 3:
        return message
    for template, pattern in _patterns():
        found = pattern.match(message)
        if found is None:
            continue
        values: dict[str, str] = {
            name: translated(value, depth=depth + 1) if name in _NESTED else value
            for name, value in found.groupdict().items()
        }
        wording = gettext(template)
        try:
            return wording % values if values else wording
        except (KeyError, ValueError, TypeError):  # a translation that lost a placeholder
            return message
    return message
