"""Which of five languages a passage is in, for reporting only. Pure Python.

The app has a detector of its own (books.language: English, Spanish, German, Portuguese,
French, Italian); the evaluation keeps this one, independent of the app's, to say how
German, Portuguese and French passages fare: it counts each language's commonest function
words and takes the clear winner. Words two languages spell alike count for
neither; a text with too little evidence is `unknown`.

The realistic library (evaluation.library) picks its French and Portuguese Kindle passages
by this guess: a change to the lists changes that library, and the figures measured on it
(docs/labels.md) no longer describe what `evaluate_library --realistic` builds.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

LANGUAGES = ("en", "es", "de", "pt", "fr")
UNKNOWN = "unknown"
MIN_EVIDENCE = 2
MIN_LEAD = 1.5

_WORDS = {
    "en": """the of and to in is it that was for on are with as at be by this have from or an
        they which you were when there can been has more if will would what about who their
        out up do so into than its only other then them these some could my your our his
        her she him not but how any also just because should must shall us over after
        before every never nothing those where why while being am does did i""",
    "es": """el la los las del y que en un una es por con para lo al se su sus más pero como
        le les ya fue este esta esto ese esa eso está están era ser hay muy sobre también
        hasta donde quien cuando porque qué cómo todo todos nada nunca siempre otro otra
        entre mismo puede tiene hace yo tú él ella ellos nosotros nos te mi tu cada bien
        mal ni si sí cual bueno mucho poco menos tanto hacer dijo""",
    "de": """der die das und ist nicht ein eine zu mit sich auch auf für von dem den ich es
        sie wir ihr er wenn aber oder noch nur wie man bei aus nach wird sind war hat haben
        kann muss immer schon sein seine einem einen einer dass daß als so doch""",
    "pt": """não é um uma do da dos das com para os em ao pela pelo você ele eles também mais
        que as no na nos nas seu sua se mas como foi ser está são tem muito quando já
        isso ela eu meu minha porque até sem""",
    "fr": """le la les des du une est dans pour pas qui sur au avec ce il elle nous vous sont
        c'est n'est je ne mais où aussi très être fait et un que en se sa son ses plus
        leur tout cette comme on""",
}
_SETS = {lang: frozenset(words.split()) for lang, words in _WORDS.items()}
# A word in two languages' lists is evidence for neither ("que", "a", "se", "en", "un").
_COUNTS = Counter(word for words in _SETS.values() for word in words)
_MARKERS = {lang: frozenset(w for w in words if _COUNTS[w] == 1) for lang, words in _SETS.items()}
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")


def guess_language(text: str) -> str:
    """`en`, `es`, `de`, `pt`, `fr` or `unknown`."""
    words = [
        w.replace("\u2019", "'") for w in _WORD.findall(unicodedata.normalize("NFC", text).lower())
    ]
    scores = {lang: sum(1 for w in words if w in markers) for lang, markers in _MARKERS.items()}
    lowered = text.lower()
    scores["es"] += sum(lowered.count(mark) for mark in "ñ¿¡")
    scores["de"] += sum(lowered.count(mark) for mark in "äöüß")
    scores["pt"] += sum(lowered.count(mark) for mark in "ãõ") + lowered.count("ção")
    scores["fr"] += sum(lowered.count(mark) for mark in "èêëàâîïûœ")
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    (best, top), (_, second) = ranked[0], ranked[1]
    # One marker word is enough when no other language has any ("Un hombre está bailando").
    if top < (MIN_EVIDENCE if second else 1) or top < MIN_LEAD * second:
        return UNKNOWN
    return best
