"""Which language a highlight is written in: English, Spanish or unknown. Pure, no Django.

Connections need it because multilingual-e5-small puts two texts of one language closer
than the same idea across two languages (STS-B: exact translations sit ~0.05 farther apart
than same-language paraphrases), so a pair across languages gets a looser cut than a pair
within one (books.connections.services). Taking two texts of one language for two
languages costs more than the reverse (a looser cut where e5 packs texts closest), so the
detector says *unknown* whenever the evidence is thin or split, and a pair with an
unknown side takes the cut within one language, never the one across.

The evidence is function words (articles, prepositions, pronouns, conjunctions, the
commonest verbs): they run through any sentence, whatever it is about. Words both languages
spell alike ("a", "no", "me", "he", "son", "sin") count for neither. "ñ", "¿", "¡" and
"-ción" count for Spanish, an accented vowel only beside Spanish words. French, Portuguese,
Italian and German have short lists of their own, so that "não é o que" or "c'est la vie"
reads as *unknown*, not as Spanish.

Measured on the evaluation data: of quotable's 2,127 English quotes, 2,117 read as English
and 10 as unknown ("A rolling stone gathers no moss."), none as Spanish; of 10,707 Spanish
sayings, 10,427 Spanish, 258 unknown (proverbs with no function word, "A barba muerta,
poca vergüenza.") and 22 English (they are: "Press any key to continue"); of STS-B dev's
3,000 English and 3,000 Spanish sentences, 2,864 and 2,993 read right, the rest unknown.
"""

import unicodedata

from books.vocabulary import words_of

ENGLISH = "en"
SPANISH = "es"
UNKNOWN = "unknown"
LANGUAGES = (ENGLISH, SPANISH, UNKNOWN)

# The winner needs this many marker words (a Spanish mark counts as one): one is enough
# for a short aphorism ("Fortune favors the brave.") as long as no other language has any…
MIN_EVIDENCE = 1
# …and this many times the evidence of any other language.
MIN_LEAD = 2.0


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ENGLISH_WORDS = _word_set(
    """the of and to in is it that was for on are with as at be by this have from or an
    they which you one were all we when there can been has more if will would what about
    who their out up do so into than its only other then them these some could my your
    our his her she him not but how any also just because should must shall us over
    after before every never nothing those where why while being am does did i don't
    it's isn't can't won't we're you're i'm that's there's let life man men love world
    people know think make see like without always often much
    many great good"""
)
_SPANISH_WORDS = _word_set(
    """el la los las de del y que en un una es por con para lo al se su sus más pero
    como le les ya o fue este esta esto ese esa eso está están era ser hay muy sin sobre
    también hasta donde quien quién cuando cuándo porque qué cómo todo todos nada nunca
    siempre otro otra entre mismo puede tiene hace yo tú él ella ellos nosotros vosotros
    nos te mi tu cada bien mal vida hombre mujer amor mundo dios ni si sí quien cual
    cuál bueno buena mucho poco menos tanto hacer dice dijo son"""
)
# Spelled alike in both: evidence for neither ("no" in "no man" and in "no hay").
_SHARED = frozenset({"a", "no", "me", "he", "son", "sin", "come", "dice", "once"})
_OTHER_WORDS = _word_set(
    """le et les des du une est dans pour pas qui sur au avec ce il elle nous vous sont
    c'est n'est je ne mais ou où aussi très être fait
    não é um uma do da dos das com para os em ao pela pelo você ele eles também mais
    il di che è non una gli delle della degli sono per questo anche più nel alla ho
    der die das und ist nicht ein eine zu mit sich auch auf für von dem den ich es
    sie wir"""
)
_ENGLISH = _ENGLISH_WORDS - _SHARED
# Some Spanish words are also Portuguese/Italian ("la", "que", "de"): they stay Spanish
# evidence; a Portuguese text still loses on its own words ("não", "é", "um", "com").
_SPANISH = _SPANISH_WORDS - _SHARED
_OTHER = _OTHER_WORDS - _SHARED - _ENGLISH - _SPANISH
_SPANISH_MARKS = frozenset("ñ¿¡")
_SPANISH_ACCENTED = frozenset("áéíóú")


def language_of(text: str) -> str:
    """ "en", "es" or "unknown" for a highlight's text (see the module's comment)."""
    text = unicodedata.normalize("NFC", text)
    words = words_of(text)
    english = sum(1 for word in words if word in _ENGLISH)
    spanish = sum(1 for word in words if word in _SPANISH)
    other = sum(1 for word in words if word in _OTHER)
    lowered = text.lower()
    if any(ch in _SPANISH_MARKS for ch in lowered):
        spanish += 1
    # "-ción" is Spanish alone (Portuguese writes "-ção", French "-tion", Italian "-zione").
    spanish += sum(1 for word in words if word.endswith(("ción", "ciones")))
    # An accented vowel is Spanish only in a text that has Spanish words too: French,
    # Portuguese and Italian accent their vowels as well ("é", "à", "ó").
    if spanish and any(ch in _SPANISH_ACCENTED for ch in lowered):
        spanish += 1
    scores = {ENGLISH: english, SPANISH: spanish, UNKNOWN: other}
    best = max(scores, key=lambda language: scores[language])
    runner_up = max(score for language, score in scores.items() if language != best)
    if best == UNKNOWN or scores[best] < MIN_EVIDENCE or scores[best] < MIN_LEAD * runner_up:
        return UNKNOWN
    return best
