"""The tags a reader wrote into a note as hashtags: Apple Books has no tags, and its readers
(Kindle's, Kobo's and KOReader's too) tag a highlight with a note such as `#artist #being`.

Pure Python, no Django. A hashtag is `#` (or U+FF03, the full-width number sign that
Chinese and Japanese input methods type) and a word, at the start of the note or after
whitespace (the ideographic space too), as Obsidian reads one: the word is letters (any
script, with their combining marks), digits, `-` and `_`, and holds at least one letter.
So `#bien-être`, `#año` and `#a1` are tags, and none of these is: `#1` or `#1984` (a
chapter, a rank, a year), `C#` and `http://example.org/page#part` (the `#` inside a
word), `# Title` (a Markdown heading: the `#` stands alone). The word ends at any other
character: `#mood,` is `mood`, and a nested tag `#books/fiction` tags `books`.

Two more limits, for what a reader would not call a tag: a colour written in hex, three
or six hex digits with at least one digit among them (`#ff0000`, `#C0C0C0`, `#0af`), is
not one (a word of hex letters, `#fee` or `#facade`, is); and a note, or a change to one,
gives at most `HASHTAGS_PER_NOTE` tags, the first it names anew.

`hashtags_named_anew` is the rule both an import (books.importing.enrich) and the reader's
own note editor (books.services.highlight_note_update) apply: a note's hashtags become
tags when the note arrives or changes, only those the note it replaces did not name.
"""

import re
import unicodedata

from books.text import tag_name

# Readers tag a highlight with a few words (the shared Apple Books libraries: at most 7
# in a note); a crafted file of notes holding thousands of `#word`s would otherwise make
# as many tags per note.
HASHTAGS_PER_NOTE = 20

# A colour in hex: three or six hex digits.
_HEX_COLOUR = re.compile(r"[0-9a-fA-F]{3}|[0-9a-fA-F]{6}")

# A `#` or U+FF03 (FULLWIDTH NUMBER SIGN: a Japanese keyboard's, before `読書`) at the
# start or after whitespace (`\s` holds the ideographic space U+3000), and what follows it
# up to the next whitespace. NFC leaves U+FF03 as it is (NFKC would fold it to `#`).
_CANDIDATE = re.compile(r"(?<!\S)[#\uff03](\S+)")


def _in_word(character: str) -> bool:
    # A combining mark is part of its letter (Devanagari's vowel signs, an accent left
    # apart), though Python's `\w` stops at it.
    return character.isalnum() or character in "-_" or unicodedata.category(character)[0] == "M"


def note_hashtags(note: str, *, limit: int | None = HASHTAGS_PER_NOTE) -> list[str]:
    """The words of the note's hashtags, in the note's order, each once, as written
    (composed: an `é` written as `e` and an accent reads as one letter), at most `limit`
    (None: every one)."""
    found: dict[str, None] = {}
    for match in _CANDIDATE.finditer(unicodedata.normalize("NFC", note)):
        candidate = match.group(1)
        end = 0
        while end < len(candidate) and _in_word(candidate[end]):
            end += 1
        word = candidate[:end]
        if any(character.isalpha() for character in word) and not _is_colour(word):
            found.setdefault(word, None)
            if len(found) == limit:
                break
    return list(found)


def _is_colour(word: str) -> bool:
    return _HEX_COLOUR.fullmatch(word) is not None and any(c.isdigit() for c in word)


def hashtag_names(note: str, *, limit: int | None = HASHTAGS_PER_NOTE) -> list[str]:
    """The tags the note's hashtags name, in the note's order, each once: each word as a
    tag's name (books.text.tag_name: `#Año` and `#año` are one tag), of its first `limit`
    words (None: every one)."""
    words = note_hashtags(note, limit=limit)
    return list(dict.fromkeys(name for name in map(tag_name, words) if name))


def hashtags_named_anew(note: str, *, before: str) -> list[str]:
    """The tags the note names as hashtags that the note it replaces (`before`) did not, in
    the note's order: those `before` named are the highlight's tags already, or the reader
    took them away, and a hashtag taken out of the note leaves its tag where it is. At most
    `HASHTAGS_PER_NOTE`, the first; every hashtag of `before` counts, however many it
    held, so one pushed past the twentieth by a hashtag written before it is not new."""
    named_before = set(hashtag_names(before, limit=None))
    anew = [name for name in hashtag_names(note, limit=None) if name not in named_before]
    return anew[:HASHTAGS_PER_NOTE]
