"""Book and author identity: when two title lines, from two devices or two formats, name
the same book, and when two author fields name the same person. Pure, no Django.

Every parser (My Clippings, a Kindle notebook, KOReader, Kobo, Apple Books, CSV, JSON)
gives a title and an author as written; `book_key(title, author)` is the one key the
import matches books by. Variants it folds, all seen in real files:

- quotes, apostrophes, dashes, spacing, case and accents: `It Doesn't Have to Be Crazy at
  Work` and `It Doesn’t Have to Be Crazy at Work` from two devices;
- trailing edition and series text without a number: `(Spanish Edition)`, `(edición en
  español)`, `(AmazonClassics Edition)`, `(Vozes de Bolso)`, `(图灵程序设计丛书)`, an
  ISBN; a numbered one stays (`(The Nexus Trilogy Book 3)` is not Book 2, and a year
  `(2015)` may be an anthology's);
- a downloaded file's name: `Oreilly.Developing.Backbone.js.Applications.Apr.2012` is
  `Developing Backbone.js Applications` (a publisher before, a date or format after);
- a subtitle written twice: `"Surely You're Joking, Mr. Feynman!": Adventures of a
  Curious Character: Adventures of a Curious Character`;
- authors as in `authors_normalized` (credentials, initials, `Last, First`, co-authors in
  any order).

Author names (`normalize_author`): credentials and titles go (`Michael Greger, M.D.,
FACLM`, `Smart Ph.D., Bradford D.`, `Professor Brian Cox`, `King, Jr.`), `Last, First`
turns round, middle initials go (`Richard P. Feynman` and `Richard P Feynman`), accents
and case fold, a CJK name loses its spaces and dots (`中島　岳志`, `マイケル・サンデル`) and
its nationality mark (`[美]约翰·威廉斯`). `same_author` compares two normalized fields
more loosely: one shared person among co-authors, an initial for a given name, the two
names in either order (`Nothomb Amélie`).
"""

# This module reads real title lines: its curly quotes, full-width brackets and dashes
# are the devices' own, not look-alikes typed by mistake. Word lists read best as words.
# ruff: noqa: RUF001, RUF002, RUF003, SIM905

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from books.text import fold_keeping_kana_marks, is_cjk

__all__ = [
    "author_known",
    "book_key",
    "display_authors",
    "family_names",
    "highlight_dedupe_key",
    "looks_like_a_file_name",
    "may_be_reversed",
    "may_name_a_known_author",
    "normalize_author",
    "normalize_title",
    "oriented_title_author",
    "person_keys",
    "same_author",
    "same_author_or_family_name",
    "split_authors",
    "turned_by_its_own_words",
]

# Zero-width characters and BOMs that some devices leave inside title lines, and the
# control characters an import drops from titles and authors (books.importing.screening):
# a book stored with one before is still the book a file names without it (each import
# re-keys the reader's books first, books.importing.book_merge). Those that break a line
# (a vertical tab, a form feed, U+0085) separate words, as a new line does.
_INVISIBLE = dict.fromkeys(
    [
        *map(ord, "\ufeff\u200b\u200c\u200d\u2060"),
        *range(0x00, 0x09),
        *range(0x0E, 0x20),
        *range(0x7F, 0x85),
        *range(0x86, 0xA0),
    ],
    None,
)
_WHITESPACE_RE = re.compile(r"\s+")
# Apostrophes and quotes of every kind vanish from a key: `Doesn't` = `Doesn’t` = `Doesnt`.
_QUOTES = dict.fromkeys(
    map(ord, "'\"`´\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2032\u2033«»‹›"),
    None,
)
# Anything that is not a letter or a digit separates words: dashes of every width,
# colons, full stops, brackets.
_NON_WORD_RE = re.compile(r"[\W_]+")

