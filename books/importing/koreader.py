"""Parse KOReader's highlights: a book's sidecar `metadata.<ext>.lua`, and its JSON export.

Pure Python, no Django. The sidecar is a Lua chunk read as data by `lua_data` (never
run). Two layouts (FORMATS.md beside the shared samples):

* current: `annotations`, one flat list; an entry with `pos0` is a highlight (its `note`
  the reader's note), one without is a page bookmark;
* older: `highlight`, keyed by page, each highlight with a twin in `bookmarks`
  (`highlighted = true`) where `notes` is the highlighted text and `text` the reader's
  note, or an automatic "Page N … @ date" line when the note dialog was left unchanged.

Title and author come from `doc_props`, then `stats`, then the file's own path.
"""

import re
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any

from books.importing.clippings import ParseResult, Problem
from books.importing.lua_data import Bad, LuaDataError, LuaTable, bad_values, read_lua_data
from books.importing.marks import gettext_noop
from books.importing.positions import encode, xpointer_span
from books.importing.rich import RichClipping, decode_text, parse_date, rich_clipping

NOT_A_SIDECAR = gettext_noop("not a KOReader sidecar: it has neither 'annotations' nor 'highlight'")
# Stored before 2026-12-07 as the problem of a sidecar without entries; still said in the
# reader's language when an old refusal shows it.
NO_ENTRIES = gettext_noop("a KOReader sidecar without highlights, notes or bookmarks")
# A sidecar KOReader keeps for every book opened, highlighted in or not: valid, and nothing
# in it to import; said plainly, naming the book, never as a problem at line 1.
SIDECAR_EMPTY_OF = gettext_noop(
    "This KOReader sidecar of “%(title)s” holds no highlights or notes: there is nothing to import."
)
SIDECAR_EMPTY = gettext_noop(
    "This KOReader sidecar holds no highlights or notes: there is nothing to import."
)
SIDECAR_BOOKMARKS_OF = gettext_noop(
    "This KOReader sidecar of “%(title)s” holds only bookmarks, no highlights or notes: "
    "there is nothing to import."
)
SIDECAR_BOOKMARKS = gettext_noop(
    "This KOReader sidecar holds only bookmarks, no highlights or notes: there is nothing "
    "to import."
)
EXPORT_EMPTY = gettext_noop("This KOReader export has no highlights or notes to import.")
NOT_LUA_DATA = gettext_noop("not KOReader data: %(problem)s; the file was read, never run")
OUTSIDE_HIGHLIGHTS = gettext_noop("outside the highlights: %(problem)s")
TABLE_UNREADABLE = gettext_noop("'%(key)s' cannot be read: %(problem)s")
ANNOTATION_PROBLEM = gettext_noop("annotation %(key)s: %(problem)s")
ANNOTATION_NOT_TABLE = gettext_noop("annotation %(key)s is not a table")
ANNOTATION_NO_TEXT = gettext_noop("annotation %(key)s: a highlight without text")
PAGE_NOT_TABLE = gettext_noop("highlights of page %(page)s are not a table")
OLD_HIGHLIGHT_PROBLEM = gettext_noop("highlight %(number)s of page %(page)s: %(problem)s")
OLD_HIGHLIGHT_NO_TEXT = gettext_noop(
    "highlight %(number)s of page %(page)s: a highlight without text"
)
NOT_A_TABLE = gettext_noop("not a table")
UNREADABLE = gettext_noop("unreadable")
MARK_NO_TEXT = gettext_noop("a highlighted bookmark without text")
BOOKMARK_PROBLEM = gettext_noop("bookmark %(key)s: %(problem)s")
NOT_KOREADER_JSON = gettext_noop("not a KOReader JSON export")
DOCUMENT_NO_ENTRIES = gettext_noop("document %(number)s: no list of entries")
JSON_ENTRY_NOT_OBJECT = gettext_noop(
    "document %(number)s '%(title)s', entry %(entry)s: not an object"
)
JSON_ENTRY_NO_TEXT = gettext_noop("document %(number)s '%(title)s', entry %(entry)s: no text")
_LEADING_COMMENTS = re.compile(r"\A(?:\ufeff)?(?:\s*--[^\n]*\n)*\s*")
_RETURN_TABLE = re.compile(r"return\s*\{")
_RETURN_LINE = re.compile(r"^return\s*\{", re.MULTILINE)
_SIDECAR_KEY = re.compile(r'\[\s*"(?:annotations|highlight|bookmarks|doc_props)"\s*\]\s*=')
# What KOReader writes in `text` when the note dialog was opened and left unchanged.
_AUTOMATIC_NOTE = re.compile(
    r"\A(?:Hi(?:g|gh)light with note: )?Page \S+ .* @ \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\Z", re.DOTALL
)
_NO_AUTHOR = frozenset({"", "n/a", "unknown", "unknown author"})
UNTITLED = "Untitled"


