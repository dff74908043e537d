"""The query's grammar: words, "quoted phrases", -exclusions, `or`, author:/book:/tag:
prefixes; each word's English and Spanish stems; the tsquery texts the keyword side reads.

- Words, "quoted phrases" (exact, and required of every result), `-word` and `-"a phrase"`
  (left out of every result), `or` (or, in a Spanish query, a capital `O`) between two
  terms, `author:` / `book:` prefixes (filters on the book's fields, see books.search.names)
  and `tag:` (the reader's tags), each in English or Spanish (`autor:`, `libro:`,
  `etiqueta:`), read outside quoted phrases only.
- Stems come from PostgreSQL's own snowball dictionaries, so they agree with the index
  (`books.models.search_document()`): "habit" finds "habits", "muertes" finds "muerte".
"""

from __future__ import annotations

import dataclasses
import re
import threading
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery
from django.db import connection

from books.language import ENGLISH, SPANISH, language_of
from books.models import SEARCH_STEM_CONFIGS
from books.text import WORD, dotted, fold, is_prefix, literal, search_words

QUERY_MAX_LENGTH = 500
# A query of this many words or fewer (stop words aside) is "a few words"; more, a sentence
# (is_few_words; books.search.fusion weighs the two apart).
FEW_WORDS = 4
# Each prefix, in English and in Spanish (folded: "título" is "titulo"), and which field it
# filters: author:borges, libro:"cien años de soledad", etiqueta:liderazgo.
PREFIXES = {
    "author": "author", "autor": "author",
    "book": "book", "title": "book", "libro": "book", "titulo": "book",
    "tag": "tag", "etiqueta": "tag",
}  # fmt: skip
_PREFIX_NAMES = "|".join(sorted(PREFIXES, key=len, reverse=True)).replace("titulo", "t[ií]tulo")
_PREFIX_TEXT = rf'(?<!\S)({_PREFIX_NAMES}):(?:"([^"]*)"?|(\S+))'
PREFIX = re.compile(_PREFIX_TEXT, re.IGNORECASE)
# The query's terms, left to right: a prefix and its value (groups 1-3), "a phrase" or
# -"a phrase" (4-5), a word or -word (6). A quoted phrase is read whole before any prefix
# is looked for, so a prefix inside one is the phrase's text: "see tag:foo" is a phrase.
TERM = re.compile(rf'{_PREFIX_TEXT}|(-?)"([^"]*)"?|(\S+)', re.IGNORECASE)
# Letters Spanish writes and English never does (Portuguese shares some: a tie it loses).
SPANISH_LETTERS = re.compile(r"[ñ¿¡áíóú]", re.IGNORECASE)
STEMS_CACHE_SIZE = 20_000
# Spanish says "palacio o río", but a lower-case "o" is a word too ("ser o no ser", "más o
# menos"): only a capital "O" between two terms is `or`, in a query that reads as Spanish,
# and not in one typed all in capitals ("SER O NO SER"). In English it is a word: "type O
# blood", "Vitamin O".
_SPANISH_OR = "O"


