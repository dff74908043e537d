"""Which highlights are a reader's *words*: too short to carry an idea. Pure, no Django.

Measured on the 72 Kindle files of the shared clippings corpus (~16,000 highlights) and on
one reader's library of 4,736 highlights, where 22 % were single words looked up while
reading ("allay", "ostensibly", "iota") and made 78 % of all connections ("allay ↔ allay").

- **Up to 3 words** are a word or a short phrase: the corpus's 1-3-word highlights are
  look-ups ("pyre."), names ("Proudhon,"), headings ("Why Incentives Fail") and fragments
  ("groves of trees"); a dictionary entry, not an idea another book could echo.
- **4 or 5 words with no verb** are still a phrase ("a rickety upright piano", "the sieve
  of Eratosthenes,", "DEFINITION OF A PLAYER"). With no part-of-speech tagger, a verb is
  recognised by the words that go with one: a copula, an auxiliary or a modal ("Linear
  models are easy", "Envy is concealed admiration"), a subject pronoun ("We douse the
  fire"), or a negation, in the languages Kindle readers highlight in most; and a
  sentence by its shape, a capital first and a full stop, "!" or "?" last ("Knowledge
  speaks, but wisdom listens.", "Wisdom begins in wonder.": 22 such aphorisms among 2,127
  quotes had no marker word).
- **Numbers and punctuation** are not words: "12. Rewards ignore reasons." counts 3 words,
  "6." and "[20]." none (a highlight with no letter at all carries no idea either).
- **Chinese, Japanese and Korean** are written without spaces, so word counts mean nothing:
  up to 6 of their characters ("孙权", "共感の危うさ") is a word or a phrase; the corpus's
  short CJK passages start at about 9 ("人は怒りを捏造する", "people fabricate anger").

Six or more words are a passage: from there on the corpus's highlights are sentences or
parts of one, but for a book's headings. A **heading** of any length (`is_heading`: in
capitals, in Title Case, a labelled, numbered or stepped part, with no sentence's
punctuation) is one of the reader's words too; `Highlight.refresh_is_word` applies it to
highlights, never to notes. A line in sentence case with no label is no heading: a saying
("Los programadores de música usan algorritmos") reads as a Spanish heading does ("La regla
de los dos minutos"), and sayings were the many (docs/words.md, 2026-12-07).
And **a short sentence** is a passage however short ("Knowledge is power.", "our struggles
determine our successes."): a verb marker and a sentence's end, four words or more and a
full stop, an exclamation of three words or more, or four or five words opening on a capital
with three in lower case ("El buen instrumento saca maestro").

Among the reader's words, `word_kind` tells what each one is (docs/words.md has the rule
measured on the shared corpus): a **look-up** ("allay", "perlocutionary", "fazzoletto":
one word of four letters or more, lower case, no number, no little word, no product's
CamelCase; two to four CJK characters), the only kind the words deck shows; a
**heading** ("Why Incentives Fail", "TABLE 1.1 Jarrett engagements, 1974/5",
"Introduction"); or a **fragment** ("continue to", "Introduce yourself", "groves of
trees", "access log", "Then"). Headings and fragments stay listed on their book's page
and found by keyword, never in the deck.
"""

import re
import unicodedata

from books.text import fold

# A highlight of this many words or fewer is vocabulary, whatever the words.
WORD_MAX_WORDS = 3
# Up to this many words, a highlight is vocabulary unless something in it marks a verb.
PHRASE_MAX_WORDS = 5
# Up to this many CJK characters (ideographs, kana, hangul), with no other words.
CJK_MAX_CHARACTERS = 6

# Words that only come with a verb: copulas, auxiliaries, modals, subject pronouns and
# negations, in English, Spanish, Portuguese, French, German and Italian. Lower case.
_MARKERS_BY_LANGUAGE = (
    # English
    "is are was were be been being am isn't aren't wasn't weren't have has had having do does"
    " did don't doesn't didn't will would shall should can could may might must won't can't"
    " cannot couldn't wouldn't shouldn't i you he she we they it there not never",
    # Spanish
    "es son era eran fue fueron ser está están estaba hay ha han había tiene tienen puede"
    " pueden yo tú él ella nosotros ellos ellas se no nunca",
    # Portuguese
    "é são foi eram estar estava tem têm eu ele nós eles não",
    # French
    "est sont était étaient être ont avait je tu il elle nous vous ils elles ne pas peut"
    " c'est n'est",
    # German
    "ist sind war waren sein hat haben wird werden kann können ich du er sie wir ihr nicht"
    " kein keine",
    # Italian
    "è sono erano essere hanno io lui lei noi loro non",
)
VERB_MARKERS = frozenset(word for line in _MARKERS_BY_LANGUAGE for word in line.split())