def is_koreader_lua(head: str) -> bool:
    """A Lua data chunk: comment lines, then `return {`; or something else first and then
    a sidecar's `return {` (to be refused with the reason, not read as another format)."""
    rest = head[_LEADING_COMMENTS.match(head).end() :]  # type: ignore[union-attr]
    if _RETURN_TABLE.match(rest) is not None:
        return True
    return _RETURN_LINE.search(head) is not None and _SIDECAR_KEY.search(head) is not None


def parse_koreader_lua(data: bytes, *, source: str = "") -> ParseResult:
    """Parse a sidecar's bytes; `source` is its path, when known (a zip member). Never raises."""
    text = decode_text(data)
    try:
        document = read_lua_data(text)
    except LuaDataError as error:
        message = NOT_LUA_DATA % {"problem": error.message}
        return ParseResult([], [Problem(error.line, message)], 1)
    if not isinstance(document, LuaTable):
        return ParseResult([], [Problem(1, NOT_A_SIDECAR)], 1)
    title, author = _book(document, text, source)
    result = ParseResult(clippings=[], problems=[], entries=0)
    annotations, highlight = document.get("annotations"), document.get("highlight")
    if isinstance(annotations, LuaTable):
        _read_annotations(annotations, title, author, result)
    elif isinstance(highlight, LuaTable):
        bookmarks = document.get("bookmarks")
        _read_old_layout(
            highlight, bookmarks if isinstance(bookmarks, LuaTable) else None, title, author, result
        )
    elif annotations is None and highlight is None:
        return ParseResult([], [Problem(1, NOT_A_SIDECAR)], 1)
    # What could not be read outside the entries (a setting, the book's title) is a problem
    # of its own, so that nothing unreadable passes unsaid.
    for bad in bad_values(
        {k: v for k, v in document.items() if k not in ("annotations", "highlight", "bookmarks")}
    ):
        result.entries += 1
        result.problems.append(Problem(bad.line, OUTSIDE_HIGHLIGHTS % {"problem": bad.message}))
    for key in ("annotations", "highlight", "bookmarks"):
        unread = document.get(key)
        if isinstance(unread, Bad):
            result.entries += 1
            message = TABLE_UNREADABLE % {"key": key, "problem": unread.message}
            result.problems.append(Problem(unread.line, message))
    if not _keeps_something(result):
        bookmarks = bool(result.clippings)
        if title == UNTITLED:
            result.holds_nothing = SIDECAR_BOOKMARKS if bookmarks else SIDECAR_EMPTY
        else:
            template = SIDECAR_BOOKMARKS_OF if bookmarks else SIDECAR_EMPTY_OF
            result.holds_nothing = template % {"title": title[:120]}
    return result


def _keeps_something(result: ParseResult) -> bool:
    """Whether the file gave a highlight or a note, or a problem to tell."""
    return bool(result.problems) or any(c.kind != "bookmark" for c in result.clippings)


