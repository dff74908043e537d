"""Text folding: the one source of every fold in the project, each named for what it
ignores (tests/books/test_text.py holds the table of what each one does).

- `fold`: accents and case, for keyword search, names and sorting. Folded in Python
  rather than with PostgreSQL's `unaccent`, which the embedded server does not ship:
  `liquidación` → `liquidacion`, `Ärger` → `arger`, `Straße` → `strasse`.
- `search_fold`: `fold`, and each run of Chinese or Japanese characters written as its
  overlapping pairs (`脳を休ませる` → `脳を を休 休ま ませ せる る`): the stored copy that
  keyword search reads, where a run without spaces would be one word. `search_words`
  writes a query's words the same way.
- `fold_keeping_kana_marks`: `fold`, except that kana keep their voicing marks; the
  identity of a book (books.importing.identity) is keyed by it.
- `collapse_spacing`: whitespace runs only: a richer format's note (books.importing.enrich)
  that differs from the one kept only by its line breaks changes nothing.
- `fold_spacing`: whitespace runs and case, accents kept: a Kindle note the reader already
  has, written again with other line breaks or capitals, is the same note.
- `fold_spacing_and_bom`: the same, and byte-order marks dropped: two versions of one
  highlight (a Kindle file's first entry carries the file's mark) compare by this, and
  the evaluation finds a passage in the shared data by it.
- `tag_name`: `fold_spacing`, then cut to the characters a tag's name holds: the fold
  comes first, as it can lengthen a name (`ß` → `ss`) past the column.

Not a fold, but text as it is shown: `without_bidi_controls` and `without_controls`
(docs/security.md).
"""

import re
import unicodedata
from collections.abc import Sequence

BYTE_ORDER_MARK = "\ufeff"
# A word as PostgreSQL's parser cuts one: letters and digits (it splits at "_" too).
WORD = re.compile(r"[^\W_]+")
# A name written with symbols PostgreSQL's parser drops: "+" or "#" after it ("C++", "C#",
# "F#", "A+") or a dot before it (".NET"). The index holds "c++" as "c", which every
# "vitamin C" has: such a name is found as written (`literal`, `literal_pattern`). Dots
# inside a word are no such name ("node.js", "3.14", "e.g.", "J.K.", "example.com"): the
# parser keeps them, one word, and a query finds it so (`dotted`).
_LITERAL = re.compile(r"\.[^\W_]+(?:\.[^\W_]+)*[+#]*|[^\W_]+(?:\.[^\W_]+)*[+#]+")
_DOTTED = re.compile(r"[^\W_]+(?:\.[^\W_]+)+")
# What stands around a token without being part of it: quotes, brackets, a sentence's stops.
_AROUND_A_TOKEN = "\"'()[]{}<>,;:!?¿¡«»\u201c\u201d\u2018\u2019"


def _bare(token: str) -> str:
    return token.strip(_AROUND_A_TOKEN).rstrip(".").strip(_AROUND_A_TOKEN)


def literal(token: str) -> str:
    """A token ("C++,", "(.net)", "f#.") as the name it writes, to be found as written, or
    "" for a word PostgreSQL's parser reads whole ("end.", "don't", "#tag", "-word",
    "node.js", "J.K.", "3.14")."""
    name = _bare(token)
    return name if _LITERAL.fullmatch(name) else ""


def dotted(token: str) -> str:
    """A token of words joined by single dots ("node.js.", "J.K.", "3.14", "vol.2") as the
    one word PostgreSQL's parser reads ("node.js", "j.k"), or "". A text may write the same
    words apart ("J. K. Rowling"): a query looks for either."""
    name = _bare(token)
    return name if _DOTTED.fullmatch(name) else ""


def literal_pattern(name: str) -> str:
    """A regular expression, Python's and PostgreSQL's alike, finding a `literal` (folded)
    where it stands whole, as the index holds its words: "c++" not in "abc++", ".net" not in
    "asp.net" (one word to PostgreSQL's parser); a version may follow a "+" or "#" ("c++"
    in "c++17", as the parser reads "c" and "+17")."""
    after = r"(?:(?!\w)|(?=\d))" if name.endswith(("+", "#")) else r"(?!\w)"
    return rf"(?<!\w){re.escape(name)}{after}"