# Words of a trailing group that is an edition, a format, a publisher's series or a
# collection, not part of the book's own name (in the languages of the corpus).
_EDITION_WORDS = (
    r"edition|editions|ausgabe|edición|edicion|édition|edizione|edição|edicao|editie|"
    r"kindle|unabridged|annotated|annoté|illustré|illustrated|classics|classic|"
    r"collection|colección|coleção|colecao|collana|series|serie|série|reihe|library|"
    r"bolso|pocket|books|guides"
)
_EDITION_RE = re.compile(
    rf"(?:^|[\W_])(?:{_EDITION_WORDS})(?:$|[\W_])|丛书|系列|文库|文庫|新書", re.IGNORECASE
)
# A downloaded file's name for a title, `Oreilly.Developing.Backbone.js.Applications.Apr.2012`
# beside `Developing Backbone.js Applications` in one reader's file: dots or underscores
# for spaces, a publisher before the title, a date, an edition or a format after it.
_FILE_NAME_RE = re.compile(r"^[^\s._]+(?:[._][^\s._]+){2,}$")
_FILE_NAME_PUBLISHERS = frozenset(
    "apress manning nostarch oreilly o'reilly packt peachpit pragmatic sams sitepoint wiley "
    "wrox".split()
)
_FILE_NAME_TAIL_RE = re.compile(
    r"^(?:e?book|epub|mobi|pdf|azw3?|retail|v\d+|edition|\d+(?:st|nd|rd|th)(?:ed|edition)?)$"
)
_YEAR_RE = re.compile(r"^(?:19|20)\d\d$")
_MONTHS = frozenset(
    "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june "
    "july august september october november december".split()
)
# An ISBN, not a year: `Best American Essays (2015)` and `(2016)` are two books.
_ISBN_RE = re.compile(r"^[0-9]{9}[0-9xX]$|^97[89][0-9]{10}$")
_TRAILING_GROUP_RE = re.compile(r"\s*[(\[（［]([^()\[\]（）［］]*)[)\]）］]\s*$")
# ` – Edição Bilíngue`, ` - Kindle Edition`: edition text after a dash at the end.
_TRAILING_DASHED_RE = re.compile(r"\s+[-\u2013\u2014]\s+([^-\u2013\u2014]+)$")


def _trailing_edition(title: str) -> str | None:
    """The title without one trailing edition/series group, or None when it has none."""
    group = _TRAILING_GROUP_RE.search(title)
    dashed = None if group else _TRAILING_DASHED_RE.search(title)
    found = group or dashed
    if found is None or found.start() == 0:
        return None
    inner = found.group(1).strip()
    if _ISBN_RE.match(inner.replace("-", "")):
        return title[: found.start()]
    if _EDITION_RE.search(inner) and not any(ch.isdigit() for ch in inner):
        return title[: found.start()]
    return None


def looks_like_a_file_name(title: str) -> bool:
    return bool(_FILE_NAME_RE.match(title.strip()))


def _title_of_a_file_name(title: str) -> str:
    """`Oreilly.Developing.Backbone.js.Applications.Apr.2012` → `Developing Backbone js
    Applications`; any other title as it is."""
    if not looks_like_a_file_name(title):
        return title
    words = re.split(r"[._]", title.strip())
    published = words[0].casefold() in _FILE_NAME_PUBLISHERS
    if published:
        words = words[1:]
    while len(words) > 1 and _FILE_NAME_TAIL_RE.match(words[-1].casefold()):
        words.pop()
    # A year goes when it dates the file (after a month or a publisher's name); in
    # `original_res_1075_2011` it names the document.
    dated = len(words) > 2 and words[-2].casefold() in _MONTHS
    if len(words) > 1 and _YEAR_RE.match(words[-1]) and (dated or published):
        words = words[:-2] if dated else words[:-1]
    return " ".join(words)


