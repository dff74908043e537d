"""Markdown, one file per book, for Obsidian and any notes app.

YAML front matter (every string written JSON-quoted, which is valid YAML and survives any
character a title holds), then each highlight as a blockquote with its location, the
reader's note and tags below it, and an Obsidian block id (`^exo-<code>`) on its own line
after the quote, which is where Obsidian reads it for quotes: `[[Book#^exo-…]]` links to
one highlight, and stays valid across exports because the code never changes.
"""

import io
import json
import re
import zipfile
from collections.abc import Iterable

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from books.exporting.library import BookExport, location_label
from books.models import Book, Highlight
from books.text import without_bidi_controls, without_controls

# Characters no file name should carry: control characters, path separators and what
# Windows or Obsidian refuse, and the bidirectional controls that make `gpj.exe` read as
# `exe.jpg` (a title with U+202E was kept in a file name: the walk of 2026-12-06).
_UNSAFE_IN_NAME = re.compile(
    r'[\x00-\x1f\x7f-\x9f<>:"/\\|?*#^\[\]\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]+'
)
NAME_MAX_LENGTH = 120
# A highlight with no text (an image highlighted on a Kindle), as its pages say it
# (templates/books/_no_text.html).
NO_TEXT = gettext_noop("No text: the file kept none for this highlight (an image, perhaps).")
# What a reader's words must not become (each escaped with a backslash, which CommonMark
# and Obsidian show as the character itself): an HTML tag, which viewers that render HTML
# would run; an Obsidian block id (`^exo-…`), which would make a link point at the wrong
# highlight; and, at the start of a line outside a quote, a heading, list, quote, rule or
# table.
_HTML_START = re.compile(r"<(?=[A-Za-z/!?])")
_BLOCK_ID = re.compile(r"\^(?=[\w-])")
_LINE_START = re.compile(r"^(\s*)([#>+*=|_~`-]|\d+[.)])")


def block_id(highlight: Highlight) -> str:
    return f"exo-{highlight.code}"


def _yaml(value: object) -> str:
    if isinstance(value, str):
        value = without_controls(without_bidi_controls(value))
    return json.dumps(value, ensure_ascii=False)


def _tag(name: str) -> str:
    # An Obsidian tag is one word: spaces become hyphens. The reader's words like any
    # other's: `<img/src=x/onerror=…>` as a tag was written as HTML (docs/security.md);
    # an ordinary tag has nothing to escape and stays an Obsidian tag (#tag).
    return "#" + _inline("-".join(name.split()))


def _inline(text: str) -> str:
    # A person reads this file: no explicit bidirectional control reverses a line of it,
    # and no control character (a bell, an escape) is written for a terminal to act on
    # (docs/security.md); the JSON export keeps them.
    text = without_controls(without_bidi_controls(text))
    return _BLOCK_ID.sub(r"\\^", _HTML_START.sub(r"\\<", text))


def _one_line(text: str) -> str:
    """A title or an author on the one line Markdown gives it."""
    return _inline(" ".join(text.split()))


def _paragraph(text: str) -> str:
    """A note's lines, none of which starts a block of its own."""
    lines = _inline(text.strip()).splitlines() or [""]
    return "\n".join([lines[0], *(_LINE_START.sub(r"\1\\\2", line) for line in lines[1:])])


def _quote(text: str) -> str:
    lines = _inline(text.strip()).splitlines() or [""]
    return "\n".join(f"> {line}".rstrip() for line in lines)


def book_markdown(export: BookExport, *, language: str) -> str:
    """The book's file, its labels ("Note:", "added", "favourite", "Location") in the
    reader's `language`; the front matter's keys stay as Obsidian reads them."""
    with translation.override(language):
        return _book_markdown(export)


def _book_markdown(export: BookExport) -> str:
    book = export.book
    front = [
        "---",
        f"title: {_yaml(book.title)}",
        f"author: {_yaml(book.authors_display)}",
        f"highlights: {sum(1 for h in export.highlights if h.kind == Highlight.Kind.HIGHLIGHT)}",
        f"notes: {export.notes}",
        f"tags: [{', '.join(_yaml(tag) for tag in export.tags)}]",
        f"exogram_book: {_yaml(str(book.code))}",
        "---",
        "",
        f"# {_one_line(book.title)}",
        "",
    ]
    if book.authors_display:
        front += [f"*{_one_line(book.authors_display).replace('*', chr(92) + '*')}*", ""]
    parts = ["\n".join(front)]
    for highlight in export.highlights:
        lines = []
        if highlight.kind == Highlight.Kind.NOTE:
            lines.append(f"**{_('Note:')}** {_paragraph(highlight.text)}")
        elif highlight.text.strip():
            lines.append(_quote(highlight.text))
        else:
            lines.append(f"> *{_(NO_TEXT)}*")  # not an empty quote: said, as its page says it
        where = location_label(highlight)
        added = highlight.added_at.date().isoformat() if highlight.added_at else ""
        added_on = _("added %(date)s") % {"date": added} if added else ""
        parts_of_meta = (_one_line(highlight.chapter), where, added_on)
        meta = " · ".join(part for part in parts_of_meta if part)
        if highlight.kind == Highlight.Kind.NOTE:
            lines[-1] += f" ^{block_id(highlight)}"
            if meta:
                lines.append(f"— {meta}")
        else:
            if meta:
                lines.append(f"> — {meta}")
            lines += ["", f"^{block_id(highlight)}"]
            if highlight.note.strip():
                lines += ["", f"**{_('Note:')}** {_paragraph(highlight.note)}"]
        tags = [tag.name for tag in highlight.tags.all()]
        if tags or highlight.favourite:
            favourite = ["★ " + _("favourite")] if highlight.favourite else []
            labels = [_tag(t) for t in tags] + favourite
            lines += ["", " ".join(labels)]
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def safe_file_stem(text: str) -> str:
    """Any text (a title) as a file name no system refuses and none misreads: unsafe
    characters become spaces, spaces are collapsed, no leading or trailing dot."""
    safe = " ".join(_UNSAFE_IN_NAME.sub(" ", text).split()).strip(". ")
    if len(safe) > NAME_MAX_LENGTH:
        # Cut between two words, not inside one ("… Content. - Ferri"), unless one word
        # fills most of the name.
        cut = safe[: NAME_MAX_LENGTH + 1].rpartition(" ")[0]
        safe = cut if len(cut) > NAME_MAX_LENGTH // 2 else safe[:NAME_MAX_LENGTH]
    return safe.strip(" .-") or "Untitled"


def file_stem(book: Book) -> str:
    """The book's title (and author) as a file name: what a zip's Markdown file is called,
    and what names an export of the book alone (after `exogram-DATE-`)."""
    base = f"{book.title} - {book.authors_display}" if book.authors_display else book.title
    return safe_file_stem(base)


def file_name(export: BookExport, taken: set[str]) -> str:
    """The book's file name, unique (case-insensitively) among those `taken` in the zip."""
    book = export.book
    base = file_stem(book)
    name = f"{base}.md"
    if name.casefold() in taken:
        name = f"{base} ({str(book.code)[:8]}).md"
    taken.add(name.casefold())
    return name


def library_zip(exports: Iterable[BookExport], *, language: str) -> bytes:
    buffer = io.BytesIO()
    taken: set[str] = set()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for export in exports:
            archive.writestr(file_name(export, taken), book_markdown(export, language=language))
    return buffer.getvalue()