# Typographic apostrophes (U+2019, U+2018) and backticks read as the plain one.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})
# Letters at either end of a token are kept; quotes, brackets, dashes, numbering go.
_EDGE = re.compile(r"^[^\w']+|[^\w']+$")


def _is_cjk(character: str) -> bool:
    code = ord(character)
    return (
        0x3040 <= code <= 0x30FF  # hiragana, katakana
        or 0x3400 <= code <= 0x4DBF  # CJK extension A
        or 0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
        or 0xF900 <= code <= 0xFAFF  # compatibility ideographs
        or 0xAC00 <= code <= 0xD7AF  # hangul syllables
        or 0x20000 <= code <= 0x2FA1F  # the supplementary ideographs
    )


def words_of(text: str) -> list[str]:
    """The words of a text, lower case: tokens with at least one letter, edges stripped.

    Numbers ("12.", "1984") and punctuation are not words. CJK characters are left out
    (see `cjk_characters`).
    """
    words = []
    for token in text.translate(_APOSTROPHES).split():
        token = _EDGE.sub("", token)
        if any(ch.isalpha() and not _is_cjk(ch) for ch in token):
            words.append(token.lower())
    return words


def cjk_characters(text: str) -> int:
    return sum(1 for ch in text if _is_cjk(ch))


def has_verb_marker(words: list[str]) -> bool:
    return any(
        word in VERB_MARKERS
        # Contractions carry their verb: "it's", "you're", "we'll", "I've", "I'd".
        or re.search(r"'(s|re|ll|ve|m|d|t)$", word) is not None
        for word in words
    )


def looks_like_a_sentence(text: str) -> bool:
    stripped = text.strip().strip("\"'\u201c\u201d\u2018\u2019\u00ab\u00bb()[]")
    return bool(stripped) and stripped[0].isupper() and stripped[-1] in ".!?\u2026"


def ends_a_sentence(text: str) -> bool:
    stripped = text.strip().rstrip("\"'\u201c\u201d\u2018\u2019\u00ab\u00bb)]")
    return stripped[-1:] in (".", "!", "?", "\u2026") and not stripped.endswith("..")


def is_vocabulary(text: str) -> bool:
    """True when a highlight is too short to carry an idea: a word, a short phrase, a
    number. Such highlights are kept and listed as the reader's words, never connected."""
    text = unicodedata.normalize("NFC", text)
    words = words_of(text)
    cjk = cjk_characters(text)
    if cjk:
        # Mixed text (a Japanese sentence with a Latin name in it) is judged by both.
        return cjk <= CJK_MAX_CHARACTERS and len(words) <= WORD_MAX_WORDS
    if len(words) >= 2 and has_verb_marker(words) and ends_a_sentence(text):
        return False  # "Knowledge is power.": a sentence, however short
    if len(words) == WORD_MAX_WORDS and looks_like_a_sentence(text) and not _title_case(text):
        return False  # "Group composition matters.", "Voici mon secret."
    if len(words) >= WORD_MAX_WORDS and _exclaims(text):
        return False  # "ATENCIÓN ¡¡¡¡ Encontrados 3251 virus ..... Cargando DOOM¡¡¡¡¡"
    if len(words) <= WORD_MAX_WORDS:
        return True
    if len(words) <= PHRASE_MAX_WORDS and _in_sentence_case(text):
        return False  # "El buen instrumento saca maestro", "PWSPM uses fewer parameters"
    if len(words) <= PHRASE_MAX_WORDS:
        # The end of a sentence ("our struggles determine our successes."), unless the
        # selection opens on a preposition, article or conjunction: then it is the tail
        # of one ("to get to the tock.", "in a fully automated fashion.").
        tail = ends_a_sentence(text) and words[0] not in _OPENING_LITTLE_WORDS
        return not (has_verb_marker(words) or looks_like_a_sentence(text) or tail)
    return False


def _exclaims(text: str) -> bool:
    """An exclamation is speech or a sentence, never a phrase or a heading (is_heading)."""
    return "!" in text or "\u00a1" in text


