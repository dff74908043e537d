"""Did you mean: a query that found nothing, written again with the reader's own words.

"happines" finds nothing by words (its stem is not "happiness"'s) and nothing close by
meaning (the model reads it as two unknown pieces). The reader's library has "happiness": a
word one slip away (a letter left out, added, changed, or two letters swapped), or two for
a long word, is what they meant, and the most common such word of their library in the
query's language is the one offered (`Lexicons`). A word of another form than the reader's
("fracasar" beside their "fracasan") is no slip: the search by words found it by its stem.
Only when the query's words found a few highlights or none (SUGGESTED_UP_TO), whatever the
meaning half found beside them: a query whose words found many needs no correction.

The library's words come from PostgreSQL (each highlight's folded words, by the
highlight's language) and are kept under the library's version: asked only when a search
finds little. Looked up as SymSpell does: each word and each of its
one-letter deletions lead to the word, so a word within two slips is found by a handful of
dictionary reads, not by measuring the query against every word of the library.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

from django.db import connection

from books.language import UNKNOWN
from books.library_cache import LibraryCache
from books.models import Book, Highlight, Tag
from books.search.language import query_language
from books.search.query import (
    PREFIX,
    lexize,
    not_meaning,
    prefix_field,
    prefix_value,
    prefixes_in,
)
from books.search.results import SearchResults
from books.text import WORD, dotted, fold, literal

# Shorter words are too easily another word ("cat" → "car", "hat", "cut"): left alone.
SHORTEST_CORRECTED = 4
# A word this long or longer may be two slips from the reader's; a shorter one, one.
TWO_SLIPS_FROM = 7
# What a word's form says of its language (`Lexicons.language_by_form`): the ending a
# language's stemmer reads in it (its last FORM_ENDING letters at most) ends the reader's
# words of that language FORM_MARGIN times as often as the other's, FORM_FEWEST or more.
# Measured on the realistic library (docs/evaluation.md, 2026-12-07, "Did you mean keeps a
# word's language").
FORM_ENDING = 4
FORM_MARGIN = 3
FORM_FEWEST = 5
# A search that found more than this has found what the reader meant, or enough of it: a
# word of theirs in forty highlights is no slip, even when another word is missing.
SUGGESTED_UP_TO = 3


@dataclass(frozen=True)
class Lexicon:
    """The reader's words with how many highlights have each, the words each one-letter
    deletion of them leads to, and the long words by their first letter."""

    counts: dict[str, int]
    by_deletion: dict[str, tuple[str, ...]]
    # Two slips are found by the deletions only when each side lost one letter: for the
    # rest ("cartografy"), the long words of the same first letter are measured one by one
    # (a slip in a word's first letter is the rarest).
    long_by_initial: dict[str, tuple[str, ...]]

    @classmethod
    def of(cls, counts: dict[str, int]) -> Lexicon:
        by_deletion: defaultdict[str, list[str]] = defaultdict(list)
        long_by_initial: defaultdict[str, list[str]] = defaultdict(list)
        for word in counts:
            if len(word) >= SHORTEST_CORRECTED - 1 and word.isalpha():
                for key in _deletions(word):
                    by_deletion[key].append(word)
            if len(word) >= TWO_SLIPS_FROM - 2 and word.isalpha():
                long_by_initial[word[0]].append(word)
        return cls(
            counts,
            {key: tuple(words) for key, words in by_deletion.items()},
            {key: tuple(words) for key, words in long_by_initial.items()},
        )

    def closest(self, word: str, refused: Callable[[str], bool] | None = None) -> str | None:
        """The reader's most common word within reach of `word`, the nearer first, but those
        `refused` says no to; None if `word` is theirs, too short, or nothing is near."""
        if word in self.counts or not may_be_a_slip(word):
            return None
        reach = 2 if len(word) >= TWO_SLIPS_FROM else 1
        near = {
            candidate for key in _deletions(word) for candidate in self.by_deletion.get(key, ())
        }
        if reach == 2:
            near.update(self.long_by_initial.get(word[0], ()))
        # The first letter is kept: a slip there is the rarest, and a word the library lacks
        # is as often a word of its own that another one's letters fit ("luto" is no slip
        # for "auto"; docs/evaluation.md, 2026-12-07, "Did you mean").
        near = {
            candidate
            for candidate in near
            if abs(len(candidate) - len(word)) <= reach
            and candidate[0] == word[0]
            and not (refused and refused(candidate))
        }
        scored = [
            (distance, -self.counts[candidate], candidate)
            for candidate in near
            if (distance := slips(word, candidate)) <= reach
        ]
        return min(scored)[2] if scored else None


def may_be_a_slip(word: str) -> bool:
    """Whether a folded word not in the library is one the lexicons may correct."""
    return len(word) >= SHORTEST_CORRECTED and word.isalpha()


def _deletions(word: str) -> set[str]:
    """The word itself and the word with each one letter left out."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


