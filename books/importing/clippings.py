"""Parse a Kindle `My Clippings.txt` file into dataclasses.

This module decides how the file's bytes become entries: how they are decoded (UTF-8, a
Windows-1252 file or line, UTF-16), where one entry ends (separators, damaged or missing
ones), an entry's title, author and text (a clipping-limit placeholder taken off), and which
entries are problems or carry warnings, on which line. What an entry's metadata line says
(kind, page, location, date, in ten UI languages) is books.importing.clippings_metadata's
to decide. The dataclasses here (`ParseResult`, `Clipping`, `Problem`) are what every
other format's parser returns too.

Pure Python, no Django: bytes in, `ParseResult` out, and it never raises. The variants it
handles are described in FORMAT.md beside the real files in `../shared/data/clippings/`
(about 30,000 entries, ten UI languages); the comments below quote the lines that made
each rule necessary.

An entry looks like this, and every entry (the last one too) ends with the separator:

    The Quiet Engine (Okonkwo, Chidi)
    - Your Highlight on page 12 | Location 170-172 | Added on Monday, March 4, 2024 9:01:22 PM

    Machines hum when they are lonely.
    ==========

The file is split on separator lines first, and only then is each entry's second line read
as metadata. Metadata is never looked for by its prefix inside a body, because highlighted
text can itself start with "- " or "– " (`– Я знаю, что ты не спишь, – сказал он.`).
Inside a body, only a title line followed by a whole metadata line, date and all, starts
an entry: the sign of a separator deleted outright, of which the reader is warned.
"""

# The docstrings quote the Kindle's own Cyrillic, full-width and en-dash characters, not
# look-alikes typed by mistake.
# ruff: noqa: RUF002

from __future__ import annotations

import codecs
import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from itertools import pairwise

from books.importing.clippings_metadata import DASHES, LOCATION_MAX, parse_metadata_line

# Book and author identity live in their own module; these names are re-exported here.
from books.importing.identity import (
    normalize_author,
    normalize_title,
    split_authors,
    turned_by_its_own_words,
)
from books.importing.marks import gettext_noop

__all__ = [
    "CLIPPING_LIMIT_PLACEHOLDERS",
    "NOT_A_CLIPPINGS_FILE",
    "Clipping",
    "ParseResult",
    "Problem",
    "normalize_author",
    "normalize_title",
    "parse_clippings",
    "split_authors",
    "without_clipping_limit",
]

BOM = "\ufeff"


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which made
# building 10,000 clippings several times slower. Treat instances as values all the same.
@dataclass(slots=True)
class Clipping:
    title: str
    author: str  # as written inside the last parentheses; "" when the line has none
    kind: str  # "highlight" | "note" | "bookmark" | "clip"
    text: str
    page: str | None  # "12", "xix" (lower-cased), "13-14"; a PDF's "13-13" becomes "13"
    location_start: int | None
    location_end: int | None  # None when the Kindle wrote a single location
    added_at: datetime | None  # always UTC; None when the date could not be read
    added_raw: str  # the date as written, without its "Added on" label
    language: str  # the UI language of the metadata line: en es de fr it pt nl ru ja zh
    line: int  # 1-based line of the entry's title
    # The publisher's clipping limit replaced the text, or its end: the text is then what
    # the Kindle saved before the placeholder, often nothing.
    truncated: bool
    # Where a device other than the Kindle says the highlight is (`positions.encode`); ""
    # for a Kindle's, whose locations say it.
    position: str = ""


@dataclass(frozen=True, slots=True)
class Problem:
    """An entry that could not be read; the rest of the file is parsed regardless."""

    line: int  # 1-based line of the offending line (the title or the metadata line)
    message: str  # what is wrong, without the line number: "unrecognised metadata line '…'"
    # What could be read of the entry all the same, for its reader to find what was lost:
    # its book's title and the first words of its text, "" when the parser has none. Not
    # what makes two problems the same: the line and the message are.
    title: str = field(default="", compare=False)
    words: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class RemovedTrace:
    """What an Exogram export keeps of a highlight its reader deleted and the purge removed
    for good (a PurgedHighlight's fields: books.importing.purged), never its words."""

    book_key: str
    kind: str
    dedupe_key: str
    text_hashes: tuple[str, ...]
    runs: tuple[int, ...]
    # Deleted on the device, not removed by the purge (books.importing.device_deleted), and
    # when the device made it (None: it did not say). Absent from older version 2 exports.
    on_device: bool = False
    added_at: datetime | None = None


