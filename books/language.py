"""Which language a highlight is written in: English, Spanish, German, Portuguese, French,
Italian or unknown. Pure, no Django.

The pair judge (books.connections.judge) weighs a pair by its two languages:
multilingual-e5-small puts two texts of one language closer than the same idea across two
languages (STS-B: exact translations sit ~0.05 farther apart than same-language
paraphrases), and it knows German, Portuguese and French less well than English and
Spanish. The detector says *unknown* whenever the evidence is thin or split.

The evidence is function words (articles, prepositions, pronouns, conjunctions, the
commonest verbs): they run through any sentence, whatever it is about. Words two languages
spell alike ("a", "no", "me", "il", "das") count for neither; Spanish words that Portuguese,
French or Italian write too ("la", "que", "de", "con") count for Spanish against English
only. "ñ", "¿", "¡" and "-ción" count for Spanish, an accented vowel only in a text that
reads as Spanish already; "ä", "ö", "ß" for German, "ã", "õ", "-ção" for Portuguese,
"ê", "â", "œ"… and "qu'", "n'", "j'" for French, "-zione" for Italian.

Measured on the evaluation data (docs/evaluation.md, 2026-12-04 judge v2): of quotable's
2,127 English quotes, 2,117 read as English and 10 as unknown; of 10,766 Spanish sayings,
10,489 Spanish, 246 unknown (proverbs with no function word), 23 English (they are: "Press
any key to continue") and 8 French, Italian or German; of 12,615 German sayings, 11,939
German (none before: all unknown or English); of 2,507 Portuguese sayings, 1,675
Portuguese and 217 Spanish (1,086 Spanish before); of STS-B dev's 3,000 English and 3,000
Spanish sentences, 2,861 and 2,996 read right, the rest unknown but 2; of a real Kindle
file's 100 French passages, 89 French (none before).
"""

import unicodedata

from books.vocabulary import words_of

ENGLISH = "en"
SPANISH = "es"
GERMAN = "de"
PORTUGUESE = "pt"
FRENCH = "fr"
ITALIAN = "it"
UNKNOWN = "unknown"
LANGUAGES = (ENGLISH, SPANISH, GERMAN, PORTUGUESE, FRENCH, ITALIAN, UNKNOWN)

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
# German, Portuguese, French and Italian: their commonest function words, less those a
# Spanish sentence writes too ("dos", "pelo", "mas", "cosa", "sur", "loro"). A word two of these
# lists share ("il" in French and Italian), or that the English or Spanish list has ("la",
# "que", "de"), counts for none of them.
_OTHER_WORDS = {
    GERMAN: _word_set(
        """der die das und ist nicht ein eine zu mit sich auch auf für von dem den ich es
        sie wir ihr er wenn aber oder noch nur wie man bei aus nach wird sind war hat haben
        kann muss immer schon sein seine einem einen einer dass daß als doch kein keine
        nichts mehr mich mir dich dir uns euch wer alles ganz viel selbst zum zur vom im"""
    ),
    PORTUGUESE: _word_set(
        """não é um uma do das com em ao você ele eles também mais
        as no na nos nas seu sua foi está são tem muito quando já isso ela eu meu
        minha porque até sem ser há coisa vida homem mulher nunca sempre tudo nada quem
        onde ou pode só bem fazer"""
    ),
    FRENCH: _word_set(
        """le la les des du une est dans pour pas qui sur au avec ce il elle nous vous sont
        c'est n'est je ne mais où aussi très être fait et un que en se sa son ses plus
        leur tout cette comme on ils elles ont été sans peut faire bien rien jamais
        toujours quand parce qu'il qu'on l'homme aux cet ces"""
    ),
    ITALIAN: _word_set(
        """il di che è non una gli delle della degli sono per questo anche più nel alla
        ho lo dei del nella dello alle ai con ma come sempre quando perché tutto
        essere fatto molto ci si mi io tu lui lei noi voi mio suo hanno"""
    ),
}
_ENGLISH = _ENGLISH_WORDS - _SHARED
# Some Spanish words are also Portuguese/Italian ("la", "que", "de"): they stay Spanish
# evidence; a Portuguese text still wins on its own words ("não", "é", "um", "com").
_SPANISH = _SPANISH_WORDS - _SHARED