@lru_cache(maxsize=8192)
def normalize_title(title: str) -> str:
    """A matching key for a title: the same book gives the same key, whatever the device
    wrote (see the module's docstring for the variants)."""
    title = unicodedata.normalize("NFKC", title.translate(_INVISIBLE))
    title = _title_of_a_file_name(_WHITESPACE_RE.sub(" ", title).strip())
    while (shorter := _trailing_edition(title)) is not None:
        title = shorter.rstrip()
    # A subtitle the store repeated: `X: Adventures of Y: Adventures of Y`.
    parts = [part.strip() for part in title.split(":")]
    if len(parts) >= 3 and fold_keeping_kana_marks(parts[-1]) == fold_keeping_kana_marks(parts[-2]):
        title = ":".join(parts[:-1])
    key = _NON_WORD_RE.sub(" ", fold_keeping_kana_marks(title.translate(_QUOTES))).strip()
    # A title of punctuation only (`...`) keeps what it has rather than nothing.
    return key or _WHITESPACE_RE.sub(" ", title).casefold()


# --- Authors ---------------------------------------------------------------------------------

FULLWIDTH_SEMICOLON = "\uff1b"
_SEMICOLON_RE = re.compile(f"[;{FULLWIDTH_SEMICOLON}]")
# Co-authors joined by a word: `and`, `&`; and, between two names of two words or more
# each, Spanish `y`, French `et`, German `und` (`José Ortega y Gasset` is one man).
_AND_RE = re.compile(r",?\s+(?:and|&)\s+", flags=re.IGNORECASE)
_OTHER_AND_RE = re.compile(r"\s+(?:y|et|und)\s+")


def split_authors(author: str) -> list[str]:
    """Split an author field into names, as written.

    `Jo Lindqvist;Bram Ostrowski`, a trailing `Noor Saleh;`, the English list `Ilse Varga,
    Tomas Rue, and Mina Oduya`, `Fernando Trujillo Sanz y César García Muñoz`, `Max Frisch
    und Uwe Johnson`. `Marrow, Idris` and `Van der Berg, Anna K.` stay one name: commas
    make a list only beside an "and" or when there are at least three pieces, each a name
    of two words or more.
    """
    author = author.translate(_INVISIBLE).strip()
    if not author:
        return []
    if ";" in author or FULLWIDTH_SEMICOLON in author:
        pieces = _SEMICOLON_RE.split(author)
    else:
        pieces = []
        parts = [piece for part in _AND_RE.split(author) for piece in _joined_by_other_and(part)]
        for part in parts:
            commas = [piece.strip() for piece in part.split(",")]
            is_list = (len(parts) > 1 and len(commas) > 1) or len(commas) > 2
            if is_list and all(len(_without_credentials(piece).split()) >= 2 for piece in commas):
                pieces.extend(commas)
            else:
                pieces.append(part)
    return [name for name in (piece.strip() for piece in pieces) if name]


# A comma inside one name reads with one space after it: `Beauvoir de,Simone`.
_COMMA_RE = re.compile(r"\s*,\s*")
# Runs of spaces read as one, except a Japanese name's ideographic space (`中島\u3000岳志`).
_SPACES_RE = re.compile(r"[^\S\u3000]+")


@lru_cache(maxsize=8192)
def display_authors(author: str) -> str:
    """An author field as a page shows it: the names `split_authors` reads, each with its
    spacing tidied and no separator left hanging, joined by "; ". `Nir Eyal;` reads `Nir
    Eyal`, `Thomas J. Stanley;William D. Danko` reads `Thomas J. Stanley; William D.
    Danko`, `Beauvoir de,Simone` reads `Beauvoir de, Simone`. The names stay as written
    (no turning round, no folding), so `normalize_author` reads the same people in both."""
    names = (_COMMA_RE.sub(", ", _SPACES_RE.sub(" ", name)) for name in split_authors(author))
    return "; ".join(tidy for name in names if (tidy := name.strip(" ,;")))


def _joined_by_other_and(part: str) -> list[str]:
    pieces = _OTHER_AND_RE.split(part)
    if len(pieces) > 1 and all(len(piece.split()) >= 2 for piece in pieces):
        return pieces
    return [part]


