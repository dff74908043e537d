"""The tags a reader wrote into a note as hashtags: Apple Books has no tags, and its readers
(Kindle's, Kobo's and KOReader's too) tag a highlight with a note such as `#artist #being`.

Pure Python, no Django. A hashtag is `#` and a word, at the start of the note or after
whitespace, as Obsidian reads one: the word is letters (any script, with their
combining marks), digits, `-` and `_`, and holds at least one letter. So `#bien-être`,
`#año` and `#a1` are tags, and none of these is: `#1` or `#1984` (a chapter, a rank, a
year), `C#` and `http://example.org/page#part` (the `#` inside a word), `# Title` (a
Markdown heading: the `#` stands alone). The word ends at any other character: `#mood,`
is `mood`, and a nested tag `#books/fiction` tags `books`.
"""

import re
import unicodedata

# A `#` at the start or after whitespace, and what follows it up to the next whitespace.
_CANDIDATE = re.compile(r"(?<!\S)#(\S+)")


def _in_word(character: str) -> bool:
    # A combining mark is part of its letter (Devanagari's vowel signs, an accent left
    # apart), though Python's `\w` stops at it.
    return character.isalnum() or character in "-_" or unicodedata.category(character)[0] == "M"


def note_hashtags(note: str) -> list[str]:
    """The words of the note's hashtags, in the note's order, each once, as written
    (composed: an `é` written as `e` and an accent reads as one letter)."""
    found: dict[str, None] = {}
    for match in _CANDIDATE.finditer(unicodedata.normalize("NFC", note)):
        candidate = match.group(1)
        end = 0
        while end < len(candidate) and _in_word(candidate[end]):
            end += 1
        word = candidate[:end]
        if any(character.isalpha() for character in word):
            found.setdefault(word, None)
    return list(found)