@dataclass(frozen=True)
class ParsedQuery:
    """The reader's query, folded, cut into units: words and phrases, exclusions, prefixes."""

    folded: str
    # Each positive unit (a word, or a phrase) as websearch text and as its folded words.
    units: tuple[tuple[str, tuple[str, ...]], ...]
    exclusions: tuple[str, ...]  # as websearch text: -word, -"a phrase"
    # Which units must all match: each clause is units joined by "or".
    clauses: tuple[tuple[int, ...], ...] = ()
    authors: tuple[str, ...] = ()  # author:… values, folded
    books: tuple[str, ...] = ()  # book:… values, folded
    tags: tuple[str, ...] = ()  # tag:… values, folded
    # Emoji and other symbols (`symbols_in`), folded: every result has each of `symbols`
    # and none of `excluded_symbols`. PostgreSQL's parser drops them from the index.
    symbols: tuple[str, ...] = ()
    excluded_symbols: tuple[str, ...] = ()
    # Names written with symbols left out ("-c++", books.text.literal): the text itself says
    # which highlights have one; left out of the words' query, which would drop every "c".
    excluded_literals: tuple[str, ...] = ()
    # The units that are such a name ("c++", ".net": books.text.literal), read once here.
    names: tuple[int, ...] = ()

    @property
    def words(self) -> frozenset[str]:
        """The words a result is marked by: not a name's bare letter ("c" of "c++"), which
        would mark every "c" (the name itself is not marked: the marking reads words only)."""
        return frozenset(
            word for i, (_, words) in enumerate(self.units) if i not in self.names for word in words
        )

    @property
    def joins_or(self) -> bool:
        """Whether the query joins terms with or ("felicidad O soledad", "a or b")."""
        return any(len(clause) > 1 for clause in self.clauses)

    @property
    def phrases(self) -> tuple[int, ...]:
        return tuple(i for i, (text, _) in enumerate(self.units) if text.startswith('"'))

    @property
    def as_written(self) -> tuple[int, ...]:
        """The units found as written, not by their words' stems: the quoted phrases, and
        the names written with symbols ("c++", ".net": `names`)."""
        return tuple(
            i for i, (text, _) in enumerate(self.units) if text.startswith('"') or i in self.names
        )

    def without(self, words: Collection[str]) -> ParsedQuery:
        """The same query less the single-word units in `words` (a name, its filler)."""
        keep = [i for i, (t, w) in enumerate(self.units) if t.startswith('"') or w[0] not in words]
        kept = {old: new for new, old in enumerate(keep)}
        clauses = tuple(
            clause
            for clause in (tuple(kept[i] for i in c if i in kept) for c in self.clauses)
            if clause
        )
        units = tuple(self.units[i] for i in keep)
        folded = " ".join([*(text for text, _ in units), *self.exclusions])
        names = tuple(kept[i] for i in self.names if i in kept)
        return dataclasses.replace(self, folded=folded, units=units, clauses=clauses, names=names)

    def as_phrase(self) -> ParsedQuery:
        """The same query with its words as one quoted phrase: "de la" → `"de la"`."""
        words = tuple(word for _, unit in self.units for word in unit)
        return dataclasses.replace(
            self, units=((f'"{" ".join(words)}"', words),), clauses=((0,),), names=()
        )


def prefix_field(name: str) -> str:
    """Which field a prefix as typed filters: "Autor" → "author", "título" → "book"."""
    return PREFIXES[fold(name)]


def prefixes_in(query: str) -> list[re.Match[str]]:
    """The query's prefixes (`author:borges`, `tag:"para releer"`), outside quoted phrases."""
    return [m for m in TERM.finditer(query) if m.group(1) is not None]


def prefix_value(match: re.Match[str]) -> str:
    """A prefix's value as its folded words: 'Etiqueta:"Para releer"' → "para releer"."""
    return " ".join(WORD.findall(fold(match.group(2) or match.group(3) or "")))


def not_meaning(query: str) -> list[re.Match[str]]:
    """What the meaning half leaves out of the text it embeds, as typed: the prefixes and
    the exclusions (-word, -"a phrase"), outside quoted phrases."""
    return [
        m
        for m in TERM.finditer(query)
        if m.group(1) is not None
        or m.group(4)
        or (m.group(6) is not None and m.group(6).startswith("-") and len(m.group(6)) > 1)
    ]


# Spanish alone ends a noun in "-dad" or "-tad" ("felicidad", "libertad"; Portuguese writes
# "-dade", Italian "-tà", French "-té"):
# "felicidad O soledad" has no function word or accent to read as Spanish by. English has
# only "dad" and its compounds so ("stepdad", "granddad", "grandad"), and places are named so
# ("Trinidad", "Baghdad", "Karlstad"): a name beside a name is no Spanish noun
# (`_spanish_noun`).
_SPANISH_ENDINGS = re.compile(r"\w{2,}(?<!step)(?<!gran)(?<!grand)[dt]ad(?:es)?", re.IGNORECASE)


def _reads_as_spanish(text: str) -> bool:
    return bool(SPANISH_LETTERS.search(text)) or language_of(text) == SPANISH