@dataclass(slots=True)
class ParseResult:
    clippings: list[Clipping]
    problems: list[Problem]
    entries: int  # entries seen; each became exactly one clipping or one problem…
    # …or was skipped on purpose, counted by reason ("deleted", "hidden", "empty"): rows a
    # device database keeps for what the reader removed.
    skipped: dict[str, int] = field(default_factory=dict)
    # Entries kept, but with something in them read the parser's own way (a date it could
    # not read, a range written backwards): the report lists them so the reader can check.
    warnings: list[Problem] = field(default_factory=list)
    # A device's file read without a problem that holds no highlight or note (a KOReader
    # sidecar of a book read without highlighting): what the refusal says, in the format's
    # words, naming the book when the file does; "" otherwise.
    holds_nothing: str = ""
    # Highlights the reader deleted on the device that the file still holds (Apple Books
    # keeps the row, marked deleted): counted in `skipped`, never imported, but remembered,
    # so that an older copy of the file does not bring them back (books.importing.purged).
    deleted_on_device: list[Clipping] = field(default_factory=list)
    # Highlights removed for good, as an Exogram export remembers them: an import of this
    # reader leaves them out from then on.
    removed_for_good: list[RemovedTrace] = field(default_factory=list)


NOT_A_CLIPPINGS_FILE = gettext_noop(
    "not a Kindle 'My Clippings.txt' file (no '==========' separators and no Kindle metadata lines)"
)
NO_TITLE_LINE = gettext_noop("entry has no title line (it starts with the metadata line %(line)s)")
NO_METADATA_LINE = gettext_noop("entry has a title but no metadata line (%(line)s)")
BLANK_METADATA_LINE = gettext_noop("expected the metadata line after the title, found a blank line")
UNRECOGNISED_METADATA = gettext_noop("unrecognised metadata line %(line)s")
BEYOND_THE_END = gettext_noop("location %(location)s is beyond any book's end (%(line)s)")
# Warnings: the entry is kept all the same.
UNREADABLE_DATE = gettext_noop("the date %(date)s could not be read; the entry is kept without one")
REVERSED_LOCATION = gettext_noop("location %(written)s is reversed; read as %(read)s")
# A UTF-8 file with bytes that are not UTF-8 (damaged, or pasted from another file): each
# line with them is named. A file that is not UTF-8 anywhere (Windows-1252 throughout, as
# a Windows editor saves it) is read right and said once, at its first such line.
NOT_UTF8_LINE = gettext_noop(
    "this line has bytes that are not UTF-8; they were read as Windows-1252 characters: "
    "check its letters"
)
NOT_UTF8_FILE = gettext_noop(
    "this file is not UTF-8 (this is its first line that shows it): it was read as "
    "Windows-1252; check its accented letters"
)
# A separator deleted outright (a hand edit, a sync cut short): the entry starting on this
# line, its title quoted, was read apart from the one before it.
MISSING_SEPARATOR = gettext_noop(
    "a separator seems to be missing before this line (%(line)s); the entries were split there"
)

# A separator is exactly ten `=` on a line of its own. Matching it with the newline before
# it lets one C-level split cut a 3 MB file into entries; a "\n" is put in front of the
# text so that a file starting with a separator is cut too.
_SEPARATOR_RE = re.compile(r"\n==========[ \t]*(?=\n|\Z)")
# A copy cut short at EOF can end in a partial separator (`=======`).
_PARTIAL_SEPARATOR_RE = re.compile(r"\n[ \t]*={1,10}[ \t]*\s*\Z")


