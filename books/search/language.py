"""The language of a query, and whether the model reads it: a notice when it reads it
poorly, and a lighter meaning half in the fusion (books.search.fusion)."""

from __future__ import annotations

from django.utils.translation import gettext, gettext_noop

from books.embedding.profiles import profile_for_model_id
from books.search.query import SPANISH_LETTERS
from books.text import WORD, fold

# A few of each language's commonest words: enough to tell a query's language when it has
# one of them, and a guess never made on a query with none ("Pessoa", "entropy").
_LANGUAGE_WORDS = {
    "en": "the of and to is in that it was for with as you what why how not are this be about",
    "es": "el la los las de del que y en un una por con para es se no lo como mas pero sus "
    "le ya este esta cuando muy sin sobre hay donde quien porque todo nos yo",
    "fr": "le la les des est et une dans pour pas qui que sur avec ce je il elle nous vous",
    "de": "der die das und ist nicht ein eine mit sich auf fur ich du wir sie zu dem den",
    "pt": "o os as um uma do da dos das em para com nao que por mais como seu sua voce",
    "it": "il lo gli della di che e un una per con non sono come piu questo anche",
}
_LANGUAGE_SETS = {language: frozenset(words.split()) for language, words in _LANGUAGE_WORDS.items()}
LANGUAGE_NAMES = {
    "en": gettext_noop("English"),
    "es": gettext_noop("Spanish"),
    "fr": gettext_noop("French"),
    "de": gettext_noop("German"),
    "pt": gettext_noop("Portuguese"),
    "it": gettext_noop("Italian"),
}
# Said in the language of the page that asked (the request's, made per search).
POOR_LANGUAGE = gettext_noop(
    "This looks like %(language)s: the model (%(model)s) reads %(languages)s only, so results "
    "by meaning may miss. Results by words work in any language."
)


def query_language(query: str) -> str | None:
    """The query's language when its words say so, else None."""
    if SPANISH_LETTERS.search(query):
        return "es"
    words = WORD.findall(fold(query))
    counts = {
        language: sum(1 for w in words if w in vocabulary)
        for language, vocabulary in _LANGUAGE_SETS.items()
    }
    # A tie goes to the library's languages first, in the order of _LANGUAGE_WORDS ("la
    # muerte" is Spanish before it is French).
    best = max(counts, key=lambda language: counts[language])
    return best if counts[best] else None


def model_languages(encoder: object) -> tuple[str, ...] | None:
    """The languages the model reads well (None: many): an encoder's own `languages`
    attribute, else its profile's (books.embedding.profiles)."""
    declared = getattr(encoder, "languages", None)
    if declared is not None:
        return tuple(declared) or None
    profile = profile_for_model_id(str(getattr(encoder, "model_id", "")))
    return profile.languages if profile is not None else None


def language_notice(query: str, encoder: object) -> str:
    """A word for the reader when the model reads the query's language poorly."""
    languages = model_languages(encoder)
    language = query_language(query)
    if languages is None or language is None or language in languages:
        return ""
    name = str(getattr(encoder, "model_id", "the model")).split("@")[0]
    read = ", ".join(_language_name(code) for code in languages)
    return gettext(POOR_LANGUAGE) % {
        "language": _language_name(language),
        "model": name,
        "languages": read,
    }


def _language_name(code: str) -> str:
    return gettext(LANGUAGE_NAMES[code]) if code in LANGUAGE_NAMES else code