def slips(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment): letters left out, added or
    changed, and two neighbours swapped, each one slip."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, letter in enumerate(a, start=1):
        current = [i]
        for j, other in enumerate(b, start=1):
            cost = 0 if letter == other else 1
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and letter == b[j - 2] and a[i - 2] == other:
                value = min(value, previous2[j - 2] + 1)
            current.append(value)
        previous2, previous = previous, current
    return previous[-1]


def library_words_by_language(reader_id: int) -> dict[str, dict[str, int]]:
    """Each folded word of the reader's live highlights and notes, with how many have it,
    by the language of the highlights (books.language: "en", "es", …, "unknown")."""
    table = Highlight._meta.db_table
    by_language: dict[str, dict[str, int]] = defaultdict(dict)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT language, word.lexeme, count(*) FROM {table}, "
            "unnest(to_tsvector('simple', search_text)) AS word "
            "WHERE reader_id = %s AND deleted_at IS NULL GROUP BY language, word.lexeme",
            [reader_id],
        )
        for language, word, count in cursor.fetchall():
            by_language[language][word] = int(count)
    return dict(by_language)


def library_words(reader_id: int) -> dict[str, int]:
    """Each folded word of the reader's live highlights and notes, with how many have it."""
    counts: dict[str, int] = defaultdict(int)
    for words in library_words_by_language(reader_id).values():
        for word, count in words.items():
            counts[word] += count
    return dict(counts)


def library_names(reader_id: int) -> frozenset[str]:
    """The folded words of the reader's books' titles and authors: never searchable text
    (books.search.names), but the reader's all the same ("Nigel Warburton" is no slip for
    "Nagel")."""
    names = Book.objects.filter(reader_id=reader_id).values_list("title", "authors")
    return frozenset(word for pair in names for word in WORD.findall(fold(" ".join(pair))))


# The languages whose words keyword search matches by their stems, with PostgreSQL's snowball
# dictionary of each: the index's own (books.models.SEARCH_STEM_CONFIGS).
STEM_DICTIONARIES = {"en": "english_stem", "es": "spanish_stem"}


def stems_of_words(words: Collection[str]) -> dict[str, dict[str, str]]:
    """Each word's stem by each stemmed language's dictionary, by language: {"es":
    {"fracasar": "fracas"}, "en": {…}}. A stop word has none."""
    stems: dict[str, dict[str, str]] = {language: {} for language in STEM_DICTIONARIES}
    if not words:
        return stems
    for word, found in lexize(sorted(words), list(STEM_DICTIONARIES.values())):
        for language, lexemes in zip(STEM_DICTIONARIES, found, strict=True):
            if lexemes:
                stems[language][word] = lexemes[0]
    return stems


def _ending(word: str, stem: str) -> str:
    """The ending a stemmer read in `word`, given its `stem`: what follows their common
    start ("paraliz-a"; "happi" of "happy": "y"); "" when the stem is the word."""
    start = 0
    while start < min(len(word), len(stem)) and word[start] == stem[start]:
        start += 1
    return word[start:]