def _spanish_noun(term: str, other: str) -> bool:
    """Whether `term` is a Spanish noun by its ending beside the term `other`: one written
    with a capital only when `other` is not, or is such a noun too ("Libertad O muerte",
    "Felicidad O Soledad"; "Trinidad O Tobago", "Karlstad O Oslo" are places)."""
    if not _SPANISH_ENDINGS.fullmatch(term):
        return False
    if not term[0].isupper() or _SPANISH_ENDINGS.fullmatch(other):
        return True
    return not any(letter.isupper() for letter in other[:1] if letter.isalpha())


def _term_reads_as_spanish(term: str, other: str) -> bool:
    return _reads_as_spanish(term) or _spanish_noun(term, other)


def _spanish_ors(query: str, count: int) -> frozenset[int]:
    """Which of the query's terms (by their place among `TERM`'s, prefixes aside) are a
    capital "O" between two others that is `or` to a Spanish reader: when the rest of the
    query reads as Spanish (books.language), or the terms on both sides do ("río",
    "canción"). None in a query with no lower-case letter, or when folding changed how many
    terms there are (a spacing accent, "¨", folds to a space)."""
    if not any(letter.islower() for letter in query):
        return frozenset()
    terms = [m.group(0) for m in TERM.finditer(query) if m.group(1) is None]
    if len(terms) != count:
        return frozenset()
    ors = [i for i in range(1, len(terms) - 1) if terms[i] == _SPANISH_OR]
    rest = " ".join(term for i, term in enumerate(terms) if i not in ors)
    if ors and _reads_as_spanish(rest):
        return frozenset(ors)
    return frozenset(i for i in ors if _sides_read_as_spanish(terms[i - 1], terms[i + 1]))


def _sides_read_as_spanish(before: str, after: str) -> bool:
    """Whether the terms around a capital "O" read as Spanish: both, or one and the other
    not as English ("libertad O muerte"; "type O blood" reads as neither)."""
    spanish = (_term_reads_as_spanish(before, after), _term_reads_as_spanish(after, before))
    if all(spanish):
        return True
    if spanish[0]:
        return language_of(after) != ENGLISH
    if spanish[1]:
        return language_of(before) != ENGLISH
    return False


def parse_query(query: str) -> ParsedQuery:
    folded = fold(query.strip())[:QUERY_MAX_LENGTH]
    authors: list[str] = []
    books: list[str] = []
    tags: list[str] = []
    fields = {"author": authors, "book": books, "tag": tags}

    matches = []
    for match in TERM.finditer(folded):
        if match.group(1) is None:
            matches.append(match)
            continue
        value = prefix_value(match)
        if value:
            fields[PREFIXES[match.group(1)]].append(value)
    ors = _spanish_ors(query.strip()[:QUERY_MAX_LENGTH], len(matches))
    units: dict[str, tuple[str, ...]] = {}
    exclusions: list[str] = []
    clauses: list[list[int]] = []
    symbols: list[str] = []
    excluded_symbols: list[str] = []
    excluded_literals: list[str] = []
    names: list[str] = []
    joined = False  # the last token was "or"
    previous = ""
    for place, match in enumerate(matches):
        negated, phrase, word = match.group(4), match.group(5), match.group(6)
        left_out = bool(negated) or (word is not None and word.startswith("-"))
        (excluded_symbols if left_out else symbols).extend(symbols_in(match.group(0)))
        if phrase is not None:
            text, negated_word = f'"{" ".join(WORD.findall(phrase))}"', bool(negated)
        elif word.startswith("-") and (name := literal(word[1:])):
            excluded_literals.append(name)
            previous, joined = "exclusion", False
            continue
        elif word.startswith("-") and len(word) > 1:
            text, negated_word = f"-{dotted(word[1:]) or ' '.join(WORD.findall(word))}", True
        elif name := literal(word):
            # A name written with symbols is its own unit, found as written ("c++", not "c").
            text, negated_word = name, False
            names.append(name)
        else:
            # Words joined by dots stay one unit ("node.js", "j.k"): `_unit_tsquery`.
            text, negated_word = dotted(word) or " ".join(WORD.findall(word)), False
        words = unit_words(text)
        if phrase is None and (text == "or" or place in ors):
            # "a or b" joins two terms; after an exclusion ("-a or b") it joins nothing.
            joined = bool(clauses) and previous == "term"
            continue
        if not words:
            continue
        previous = "exclusion" if negated_word else "term"
        if negated_word:
            exclusions.append(text if text.startswith("-") else f"-{text}")
        elif text not in units:
            units[text] = words
            if joined:
                clauses[-1].append(len(units) - 1)
            else:
                clauses.append([len(units) - 1])
        joined = False
    return ParsedQuery(
        folded,
        tuple(units.items()),
        tuple(dict.fromkeys(exclusions)),
        tuple(tuple(clause) for clause in clauses),
        tuple(dict.fromkeys(authors)),
        tuple(dict.fromkeys(books)),
        tuple(dict.fromkeys(tags)),
        tuple(dict.fromkeys(symbols)),
        tuple(dict.fromkeys(excluded_symbols)),
        tuple(dict.fromkeys(excluded_literals)),
        tuple(i for i, text in enumerate(units) if text in names),
    )