# A sentence's start and this many words in lower case after it (little words not counted)
# read as a sentence, not as a phrase or a heading: headings capitalise their words (Title
# Case, capitals) or carry a label or a number. Measured (docs/words.md, 2026-12-07): four or
# five words so written were whole sayings ("El buen instrumento saca maestro", "Con gente
# mal criada, nada") or sentences ("PWSPM uses fewer parameters"); two lower-case words are
# still a heading's ("Learn to Eye Gaze (2 days)", "Fact #3: Process defines communication").
SENTENCE_LOWER_CASE_WORDS = 3


def _lower_case_words(tokens: list[str]) -> int:
    """How many of these tokens are words in lower case that are no little word ("versión",
    "aún", "mejor" in "Nueva versión, aún mejor: E=mc^3"; "your", "or" are not counted)."""
    bare = [_QUOTED_EDGE.sub("", token) for token in tokens]
    return sum(1 for t in bare if t[:1].islower() and t.lower() not in _LITTLE_WORDS)


def _in_sentence_case(text: str) -> bool:
    """A selection written as a sentence: a capital first, then SENTENCE_LOWER_CASE_WORDS
    words in lower case, not going on past its end (a last comma, dash or little word: "The
    power consumed by", "To stay indistractable in meetings,")."""
    tokens = text.translate(_APOSTROPHES).split()
    first = _QUOTED_EDGE.sub("", tokens[0]) if tokens else ""
    words = words_of(text)
    return (
        first[:1].isupper()
        and not _goes_on(text)
        and words[-1] not in _LITTLE_WORDS
        and _lower_case_words(tokens[1:]) >= SENTENCE_LOWER_CASE_WORDS
    )


_OPENING_LITTLE_WORDS = frozenset(
    word
    for line in (
        "a an the to as in for and or but nor with without of on at by from into than like",
        "more most so then",
        "el la los las un una de del en y o con sin para por que",
        "le les des du et ou à au aux dans sur pour par",
        "der die das den dem ein eine und oder mit von für auf zu",
        "o os um uma do da dos das no na e ou em com sem",
    )
    for word in line.split()
)


class WordKind:
    LOOK_UP = "look-up"
    HEADING = "heading"
    FRAGMENT = "fragment"


# Little words: a selection that holds one is part of a sentence ("continue to",
# "Introduce yourself", "of the"), not a word looked up. Articles, prepositions,
# conjunctions and pronouns of the languages above.
_LITTLE_WORDS_BY_LANGUAGE = (
    "a an the of to in on at by for from with into onto as and or but nor so if than"
    " that this these those it its you your yourself yourselves me my myself we our us"
    " he him his she her they them their what which who whom whose not no up out off"
    " el la los las un una unos unas de del al en y o que se su sus por para con sin lo"
    " le les des du et ou à au aux ce cette ces qui dans sur pour par"
    " der die das den dem des ein eine und oder zu im am mit von für auf"
    " o a os as um uma do da dos das no na nos nas e ou em aos às pelo pela pelos pelas",
    # Title Case keeps these in lower case too ("How Much Reading per Day ?").
    "per via vs versus",
)
_LITTLE_WORDS = frozenset(word for line in _LITTLE_WORDS_BY_LANGUAGE for word in line.split())
# Inside a phrase a reflexive pronoun is a little word ("Introduce yourself"); selected alone
# it is a word like "himself", "oneself" or "themselves", which were never on the list: a
# reader learning English looks them up. One rule for all of them (docs/words.md).
_REFLEXIVE_PRONOUNS = frozenset({"myself", "yourself", "yourselves"})
_NOT_LOOKED_UP_ALONE = _LITTLE_WORDS - _REFLEXIVE_PRONOUNS
# Words that are headings on their own: a book's parts, not something to look up.
_HEADING_WORDS_BY_LANGUAGE = (
    "introduction conclusion contents preface prologue epilogue foreword afterword"
    " acknowledgments acknowledgements appendix index bibliography notes summary chapter"
    " part glossary",
    "introducción conclusión prólogo epílogo índice capítulo prefacio agradecimientos"
    " apéndice bibliografía",
    "introdução conclusão prefácio agradecimentos apêndice sumário posfácio",
    "préface avant-propos remerciements épilogue sommaire",
    # German: a book's parts, which a German reader does not look up (a capitalised German
    # word is otherwise a look-up: German capitalises its nouns).
    "einleitung vorwort kapitel inhalt einführung nachwort danksagung inhaltsverzeichnis"
    " literaturverzeichnis anmerkungen zusammenfassung",
)
_HEADING_WORDS = frozenset(word for line in _HEADING_WORDS_BY_LANGUAGE for word in line.split())
_DIGIT = re.compile(r"\d")
_QUOTED_EDGE = re.compile(r"^\W+|\W+$")