@dataclass(frozen=True)
class Lexicons:
    """The reader's words as one lexicon, and as one per language: a slip is corrected
    with a word of its own language ("memorya" in "the memorya of" is "memory", not the
    Spanish "memoria" the reader has more often). The words of highlights whose language
    is unknown (a looked-up word, a proverb with no function word) are in every one, but
    for those a highlight of a known language places elsewhere: "paralyze", looked up and
    in an English highlight, is no word for "el miedo nos paraliza"."""

    every: Lexicon
    by_language: dict[str, Lexicon]
    # Each word of a known language's highlights, and those languages.
    languages_of: dict[str, frozenset[str]]
    # The words of the books' titles and authors: left alone, never offered.
    names: frozenset[str] = frozenset()
    # The stems of each stemmed language's words (`with_stems`).
    stems: dict[str, frozenset[str]] = field(default_factory=dict)
    # How many of the reader's words of each stemmed language, and of it alone, end in each
    # ending of up to FORM_ENDING letters ("a": many Spanish, few English): `language_by_form`.
    endings: dict[str, Counter[str]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, by_language: dict[str, dict[str, int]], names: frozenset[str] = frozenset()
    ) -> Lexicons:
        unknown = by_language.get(UNKNOWN, {})
        every: dict[str, int] = defaultdict(int)
        languages_of: defaultdict[str, set[str]] = defaultdict(set)
        for language, words in by_language.items():
            for word, count in words.items():
                every[word] += count
                if language != UNKNOWN:
                    languages_of[word].add(language)
        unplaced = {word: count for word, count in unknown.items() if word not in languages_of}
        lexicons = {
            language: Lexicon.of({**unplaced, **words})
            for language, words in by_language.items()
            if language != UNKNOWN
        }
        endings = {
            language: Counter(
                word[-length:]
                for word, placed in languages_of.items()
                if placed == {language} and word.isalpha()
                for length in range(1, min(FORM_ENDING, len(word) - 1) + 1)
            )
            for language in STEM_DICTIONARIES
        }
        return cls(
            Lexicon.of(dict(every)),
            lexicons,
            {word: frozenset(languages) for word, languages in languages_of.items()},
            names,
            endings=endings,
        )

    def with_stems(self) -> Lexicons:
        """These lexicons, and the stems of each stemmed language's words, from PostgreSQL's
        dictionaries (one statement)."""
        words = {
            lang: self.by_language[lang].counts
            for lang in STEM_DICTIONARIES
            if lang in self.by_language
        }
        stems = stems_of_words({word for each in words.values() for word in each})
        found = {
            lang: frozenset(stems[lang][word] for word in each if word in stems[lang])
            for lang, each in words.items()
        }
        return replace(self, stems=found)

    def found_by_stem(
        self, word: str, language: str | None, stems: dict[str, dict[str, str]]
    ) -> bool:
        """Whether `word` has the stem of a word of the reader's in the query's language (in
        any stemmed language when the query's is not known): keyword search matches words by
        their stems, so it found `word`, a form of the reader's word and no slip ("fracasar"
        beside the reader's "fracasan", one Spanish verb). A stem of the language's own words
        only: the slip "memorya" has the Spanish stem of the English "memory", by chance."""
        languages = (language,) if language else tuple(self.stems)
        return any(stems.get(each, {}).get(word) in self.stems.get(each, ()) for each in languages)

    @property
    def known(self) -> frozenset[str]:
        """Every word of the reader's: never corrected."""
        return frozenset(self.every.counts) | self.names

    def language_of(self, query: str) -> str | None:
        """The query's language, by its common words ("the", "la") or else by the
        languages of its words that are the reader's; None when they do not tell."""
        said = query_language(query)
        if said is not None:
            return said if said in self.by_language else None
        votes: defaultdict[str, int] = defaultdict(int)
        for word in WORD.findall(fold(query)):
            for language in self.languages_of.get(word, ()):
                votes[language] += 1
        if not votes:
            return None
        ranked = sorted(votes.values(), reverse=True)
        if len(ranked) > 1 and ranked[0] == ranked[1]:
            return None
        return max(votes, key=lambda language: votes[language])

    def closest(
        self,
        word: str,
        language: str | None,
        stems: dict[str, dict[str, str]] | None = None,
        *,
        in_phrase: bool = False,
    ) -> str | None:
        """The reader's closest word to `word` in `language`'s words; when the query's
        language is not known, in all of theirs but those of another stemmed language than
        the word's form says (`language_by_form`, `placed_apart`). None if `word` is one of
        theirs, in any language, or a form of one (`found_by_stem`, given the `stems` of
        `word`; not in a quoted phrase, searched as written)."""
        if word in self.every.counts or word in self.names:
            return None
        if stems is not None and not in_phrase and self.found_by_stem(word, language, stems):
            return None
        form = self.language_by_form(word, stems) if language is None and stems else None
        if form is not None:
            return self.every.closest(word, lambda candidate: self.placed_apart(candidate, form))
        lexicon = self.by_language.get(language, self.every) if language else self.every
        return lexicon.closest(word)

    def language_by_form(self, word: str, stems: dict[str, dict[str, str]]) -> str | None:
        """The language a word's form says, when one alone does: the stemmed language whose
        stemmer reads an ending in it where the other's reads none, an ending the reader's
        words of that language end in far more often than the other's (FORM_MARGIN).
        "paraliza" is Spanish (the Spanish stemmer reads "paraliz-a", the English one no
        ending, and many more of the reader's Spanish words end in "a"); "paralize" says
        nothing (Spanish "paraliz-e", English "paral-ize"), nor a stop word, nor the slip
        "befoer" (a Spanish infinitive's "-er" to the stemmer, but the reader's English words
        end so more often). Read for any query whose words say no language (`language_of`),
        a word typed alone most often: a Spanish reader's "paraliza" wants no English
        "paralyze". A query that says its language keeps to it (docs/evaluation.md)."""
        read = {
            language: _ending(word, stems.get(language, {}).get(word, word))
            for language in STEM_DICTIONARIES
        }
        said = [language for language, ending in read.items() if ending]
        if len(said) != 1:
            return None
        ending = read[said[0]][-FORM_ENDING:]
        own = self.endings.get(said[0], Counter())[ending]
        others = max(
            self.endings.get(other, Counter())[ending] for other in read if other != said[0]
        )
        return said[0] if own >= FORM_FEWEST and own >= FORM_MARGIN * others else None

    def placed_apart(self, word: str, language: str) -> bool:
        """Whether the reader's highlights place `word` in another stemmed language and never
        in `language`: "paralyze", in English highlights only, for a Spanish word. A word of
        a language no stemmer reads ("Wochen") or of none known is not: the form of a slip
        of it may say Spanish or English by chance (German's "-en" reads as Spanish)."""
        placed = self.languages_of.get(word, frozenset())
        return language not in placed and any(other in placed for other in STEM_DICTIONARIES)


