"""What the database cannot hold, caught entry by entry before an import writes anything.

One bad entry used to sink a whole file: a NUL character past the first 8 KB (PostgreSQL
text cannot hold one: DataError) or a highlight of a million words (its search vector
passed PostgreSQL's 1 MB limit) rolled back every good entry with it. Here such an entry
is cleaned or becomes a problem with its line number, and the rest is imported. Pure: no
Django, like the parser.
"""

from dataclasses import replace

from books.importing.clippings import Clipping, ParseResult, Problem

# The longest highlight or note kept. A Kindle clips a few thousand characters at most
# (publishers cap clippings at about a tenth of a book); 100,000 characters are some forty
# pages, and keep a highlight's keyword index far below PostgreSQL's 1 MB per tsvector.
MAX_ENTRY_CHARS = 100_000
NUL_MARK = "\u2400"  # ␀, the symbol for a NUL


def screen_entries(result: ParseResult) -> ParseResult:
    """The parse result with NUL characters removed (from problems' quotes too) and
    oversized entries made problems."""
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
        if "\x00" in clipping.title or "\x00" in clipping.author or "\x00" in clipping.text:
            # A NUL is never part of what a reader highlighted (a damaged file, a sync
            # glitch): dropping it loses nothing, and the database refuses it.
            clipping = replace(
                clipping,
                title=clipping.title.replace("\x00", ""),
                author=clipping.author.replace("\x00", ""),
                text=clipping.text.replace("\x00", ""),
                added_raw=clipping.added_raw.replace("\x00", ""),
            )
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
    return replace(result, clippings=clippings, problems=problems)