def fold(text: str) -> str:
    if text.isascii():
        return text.casefold()  # nothing to decompose: the common case, and much faster
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return stripped.casefold()


# Chinese and Japanese letters as they are after `fold`: hiragana and katakana (not their
# spacing marks or the middle dot), the iteration marks 々〆〇, and the ideographs. Not
# Hangul: Korean puts spaces between words, and NFKD has split its syllables into jamo.
CJK_RUN = re.compile(
    "[\u3005-\u3007\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff"
    "\u3400-\u4dbf\u4e00-\u9fff\U00020000-\U0002fa1f]+"
)
_CJK_RUN_AT_END = re.compile(CJK_RUN.pattern + "$")


def _pairs(run: re.Match[str]) -> str:
    # Each character starts a token (the last one alone), so that a one-character query
    # finds it as a prefix: `脳` is the start of `脳を`, and the run's last `る` stands alone.
    text = run.group()
    return " " + " ".join([text[i : i + 2] for i in range(len(text) - 1)] + [text[-1]]) + " "


def search_fold(text: str) -> str:
    """The keyword text of a highlight: `fold`, with Chinese and Japanese written as pairs
    of characters, the way full-text engines index languages without spaces (Lucene's CJK
    bigrams). PostgreSQL's parser reads a run without spaces as one word, so that without
    the pairs `情報` did not find `情報を集める`."""
    folded = fold(text)
    return folded if folded.isascii() else CJK_RUN.sub(_pairs, folded)


def search_words(words: Sequence[str]) -> tuple[str, ...]:
    """A query's folded words (a word, or a phrase's words) as `search_fold` stores them, in
    order, to be found as a phrase: `休ませる` → `休ま ませ せる`. The last run's lone last
    character is left out (the text's run may go on: `休ませるため`), unless it is the whole
    run: a one-character query is a prefix (`is_prefix`)."""
    written = [token for word in words for token in CJK_RUN.sub(_pairs, word).split()]
    end = _CJK_RUN_AT_END.search(words[-1]) if words else None
    if end is not None and len(end.group()) > 1:
        written.pop()
    return tuple(written)


def is_prefix(words: Sequence[str], index: int) -> bool:
    """Whether `search_words`' word at `index` stands for every word it starts: a lone
    Chinese or Japanese character at the end of a query's words."""
    word = words[index]
    return index == len(words) - 1 and len(word) == 1 and CJK_RUN.fullmatch(word) is not None


def collapse_spacing(text: str) -> str:
    return " ".join(text.split())


def fold_spacing(text: str) -> str:
    return collapse_spacing(text).casefold()


# The longest tag name (books.models.Tag.name).
TAG_MAX_LENGTH = 64


def tag_name(name: str) -> str:
    return fold_spacing(name)[:TAG_MAX_LENGTH].rstrip()


def fold_spacing_and_bom(text: str) -> str:
    return fold_spacing(text.replace(BYTE_ORDER_MARK, ""))


def fold_keeping_kana_marks(text: str) -> str:
    """Case and accents folded, as `fold`, but kana keep their voicing marks:
    `サンデル` is not `サンテル`."""
    if text.isascii():
        return text.casefold()
    kept: list[str] = []
    for ch in unicodedata.normalize("NFKD", text):
        if not unicodedata.combining(ch) or (kept and is_cjk(kept[-1])):
            kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept)).casefold()


def is_cjk(character: str) -> bool:
    code = ord(character)
    return 0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x9FFF or 0xAC00 <= code <= 0xD7AF


# Leading articles a title sort skips, in the languages readers highlight in most. Not
# the ones that are also common first words (Italian "i", Portuguese "o", Dutch "de").
LEADING_ARTICLES = frozenset(
    {"the", "a", "an", "el", "la", "los", "las", "lo", "un", "una", "unos", "unas"}
    | {"der", "die", "das", "ein", "eine", "le", "les", "une", "il", "gli", "uno"}
)
ELIDED_ARTICLES = ("l'", "l\u2019")