# What may follow an emoji within one: variation selectors, the keycap, skin tones, tags.
_EMOJI_TAIL = re.compile("[\ufe0e\ufe0f\u20e3\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]*")
_ZERO_WIDTH_JOINER = "\u200d"
# Presentation selectors: "❤️" and "❤" are one heart to a reader, and texts write either.
_PRESENTATION = re.compile("[\ufe0e\ufe0f]")
# A flag is two regional indicator letters (🇪 🇸 for Spain): one symbol, never two.
_REGIONAL_INDICATORS = ("\U0001f1e6", "\U0001f1ff")


def _is_regional_indicator(character: str) -> bool:
    return _REGIONAL_INDICATORS[0] <= character <= _REGIONAL_INDICATORS[1]


def symbols_in(text: str) -> list[str]:
    """The emoji and other symbols of a query's token (Unicode's "other symbol": 🔥, ♥, ★,
    ☯, flags), each whole with its skin tone or its zero-width-joined parts (👩‍🔬), without
    presentation selectors. Letters, digits and punctuation are not symbols."""
    found: list[str] = []
    at = 0
    while at < len(text):
        if unicodedata.category(text[at]) != "So":
            at += 1
            continue
        start = at
        pair = (
            _is_regional_indicator(text[at])
            and at + 1 < len(text)
            and _is_regional_indicator(text[at + 1])
        )
        at = _EMOJI_TAIL.match(text, at + (2 if pair else 1)).end()  # type: ignore[union-attr]
        while (
            at + 1 < len(text)
            and text[at] == _ZERO_WIDTH_JOINER
            and unicodedata.category(text[at + 1]) == "So"
        ):
            at = _EMOJI_TAIL.match(text, at + 2).end()  # type: ignore[union-attr]
        symbol = _PRESENTATION.sub("", text[start:at])
        if symbol:
            found.append(symbol)
    return found


def has_letters_or_digits(query: str) -> bool:
    return WORD.search(query) is not None


def unit_words(text: str) -> tuple[str, ...]:
    """A unit's words as the stored keyword text has them (books.text.search_words):
    Chinese and Japanese as pairs of characters, to be found in order."""
    return search_words(WORD.findall(text))


def meaning_text(query: str) -> str:
    """The query as the model should read it: without `author:`/`book:`/`tag:` prefixes, which are
    filters, and without `-excluded` words, which pulled the query's vector towards what the
    reader left out ("memory -palaces" sat nearer "a palace of rooms" than "memory" does)."""
    query = query[:QUERY_MAX_LENGTH]
    kept, start = [], 0
    for left_out in not_meaning(query):
        kept.append(query[start : left_out.start()])
        start = left_out.end()
    kept.append(query[start:])
    return " ".join(" ".join(kept).split())


_stems: dict[str, tuple[str, ...]] = {}
# The words either snowball dictionary calls a stop word ("the", "of", "de", "la").
_stop_words: set[str] = set()
_stems_lock = threading.Lock()