def word_key(text: str, *, language: str = "") -> str:
    """The word a highlight is, as the words deck and a book's list of words know it: its
    tokens with a letter, edge punctuation stripped, accent- and case-folded ("10,000
    items" is "items", as numbers are no words here; "“Allay,”" is "allay"). "" for a
    highlight with no letter ("6.", "[20]."). A word looked up twice is one word.

    Without the elision `word_as_written` shows it without, by the same rule and the same
    `language` (the book's): "l'esprit" and "d'esprit" are the word "esprit", as their
    cards show it; "d'Artagnan" and an English book's "s'mores" keep theirs."""
    return fold(without_elision(_lettered(text), language=language))


def opens_on_elision(text: str) -> bool:
    """Whether a word's key (`word_key`) depends on its language: a word that opens on an
    elision ("l'esprit", "s'mores"), which a language that elides none keeps."""
    lettered = _lettered(text)
    return without_elision(lettered) != lettered


def _lettered(text: str) -> str:
    """The text's tokens with a letter, edge punctuation stripped, apostrophes plain."""
    tokens = []
    for token in unicodedata.normalize("NFC", text).translate(_APOSTROPHES).split():
        token = _QUOTED_EDGE.sub("", token)
        if any(ch.isalpha() for ch in token):
            tokens.append(token)
    return " ".join(tokens)


def _caught_by_the_selection(character: str) -> bool:
    """Punctuation, a symbol, a space or an invisible format character (a direction mark,
    a zero-width space, a soft hyphen): what a selection catches at a word's edge. Never a
    letter, a digit or a combining mark (a Thai or Devanagari vowel sign, an Arabic
    vowel, which a regular expression's non-word class counts in, and cut "राजा" to "राज")."""
    category = unicodedata.category(character)
    return category[0] in "PSZ" or category == "Cf"


def word_as_written(text: str, *, language: str = "") -> str:
    """A word highlight as the words deck and the words list show it: without the
    punctuation and quotes the selection caught at either end ("“ostensibly,”" ->
    "ostensibly", "largess," -> "largess"); as it is when nothing else is left ("—?").
    Without a French or Italian elided article or pronoun either (`without_elision`):
    "l'assimilant" is the word "assimilant"."""
    word = " ".join(unicodedata.normalize("NFC", text).split())
    start, end = 0, len(word)
    while start < end and _caught_by_the_selection(word[start]):
        start += 1
    while end > start and _caught_by_the_selection(word[end - 1]):
        end -= 1
    return without_elision(word[start:end], language=language) or text


# French and Italian write an article, a pronoun or a conjunction before a vowel as one word
# with the next ("l'assimilant", "j'aurais", "qu'elles", "dell'anima"), and a reader selects
# both: the word to learn is the second. Longest first, so "jusqu'" is not read as "qu'".
_ELISIONS_BY_LANGUAGE = (
    "jusqu lorsqu puisqu quoiqu qu l d j n m t s c",  # French
    "dell dall nell sull all coll pell quell quest nessun un tutt v",  # Italian
)
_ELISION = re.compile(
    "^(?:{})['\u2019]".format(
        "|".join(sorted({e for line in _ELISIONS_BY_LANGUAGE for e in line.split()}, key=len)[::-1])
    ),
    re.IGNORECASE,
)
# Languages that elide no article (books.language): in an English book "s'mores", "c'mon"
# are the words. A word alone seldom tells its language, so an unknown one is elided.
_NO_ELISION_LANGUAGES = frozenset({"en", "de", "es", "pt"})
# What follows must be a word of its own: "jusqu'à", "qu'il", "c'è" stay as written.
ELIDED_WORD_MIN_LETTERS = 3