# Credentials, honorifics and generational suffixes: not part of who the person is.
# Compared without dots and case: `M.D.`, `MD`, `Ph.D.`, `PhD`, `FACLM`.
_CREDENTIALS = frozenset(
    "md phd dphil mphil mph msc ms ma mba mfa bsc ba rd rn np dds dvm jd llm esq cpa "
    "facp facs faclm facc frcp frcs fache faan faap facog "
    "dr doctor prof professor sir dame lord lady rev reverend fr mr mrs ms miss mme mlle "
    "sr jr ii iii iv "
    "dra lic ing herr frau".split()
)
# A name's own brackets: a nationality mark before a Chinese name (`(美)`, `[美]`,
# `［美国］`, `【英】`) or an original spelling after it (`辛普森（Kyle Simpson）`).
_BRACKETED_RE = re.compile(r"[(\[（［【〔][^()\[\]（）［］【】〔〕]*[)\]）］】〕]")
# Name separators of CJK scripts: the katakana middle dot, the middle dot, the ideographic
# full stop; `マイケル・サンデル` and `マイケル サンデル` are one name.
_CJK_NAME_DOTS = dict.fromkeys(map(ord, "\u30fb\u00b7\u2022\uff65\u3002"), " ")


def _credential(token: str) -> bool:
    return token.replace(".", "").casefold() in _CREDENTIALS


def _without_credentials(piece: str) -> str:
    return " ".join(token for token in piece.split() if not _credential(token))


def _person(name: str) -> str:
    """One person's name as a key: `Greger, Michael, M.D.` -> `michael greger`."""
    name = unicodedata.normalize("NFKC", name).translate(_CJK_NAME_DOTS)
    without_brackets = _BRACKETED_RE.sub(" ", name)
    if without_brackets.strip():
        name = without_brackets
    if any(is_cjk(ch) for ch in name):
        # CJK names are written without spaces as often as with: `中島　岳志`, `中島岳志`.
        return fold_keeping_kana_marks(_NON_WORD_RE.sub("", name))
    pieces = [_without_credentials(piece) for piece in name.split(",")]
    pieces = [piece for piece in pieces if piece.strip()]
    # `Last, First` turns round; anything else reads as written.
    name = f"{pieces[1]} {pieces[0]}" if len(pieces) == 2 else " ".join(pieces)
    tokens = _NON_WORD_RE.sub(" ", fold_keeping_kana_marks(name.translate(_QUOTES))).split()
    if len(tokens) > 2:
        # Middle initials say nothing a reader would tell two authors apart by:
        # `Richard P. Feynman` = `Richard P Feynman`, `Peter H. Diamandis`.
        tokens = [tokens[0], *(t for t in tokens[1:-1] if len(t) > 1), tokens[-1]]
    return " ".join(tokens)


@lru_cache(maxsize=8192)
def normalize_author(author: str) -> str:
    """The author field as a key, stored as `Book.authors_normalized`: each person's name
    folded (see `_person`), several people sorted and joined by "; "."""
    names = {_person(name) for name in split_authors(author)}
    return "; ".join(sorted(name for name in names if name))


def person_keys(authors_normalized: str) -> frozenset[str]:
    """The people of a normalized author field, each as its words in sorted order, so
    `nothomb amelie` and `amelie nothomb` are one person."""
    return frozenset(
        " ".join(sorted(name.split())) for name in authors_normalized.split("; ") if name
    )


def _same_person(a: str, b: str) -> bool:
    if a == b:
        return True
    a_words, b_words = a.split(), b.split()
    if sorted(a_words) == sorted(b_words):
        return True
    if a_words[-1] != b_words[-1] or len(a_words) < 2 or len(b_words) < 2:
        return False
    return _given_names_agree(a_words[0], b_words[0])


def _given_names_agree(first_a: str, first_b: str) -> bool:
    """The same given name, or an initial for it: `j rowling` and `joanne rowling`."""
    if len(first_a) == 1 or len(first_b) == 1:
        return first_a[0] == first_b[0]
    return first_a == first_b