def _string(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _book(document: LuaTable, text: str, source: str) -> tuple[str, str]:
    props = document.get("doc_props")
    stats = document.get("stats")
    tables = [t for t in (props, stats) if isinstance(t, dict)]
    title = next((_string(t.get("title")) for t in tables if _string(t.get("title"))), "")
    author = next(
        (_string(t.get(k)) for t in tables for k in ("authors", "author") if _string(t.get(k))),
        "",
    )
    if author.casefold() in _NO_AUTHOR:
        author = ""
    # Several authors come joined with a line break; "; " is how the library lists them.
    author = "; ".join(name.strip() for name in author.splitlines() if name.strip())
    if not title:
        first_line = text.lstrip("\ufeff").split("\n", 1)[0]
        comment_path = first_line[2:].strip() if first_line.startswith("--") else ""
        paths = [_string(document.get("doc_path")), comment_path, source]
        title = next((name for name in map(_title_from_path, paths) if name), UNTITLED)
    return title, author


def _title_from_path(path: str) -> str:
    """`/books/Dune.epub` → Dune; `Dune.sdr/metadata.epub.lua` → Dune;
    `Dune.sdr/Dune.epub.annotations.lua` → Dune."""
    if not path or ("/" not in path and not path.endswith(".lua")):
        return ""
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.name.endswith(".annotations.lua"):
        return pure.name.removesuffix(".annotations.lua").rsplit(".", 1)[0]
    if pure.name.startswith("metadata.") and pure.name.endswith(".lua"):
        folder = pure.parent.name
        return folder.removesuffix(".sdr").rsplit(".", 1)[0] if folder.endswith(".sdr") else ""
    if pure.suffix == ".lua":
        return ""
    return pure.stem


def _date(value: object) -> tuple[datetime | None, str]:
    raw = _string(value)
    return parse_date(raw), raw


def _page(entry: LuaTable, fallback: object = None) -> str | None:
    """The page number at save time: `pageno`, a PDF's integer `page`, or the older
    layout's page key. An xpointer is not a page."""
    for value in (entry.get("pageno"), entry.get("page"), fallback):
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _entry_bad(entry: LuaTable) -> Bad | None:
    bad = bad_values(entry)
    return bad[0] if bad else None


def _clipping(
    entry: LuaTable, *, title: str, author: str, text: str, note: str, page: str | None
) -> RichClipping:
    added_at, added_raw = _date(entry.get("datetime"))
    updated_at, _ = _date(entry.get("datetime_updated"))
    drawer = _string(entry.get("drawer"))
    colour = _string(entry.get("color")) or ("underline" if drawer == "underscore" else "")
    return rich_clipping(
        title=title,
        author=author,
        text=text,
        page=page,
        added_at=added_at,
        added_raw=added_raw,
        line=entry.line,
        note=note,
        note_added_at=(updated_at or added_at) if note else None,
        chapter=_string(entry.get("chapter")),
        colour=colour.casefold(),
        position=encode(xpointer_span(entry.get("pos0"), entry.get("pos1"))),
    )


def _read_annotations(annotations: LuaTable, title: str, author: str, result: ParseResult) -> None:
    for key, entry in annotations.items():
        result.entries += 1
        if isinstance(entry, Bad):
            result.problems.append(
                Problem(entry.line, ANNOTATION_PROBLEM % {"key": key, "problem": entry.message})
            )
            continue
        if not isinstance(entry, LuaTable):
            result.problems.append(Problem(annotations.line, ANNOTATION_NOT_TABLE % {"key": key}))
            continue
        bad = _entry_bad(entry)
        if bad is not None:
            result.problems.append(
                Problem(bad.line, ANNOTATION_PROBLEM % {"key": key, "problem": bad.message})
            )
            continue
        text = _string(entry.get("text"))
        page = _page(entry)
        if "pos0" not in entry:
            # A page bookmark: kept as one, so the report counts it like a Kindle's.
            result.clippings.append(
                rich_clipping(
                    title=title,
                    author=author,
                    kind="bookmark",
                    text=text,
                    page=page,
                    line=entry.line,
                )
            )
            continue
        if not text:
            result.problems.append(Problem(entry.line, ANNOTATION_NO_TEXT % {"key": key}))
            continue
        note = _string(entry.get("note"))
        result.clippings.append(
            _clipping(entry, title=title, author=author, text=text, note=note, page=page)
        )


def _position(value: object) -> str:
    """A comparable form of pos0: an xpointer, or a PDF's {page, x, y} table."""
    if isinstance(value, dict):
        return f"{value.get('page')}:{value.get('x')}:{value.get('y')}"
    return str(value)


def _read_old_layout(
    highlight: LuaTable, bookmarks: LuaTable | None, title: str, author: str, result: ParseResult
) -> None:
    twins: dict[tuple[str, str], LuaTable] = {}
    by_date: dict[str, list[LuaTable]] = {}
    page_marks: list[tuple[object, object]] = []
    for key, mark in (bookmarks or {}).items():
        if isinstance(mark, LuaTable) and mark.get("highlighted") is True:
            twins[(_string(mark.get("datetime")), _position(mark.get("pos0")))] = mark
            by_date.setdefault(_string(mark.get("datetime")), []).append(mark)
        else:
            page_marks.append((key, mark))
    used: set[int] = set()
    for page_key, on_page in highlight.items():
        if not isinstance(on_page, LuaTable):
            result.entries += 1
            line = on_page.line if isinstance(on_page, Bad) else highlight.line
            result.problems.append(Problem(line, PAGE_NOT_TABLE % {"page": page_key}))
            continue
        for number, entry in on_page.items():
            result.entries += 1
            where = {"number": number, "page": page_key}
            if not isinstance(entry, LuaTable) or _entry_bad(entry):
                bad = entry if isinstance(entry, Bad) else _entry_bad(entry)  # type: ignore[arg-type]
                line, message = (bad.line, bad.message) if bad else (on_page.line, NOT_A_TABLE)
                result.problems.append(
                    Problem(line, OLD_HIGHLIGHT_PROBLEM % {**where, "problem": message})
                )
                continue
            text = _string(entry.get("text"))
            if not text:
                result.problems.append(Problem(entry.line, OLD_HIGHLIGHT_NO_TEXT % where))
                continue
            date = _string(entry.get("datetime"))
            twin = twins.get((date, _position(entry.get("pos0"))))
            if twin is None and len(by_date.get(date, [])) == 1:
                twin = by_date[date][0]
            note = ""
            if twin is not None:
                used.add(id(twin))
                note = _user_note(twin, text)
            result.clippings.append(
                _clipping(
                    entry,
                    title=title,
                    author=author,
                    text=text,
                    note=note,
                    page=_page(entry, page_key),
                )
            )
    # A highlighted bookmark without its highlight (the highlight was removed, or the file
    # was cut): its `notes` still hold the text.
    for mark in twins.values():
        if id(mark) in used:
            continue
        result.entries += 1
        text = _string(mark.get("notes"))
        if _entry_bad(mark) or not text:
            result.problems.append(Problem(mark.line, MARK_NO_TEXT))
            continue
        result.clippings.append(
            _clipping(
                mark,
                title=title,
                author=author,
                text=text,
                note=_user_note(mark, text),
                page=_page(mark),
            )
        )
    for key, mark in page_marks:
        result.entries += 1
        if not isinstance(mark, LuaTable) or _entry_bad(mark):
            bad = mark if isinstance(mark, Bad) else None
            line = bad.line if bad else getattr(mark, "line", 1)
            message = bad.message if bad else UNREADABLE
            result.problems.append(
                Problem(line, BOOKMARK_PROBLEM % {"key": key, "problem": message})
            )
            continue
        result.clippings.append(
            rich_clipping(
                title=title,
                author=author,
                kind="bookmark",
                text=_string(mark.get("notes")),
                page=_page(mark),
                line=mark.line,
            )
        )


def _user_note(twin: LuaTable, highlighted: str) -> str:
    """The reader's note in an older bookmark's `text`, unless KOReader wrote it itself."""
    note = _string(twin.get("text"))
    if not note or _AUTOMATIC_NOTE.match(note) or note == highlighted:
        return ""
    return note


# --- KOReader's JSON export (the exporter plugin, "json/1.0.0") ------------------------------


def is_koreader_json(document: Any) -> bool:
    if not isinstance(document, dict):
        return False
    documents = document.get("documents")
    if isinstance(documents, list):
        return all(isinstance(d, dict) and "entries" in d for d in documents)
    # One book exported alone: its entries at the top, with the exporter's version or its
    # `files` list, or entries sorted as KOReader sorts them.
    entries = document.get("entries")
    if not isinstance(entries, list):
        return False
    return (
        "json/" in str(document.get("version", ""))
        or isinstance(document.get("files"), list)
        or any(isinstance(e, dict) and e.get("sort") in _SORTS for e in entries[:20])
    )


_SORTS = ("highlight", "annotation", "bookmark")


def _single_book(document: dict[str, Any]) -> tuple[str, str]:
    """Title and author of a one-book export: its own, or its only `files` entry's."""
    files = [f for f in document.get("files") or [] if isinstance(f, dict)]
    first = files[0] if len(files) == 1 else {}
    title = _string(document.get("title")) or _string(first.get("title"))
    author = _string(document.get("author")) or _string(first.get("author"))
    return title or _title_from_path(_string(first.get("file"))), author


def parse_koreader_json(document: Any) -> ParseResult:
    """Read an already-decoded KOReader JSON export. Never raises."""
    if not is_koreader_json(document):
        return ParseResult([], [Problem(1, NOT_KOREADER_JSON)], 1)
    books = document.get("documents", [document])
    result = ParseResult(clippings=[], problems=[], entries=0)
    for book_number, book in enumerate(books, start=1):
        entries = book.get("entries")
        if not isinstance(entries, list):
            result.entries += 1
            result.problems.append(Problem(1, DOCUMENT_NO_ENTRIES % {"number": book_number}))
            continue
        title = _string(book.get("title")) or _title_from_path(_string(book.get("file")))
        book_author = _string(book.get("author"))
        if book is document:
            title, book_author = _single_book(document)
        for number, entry in enumerate(entries, start=1):
            result.entries += 1
            where = {"number": book_number, "title": (title or "Untitled")[:60], "entry": number}
            if not isinstance(entry, dict):
                result.problems.append(Problem(number, JSON_ENTRY_NOT_OBJECT % where))
                continue
            text = _string(entry.get("text"))
            if entry.get("sort") == "bookmark":
                result.clippings.append(
                    rich_clipping(
                        title=title or "Untitled",
                        author=book_author,
                        kind="bookmark",
                        text=text,
                        line=number,
                    )
                )
                continue
            if not text:
                result.problems.append(Problem(number, JSON_ENTRY_NO_TEXT % where))
                continue
            when = entry.get("time")
            added_at = (
                datetime.fromtimestamp(when, UTC)
                if isinstance(when, int | float)
                and not isinstance(when, bool)
                and 0 <= when < 32_503_680_000
                else None
            )
            page = entry.get("page")
            author = _string(entry.get("author")) or book_author
            result.clippings.append(
                rich_clipping(
                    title=_string(entry.get("book")) or title or "Untitled",
                    author="; ".join(a.strip() for a in author.splitlines() if a.strip()),
                    text=text,
                    page=str(page) if isinstance(page, int) or str(page).isdigit() else None,
                    added_at=added_at,
                    added_raw=str(when) if when is not None else "",
                    line=number,
                    note=_string(entry.get("note")),
                    chapter=_string(entry.get("chapter")),
                    colour=_string(entry.get("color")).casefold(),
                )
            )
    if not _keeps_something(result):
        result.holds_nothing = EXPORT_EMPTY
    return result