def parse_clippings(data: bytes) -> ParseResult:
    """Parse the bytes of a `My Clippings.txt` file. Never raises."""
    text, not_utf8 = _decode(data)
    # U+FEFF is meaningless anywhere in this format, and the Kindle scatters it: at the file
    # start, at some entry starts, and in runs inside personal-document titles
    # (`Field Notes\ufeff\ufeff\ufeff on Tides`). Dropping all of them at once is
    # cheaper than stripping per line.
    text = text.replace(BOM, "")
    # Device files use CRLF, git-normalised copies LF, and typed multi-line notes inside a
    # CRLF file use bare LF: universal newlines keep the line numbers an editor shows.
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")

    pieces = _SEPARATOR_RE.split("\n" + text)
    pieces[-1] = _PARTIAL_SEPARATOR_RE.sub("", pieces[-1])
    if len(pieces) == 1:
        pieces = _split_without_separators(pieces[0])
    if "=====" in text:
        pieces = [part for piece in pieces for part in _split_at_near_separators(piece)]

    result = ParseResult(clippings=[], problems=[], entries=0)
    # Each piece starts on the line of the separator before it (the "\n" put in front of
    # the text plays that part for the first piece), so counting its newlines is enough.
    line = 0
    for piece in pieces:
        for index, part in enumerate(_split_at_missing_separators(piece)):
            if index:
                # The part starts with its title line, on `line`.
                title = part.partition("\n")[0]
                result.warnings.append(Problem(line, MISSING_SEPARATOR % {"line": _quote(title)}))
            parsed = _parse_entry(part, line)
            line += part.count("\n") + 1
            if parsed is None:
                continue
            result.entries += 1
            if isinstance(parsed, Clipping):
                result.clippings.append(_with_warnings(parsed, result.warnings))
            else:
                result.problems.append(parsed)
    if result.entries == 1 and not result.clippings and len(pieces) == 1:
        # One unreadable blob without a single separator or metadata line is some other
        # file (an HTML notebook export, a CSV): say so instead of "unrecognised metadata".
        result.problems[0] = Problem(line=1, message=NOT_A_CLIPPINGS_FILE)
    elif not_utf8.lines:
        if not_utf8.throughout:
            result.warnings.append(Problem(not_utf8.lines[0], NOT_UTF8_FILE))
        else:
            result.warnings += [Problem(line, NOT_UTF8_LINE) for line in not_utf8.lines]
        # In the order of the file, as its problems are (a stable sort: the warnings of one
        # line stay in the order they were found).
        result.warnings.sort(key=lambda warning: warning.line)
    return result


# A line of `=` that is not ten long, or has a space or tab before it: a separator damaged
# by hand-editing, or a divider inside a highlight. It separates only when a title and a
# metadata line follow it.
_NEAR_SEPARATOR_RE = re.compile(r"\n[ \t]*={5,20}[ \t]*(?=\n)")


def _split_at_near_separators(piece: str) -> list[str]:
    # Cut like _SEPARATOR_RE (the separator line goes, the newline after it stays with the
    # next piece), so parse_clippings' line count holds.
    parts: list[str] = []
    start = 0
    for match in _NEAR_SEPARATOR_RE.finditer(piece):
        following = piece[match.end() :].lstrip("\n").split("\n", 2)
        if (
            len(following) >= 2
            and following[0].strip()
            and not following[0].lstrip().startswith("=")
            and parse_metadata_line(following[1]) is not None
        ):
            parts.append(piece[start : match.start()])
            start = match.end()
    parts.append(piece[start:])
    return parts


# The start of a line that may be a metadata line: a dash, perhaps after blanks.
_DASH_LINE_RE = re.compile(r"\n[^\S\n]*[-\u2013]")


def _split_at_missing_separators(piece: str) -> list[str]:
    """The piece, cut before each entry whose separator was deleted outright.

    Such an entry's title line and metadata line sit inside the previous entry's text:
    `…its last words\nThe Second Book (Author)\n- Your Highlight on … | Added on …`. A cut
    needs that pair after the piece's own title and metadata lines, a title line that is
    not itself a metadata line or a run of `=`, and a metadata line with its date part
    (`| Added on …`): a text that quotes a metadata line alone (`- Your Highlight on page
    3 | …` after a blank line, or without a date) is left whole. The newline before the
    title goes with the cut, as in _split_without_separators, so parse_clippings' line
    count holds.
    """
    content = piece.lstrip()
    title_at = piece.rfind("\n", 0, len(piece) - len(content)) + 1
    # The text starts after the title line and the metadata line.
    title_end = piece.find("\n", title_at)
    meta_end = piece.find("\n", title_end + 1) if title_end >= 0 else -1
    if not content or meta_end < 0:
        return [piece]
    parts: list[str] = []
    cut = 0
    # Most pieces have no dash line in their text: one search, and no line is split.
    for match in _DASH_LINE_RE.finditer(piece, meta_end + 1):
        title_start = piece.rfind("\n", 0, match.start()) + 1
        meta_start = match.start() + 1
        meta_stop = piece.find("\n", meta_start)
        meta_line = piece[meta_start:] if meta_stop < 0 else piece[meta_start:meta_stop]
        if _is_title_line(piece[title_start : match.start()]) and _is_dated_metadata_line(
            meta_line
        ):
            parts.append(piece[cut : title_start - 1])
            cut = title_start
    parts.append(piece[cut:])
    return parts


