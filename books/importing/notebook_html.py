"""Parse a Kindle app "Export Notebook" HTML file into dataclasses.

Pure Python, no Django. Two shapes are known (see FORMAT.md beside the real files):

    <div class="bookTitle">Title</div><div class="authors">Author</div>
    <div class="sectionHeading">Chapter 1</div>
    <div class="noteHeading">
      Highlight (<span class="highlight_blue">blue</span>) -  Location 744</div>
    <div class="noteText">The highlighted words.</div>

and the older desktop export, whose markup is malformed, each heading closed by the text's
element and the other way round:

    <h3 class='noteHeading'>Highlight (<span class='highlight_yellow'>yellow</span>) - Chapter 1
    &gt; Location 52</div><div class='noteText'>Words.</h3>

So the markup is not trusted as a tree: the parser follows the stream of start tags, and
each element with one of the known classes starts a new field that runs until the next one.
Headings are localized (`备注 - 位置 745`); newer apps write `Page 12 · Location 123`.
"""

# The Kindle's own CJK and Cyrillic words and its middle dot are matched below.

import re
from html.parser import HTMLParser

from books.importing.clippings import ParseResult, Problem
from books.importing.marks import gettext_noop
from books.importing.rich import RichClipping, decode_text, rich_clipping

_FIELDS = (
    "notebookFor",
    "bookTitle",
    "authors",
    "citation",
    "sectionHeading",
    "noteHeading",
    "noteText",
)
_COLOUR = re.compile(r"highlight_(\w+)")

# The words of a heading's kind and of its location, in the apps' UI languages (folded).
NOTE_WORDS = frozenset({"note", "备注", "笔记", "nota", "notiz", "メモ", "заметка", "notitie"})
BOOKMARK_WORDS = frozenset(
    {
        "bookmark",
        "书签",
        "marcador",
        "lesezeichen",
        "signet",
        "segnalibro",
        "ブックマーク",
        "закладка",
        "bladwijzer",
    }
)
HIGHLIGHT_WORDS = frozenset(
    {
        "highlight",
        "标注",
        "subrayado",
        "resaltado",
        "markierung",
        "surlignement",
        "evidenziazione",
        "destaque",
        "ハイライト",
        "выделение",
        "markering",
    }
)
_LOCATION = re.compile(
    r"(?:location|loc\.|位置(?:no\.)?|posición|ubicación|position|emplacement|posizione|posição|позиция|locatie)"
    r"\s*(\d+)(?:\s*-\s*(\d+))?",
    re.IGNORECASE,
)
_PAGE = re.compile(
    r"(?:page|página|pagina|seite|страница|pagina)\s*([0-9ivxlcdm]+(?:-[0-9ivxlcdm]+)?)"
    r"|第\s*(\d+)\s*页|(\d+)\s*ページ",
    re.IGNORECASE,
)

NOT_A_NOTEBOOK = gettext_noop(
    "not a Kindle notebook export (no 'noteHeading' and 'noteText' entries were found)"
)
HTML_UNREADABLE = gettext_noop("this HTML could not be read: %(error)s")
HEADING_WITHOUT_TEXT = gettext_noop("a heading without a text after it")
NO_BOOK_TITLE = gettext_noop("no book title ('bookTitle') in this notebook")
UNRECOGNISED_HEADING = gettext_noop("unrecognised heading %(heading)s")
EMPTY_ENTRY = gettext_noop("an empty %(kind)s under %(heading)s")
NO_WHERE = gettext_noop("no location or page in the heading %(heading)s")


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.fields: list[tuple[str, int, list[str], list[str]]] = []  # class, line, text, colours
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "script"):
            self._skip += 1
            return
        classes = (dict(attrs).get("class") or "").split()
        known = next((c for c in classes if c in _FIELDS), None)
        if known:
            self.fields.append((known, self.getpos()[0], [], []))
            return
        colour = next((m.group(1) for c in classes if (m := _COLOUR.fullmatch(c))), None)
        if colour and self.fields:
            self.fields[-1][3].append(colour)
        if tag == "br" and self.fields:
            self.fields[-1][2].append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip and self.fields:
            self.fields[-1][2].append(data)


def _clean(parts: list[str]) -> str:
    lines = [" ".join(line.split()) for line in "".join(parts).split("\n")]
    return "\n".join(line for line in lines if line).strip()


def parse_notebook_html(data: bytes) -> ParseResult:
    """Parse the bytes of a Kindle notebook export. Never raises."""
    reader = _Reader()
    try:
        reader.feed(decode_text(data))
        reader.close()
    except Exception as error:  # html.parser is lenient; this is a last resort
        return ParseResult([], [Problem(1, HTML_UNREADABLE % {"error": error})], 1)
    result = ParseResult(clippings=[], problems=[], entries=0)
    title = author = section = ""
    heading: tuple[str, int, list[str]] | None = None
    for name, line, parts, colours in reader.fields:
        text = _clean(parts)
        if name == "bookTitle":
            title = text
        elif name == "authors":
            author = text
        elif name == "sectionHeading":
            section = text
        elif name == "noteHeading":
            if heading is not None:
                result.entries += 1
                result.problems.append(Problem(heading[1], HEADING_WITHOUT_TEXT))
            heading = (text, line, colours)
        elif name == "noteText" and heading is not None:
            result.entries += 1
            parsed = _entry(heading, text, title=title, author=author, section=section)
            if isinstance(parsed, Problem):
                result.problems.append(parsed)
            elif parsed is not None:
                result.clippings.append(parsed)
            heading = None
    if heading is not None:
        result.entries += 1
        result.problems.append(Problem(heading[1], HEADING_WITHOUT_TEXT))
    if result.entries == 0:
        result.problems.append(Problem(1, NOT_A_NOTEBOOK))
    elif not title and result.clippings:
        result.problems.append(Problem(1, NO_BOOK_TITLE))
        result.clippings = []
    return result


def _entry(
    heading: tuple[str, int, list[str]], text: str, *, title: str, author: str, section: str
) -> RichClipping | Problem | None:
    words, line, colours = heading
    head, dash, where = words.partition(" - ")
    if not dash:
        head, dash, where = words.partition("-")
    kind_word = re.sub(r"\(.*?\)", "", head).strip().casefold()
    if kind_word in NOTE_WORDS:
        kind = "note"
    elif kind_word in BOOKMARK_WORDS:
        kind = "bookmark"
    elif kind_word in HIGHLIGHT_WORDS or colours:
        kind = "highlight"
    else:
        return Problem(line, UNRECOGNISED_HEADING % {"heading": repr(words[:80])})
    # An empty note goes on, for the import to skip and count as a Kindle's empty note.
    if not text and kind == "highlight":
        return Problem(line, EMPTY_ENTRY % {"kind": kind, "heading": repr(words[:80])})
    # "Chapter 1 > Location 52", "Page 12 · Location 123": the path before the last ">".
    path, _, place = where.rpartition(">")
    location = _LOCATION.search(place)
    page = _PAGE.search(place)
    start = int(location.group(1)) if location else None
    end = int(location.group(2)) if location and location.group(2) else None
    if start is None and page is None:
        return Problem(line, NO_WHERE % {"heading": repr(words[:80])})
    chapter = " > ".join(part for part in (section, path.strip()) if part)
    return rich_clipping(
        title=title,
        author=author,
        kind=kind,
        text=text,
        page=next((g for g in page.groups() if g), "").casefold() if page else None,
        location_start=start,
        location_end=end if end != start else None,
        line=line,
        chapter=chapter[:500],
        colour=colours[0] if colours else "",
    )
