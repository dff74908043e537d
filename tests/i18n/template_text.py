"""Find the words a reader sees in a template that are not marked for translation.

Django's own lexer splits a template into text, variables, tags and comments. A text
token's words outside HTML markup, and the visible attributes (placeholder, aria-label,
title, alt) of its HTML tags, must sit inside {% translate %} or {% blocktranslate %}.
Punctuation, whitespace, entities and an explicit allowlist (the product's name, format
names) are not words to translate.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from django.template.base import Lexer, TokenType

# Names that are the same in every language.
ALLOWLIST = frozenset(
    {
        "Exogram",
        "Markdown",
        "CSV",
        "JSON",
        "HTML",
        "Kindle",
        "Readwise",
        "KOReader",
        "Kobo",
        "Apple Books",
        "MB",
        "UTC",
        "API",
        "MCP",
        "ONNX",
    }
)
VISIBLE_ATTRIBUTES = ("placeholder", "aria-label", "title", "alt")
_ENTITY = re.compile(r"&#?\w+;")
_ATTRIBUTE = re.compile(
    r"\b(" + "|".join(VISIBLE_ATTRIBUTES) + r""")\s*=\s*(["'])(.*?)(\2|$)""", re.S
)


@dataclass(frozen=True)
class Unmarked:
    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text!r}"


def has_words(text: str) -> bool:
    """Letters left once entities and allowlisted names are taken out."""
    text = _ENTITY.sub(" ", text)
    for name in sorted(ALLOWLIST, key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(name)}\b", " ", text)
    return any(ch.isalpha() for ch in text)


def unmarked_text(source: str, path: str = "<template>") -> list[Unmarked]:
    found: list[Unmarked] = []
    in_translation = False  # between blocktranslate and endblocktranslate
    in_comment = False  # {% comment %} … {% endcomment %}
    in_code = False  # <script> or <style>: not words a reader sees
    in_html_tag = False  # inside "<tag …" whose ">" is in a later text token
    open_attribute = ""  # a visible attribute whose quoted value goes on in this token
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.BLOCK:
            name = token.contents.split()[0] if token.contents else ""
            if name in ("blocktranslate", "blocktrans"):
                in_translation = True
            elif name in ("endblocktranslate", "endblocktrans"):
                in_translation = False
            elif name == "comment":
                in_comment = True
            elif name == "endcomment":
                in_comment = False
            continue
        if token.token_type != TokenType.TEXT or in_translation or in_comment:
            continue
        text = token.contents
        line = token.lineno or 0
        # What is outside HTML markup, and the attribute stretches inside it.
        outside: list[str] = []
        attributes: list[str] = []
        position = 0
        if in_html_tag:
            end = text.find(">")
            head = text if end < 0 else text[:end]
            if open_attribute:
                name, quote = open_attribute.split(" ")
                close = head.find(quote)
                value = head if close < 0 else head[:close]
                if has_words(value):
                    found.append(Unmarked(path, line, f"{name}={value!r}"))
                if close >= 0:
                    open_attribute = ""
                    head = head[close + 1 :]
            attributes.append(head)
            if end < 0:
                continue
            in_html_tag = False
            position = end + 1
        while position < len(text):
            start = text.find("<", position)
            chunk = text[position:] if start < 0 else text[position:start]
            if not in_code:
                outside.append(chunk)
            if start < 0:
                break
            end = text.find(">", start)
            markup = text[start:] if end < 0 else text[start : end + 1]
            lowered = markup.lower()
            if lowered.startswith(("<script", "<style")):
                in_code = True
            elif lowered.startswith(("</script", "</style")):
                in_code = False
            if markup.startswith("<!--"):
                close = text.find("-->", start)
                position = len(text) if close < 0 else close + 3
                continue
            attributes.append(markup)
            if end < 0:
                in_html_tag = True
                unclosed = [m for m in _ATTRIBUTE.finditer(markup) if not m.group(4)]
                if unclosed:
                    open_attribute = f"{unclosed[-1].group(1)} {unclosed[-1].group(2)}"
                break
            position = end + 1
        for chunk in outside:
            if has_words(chunk):
                found.append(Unmarked(path, line, " ".join(chunk.split())))
        for markup in attributes:
            for match in _ATTRIBUTE.finditer(markup):
                if has_words(match.group(3)):
                    found.append(Unmarked(path, line, f"{match.group(1)}={match.group(3)!r}"))
    return found


def templates_unmarked(folder: Path) -> list[Unmarked]:
    found: list[Unmarked] = []
    for template in sorted(folder.rglob("*")):
        if template.suffix in (".html", ".txt") and template.is_file():
            relative = str(template.relative_to(folder))
            found.extend(unmarked_text(template.read_text(encoding="utf-8"), relative))
    return found