@dataclass(frozen=True)
class FieldNames:
    """What a prefix's value may be corrected to: the words of the reader's authors' names
    and of their titles (each with how many books have it), and their tags' names."""

    authors: Lexicon
    titles: Lexicon
    tags: dict[str, str]  # each tag's name as its folded words → the name as the reader wrote it
    # Each folded word of the names as the books write it, in lower case ("jardin" → "jardín").
    written: dict[str, str]

    @classmethod
    def of_reader(cls, reader_id: int) -> FieldNames:
        authors: defaultdict[str, int] = defaultdict(int)
        titles: defaultdict[str, int] = defaultdict(int)
        written: dict[str, str] = {}
        for title, names in Book.objects.filter(reader_id=reader_id).values_list(
            "title", "authors"
        ):
            for counts, text in ((authors, names), (titles, title)):
                words = {fold(word): word.lower() for word in WORD.findall(text)}
                for word, as_written in words.items():
                    counts[word] += 1
                    written.setdefault(word, as_written)
        tags = {
            " ".join(WORD.findall(fold(name))): name
            for name in Tag.objects.filter(reader_id=reader_id).values_list("name", flat=True)
        }
        return cls(Lexicon.of(dict(authors)), Lexicon.of(dict(titles)), tags, written)

    def closest(self, field: str, value: str) -> str | None:
        """The value (folded words) written as the closest of the field's own, or None when it
        is theirs or nothing is near: a tag's name whole; an author's or a title's word by
        word."""
        if field == "tag":
            if value in self.tags or len(value) < SHORTEST_CORRECTED:
                return None
            reach = 2 if len(value) >= TWO_SLIPS_FROM else 1
            near = sorted((slips(value, name), name) for name in self.tags)
            return self.tags[near[0][1]] if near and near[0][0] <= reach else None
        lexicon = self.authors if field == "author" else self.titles
        words = value.split()
        corrected = [lexicon.closest(word) for word in words]
        if not any(corrected):
            return None
        return " ".join(self.written[c] if c else w for c, w in zip(corrected, words, strict=True))