# Cyrillic letters as a reader would spell them in Latin ones, on folded names (`й` is
# already `и`): `Федор Михайлович Достоевский` reads `fedor mikhailovich dostoevskii`.
_CYRILLIC_LETTERS = "абвгдежзиклмнопрстуфхцчшщыэюяіїєґ"
_LATIN_SPELLINGS = "a b v g d e zh z i k l m n o p r s t u f kh ts ch sh shch y e yu ya i i e g"
_CYRILLIC_TO_LATIN = str.maketrans(
    dict(zip(_CYRILLIC_LETTERS, _LATIN_SPELLINGS.split(), strict=True)) | dict.fromkeys("ъь", "")
)
_CYRILLIC_RE = re.compile("[\u0400-\u04ff]")
_VOWELS_RE = re.compile("[aeiouy]+")
# `Dostoyevsky`, `Dostoyevski`, `Dostoevskii`, `Dostoevskij`: one ending in Latin letters.
_SKI_RE = re.compile("sk(?:y|iy|ii|ij)$")


def _in_latin(word: str) -> str:
    return word.translate(_CYRILLIC_TO_LATIN)


def _consonants(word: str) -> str:
    """A name's sound as its consonants, which transliteration keeps and its vowels do not:
    `Bradbury` and `Брэдбери` are `brdbr`, `Stephen` and `Стивен` `stfn`."""
    latin = _in_latin(word).replace("ph", "f").replace("v", "f").replace("w", "f")
    return re.sub(r"(.)\1", r"\1", _VOWELS_RE.sub("", latin))


def _cyrillic_beside_latin(a: str, b: str) -> bool:
    """One name in Cyrillic letters, the other in Latin ones."""
    cyrillic, other = (a, b) if _CYRILLIC_RE.search(a) else (b, a)
    return bool(_CYRILLIC_RE.search(cyrillic)) and all(
        ch.isascii() or unicodedata.name(ch, "").startswith("LATIN") for ch in other
    )


def _same_family_name(a: str, b: str, *, across_scripts: bool) -> bool:
    if a == b or _SKI_RE.sub("ski", a) == _SKI_RE.sub("ski", b):
        return True
    return across_scripts and len(sound := _consonants(a)) >= 3 and sound == _consonants(b)


def _same_person_loosely(a: str, b: str) -> bool:
    """`_same_person`, or (for the connections only) one person written otherwise:
    - a family name alone: Apple Books' `Krishnamurti` beside `Jiddu Krishnamurti`;
    - the family name's `-sky` spelt `-ski`: `Dostoyevski` beside `Fyodor Dostoyevsky`;
    - in Cyrillic beside Latin letters, a family name and a given name that sound alike:
      `Стивен Кинг` beside `Stephen King`, `Нил Гейман` beside `Neil Gaiman`;
    - a number where the given name should be, the rest among the other's words:
      `3124 Владимирович Набоков` beside `Владимир Владимирович Набоков`."""
    if _same_person(a, b):
        return True
    a_words, b_words = a.split(), b.split()
    if a_words[-1].isdigit():  # a number is no one's family name
        return False
    across_scripts = _cyrillic_beside_latin(a, b)
    if not _same_family_name(a_words[-1], b_words[-1], across_scripts=across_scripts):
        return False
    if len(a_words) < 2 or len(b_words) < 2:
        return True
    numbered_a, numbered_b = (
        [word for word in words if not word.isdigit()] for words in (a_words, b_words)
    )
    if numbered_a != a_words or numbered_b != b_words:
        shorter, longer = sorted((numbered_a, numbered_b), key=len)
        return set(shorter) <= set(longer)
    first_a, first_b = a_words[0], b_words[0]
    if not across_scripts:
        return _given_names_agree(first_a, first_b)
    if len(first_a) > 1 and len(first_b) > 1:  # `Стивен`, `Stephen`: `stfn`
        return _consonants(first_a) == _consonants(first_b)
    return _in_latin(first_a)[0] == _in_latin(first_b)[0]  # `С.` for `Stephen`