def lexize(
    words: Sequence[str], dictionaries: Sequence[str]
) -> list[tuple[str, list[list[str] | None]]]:
    """Each word with its lexemes in each of PostgreSQL's `dictionaries` (an empty list for
    a stop word, None where the dictionary knows nothing of it), in one statement."""
    called = ", ".join(f"ts_lexize('{name}', w)" for name in dictionaries)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT w, {called} FROM unnest(%s::text[]) AS w", [list(words)])
        return [(word, list(found)) for word, *found in cursor.fetchall()]


def stems_of(words: Collection[str]) -> dict[str, tuple[str, ...]]:
    """Each word's English and Spanish stems other than itself ("habits" → "habit").

    From PostgreSQL's own snowball dictionaries, so they agree with the index; a stop word
    has none. Kept per process: a word's stems never change.
    """
    missing = sorted({w for w in words if w not in _stems})
    if missing:
        rows = lexize(missing, [f"{config}_stem" for config in SEARCH_STEM_CONFIGS])
        with _stems_lock:
            if len(_stems) > STEMS_CACHE_SIZE:
                _stems.clear()
                _stop_words.clear()
            for word, found in rows:
                stems = (s for lexemes in found for s in (lexemes or ()) if s != word)
                _stems[word] = tuple(dict.fromkeys(stems))
                # A stop word lexizes to no lexeme at all (an empty array, not NULL).
                if any(lexemes == [] for lexemes in found):
                    _stop_words.add(word)
    return {w: _stems.get(w, ()) for w in words}


def stop_words(words: Collection[str]) -> frozenset[str]:
    """Those of `words` that English or Spanish calls a stop word."""
    stems_of(words)
    return frozenset(w for w in words if w in _stop_words)


def is_few_words(parsed: ParsedQuery) -> bool:
    """Whether the query is a few words rather than a sentence: at most FEW_WORDS words that
    are not stop words, and at most one more in all. "the fear of death" and "la memoria y el
    olvido" are a few words; "why do I always forget the names of people" is a sentence."""
    # The words as typed, not as stored: `脳を休ませる` is one word, not five pairs.
    words = [word for text, _ in parsed.units for word in WORD.findall(text)]
    stop = stop_words(words)
    content = [word for word in words if word not in stop] or words
    return len(content) <= FEW_WORDS and len(words) <= FEW_WORDS + 1


def known_stems(word: str) -> tuple[str, ...]:
    """The stems `stems_of` has already read for a word, with no query."""
    return _stems.get(word, ())


def _lexeme(words: Sequence[str], index: int) -> str:
    # Lexemes quoted: a folded word is letters and digits only, never a quote. A lone
    # Chinese or Japanese character finds every pair it starts.
    return f"'{words[index]}':*" if is_prefix(words, index) else f"'{words[index]}'"


def _word_tsquery(word: str, stems: dict[str, tuple[str, ...]]) -> str:
    if is_prefix([word], 0):
        return f"({_lexeme([word], 0)})"
    forms = [word, *stems.get(word, ())]
    return "(" + " | ".join(f"'{form}'" for form in forms) + ")"


def _unit_tsquery(
    text: str, words: Sequence[str], stems: dict[str, tuple[str, ...]], *, name: bool = False
) -> str:
    """A word with its stems; a phrase (or a word PostgreSQL splits, "don't") exactly, as
    written and in order; a name written with symbols as PostgreSQL's parser reads it ("c++"
    is 'c'), the text itself to tell which have it (ParsedQuery.names); words joined by dots
    as the parser's one word or apart ("j.k" in "J.K. Rowling", 'j' <-> 'k' in "J. K.")."""
    if name:
        return f"('{text}')"
    phrase = "(" + " <-> ".join(_lexeme(words, i) for i in range(len(words))) + ")"
    if "." in text and not text.lstrip("-").startswith('"'):
        return f"('{text.lstrip('-')}' | {phrase})"
    if len(words) == 1 and not text.lstrip("-").startswith('"'):
        return _word_tsquery(words[0], stems)
    return phrase


