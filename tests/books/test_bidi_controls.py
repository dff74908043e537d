"""Explicit bidirectional controls in a reader's words (U+202A to U+202E, U+2066 to U+2069) are
kept as imported and shown without them: on every page, in the citation, the map, the
Markdown and CSV exports and the review e-mail; the JSON export keeps them, escaped. A
U+202E in "RTL \\u202egnp.exe" made the rest of the line read "exe.png" (the walk of
2026-12-06), which matters once sharing shows a reader's highlights to others."""

import csv
import html
import io
import json
import re
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.models import Book, Highlight, Tag
from books.text import BIDI_CONTROLS, without_bidi_controls
from tests.books.kindle import MEMORY_LIBRARY, clippings_file
from tests.books.library import book_of, highlight_in

CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


class WithoutBidiControlsTests:
    @pytest.mark.parametrize(
        ("text", "shown"),
        [
            ("RTL \u202egnp.exe and more", "RTL gnp.exe and more"),
            (f"a{CONTROLS}b", "ab"),
            ("\u2067\u05e9\u05dc\u05d5\u05dd\u2069 world", "\u05e9\u05dc\u05d5\u05dd world"),
            # Arabic and Hebrew, and the marks that place punctuation, are left as they are.
            ("\u0645\u0631\u062d\u0628\u0627 \u200f(2024)\u200e!", None),
            ("\u05e9\u05dc\u05d5\u05dd, \u061cworld", None),
            ("To think is to forget differences.", None),
        ],
    )
    def test_it_drops_only_the_controls(self, text: str, shown: str | None) -> None:
        assert without_bidi_controls(text) == (text if shown is None else shown)

    @given(st.text())
    def test_it_leaves_no_control_and_every_other_character(self, text: str) -> None:
        shown = without_bidi_controls(text)
        assert not BIDI_CONTROLS.search(shown)
        assert shown == "".join(ch for ch in text if ch not in CONTROLS)


def _library(reader: User) -> Highlight:
    book = book_of(reader, "Lean \u202eEnterprise", "Jez \u202eHumble")
    highlight = highlight_in(book, "RTL \u202egnp.exe, then the rest.", location=1378)
    Highlight.objects.filter(pk=highlight.pk).update(
        note="my \u2067note\u2069 \u202dhere", chapter="One \u202eChapter"
    )
    highlight.refresh_from_db()
    highlight.tags.add(Tag.objects.create(reader=reader, name="tag\u202eged"))
    return highlight


@pytest.mark.django_db
class PagesTests:
    def test_no_page_shows_a_control_and_the_library_keeps_them(
        self, alice: User, alice_client: Client
    ) -> None:
        highlight = _library(alice)
        urls = [
            reverse("home"),
            reverse("library"),
            highlight.book.get_absolute_url(),
            highlight.get_absolute_url(),
            reverse("tags"),
            reverse("tag", args=["tag\u202eged"]),
            reverse("search") + "?q=rest&mode=keyword",
        ]
        for url in urls:
            content = alice_client.get(url).content.decode()
            # A form's values stay exact (a tag filter must name the tag as it is).
            content = re.sub(r'value="[^"]*"', "", content)
            # The note's box holds it exactly, to edit without losing a character.
            content = re.sub(r"<textarea[^>]*>[^<]*</textarea>", "", content)
            assert not BIDI_CONTROLS.search(content), url
        page = alice_client.get(highlight.get_absolute_url()).content.decode()
        assert "RTL gnp.exe, then the rest." in page
        (citation,) = re.findall(r'data-citation="([^"]*)"', page)
        assert html.unescape(citation) == (
            "“RTL gnp.exe, then the rest.” — Jez Humble, Lean Enterprise, loc. 1378"
        )
        # What was imported is kept, whole: a display choice, not an edit.
        highlight.refresh_from_db()
        assert highlight.text == "RTL \u202egnp.exe, then the rest."
        assert ">my \u2067note\u2069 \u202dhere</textarea>" in page
        edit = alice_client.post(
            reverse("highlight_note", args=[highlight.code]),
            {"note": "x" * 10_001 + "\u202e"},
            HTTP_HX_REQUEST="true",
        ).content.decode()
        assert f">{'x' * 10_001}\u202e</textarea>" in edit

    def test_the_map_card_shows_no_control(self, alice: User, alice_client: Client) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
        highlights_embed(ids=list(Highlight.objects.values_list("pk", flat=True)))
        alice_client.get(reverse("map_data"))
        Highlight.objects.filter(reader=alice).update(text="RTL \u202egnp.exe")
        Book.objects.filter(reader=alice).update(title="Lean \u202eEnterprise")
        point = alice_client.get(reverse("map_point", args=[0])).json()
        assert (point["text"], point["title"]) == ("RTL gnp.exe", "Lean Enterprise")

    def test_another_readers_bridge_shows_no_control(self, alice: User, bob: User) -> None:
        mine = Highlight(reader=alice, book=book_of(alice, "Zen"), text="mine \u202eenim")
        theirs = Highlight(reader=bob, book=book_of(bob, "Zen \u202eMind"), text="\u2066x\u202ey")
        relation = SimpleNamespace(
            bridges=[SimpleNamespace(mine=mine, theirs=theirs, strength="related")],
            profile=SimpleNamespace(display_name="Bob \u202eB."),
            passages_in_common=0,
            books_in_common=[],
            more_books_in_common=["Other \u202ebook"],
        )
        rendered = render_to_string("affinity/_explanation.html", {"relation": relation})
        assert not BIDI_CONTROLS.search(rendered)
        assert "Bob B. · Zen Mind" in rendered


