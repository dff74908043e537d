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

Six or more words are always a passage: from there on the corpus's highlights are
sentences or parts of one.
"""

import re
import unicodedata

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


def is_vocabulary(text: str) -> bool:
    """True when a highlight is too short to carry an idea: a word, a short phrase, a
    number. Such highlights are kept and listed as the reader's words, never connected."""
    text = unicodedata.normalize("NFC", text)
    words = words_of(text)
    cjk = cjk_characters(text)
    if cjk:
        # Mixed text (a Japanese sentence with a Latin name in it) is judged by both.
        return cjk <= CJK_MAX_CHARACTERS and len(words) <= WORD_MAX_WORDS
    if len(words) <= WORD_MAX_WORDS:
        return True
    if len(words) <= PHRASE_MAX_WORDS:
        return not (has_verb_marker(words) or looks_like_a_sentence(text))
    return False