@dataclass(frozen=True)
class QueryTerms:
    """The tsquery texts (for to_tsquery('simple', …)) of a parsed query."""

    units: tuple[str, ...]  # each positive unit's
    exclusions: str  # "& !(…) & !(…)", or ""
    everything: str  # every clause, with the exclusions
    # The units every result must have (quoted phrases, names written with symbols), with the
    # exclusions: what the meaning half must respect too. "" when the query has neither.
    constraint: str
    # For a few words, `everything` less the stop words standing alone ("the fear of death"
    # asks for "fear" and "death"), and those stop words' units: a result need not have
    # them, and ranks higher if it does. The same as `everything` and () for a sentence, or
    # a query of stop words only.
    informative: str
    optional: tuple[int, ...]
    # The stop words standing alone, in any query: never read on their own when the query
    # has other words ("the art of war" finds nothing by "the" and "of" alone).
    stop_alone: tuple[int, ...] = ()


def query_terms(parsed: ParsedQuery) -> QueryTerms:
    excluded = [unit_words(text) for text in parsed.exclusions]
    stems = stems_of(
        {w for _, words in parsed.units for w in words} | {w for ws in excluded for w in ws}
    )
    units = tuple(
        _unit_tsquery(text, words, stems, name=i in parsed.names)
        for i, (text, words) in enumerate(parsed.units)
    )
    exclusions = "".join(
        f" & !{_unit_tsquery(text, words, stems)}"
        for text, words in zip(parsed.exclusions, excluded, strict=True)
    )
    clauses = [" | ".join(units[i] for i in clause) for clause in parsed.clauses]
    everything = " & ".join(f"({clause})" for clause in clauses) + exclusions
    stop = stop_words({words[0] for _, words in parsed.units if len(words) == 1})
    alone = [(i,) for i in _stop_alone(parsed, stop)]
    optional: tuple[int, ...] = ()
    informative = everything
    # A sentence's words are all asked for, as typed: its stop words are many, and sentences
    # ranked no better without them (evaluate_search's paraphrases, docs/evaluation.md).
    if alone and len(alone) < len(parsed.clauses) and is_few_words(parsed):
        optional = tuple(i for (i,) in alone)
        kept = [c for c, clause in zip(clauses, parsed.clauses, strict=True) if clause not in alone]
        informative = " & ".join(f"({clause})" for clause in kept) + exclusions
    required = [f"({clauses[k]})" for k in enforced_clauses(parsed)]
    constraint = " & ".join(required) + exclusions
    if not required and exclusions:
        constraint = exclusions.removeprefix(" & ")
    stop_alone = tuple(i for (i,) in alone)
    return QueryTerms(units, exclusions, everything, constraint, informative, optional, stop_alone)


def enforced_clauses(parsed: ParsedQuery) -> list[int]:
    """The clauses every result must match, the meaning half's too, each with its units
    found as written (ParsedQuery.as_written) by the text itself: a quoted phrase alone, and
    any clause with a name written with symbols ("c++ or java": the index reads "c++" as
    "c", and a "vitamin C" is neither)."""
    return [
        k
        for k, clause in enumerate(parsed.clauses)
        if any(i in parsed.names for i in clause)
        or (len(clause) == 1 and clause[0] in parsed.as_written)
    ]


def _stop_alone(parsed: ParsedQuery, stop: Collection[str]) -> list[int]:
    """The units that are a stop word on its own: not quoted, not joined by "or", not a name
    written with symbols ("A+" is no "a")."""
    return [
        i
        for (i, *more) in parsed.clauses
        if not more
        and not parsed.units[i][0].startswith('"')
        and i not in parsed.names
        and len(parsed.units[i][1]) == 1
        and parsed.units[i][1][0] in stop
    ]


def only_stop_words(parsed: ParsedQuery) -> bool:
    """Whether every word of the query is a stop word on its own ("the of", "de la"): it
    asks for nothing but them, as they stand together."""
    if not parsed.units:
        return False
    stop = stop_words({words[0] for _, words in parsed.units if len(words) == 1})
    return len(_stop_alone(parsed, stop)) == len(parsed.units)


def tsquery(text: str) -> SearchQuery:
    return SearchQuery(text, config="simple", search_type="raw")