@pytest.mark.django_db
class ExportsTests:
    def test_markdown_and_csv_show_no_control_and_json_keeps_them_escaped(
        self, alice: User, alice_client: Client
    ) -> None:
        highlight = _library(alice)
        url = reverse("library_export")
        zipped = zipfile.ZipFile(io.BytesIO(alice_client.get(url, {"format": "md"}).getvalue()))
        (name,) = zipped.namelist()
        markdown = zipped.read(name).decode()
        assert "> RTL gnp.exe, then the rest." in markdown
        table = alice_client.get(url, {"format": "csv"}).getvalue().decode("utf-8-sig")
        (row,) = list(csv.reader(io.StringIO(table)))[1:]
        assert row[:4] == ["RTL gnp.exe, then the rest.", "Lean Enterprise", "Jez Humble",
                           "my note here"]  # fmt: skip
        raw = alice_client.get(url, {"format": "json"}).getvalue().decode()
        for text in (markdown, table, raw):
            assert not BIDI_CONTROLS.search(text)
        assert "RTL \\u202egnp.exe" in raw
        (book,) = json.loads(raw)["books"]
        assert book["title"] == "Lean \u202eEnterprise"
        assert book["highlights"][0]["text"] == highlight.text
        assert book["highlights"][0]["note"] == highlight.note

    def test_a_control_hides_no_formula_from_a_spreadsheet(
        self, alice: User, alice_client: Client
    ) -> None:
        highlight_in(book_of(alice, "Walden"), '\u202e=HYPERLINK("http://x")', location=1)
        table = alice_client.get(reverse("library_export"), {"format": "csv"}).getvalue()
        (row,) = list(csv.reader(io.StringIO(table.decode("utf-8-sig"))))[1:]
        assert row[0] == '\'=HYPERLINK("http://x")'


# Where a template shows a reader's words: a highlight's text or note, a book's title or
# author, a chapter, a word, a tag's or a sharing reader's name (`title` and `name` alone:
# a loop's title or author).
_SHOWN = re.compile(r"\{\{\s*([\w.]+)\s*(\|[^}]*)?\}\}")
_WORDS = {"text", "note", "title", "authors_display", "chapter", "word", "display_name", "name"}
_BLOCK = re.compile(r"(\{%\s*blocktranslate\b.*?%\}).*?\{%\s*endblocktranslate\s*%\}", re.S)
_WITH = re.compile(r"\b\w+=([\w.]+)(\|[\w:|\"'.]*)?")


def _a_readers_words(var: str) -> bool:
    if var.startswith("form."):
        return False
    return var in {"title", "name"} or ("." in var and var.rsplit(".", 1)[-1] in _WORDS)


class TemplatesTests:
    def test_every_template_shows_a_readers_words_without_controls(self) -> None:
        """A new template that shows a reader's words must say `|bidi_safe`; a form's
        values and a textarea's words stay exact, to submit and to edit."""
        missing = []
        for path in sorted(TEMPLATES.rglob("*.*")):
            source = path.read_text(encoding="utf-8")
            source = re.sub(r"<textarea[^>]*>.*?</textarea>", "", source, flags=re.S)
            source = re.sub(r'value="\{\{[^}]*\}\}"', "", source)
            heads = [block[1] for block in _BLOCK.finditer(source)]
            source = _BLOCK.sub("", source)  # inside a blocktranslate, its own placeholders
            shown = [(m[0], m[1], m[2]) for m in _SHOWN.finditer(source)]
            shown += [(m[0], m[1], m[2]) for head in heads for m in _WITH.finditer(head)]
            missing += [
                f"{path.relative_to(TEMPLATES)}: {text}"
                for text, var, filters in shown
                if _a_readers_words(var) and "bidi_safe" not in (filters or "")
            ]
        assert missing == []