def _is_title_line(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and stripped[0] != "=" and parse_metadata_line(stripped) is None


def _is_dated_metadata_line(line: str) -> bool:
    metadata = parse_metadata_line(line)
    return metadata is not None and bool(metadata[6])  # its "Added on …", read or not


def _split_without_separators(piece: str) -> list[str]:
    # A file with its separators stripped (seen in a test input): start an entry at every
    # non-blank line that is followed by a metadata line. Piece [a, b) holds lines a..b-1,
    # which keeps parse_clippings' line count right (it adds one line per cut).
    lines = piece.split("\n")
    starts = [
        index
        for index in range(1, len(lines) - 1)
        if lines[index].strip() and parse_metadata_line(lines[index + 1]) is not None
    ]
    if not starts:
        return [piece]
    return ["\n".join(lines[a:b]) for a, b in pairwise([0, *starts, len(lines)])]


# --- Decoding --------------------------------------------------------------------------------


# Where the decoding of one file is reading bytes that are not UTF-8 as cp1252 (an error
# handler is registered once, by name, for every caller: the offsets are the caller's).
_NOT_UTF8_AT: ContextVar[list[tuple[int, int]] | None] = ContextVar("not_utf8_at", default=None)


def _cp1252_fallback(error: UnicodeError) -> tuple[str, int]:
    # Only the bytes that are not UTF-8 are read as cp1252, so a UTF-8 file with one bad
    # byte keeps its Japanese labels, and a whole cp1252 file (Windows-edited) still reads.
    if not isinstance(error, UnicodeDecodeError):
        raise error
    offsets = _NOT_UTF8_AT.get()
    if offsets is not None:
        offsets.append((error.start, error.end))
    bad = error.object[error.start : error.end]
    return bad.decode("cp1252", errors="replace"), error.end


codecs.register_error("exogram_cp1252_fallback", _cp1252_fallback)


@dataclass(frozen=True, slots=True)
class NotUtf8:
    """The lines of a file with bytes that are not UTF-8, and whether no byte of it was
    (a Windows-1252 file, every letter past ASCII read as such)."""

    lines: list[int]
    throughout: bool


_ASCII = bytes(range(128))


def _utf8_or_cp1252(data: bytes) -> tuple[str, NotUtf8]:
    offsets: list[tuple[int, int]] = []
    token = _NOT_UTF8_AT.set(offsets)
    try:
        text = data.decode("utf-8", errors="exogram_cp1252_fallback")
    finally:
        _NOT_UTF8_AT.reset(token)
    if not offsets:
        return text, NotUtf8([], throughout=False)
    # Lines as the parser counts them (universal newlines: CRLF, LF and a lone CR).
    lines: list[int] = []
    line, counted = 1, 0
    for start, _end in offsets:
        part = data[counted:start]
        line += part.count(b"\n") + part.count(b"\r") - part.count(b"\r\n")
        counted = start
        if not lines or lines[-1] != line:
            lines.append(line)
    bad = sum(end - start for start, end in offsets)
    return text, NotUtf8(lines, throughout=bad == len(data.translate(None, _ASCII)))


def _decode(data: bytes) -> tuple[str, NotUtf8]:
    if data.startswith(codecs.BOM_UTF8):
        return _utf8_or_cp1252(data[3:])
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # The "utf-16" codec reads the BOM to pick the byte order and drops it.
        return data.decode("utf-16", errors="replace"), NotUtf8([], throughout=False)
    utf16 = _sniff_utf16_without_bom(data)
    if utf16:
        return data.decode(utf16, errors="replace"), NotUtf8([], throughout=False)
    return _utf8_or_cp1252(data)


def is_utf16(data: bytes) -> bool:
    """UTF-16 with or without a BOM: its NUL bytes are text, not a sign of a binary file."""
    return data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or (
        _sniff_utf16_without_bom(data) is not None
    )


def _sniff_utf16_without_bom(data: bytes) -> str | None:
    # Mostly-ASCII UTF-16 has a NUL in every other byte; UTF-8 and cp1252 text has none.
    sample = data[:400]
    if len(sample) < 4 or b"\x00" not in sample:
        return None
    even_nuls = sample[0::2].count(0)
    odd_nuls = sample[1::2].count(0)
    half = len(sample) // 2
    if odd_nuls > half * 0.4 and even_nuls < half * 0.05:
        return "utf-16-le"
    if even_nuls > half * 0.4 and odd_nuls < half * 0.05:
        return "utf-16-be"
    return None


# --- One entry -------------------------------------------------------------------------------

# The publisher's export limit replaces the highlighted text with one of these lines; the
# German one comes with a leading space, which is why bodies are compared stripped.
CLIPPING_LIMIT_PLACEHOLDERS = frozenset(
    {
        "<You have reached the clipping limit for this item>",
        "<Sie haben die maximale Anzahl an Clipboard-Einträgen für diesen Inhalt erreicht>",
        "<Você alcançou o limite de recortes para este item>",
        "<このアイテムのクリップの上限に達しました>",
    }
)


def without_clipping_limit(text: str) -> tuple[str, bool]:
    """The text without a clipping-limit placeholder at its end, and whether it had one.

    Usually the placeholder is the whole body; sometimes the Kindle saved the first words
    and then the placeholder ("We tend <You have reached the clipping limit for this
    item>"; 24 entries in the shared corpus, in English, Japanese and Portuguese). Kept,
    the placeholder made every such highlight "the same idea" as every other one.
    """
    # Every placeholder ends with ">": most bodies are not compared at all.
    if text[-1:] == ">":
        for placeholder in CLIPPING_LIMIT_PLACEHOLDERS:
            if text.endswith(placeholder):
                return text[: -len(placeholder)].rstrip(), True
    return text, False


FIRST_WORDS = 12
# Within this many characters too: Chinese or Japanese text has no spaces to count words by.
FIRST_CHARACTERS = 100


def first_words(text: str) -> str:
    """The first FIRST_WORDS words of a text (at most FIRST_CHARACTERS characters), with "…"
    when it goes on."""
    words = text.split()
    shown = " ".join(words[:FIRST_WORDS])
    if len(shown) > FIRST_CHARACTERS:
        return shown[:FIRST_CHARACTERS].rstrip() + " …"
    return shown + (" …" if len(words) > FIRST_WORDS else "")


def _read_of(title_line: str, body: str) -> dict[str, str]:
    """What a reader finds an unread entry by: its book's title and its first words."""
    title = split_title_author(title_line)[0]
    return {"title": first_words(title), "words": first_words(body)}


def _parse_entry(piece: str, base: int) -> Clipping | Problem | None:
    """Read the text between two separators; `base` is the line of the first separator."""
    content = piece.lstrip()
    if not content:
        return None  # only blank lines: a file that starts with a separator or a blank line
    # Files can start with blank lines, and some entries have one after the separator.
    line_start = piece.rfind("\n", 0, len(piece) - len(content)) + 1
    title_number = base + piece.count("\n", 0, line_start)
    title_line, _, rest = piece[line_start:].partition("\n")
    meta_line, _, body = rest.partition("\n")

    if title_line.lstrip()[:1] in DASHES and parse_metadata_line(title_line) is not None:
        return Problem(
            line=title_number,
            message=NO_TITLE_LINE % {"line": _quote(title_line)},
        )
    metadata = parse_metadata_line(meta_line)
    if metadata is None:
        if not rest.strip():
            return Problem(
                line=title_number,
                message=NO_METADATA_LINE % {"line": _quote(title_line)},
            )
        if not meta_line.strip():
            return Problem(
                line=title_number + 1, message=BLANK_METADATA_LINE, **_read_of(title_line, body)
            )
        return Problem(
            line=title_number + 1,
            message=UNRECOGNISED_METADATA % {"line": _quote(meta_line)},
            **_read_of(title_line, body),
        )

    kind, language, page, location_start, location_end, added_at, added_raw = metadata
    too_far = [n for n in (location_start, location_end) if n is not None and n > LOCATION_MAX]
    if too_far:
        return Problem(
            line=title_number + 1,
            message=BEYOND_THE_END % {"location": too_far[0], "line": _quote(meta_line)},
            **_read_of(title_line, body),
        )
    text, truncated = without_clipping_limit(body.strip())
    title, author = split_title_author(title_line)
    return Clipping(
        title=title,
        author=author,
        kind=kind,
        text=text,
        page=page,
        location_start=location_start,
        location_end=location_end,
        added_at=added_at,
        added_raw=added_raw,
        language=language,
        line=title_number,
        truncated=truncated,
    )


def _with_warnings(clipping: Clipping, warnings: list[Problem]) -> Clipping:
    """The clipping as it is kept, with a warning for what in it was read our own way.

    Never seen on a device, but a hand-edited file has them: `Added on Blursday, Foo 99`
    (kept without a date) and `Location 99-98` (kept as 98-99). Either is kept rather than
    lost, and said, rather than kept silently.
    """
    meta_line = clipping.line + 1
    if clipping.added_at is None and clipping.added_raw.strip():
        warnings.append(Problem(meta_line, UNREADABLE_DATE % {"date": _quote(clipping.added_raw)}))
    start, end = clipping.location_start, clipping.location_end
    if start is not None and end is not None and end < start:
        warnings.append(
            Problem(
                meta_line,
                REVERSED_LOCATION % {"written": f"{start}-{end}", "read": f"{end}-{start}"},
            )
        )
        clipping.location_start, clipping.location_end = end, start
    return clipping


def _quote(line: str, limit: int = 80) -> str:
    line = line.strip()
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    return f"'{line}'"


# --- Titles and authors ----------------------------------------------------------------------

# A last group that is not an author: an edition (`El faro (Spanish Edition)`,
# `Der Uhrmacher (Kindle-Ausgabe)`) or a year (`Tidal Pools (2015)`).
_NOT_AN_AUTHOR_RE = re.compile(
    r"^(?:(?:[^\W\d_]+[ -])?(?:edition|ausgabe|edición|édition|edizione|edição|editie)"
    r"(?: [^\W\d_]+)?|[0-9]{4})$",
    flags=re.IGNORECASE,
)
# `Title - Author` (calibre and PDF metadata), used only when there are no parentheses.
# `Hollow Roads 2011 - Notes on Walking` is "Author Year - Title" instead, so a left side
# ending in a year, or a right side with digits or many words, is not split.
_DASHED_AUTHOR_RE = re.compile(r"^(?P<title>.+)\s+-\s+(?P<author>[^\d]+)$")
_ENDS_WITH_YEAR_RE = re.compile(r"\b(?:1[5-9]|20)[0-9]{2}$")


# Cached: a file repeats each book's title line for every one of its highlights.
@lru_cache(maxsize=4096)
def split_title_author(line: str) -> tuple[str, str]:
    """Split a title line into (title, author); the author is "" when there is none.

    The author is the last parenthesised group, which may itself nest parentheses:
    `海风与旧信（上下） (现代文库) ((加)林远)` is by `(加)林远`.
    """
    line = line.replace(BOM, "").strip()
    if line.endswith(")"):
        opening = _opening_parenthesis(line)
        title = line[:opening].rstrip() if opening > 0 else ""
        author = line[opening + 1 : -1].strip()
        if title and not _NOT_AN_AUTHOR_RE.match(author):
            return title, author
        return line, ""
    if (turned := turned_by_its_own_words(line, "")) is not None:
        return turned
    dashed = _DASHED_AUTHOR_RE.match(line)
    if dashed:
        title, author = dashed["title"].strip(), dashed["author"].strip()
        if not _ENDS_WITH_YEAR_RE.search(title) and 2 <= len(author.split()) <= 4:
            return title, author
    return line, ""


def _opening_parenthesis(line: str) -> int:
    """The index of the "(" that the line's final ")" closes; -1 when there is none."""
    opening = line.rfind("(")
    if ")" not in line[opening:-1]:
        return opening  # the usual `Title (Author)`, nothing nested
    depth = 0
    for index in range(len(line) - 1, -1, -1):
        if line[index] == ")":
            depth += 1
        elif line[index] == "(":
            depth -= 1
            if depth == 0:
                return index
    return -1