def without_elision(word: str, *, language: str = "") -> str:
    """A single word without the French or Italian elision it opens on ("l'assimilant" ->
    "assimilant", "d'expliquer" -> "expliquer", "dell'anima" -> "anima"), unless `language`
    elides none, or what follows is no word of its own: too short ("jusqu'à"), or a name
    ("d'Artagnan", "O'Neill": a capital after the apostrophe)."""
    match = _ELISION.match(word)
    if match is None or language in _NO_ELISION_LANGUAGES:
        return word
    rest = word[match.end() :]
    letters = [ch for ch in rest if ch.isalpha()]
    shaped = all(ch.isalpha() or ch in "'\u2019-" for ch in rest)
    if rest[:1].islower() and shaped and len(letters) >= ELIDED_WORD_MIN_LETTERS:
        return rest
    return word


# The language (books.language.GERMAN) that writes every noun with a capital.
NOUNS_CAPITALISED = "de"


# Longer than any word a reader looks up or a chapter is titled with (German's longest,
# a 63-letter law's name, included).
LONGEST_WORD = 64


def word_kind(text: str, *, language: str = "") -> str:
    """What one of the reader's words (`is_vocabulary`) is: a look-up, a heading or a
    fragment (see the module's docstring). `language`: the book's (books.selectors.
    book_languages), else the highlight's own; German capitalises its nouns."""
    text = unicodedata.normalize("NFC", text).strip()
    words = words_of(text)
    if cjk_characters(text):
        # Two to four characters: "孙权", "俯瞰"; not a kana alone, not a phrase with its
        # particles ("共感の危うさ").
        short = 2 <= cjk_characters(text) <= 4
        looked_up = short and not words and not _DIGIT.search(text)
        return WordKind.LOOK_UP if looked_up else WordKind.FRAGMENT
    if not words:
        return WordKind.FRAGMENT  # a number or marks: nothing to look up
    if max(len(word) for word in words) > LONGEST_WORD:
        return WordKind.FRAGMENT  # a run of letters pasted or held down: no word, no title
    if is_heading(text, language=language):
        # "Why Readers Stop", "THE QUIET HOURS", "1 Reading From the Margins",
        # "Step 3: Write it down", "Capítulo tres", "CHAPTER SEVEN: THE POWER OF HABIT …"
        return WordKind.HEADING
    # Quotes go too: a quoted "Leading Snowflakes" is a title, capitalised.
    tokens = [_QUOTED_EDGE.sub("", token) for token in text.translate(_APOSTROPHES).split()]
    tokens = [token for token in tokens if token]
    if _DIGIT.search(text):
        # "TABLE 1.1 Jarrett engagements, 1974/5", "Chapter 3"; not "Oslo: $1180," (the
        # comma: a sentence goes on) nor "12. Readers forget names." (a list's sentence).
        heading = (
            tokens[0][:1].isupper()
            and not _goes_on(text)
            and not _exclaims(text)
            and _lower_case_words(tokens[1:]) < SENTENCE_LOWER_CASE_WORDS
        )
        return WordKind.HEADING if heading else WordKind.FRAGMENT
    if len(words) == 1:
        if words[0] in _HEADING_WORDS or (
            text.isupper() and len(words[0]) > 1 and not _goes_on(text)
        ):
            return WordKind.HEADING
        word = tokens[0] if tokens else words[0]
        if "/" in word or "@" in word:
            return WordKind.FRAGMENT  # an address, a path
        if words[0] in _NOT_LOOKED_UP_ALONE or len(words[0]) < 4 or _camel_case(word):
            return WordKind.FRAGMENT  # "de", "Já", a product's name ("PowerNode")
        if word[:1].isupper() and language != NOUNS_CAPITALISED:
            # Measured: of the corpus's capitalised single words, 2 in 8 were looked up;
            # the rest start a sentence ("Then", "Compare"), name someone ("Paris"), or
            # label. Not in German, where "Mädchen" is a noun as written mid-sentence.
            return WordKind.FRAGMENT
        return WordKind.LOOK_UP
    # Two words are a phrase, not a look-up: measured on the shared corpus, 1 in 9 of the
    # two-word selections of lower-case letters was looked up ("redressement productif");
    # the others were terms and bits of sentences ("access log", "climate grief"). Names and
    # titles cited inside a sentence ("Maria Lopez's", "Common Ground.") are here too.
    return WordKind.FRAGMENT