def same_author(a: str, b: str) -> bool:
    """Whether two normalized author fields share a person (co-authors count: a book by
    Feynman and Leighton shares its author with one by Feynman)."""
    if not a or not b:
        return False
    if a == b:
        return True
    names_a, names_b = a.split("; "), b.split("; ")
    return any(_same_person(x, y) for x in names_a for y in names_b)


def same_author_or_family_name(a: str, b: str) -> bool:
    """`same_author`, or one field names a person by their family name alone: Apple Books'
    `Krishnamurti` beside a Kindle's `Jiddu Krishnamurti` (a given name alone, `Michael`,
    is no one's), or spells the name otherwise (`_same_person_loosely`: `Dostoyevski`,
    `Стивен Кинг` beside `Stephen King`). For telling a pair of books by one author from
    two authors' (the connections); never for making one book or one author of two:
    `Brontë` is Emily's and Anne's, and `Darwin - The Man and His Legacy` is a title, not
    Darwin's book."""
    if same_author(a, b):
        return True
    if not a or not b:
        return False
    names_a, names_b = a.split("; "), b.split("; ")
    return any(_same_person_loosely(x, y) for x in names_a for y in names_b)


def author_blocks(authors_normalized: str) -> set[str]:
    """Keys that two normalized author fields share whenever `same_author_or_family_name`
    holds: each person's family name (the last word), its sound (`_consonants`, for
    `Dostoyevski` and `Достоевский`) and words in sorted order. Books need comparing only
    within a key's group."""
    keys = set()
    for name in authors_normalized.split("; "):
        if words := name.split():
            keys |= {f"last:{words[-1]}", "all:" + " ".join(sorted(words))}
            if len(sound := _consonants(words[-1])) >= 3:
                keys.add(f"sound:{sound}")
    return keys


def author_known(name: str, known: Iterable[str]) -> bool:
    """Whether `name` (as written) is one of the `known` normalized author fields."""
    wanted = normalize_author(name)
    if not wanted or "; " in wanted:
        return False
    return any(same_author(wanted, other) for other in known)


# --- The book --------------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def book_key(title: str, author: str) -> str:
    """The key books are matched by: every parser's (title, author) goes through this.

    The author part is order-free within each name, so `Nothomb Amélie` is `Amélie
    Nothomb`. Cached: a file names the same few hundred books over and over.
    """
    people = sorted(person_keys(normalize_author(author)))
    return f"{normalize_title(title)}\x1f{'; '.join(people)}"[:600]


def family_names(known: Iterable[str]) -> frozenset[str]:
    """Every word of the names in `known` normalized fields (a family name may come first:
    `nothomb amelie`): a cheap first test before `oriented_title_author` compares names,
    since a library has hundreds of books."""
    return frozenset(word for field in known for word in field.replace(";", " ").split())


def may_name_a_known_author(title: str, author: str, families: frozenset[str]) -> bool:
    """Whether the side of a title line that could be the author ends in a known family
    name: only then can `oriented_title_author` turn it round."""
    if not may_be_reversed(title, author):
        return False
    side = title if author else title.partition(" - ")[0]
    names = normalize_author(side).split()
    return bool(names) and names[-1] in families


def may_be_reversed(title: str, author: str) -> bool:
    # Only what a dashed line can give: a short "title" that could be a name, or a
    # title with no author and a " - " in it. Most lines are neither and cost nothing.
    if not author:
        return " - " in title
    return len(title.split()) <= 5 and not any(ch.isdigit() or ch in "()" for ch in title)


_NAME_PARTICLES = frozenset("de del della der di da das dos du la le van von y".split())


