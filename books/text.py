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


# Leading articles a title sort skips, in the languages readers highlight in most. Not
# the ones that are also common first words (Italian "i", Portuguese "o", Dutch "de").
LEADING_ARTICLES = frozenset(
    {"the", "a", "an", "el", "la", "los", "las", "lo", "un", "una", "unos", "unas"}
    | {"der", "die", "das", "ein", "eine", "le", "les", "une", "il", "gli", "uno"}
)
ELIDED_ARTICLES = ("l'", "l\u2019")


def title_sort_key(title: str) -> str:
    """`The Name of the Rose` sorts under N, `La casa de los espíritus` under C."""
    folded = fold(title).strip()
    if folded.startswith(ELIDED_ARTICLES):
        return folded[2:].lstrip()
    first, _, rest = folded.partition(" ")
    if rest and first in LEADING_ARTICLES:
        return rest.lstrip()
    return folded


def author_sort_key(authors_normalized: str) -> str:
    """`robert greene` (books.importing's normalized form) sorts as `greene robert`."""
    first_author = authors_normalized.split(";")[0].strip()
    *given, family = first_author.split() or [""]
    return fold(" ".join([family, *given]))