def _corrected_prefix(typed: str, names: FieldNames) -> str | None:
    """A prefix as typed ("tag:equipos", 'libro:"cien anos"') with its value corrected among
    the field's own names, or None."""
    match = PREFIX.fullmatch(typed)
    if match is None:
        return None
    value = prefix_value(match)
    closest = names.closest(prefix_field(match.group(1)), value) if value else None
    if closest is None:
        return None
    return f'{match.group(1)}:"{closest}"' if " " in closest else f"{match.group(1)}:{closest}"


def suggestion(
    reader_id: int, query: str, shelf: LibraryCache | None = None, *, words_only: bool = False
) -> str:
    """The query with each word the library lacks written as the reader's closest word of
    the query's language, or "" when no word changes. Exclusions ("-word") are kept as typed;
    a prefix's value ("tag:equipos", "author:borgs") is corrected among that field's own
    names (the reader's tags, their authors, their titles), never among the words.
    `words_only`: the search asked for no model (mode=keyword), so none is loaded for the
    whole-word rule (`_model_keeps_whole`); one this process has loaded already is read."""
    shelf = shelf or LibraryCache(reader_id)
    left_out = not_meaning(query)
    searched = query
    for kept in reversed(left_out):
        searched = f"{searched[: kept.start()]} {searched[kept.end() :]}"
    prefixes: dict[str, str] = {}
    if prefixes_in(query):
        names = FieldNames.of_reader(reader_id)
        for kept in left_out:
            corrected = _corrected_prefix(kept.group(0), names)
            if corrected is not None:
                prefixes[kept.group(0)] = corrected

    def read_lexicons() -> Lexicons:
        # "-endings": lexicons pickled before they kept their stems and endings are not read.
        return shelf.get(
            "spelling-lexicons-endings",
            lambda: Lexicons.of(
                library_words_by_language(reader_id), library_names(reader_id)
            ).with_stems(),
        )

    # The library's words alone first: a search of the reader's own words (most sentences
    # a hybrid search finds little of by words) never unpickles the lexicons, each word's
    # deletions and all (5 MB, 80-90 ms on the 5,485-highlight realistic library).
    known = shelf.get("spelling-words", lambda: read_lexicons().known)
    # Asked only of a word the library lacks that may be a slip.
    keeps_whole = _model_keeps_whole(load=not words_only)
    typed = [word.group(0) for word in WORD.finditer(searched) if not _of_a_name(word)]
    words_known = all(
        fold(word) in known or not may_be_a_slip(fold(word)) or keeps_whole(word) for word in typed
    )
    if words_known and not prefixes:
        return ""
    lexicons = None if words_known else read_lexicons()
    language = lexicons.language_of(searched) if lexicons else None
    slipped = {fold(w) for w in typed if may_be_a_slip(fold(w))} - known
    stems = stems_of_words(slipped) if lexicons else None
    changed = bool(prefixes)

    def correct(match: re.Match[str]) -> str:
        nonlocal changed
        written = match.group(0)
        # A quoted phrase is searched as written, stems aside (books.search.query): a form
        # of the reader's word in one ("que los que fracasar") found nothing by it.
        in_phrase = match.string.count('"', 0, match.start()) % 2 == 1
        closest = (
            lexicons.closest(fold(written), language, stems, in_phrase=in_phrase)
            if lexicons and not _of_a_name(match)
            else None
        )
        if closest is None or keeps_whole(written):
            return written
        changed = True
        return closest.capitalize() if written[0].isupper() else closest

    pieces, start = [], 0
    for kept in left_out:
        pieces += [WORD.sub(correct, query[start : kept.start()])]
        pieces.append(prefixes.get(kept.group(0), kept.group(0)))
        start = kept.end()
    pieces.append(WORD.sub(correct, query[start:]))
    return "".join(pieces) if changed else ""