# Headings longer than a phrase. Measured on the shared corpus (docs/words.md): 96 of its
# 12,570 highlights were a book's headings of four words or more that read as passages: a
# part's or chapter's title in capitals ("CHAPTER SEVEN: THE POWER OF HABIT AND THE BRAIN")
# or in Title Case ("How Habits Shape the Architecture of Everyday Life"). As passages they
# were embedded and connected, heading to heading (chapter one's title to chapter two's).
# The longest was 19 words; past HEADING_MAX_WORDS a highlight is a passage whatever its case.
HEADING_MAX_WORDS = 20
# The words that label a book's parts when a number follows ("Chapter 7:", "Parte II.",
# "Kapitel 3") or comes first ("Primera parte", "Erster Teil"), in the languages of the
# markers above.
_LABELS_BY_LANGUAGE = (
    "chapter part book section appendix",
    "capítulo capitulo parte libro sección seccion apéndice título titulo",
    "chapitre partie livre section annexe titre",
    "kapitel teil buch abschnitt anhang",
    "capitolo sezione appendice titolo",
    "livro seção secção apêndice",
)
_LABELS = frozenset(word for line in _LABELS_BY_LANGUAGE for word in line.split())
# A labelled heading in sentence case has no other sign of one: kept short.
LABELLED_MAX_WORDS = 12
# The words that number a book's steps, lessons and rules ("Step 3: Write it down", "Fact
# #4: Silence is an answer", "Paso 2: Elige un hábito"). Measured on the shared corpus: what
# follows them in sentence case runs long when it is an instruction (13 words and more) and
# stays short when it is a heading, so they get STEP_MAX_WORDS.
_STEP_LABELS_BY_LANGUAGE = (
    "step lesson rule principle fact option phase stage tip law",
    "paso lección leccion regla principio etapa fase consejo ley",
    "passo lição licao regra princípio principio dica lei",
    "étape leçon règle principe",
    "schritt lektion regel prinzip stufe tipp gesetz",
    "lezione regola",
)
_STEP_LABELS = frozenset(word for line in _STEP_LABELS_BY_LANGUAGE for word in line.split())
# The words that open an exercise's heading with no number ("Ejercicio: Dibujar el día",
# "Exercise: Draw your week"); an adjective may come between ("Ejercicio imaginario:").
_EXERCISE_LABELS_BY_LANGUAGE = (
    "exercise exercises ejercicio ejercicios exercice exercício exercicio übung esercizio",
)
_EXERCISE_LABELS = frozenset(word for line in _EXERCISE_LABELS_BY_LANGUAGE for word in line.split())
# A numbered or stepped heading in sentence case ("1. Start small", "Step 3: Write it down").
STEP_MAX_WORDS = 8
# A number alone (no label) before as many words in lower case as this is a list's item, a
# sentence: "3. Handling problems your outsourcers or co-workers can handle" (5; a realistic
# library's, 2026-12-07), "7. Working where you live, sleep, or should relax" (the shared
# corpus's); "1. Start small", "3. Leer despacio" (1) head a section.
LIST_SENTENCE_LOWER_CASE_WORDS = 4
_NUMBER_WORDS_BY_LANGUAGE = (
    "one two three four five six seven eight nine ten eleven twelve first second third"
    " fourth fifth sixth seventh eighth ninth tenth last final",
    "uno una dos tres cuatro cinco seis siete ocho nueve diez primero primera segundo"
    " segunda tercero tercera cuarto cuarta quinto quinta último última",
    "un deux trois quatre cinq six sept huit neuf dix premier première deuxième troisième",
    "eins zwei drei vier fünf sechs sieben acht neun zehn erster erste zweiter zweite"
    " dritter dritte letzter letzte",
)
_NUMBER_WORDS = frozenset(word for line in _NUMBER_WORDS_BY_LANGUAGE for word in line.split())
# A number as a heading numbers: "7", "7:", "1.2.", "II.", "IX", "A.", "#4:".
_NUMERAL = re.compile(r"^#?(?:\d+(?:\.\d+)*|[ivxlcdm]+|[a-z])[.:)]?$", re.IGNORECASE)
# A number that opens a heading with no label ("1 Reading From the Margins", "2. Start small",
# "#3: KEEP A READING LOG", "(4)", "IV. Endings"): up to three
# digits (a year opens a sentence: "1984 was"), a Roman numeral only with its mark ("I am").
_LEADING_NUMBER = re.compile(r"^(?:#?\d{1,3}(?:\.\d+)*[.:)]?|\(\d{1,3}\)|[IVXLC]+[.:)])$")
# "U.S.", "e.g.": letters and dots, not the end of a sentence; and a few abbreviations.
_ABBREVIATION = re.compile(r"^(?:\w\.){2,}$")
_ABBREVIATIONS = frozenset(
    word for line in ("mr. mrs. ms. dr. st. vs. no. vol. sr. sra.",) for word in line.split()
)
_CLOSING = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb)]"
_OPENING_QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u201e"
_DASHES = ("-", "\u2013", "\u2014", ":")