# A title's numbers are written this wide in its sort key, so that they compare by value
# as text does, character by character, in Python and in any database collation: "vol. 2"
# before "vol. 10". Twelve digits hold any volume, part or year; a longer number sorts last.
NUMBER_WIDTH = 12
_NUMBER = re.compile(r"[0-9]+")


def _padded_number(number: re.Match[str]) -> str:
    return (number.group().lstrip("0") or "0").rjust(NUMBER_WIDTH, "0")


def title_sort_key(title: str) -> str:
    """`The Name of the Rose` sorts under N, `La casa de los espíritus` under C, and
    `Vol. 2` before `Vol. 10` (its numbers by value). Stored as `Book.title_sort`, which
    every list of books by title orders by."""
    return _NUMBER.sub(_padded_number, _filed(title))


def _filed(title: str) -> str:
    """The folded title from its first letter or digit, its leading article dropped: a
    Kindle keeps some titles in quotes (`"Surely You're Joking, Mr. Feynman!"`), which
    sorted them before every other book, under the S their tile shows."""
    folded = fold(title).strip()
    start = next((i for i, ch in enumerate(folded) if ch.isalnum()), 0)
    return _without_leading_article(folded[start:])


def _without_leading_article(folded: str) -> str:
    if folded.startswith(ELIDED_ARTICLES):
        return folded[2:].lstrip()
    first, _, rest = folded.partition(" ")
    return rest.lstrip() if rest and first in LEADING_ARTICLES else folded


def title_initial(title: str) -> str:
    """The letter a book's tile shows: the first letter or digit of the title as lists
    sort it (`El hombre en busca de sentido` under H, `Épica` under E, `"Surely You're
    Joking"` under S), so that tiles follow the order. Unpadded: `10 Days` shows 1."""
    return next((ch.upper() for ch in _filed(title) if ch.isalnum()), title.strip()[:1].upper())


def author_sort_key(authors_normalized: str) -> str:
    """`robert greene` (books.importing's normalized form) sorts as `greene robert`."""
    first_author = authors_normalized.split(";")[0].strip()
    *given, family = first_author.split() or [""]
    return fold(" ".join([family, *given]))


# Explicit bidirectional formatting: the embeddings and overrides (U+202A LRE, U+202B RLE,
# U+202C PDF, U+202D LRO, U+202E RLO) and the isolates (U+2066 LRI, U+2067 RLI, U+2068 FSI,
# U+2069 PDI). An override reverses what follows it ("\u202egnp.exe" reads "exe.png") and an
# unclosed one reaches past its own text into the page around it. The marks (U+200E LRM,
# U+200F RLM, U+061C ALM) stay: they only place neighbouring punctuation.
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def without_bidi_controls(text: str) -> str:
    """A text to show or to write into a file a person reads: its letters in the order they
    were written, whatever explicit bidirectional formatting it carried. Arabic and Hebrew
    still read right to left (the Unicode algorithm orders them by their letters alone); a
    text without these characters, which is every ordinary one, comes back unchanged."""
    if text.isascii():
        return text  # the common case, and much faster
    return BIDI_CONTROLS.sub("", text)


# C0 and C1 control characters and DEL, but tab, line feed and carriage return: a bell, a
# backspace or an escape (`\x1b[2J` clears a terminal) is never part of what a reader
# highlighted, and an export carried them into files and terminals. The vertical tab, form
# feed and next-line (U+0085) break a line in Word and in Python's `splitlines`: they become
# a space, so that the words on each side stay apart; the others go.
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_BREAKING_CONTROLS = str.maketrans({"\x0b": " ", "\x0c": " ", "\x85": " "})


def without_controls(text: str) -> str:
    """A text without control characters other than tab, line feed and carriage return:
    what the CSV and Markdown exports write. Stored texts keep what the file held (NUL
    aside, books.importing.screening): a highlight's identity is read from its stored
    text, and cleaning new imports only would make a library's older entries new again."""
    if CONTROL_CHARACTERS.search(text) is None:
        return text  # every ordinary text, unchanged
    return CONTROL_CHARACTERS.sub("", text.translate(_BREAKING_CONTROLS))