# `God's Debris`, `Ender’s Game`: a possessive belongs to a title, never to a name.
_POSSESSIVE_RE = re.compile(r"\w['’]s\b", flags=re.IGNORECASE)
# `H.`, `J.R.`, and a bare `P` (`P Hernan Alessandri`); not the one-letter words that open
# titles (`A Fine Balance`, `O Alquimista`, `Y ...`).
_INITIAL_RE = re.compile(r"^(?:[A-Z]\.|(?:[A-Z]\.){2,}|[B-DF-HJ-NP-XZ])$")
_NAME_SUFFIXES = frozenset("jr jr. sr sr. ii iii iv".split())


def _looks_like_a_name(text: str) -> bool:
    """`Walter Isaacson`, `Ludwig van Beethoven`: two to four words, each capitalised or a
    particle. `Steve Jobs (Walter Isaacson)` must never turn round, even when the reader
    also has a book by Steve Jobs; `La Fête de l'insignifiance` and `God's Debris` are no
    names."""
    words = text.split()
    return (
        2 <= len(words) <= 4 + any(word.casefold() in _NAME_SUFFIXES for word in words)
        and all(word[:1].isupper() or word.casefold() in _NAME_PARTICLES for word in words)
        and not _POSSESSIVE_RE.search(text)
    )


def _marked_as_a_name(text: str) -> bool:
    """A name by more than its shape: an initial before its last word (`James H. Laros`,
    `P Hernan Alessandri`) or a suffix (`III`, `Jr.`)."""
    words = text.split()
    return bool(words) and (
        any(_INITIAL_RE.match(word) for word in words[:-1])
        or words[-1].casefold() in _NAME_SUFFIXES
    )


def _names_its_author_first(left: str, right: str) -> bool:
    """Whether a dashed title line `left - right` names its author first, by its own words:
    `Scott Adams - God's Debris` (a possessive is a title's), `James H. Laros III -
    PowerInsight` (an initial or a suffix is a name's). Most such lines put the author
    last, and a line whose right side could be a name is read that way."""
    return (
        _looks_like_a_name(left)
        and not _looks_like_a_name(right)
        and (_marked_as_a_name(left) or bool(_POSSESSIVE_RE.search(right)))
    )


def turned_by_its_own_words(title: str, author: str) -> tuple[str, str] | None:
    """A book's (title, author) the right way round when a dashed title line, as read or as
    an earlier reading stored it, has them the wrong way (`Scott Adams` by `God's Debris`,
    or the whole line as a title with no author); None when its words do not say so. An
    author given in parentheses turns only for a possessive, the one mark no name carries."""
    if author:
        if _POSSESSIVE_RE.search(author) and _names_its_author_first(title, author):
            return author, title
        return None
    left, dash, right = title.partition(" - ")
    if dash and _names_its_author_first(left.strip(), right.strip()):
        return right.strip(), left.strip()
    return None


def oriented_title_author(title: str, author: str, known: Iterable[str]) -> tuple[str, str]:
    """(title, author) the right way round, when the reader's other books say which side
    of a dashed title line is the author.

    `Milan Kundera - La Fête de l'insignifiance` (no parentheses) reads as the title
    `Milan Kundera` by `La Fête de l'insignifiance`, or as a title with no author at all
    when the right side is long; with other books by Milan Kundera in the file or the
    library, it is the book `La Fête de l'insignifiance` by Milan Kundera.
    """
    known = list(known)
    if not known:
        return title, author
    if (
        author
        and not _looks_like_a_name(author)
        and author_known(title, known)
        and not author_known(author, known)
    ):
        return author, title
    if not author:
        left, dash, right = title.partition(" - ")
        if dash and right.strip() and author_known(left, known):
            return right.strip(), left.strip()
    return title, author


def highlight_dedupe_key(
    *, book_key: str, kind: str, page: str, start: int | None, end: int | None, text: str
) -> str:
    """Stable across imports: the same entry in two files gives the same key."""
    where = f"{start}-{end}" if start is not None else f"p{page}"
    folded = _WHITESPACE_RE.sub(" ", text).strip().casefold()
    raw = f"{book_key}\x1f{kind}\x1f{where}\x1f{folded}"
    return hashlib.sha256(raw.encode()).hexdigest()