def is_heading(text: str, *, language: str = "") -> bool:
    """True when a highlight is a book's heading however long: in capitals or Title Case, a
    labelled part ("Parte II. La construcción del yo", "Primera parte"), a numbered one or a
    step ("1. Start small", "Step 3: Write it down"), with no sentence's punctuation in it.
    Headings are the reader's words (`word_kind` HEADING): kept, listed, never connected.
    `language`: in German ("de") capitalised words are no sign of a heading.

    A sentence is not a heading in any case: one that ends on ".", "!" or "…", holds two
    sentences ("TAXES ARE A PRICE. THE STATE …"), exclaims ("¡…!"), or is speech wholly in quotes
    (a character's shouted line, “STOP THE CAR, YOU FOOL,”). A question is allowed: headings
    ask ("WHAT IS A HABIT?", "CHAPTER X WHY DO WE FORGET?"). Nor is a selection that goes on
    (a last comma or dash), a possessive, a citation ("et al."), an address, or a selection
    wholly in brackets ("(ACME)").
    """
    text = unicodedata.normalize("NFC", text).strip()
    words = words_of(text)
    if not words or len(words) > HEADING_MAX_WORDS or cjk_characters(text):
        return False
    if "!" in text or "\u00a1" in text or ";" in text or "\u2026" in text:
        return False
    if text[:1] in "\u2014\u2013-" or (
        text[:1] in _OPENING_QUOTES and text.rstrip(_CLOSING) != text
    ):
        return False  # speech: a dialogue's dash ("—NO VOY A VOLVER"), or wholly quoted
    if _goes_on(text):
        return False
    tokens = text.translate(_APOSTROPHES).split()
    if tokens[-1].rstrip(_CLOSING).endswith(".") and not _abbreviation(tokens[-1]):
        return False
    for token in tokens[:-1]:
        bare = token.rstrip(_CLOSING)
        if bare.endswith("?") or (
            bare.endswith(".")
            and any(ch.isalnum() for ch in bare)
            and not _NUMERAL.match(bare)
            and not _abbreviation(bare)
        ):
            return False  # two sentences, or a sentence and more
    letters = [ch for ch in text if ch.isalpha()]
    if not any(ch.islower() for ch in letters) and len(words) >= 2:
        return True  # "PARTE II. LA CONSTRUCCIÓN DEL YO EN LA INFANCIA"
    if _labelled(tokens) or _numbered(tokens):
        return True  # "Capítulo 3. La memoria del agua", "1. Start small"
    return language != NOUNS_CAPITALISED and _capitalised_words(tokens)


def _goes_on(text: str) -> bool:
    """A selection that is part of a sentence however it is capitalised: it ends on a comma
    or a dash ("The Golden Rule,", "(3) Sheer patience—"), on a possessive ("Maria Lopez's"),
    cites ("Smith et al."), holds an address, or is wholly in brackets ("(ACME)")."""
    bare = text.translate(_APOSTROPHES).rstrip(_CLOSING + " ")
    lowered = text.lower()
    return (
        bare.endswith((",", "-", "\u2013", "\u2014", "'s"))
        or "et al" in lowered
        or "://" in lowered
        or "www." in lowered
        or (text[:1] in "([" and text.rstrip(",.;: ")[-1:] in ")]")
    )


def _abbreviation(token: str) -> bool:
    return bool(_ABBREVIATION.match(token)) or token.lower() in _ABBREVIATIONS


