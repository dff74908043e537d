"""What the database cannot hold, caught entry by entry before an import writes anything.

One bad entry used to sink a whole file: a NUL character past the first 8 KB (PostgreSQL
text cannot hold one: DataError) or a highlight of a million words (its search vector
passed PostgreSQL's 1 MB limit) rolled back every good entry with it. Here such an entry
is cleaned or becomes a problem with its line number, and the rest is imported. Pure: no
Django, like the parser.
"""

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


def _without_nul(clipping: Clipping) -> Clipping:
    """The clipping with no NUL in any of its texts (title, author, text, note, chapter,
    tags… of every format), or the clipping itself when it has none. A NUL is never part of
    what a reader highlighted (a damaged file, a sync glitch, a JSON file's `\\u0000`):
    dropping it loses nothing, and PostgreSQL refuses it. Other control characters are kept
    as the file held them: a highlight is known again by its stored text."""
    changes: dict[str, object] = {}
    for name in _field_names(type(clipping)):
        value = getattr(clipping, name)
        if isinstance(value, str) and "\x00" in value:
            changes[name] = value.replace("\x00", "")
        elif isinstance(value, tuple) and any(
            isinstance(item, str) and "\x00" in item for item in value
        ):
            kept = (item.replace("\x00", "") if isinstance(item, str) else item for item in value)
            changes[name] = tuple(item for item in kept if item != "")
    return replace(clipping, **changes) if changes else clipping  # type: ignore[arg-type]


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}  # each kind of clipping's, read once


def _field_names(kind: type[Clipping]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(field.name for field in fields(kind))
    return names