def _own_words(language: str) -> frozenset[str]:
    others = set().union(*(w for lang, w in _OTHER_WORDS.items() if lang != language))
    return _OTHER_WORDS[language] - _SHARED - _ENGLISH - _SPANISH - others


_OTHER = {language: _own_words(language) for language in _OTHER_WORDS}
# Spanish function words that Portuguese, French or Italian write alike ("la", "que", "de",
# "con", "como"): Spanish evidence against English, none against those three.
_ROMANCE = _SPANISH & set().union(
    *(_OTHER_WORDS[lang] for lang in (PORTUGUESE, FRENCH, ITALIAN))
) | frozenset(
    """o se te lo mi tu si nos una con como para nunca nada todo entre sobre quando""".split()  # noqa: SIM905
)
# French elisions no other of the six writes: "qu'il", "n'a", "j'ai".
_FRENCH_ELISIONS = ("qu'", "n'", "j'")
_SPANISH_MARKS = frozenset("ñ¿¡")
_SPANISH_ACCENTED = frozenset("áéíóú")
# Letters one language alone writes among the six: a word with one counts once.
_OTHER_MARKS = {
    GERMAN: frozenset("äöß"),  # not "ü": Spanish writes "vergüenza"
    PORTUGUESE: frozenset("ãõ"),
    FRENCH: frozenset("êëâîïûœ"),
}
# Endings one language alone writes: "-ção" Portuguese, "-zione" Italian.
_OTHER_ENDINGS = {PORTUGUESE: ("ção", "ções"), ITALIAN: ("zione", "zioni")}


def language_of(text: str) -> str:
    """ "en", "es", "de", "pt", "fr", "it" or "unknown" for a highlight's text (see the
    module's comment)."""
    text = unicodedata.normalize("NFC", text)
    words = words_of(text)
    lowered = text.lower()
    scores = {
        ENGLISH: sum(1 for word in words if word in _ENGLISH),
        SPANISH: sum(1 for word in words if word in _SPANISH),
    }
    for language, own in _OTHER.items():
        marks = _OTHER_MARKS.get(language, frozenset())
        endings = _OTHER_ENDINGS.get(language, ())
        scores[language] = sum(
            1
            for word in words
            if word in own
            or (marks and any(ch in marks for ch in word))
            or (endings and word.endswith(endings))
            or (language == FRENCH and word.startswith(_FRENCH_ELISIONS))
        )
    if any(scores[lang] for lang in _OTHER):
        # Against Portuguese, French or Italian, Spanish counts only its own words.
        scores[SPANISH] = sum(1 for word in words if word in _SPANISH and word not in _ROMANCE)
    if any(ch in _SPANISH_MARKS for ch in lowered):
        scores[SPANISH] += 1
    # "-ción" is Spanish alone (Portuguese writes "-ção", French "-tion", Italian "-zione").
    scores[SPANISH] += sum(1 for word in words if word.endswith(("ción", "ciones")))
    # An accented vowel is Spanish only in a text that reads as Spanish already: French,
    # Portuguese and Italian accent their vowels as well ("é", "à", "ó").
    if scores[SPANISH] > max(scores[lang] for lang in _OTHER) and any(
        ch in _SPANISH_ACCENTED for ch in lowered
    ):
        scores[SPANISH] += 1
    best = max(scores, key=lambda language: scores[language])
    if best in (ENGLISH, SPANISH):
        # English and Spanish against each other, and against all the others together
        # (a text half French, half Portuguese is not English for lack of a winner).
        runner_up = max(
            scores[SPANISH if best == ENGLISH else ENGLISH], sum(scores[lang] for lang in _OTHER)
        )
    else:
        runner_up = max(score for language, score in scores.items() if language != best)
    if scores[best] < MIN_EVIDENCE or scores[best] < MIN_LEAD * runner_up:
        return UNKNOWN
    return best