_TOKEN = re.compile(r"\S+")


def _of_a_name(word: re.Match[str]) -> bool:
    """Whether a word is part of a name written with symbols ("c" of "c++", books.text.
    literal) or of words joined by dots ("node" of "node.js", books.text.dotted), which the
    search looked for whole and the library holds whole."""
    token = next(
        t.group() for t in _TOKEN.finditer(word.string) if t.start() <= word.start() < t.end()
    )
    return bool(literal(token) or dotted(token))


def _model_keeps_whole(*, load: bool = True) -> Callable[[str], bool]:
    """Whether the model's vocabulary keeps a word whole, as typed: a word of some language
    the model read often ("peur", "miedo", "Angst"), not a slip, though the library lacks
    it. None of 30 slips of the evaluation log's list is one piece to e5, 55 of 186 short
    real words are (some common typos are: "taht", "wich", "frist", left uncorrected).
    Without a model, no word is.

    The model is asked for on the first word only: a suggestion whose words are all the
    reader's never touches it. Without `load`, only a model the process has loaded already
    is read (a words-only search in a cold web process must not load one: a second and
    100 MB, half a minute when e5's folder is still to be built); without one, no word is
    whole, and "peur" may be offered "pour"."""
    from books.embedding.encoder import EncoderUnavailable, get_encoders, loaded_encoder

    found: list[Callable[[str], bool]] = []

    def keeps_whole(word: str) -> bool:
        if not found:
            encoder = None
            if load:
                try:
                    encoder = get_encoders().main
                except EncoderUnavailable:
                    encoder = None
            else:
                encoder = loaded_encoder()
            found.append(encoder.keeps_whole if encoder is not None else (lambda word: False))
        return found[0](word)

    return keeps_whole


def suggestion_for(reader_id: int, found: SearchResults) -> str:
    """What a search offers instead, for the page, search.json and the command alike: a
    suggestion when the words did not all match and they found few (SUGGESTED_UP_TO). In a
    hybrid search the words' own count decides: the meaning half finds something near
    almost any query ("happines" found no highlight by its words and five by meaning, in
    Portuguese and German), and the slip is still in the words. A search by meaning alone
    that found something asked for no words: none."""
    if not found.mode_used or found.keyword_pass == "all":
        return ""
    if found.total and found.mode_used == "meaning":
        return ""
    if found.meaning_close and len(WORD.findall(found.query)) == 1:
        # The model read the word as something it found close matches of ("peur" found
        # "Fear is the mind-killer."): a word of its own, whatever the library's words say.
        # One word only: a few words with a slip are found close by the rest of them
        # ("happines in life"), and the slip is still worth correcting.
        return ""
    by_words = found.words_found if found.mode_used == "hybrid" else found.total
    if by_words > SUGGESTED_UP_TO:
        return ""
    return suggestion(reader_id, found.query, words_only=found.mode == "keyword")
