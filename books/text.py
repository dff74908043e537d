"""Text folding for keyword search: accents and case never decide a match.

Folded in Python rather than with PostgreSQL's `unaccent`, which the embedded server does
not ship: `liquidación` → `liquidacion`, `Ärger` → `arger`, `Straße` → `strasse`.
"""

import unicodedata


def fold(text: str) -> str:
    if text.isascii():
        return text.casefold()  # nothing to decompose: the common case, and much faster
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return stripped.casefold()
