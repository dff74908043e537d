"""What the database cannot hold, caught entry by entry before an import writes anything.

One bad entry used to sink a whole file: a NUL character past the first 8 KB (PostgreSQL
text cannot hold one: DataError) or a highlight of a million words (its search vector
passed PostgreSQL's 1 MB limit) rolled back every good entry with it. Here such an entry
is cleaned or becomes a problem with its line number, and the rest is imported. Pure: no
Django, like the parser.
"""

import re
from dataclasses import fields, replace

from books.importing.clippings import Clipping, ParseResult, Problem

# The longest highlight or note kept. A Kindle clips a few thousand characters at most
# (publishers cap clippings at about a tenth of a book); 100,000 characters are some forty
# pages, and keep a highlight's keyword index far below PostgreSQL's 1 MB per tsvector.
MAX_ENTRY_CHARS = 100_000
NUL_MARK = "\u2400"  # ␀, the symbol for a NUL


def screen_entries(result: ParseResult) -> ParseResult:
    """The parse result with NUL characters removed (from problems' quotes and the entries
    deleted on the device too) and oversized entries made problems."""
    clippings: list[Clipping] = []
    # A problem quotes the line it could not read, NUL and all; shown as a visible mark,
    # since the import's report (JSON in PostgreSQL) cannot hold the character either.
    problems = [
        replace(problem, message=problem.message.replace("\x00", NUL_MARK))
        if "\x00" in problem.message
        else problem
        for problem in result.problems
    ]
    for clipping in result.clippings:
        cleaned = _without_nul(clipping)
        if cleaned is not clipping:
            clipping = cleaned
            if not clipping.title.strip():
                problems.append(Problem(clipping.line, "the entry has no title"))
                continue
        if len(clipping.text) > MAX_ENTRY_CHARS:
            problems.append(
                Problem(
                    clipping.line,
                    f"the {clipping.kind} is {len(clipping.text):,} characters long, more "
                    f"than the {MAX_ENTRY_CHARS:,} one can hold; it was not imported",
                )
            )
            continue
        clippings.append(clipping)
    problems.sort(key=lambda problem: problem.line)
    # The rows deleted on the device are matched against the live ones, cleaned the same
    # way: a NUL left in would let its older live copy back in.
    deleted = [_without_nul(clipping) for clipping in result.deleted_on_device]
    return replace(
        result,
        clippings=clippings,
        problems=problems,
        deleted_on_device=[clipping for clipping in deleted if clipping.title.strip()],
    )


# What the reader wrote or highlighted, of every format's clippings: cleaned of control
# characters (`without_control_characters`). Other fields (a place, a date as written, an
# encoded position) are the file's, only NUL-free.
_READERS_TEXTS = frozenset({"title", "author", "text", "note", "chapter", "tags"})
# Control characters that break a line (a vertical tab is Word's line break within a
# paragraph, U+0085 the next line): a new line, so two lines do not run into one word.
_LINE_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x85]")
# The other C0 and C1 control characters but the tab and the new line, DEL, and the
# invisible characters that mean nothing anywhere in a text: the byte order mark (the Kindle
# scatters it), the word joiner.
_CONTROLS = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\ufeff\u2060]+")
# A zero-width space, non-joiner or joiner means something between two characters (a Thai
# word's end, a Persian word's shape, an emoji's parts: 👩‍🔬); at a text's or a line's
# edge, or beside a space, it is one a copy or a selection left.
_STRAY_ZERO_WIDTH = re.compile("(?<!\\S)[\u200b-\u200d]+|[\u200b-\u200d]+(?!\\S)")


def without_control_characters(text: str) -> str:
    """The text without control characters other than the tab and the new line, and without
    stray zero-width characters, every other character as it was: a bell, an escape or a
    C1 control pasted from a damaged copy is no part of what the reader highlighted, and
    it showed as a box, cut a word in two for search, and stayed in every export."""
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to look for
    text = _LINE_BREAKS.sub("\n", text)
    text = _CONTROLS.sub("", text)
    return _STRAY_ZERO_WIDTH.sub("", text)


def _without_nul(clipping: Clipping) -> Clipping:
    """The clipping with no NUL in any of its texts (title, author, text, note, chapter,
    tags… of every format) and no other control character in what the reader wrote or
    highlighted (`without_control_characters`), or the clipping itself when it has none. A
    NUL is never part of what a reader highlighted (a damaged file, a sync glitch, a JSON
    file's `\\u0000`): dropping it loses nothing, and PostgreSQL refuses it."""
    changes: dict[str, object] = {}
    for name in _field_names(type(clipping)):
        value = getattr(clipping, name)
        clean = without_control_characters if name in _READERS_TEXTS else _nul_free
        if isinstance(value, str):
            cleaned = clean(value)
            if cleaned != value:
                changes[name] = cleaned
        elif isinstance(value, tuple) and any(
            isinstance(item, str) and clean(item) != item for item in value
        ):
            kept = (clean(item) if isinstance(item, str) else item for item in value)
            changes[name] = tuple(item for item in kept if item != "")
    return replace(clipping, **changes) if changes else clipping  # type: ignore[arg-type]


def _nul_free(text: str) -> str:
    return text.replace("\x00", "")


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}  # each kind of clipping's, read once


def _field_names(kind: type[Clipping]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(field.name for field in fields(kind))
    return names
