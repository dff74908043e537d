"""Messages stored in English, said in the reader's language when a page shows them: the
matching, for each app that stores such messages (`books.wording`, `backups.wording`).

A message is built from a template with named placeholders, marked for the catalogue where
it is written (`gettext_noop`). Here a stored message is matched back to its template, its
placeholders read out, and the template said in the active language with them. A
placeholder that is itself a message (`%(problem)s` after a zip member's name) is said the
same way, and a decimal number in one of the `numbers` placeholders as the language writes
it ("1.1 MB" is "1,1 MB" in Spanish). A message no template matches is shown as it was
stored.
"""

import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from functools import cached_property
from types import ModuleType

from django.utils.formats import number_format
from django.utils.translation import gettext

__all__ = ["StoredMessages"]

_TWO_WORDS = re.compile(r"[A-Za-z]+ [A-Za-z]+")
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_DECIMAL = re.compile(r"\d+\.(\d+)")


def _is_wording(value: str) -> bool:
    # Constants that are messages: words, or placeholders; not SQL, names or patterns.
    if value.lstrip().upper().startswith(("SELECT", "CREATE")):
        return False
    return _TWO_WORDS.search(value) is not None or _PLACEHOLDER.search(value) is not None


class StoredMessages:
    """The templates of `modules` (their upper-case string constants that are wording),
    `nested`: the placeholders whose value is a message of its own, and `numbers`: those
    whose value, a decimal number, is written as the active language writes numbers."""

    def __init__(
        self,
        modules: Callable[[], Iterable[ModuleType]],
        nested: set[str],
        numbers: frozenset[str] = frozenset(),
    ) -> None:
        self._modules = modules
        self._nested = frozenset(nested)
        self._numbers = numbers

    def templates(self) -> list[str]:
        """Every template, the most specific first: a template that is only a prefix and a
        nested message (`%(name)s: %(problem)s`) comes after those with more fixed words."""
        found = {
            value
            for module in self._modules()
            for name, value in vars(module).items()
            if name.isupper() and isinstance(value, str) and _is_wording(value)
        }
        return sorted(found, key=lambda t: (-len(_PLACEHOLDER.sub("", t)), t))

    @cached_property
    def _patterns(self) -> list[tuple[str, re.Pattern[str]]]:
        patterns = []
        for template in self.templates():
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

    def template_of(self, message: str) -> str | None:
        """The template `message` was built from, or None for text of no known template
        (an exception's own words, SQL)."""
        for template, pattern in self._patterns:
            if pattern.match(message) is not None:
                return template
        return None

    def translated(self, message: str, *, depth: int = 0) -> str:
        """The stored English message in the active language, or as stored."""
        if not message or depth > 3:
            return message
        for template, pattern in self._patterns:
            found = pattern.match(message)
            if found is None:
                continue
            values: dict[str, str] = {
                name: self._said(name, value, depth) for name, value in found.groupdict().items()
            }
            wording = gettext(template)
            try:
                return wording % values if values else wording
            except (KeyError, ValueError, TypeError):  # a translation that lost a placeholder
                return message
        return message

    def _said(self, name: str, value: str, depth: int) -> str:
        if name in self._nested:
            return self.translated(value, depth=depth + 1)
        decimal = _DECIMAL.fullmatch(value) if name in self._numbers else None
        if decimal is not None:
            return number_format(Decimal(value), len(decimal.group(1)), force_grouping=True)
        return value