def _labelled(tokens: list[str]) -> bool:
    """A label and its number ("Chapter 7:", "PARTE II.", "Kapitel drei -", "Step 3:"), or
    the number first ("Primera parte", "Erster Teil:"), then a capital or nothing more
    ("Capítulo tres"); "Part 2 of the plan" and "Appendix B (page 301) lists" are sentences,
    and so is "Step Three: measure how long each reader spends on a page"."""
    if len(tokens) < 2:
        return False
    first, second = (_QUOTED_EDGE.sub("", token).lower() for token in tokens[:2])
    if first in _EXERCISE_LABELS and (tokens[0].endswith(":") or tokens[1].endswith(":")):
        # "Ejercicio: Dibujar el día", "Ejercicio imaginario: Un paseo por la biblioteca"
        rest = tokens[1:] if tokens[0].endswith(":") else tokens[2:]
        return _heads(rest, max_words=STEP_MAX_WORDS)
    if first.rstrip(".:)") in _NUMBER_WORDS and second in _LABELS:
        # "Primera parte", "Segunda parte: La casa", "Erster Teil"
        return tokens[0][:1].isupper() and (len(tokens) == 2 or _heads(tokens[2:]))
    if first in _LABELS:
        max_words = LABELLED_MAX_WORDS
    elif first in _STEP_LABELS:
        max_words = STEP_MAX_WORDS
    else:
        return False
    number = tokens[1].lower()
    if not (_NUMERAL.match(number) or number.rstrip(".:)") in _NUMBER_WORDS):
        return False
    if len(tokens) == 2:
        return tokens[0][:1].isupper()  # "Capítulo tres", "Part Two", "Step 3"
    return len(tokens) <= LABELLED_MAX_WORDS + 1 and _heads(tokens[2:], max_words=max_words)


def _numbered(tokens: list[str]) -> bool:
    """A number, then a heading ("1 Reading From the Margins", "#3: KEEP A READING LOG",
    "2. Start small"). In sentence case not a question: the corpus's numbered
    questions are a list's ("7. What are you reading now?")."""
    if len(tokens) < 2 or not _LEADING_NUMBER.match(tokens[0]):
        return False
    return _heads(tokens[1:], max_words=STEP_MAX_WORDS, questions=False, listed=True)


def _heads(
    tokens: list[str],
    *,
    max_words: int = LABELLED_MAX_WORDS,
    questions: bool = True,
    listed: bool = False,
) -> bool:
    """What follows a label or a number is a heading's: opens on a capital, and is in
    capitals, in Title Case, or short ("Write it down") and not cut off on a little word
    ("2. Make a list of the"). After a number alone (`listed`) a run of lower-case words
    is a list's sentence ("3. Handling problems your outsourcers or co-workers can
    handle"); a label keeps its title in sentence case ("Step 4: Write it down before it is
    forgotten", "Capítulo 4: El cerebro que se cambia a sí mismo")."""
    rest = [token for token in tokens if token not in _DASHES]
    lettered = [t for t in (_QUOTED_EDGE.sub("", token) for token in rest) if t[:1].isalpha()]
    if not lettered or not lettered[0][:1].isupper():
        return False
    words = words_of(" ".join(rest))
    if not any(ch.islower() for token in lettered for ch in token):
        return True  # "STEP 2: REST"
    if _capitalised_words(rest):
        return True  # "7 Reading Slowly"
    question = rest[-1].rstrip(_CLOSING).endswith("?")
    sentence = listed and _lower_case_words(rest) >= LIST_SENTENCE_LOWER_CASE_WORDS
    return (
        len(words) <= max_words
        and words[-1] not in _LITTLE_WORDS
        and (questions or not question)
        and not sentence
    )


def _capitalised_words(tokens: list[str]) -> bool:
    """Title Case: every word but the little ones opens on a capital, the first too, and at
    least two words open on one ("The Lantern", "The Power of Habit"; a sentence has a verb in
    lower case)."""
    bare = [_QUOTED_EDGE.sub("", token) for token in tokens]
    lettered = [t for t in bare if t[:1].isalpha()]
    if not lettered or not lettered[0][:1].isupper():
        return False
    content = [t for t in lettered if t.lower() not in _LITTLE_WORDS]
    capitalised = [t for t in lettered if t[:1].isupper()]
    return bool(content) and len(capitalised) >= 2 and all(t[:1].isupper() for t in content)


def _camel_case(token: str) -> bool:
    return any(ch.isupper() for ch in token[1:]) and not token.isupper()


def _title_case(text: str) -> bool:
    tokens = [_QUOTED_EDGE.sub("", token) for token in text.split()]
    content = [t for t in tokens if t and t.lower() not in _LITTLE_WORDS]
    return bool(content) and all(t[:1].isupper() for t in content)


def is_look_up(text: str, *, language: str = "") -> bool:
    """A word a reader looks up: the words deck's cards."""
    return is_vocabulary(text) and word_kind(text, language=language) == WordKind.LOOK_UP
