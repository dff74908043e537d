"""Messages stored in English, said in the reader's language when a page shows them: the
matching, for each app that stores such messages (`books.wording`, `backups.wording`).

A message is built from a template with named placeholders, marked for the catalogue where
it is written (`gettext_noop`). Here a stored message is matched back to its template, its
placeholders read out, and the template said in the active language with them. A
placeholder that is itself a message (`%(problem)s` after a zip member's name) is said the
same way, and a number in one of the `numbers` placeholders as the language writes it
("1.1 MB" is "1,1 MB" and "1,073,741,824 bytes" "1 073 741 824 bytes" in Spanish). A
message that counts something is a pair of templates (`plural_noop`), stored in English's
form for its `%(count)s` and said in the form the active language uses for that count
(ngettext), never "problem(s)". A message no template matches is shown as it was stored.
"""

import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from functools import cached_property
from types import ModuleType

from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext

__all__ = ["LIST_JOINED", "StoredMessages", "plural_message", "plural_noop"]

# What the messages of a `lists` placeholder are joined by.
LIST_JOINED = ", "
_TWO_WORDS = re.compile(r"[A-Za-z]+ [A-Za-z]+")
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_DECIMAL = re.compile(r"\d+\.(\d+)")
# A whole number as stored: plain, or grouped by thousands in English ("1,073,741,824").
_INTEGER = re.compile(r"\d{1,3}(?:,\d{3})+|\d+")


def plural_noop(singular: str, plural: str) -> tuple[str, str]:
    """Mark a stored message that counts something: its singular and plural templates, each
    with `%(count)s`, in one catalogue entry (msgid and msgid_plural)."""
    return (singular, plural)


def plural_message(pair: tuple[str, str], count: int, **values: object) -> str:
    """The message to store, in English: the singular template for one, the plural else."""
    singular, plural = pair
    return (singular if count == 1 else plural) % {"count": count, **values}


def _is_wording(value: str) -> bool:
    # Constants that are messages: words, or placeholders; not SQL, names or patterns.
    if value.lstrip().upper().startswith(("SELECT", "CREATE")):
        return False
    return _TWO_WORDS.search(value) is not None or _PLACEHOLDER.search(value) is not None


class StoredMessages:
    """The templates of `modules` (their upper-case string constants that are wording),
    `nested`: the placeholders whose value is a message of its own, `numbers`: those
    whose value, a whole or decimal number, is written as the active language writes
    numbers, and `lists`: those whose value is messages joined by LIST_JOINED."""

    def __init__(
        self,
        modules: Callable[[], Iterable[ModuleType]],
        nested: set[str],
        numbers: frozenset[str] = frozenset(),
        lists: frozenset[str] = frozenset(),
    ) -> None:
        self._modules = modules
        self._nested = frozenset(nested)
        self._numbers = numbers
        self._lists = lists

    def templates(self) -> list[str]:
        """Every template, the most specific first: a template that is only a prefix and a
        nested message (`%(name)s: %(problem)s`) comes after those with more fixed words.
        Both templates of a plural pair are listed."""
        found = {
            value
            for module in self._modules()
            for name, value in vars(module).items()
            if name.isupper() and isinstance(value, str) and _is_wording(value)
        }
        found |= {template for pair in self.plural_pairs() for template in pair}
        return sorted(found, key=lambda t: (-len(_PLACEHOLDER.sub("", t)), t))

    def plural_pairs(self) -> list[tuple[str, str]]:
        """The (singular, plural) templates of the messages that count something."""
        return sorted(
            {
                value
                for module in self._modules()
                for name, value in vars(module).items()
                if name.isupper()
                and isinstance(value, tuple)
                and len(value) == 2
                and all(isinstance(part, str) and "%(count)s" in part for part in value)
            }
        )

    @cached_property
    def _pair_of(self) -> dict[str, tuple[str, str]]:
        return {template: pair for pair in self.plural_pairs() for template in pair}

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
            pair = self._pair_of.get(template)
            count = _INTEGER.fullmatch(found.groupdict().get("count") or "")
            if pair is not None and count is not None:
                wording = ngettext(pair[0], pair[1], int(count.group().replace(",", "")))
            else:
                wording = gettext(template)
            try:
                return wording % values if values else wording
            except (KeyError, ValueError, TypeError):  # a translation that lost a placeholder
                return message
        return message

    def _said(self, name: str, value: str, depth: int) -> str:
        if name in self._lists:
            # Messages joined by ", " ("2 bookmarks, 1 empty note"): each said on its own.
            parts = value.split(LIST_JOINED)
            return LIST_JOINED.join(self.translated(part, depth=depth + 1) for part in parts)
        if name in self._nested:
            return self.translated(value, depth=depth + 1)
        if name not in self._numbers:
            return value
        if _INTEGER.fullmatch(value):
            return number_format(int(value.replace(",", "")), force_grouping=True)
        decimal = _DECIMAL.fullmatch(value)
        if decimal is not None:
            return number_format(Decimal(value), len(decimal.group(1)), force_grouping=True)
        return value
