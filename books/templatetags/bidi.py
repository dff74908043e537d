"""`{{ highlight.text|bidi_safe }}`: words from a reader's files (a highlight, a note, a
title, an author, a chapter, a tag, a sharing name) without the explicit bidirectional
controls that would reverse them or the page around them (books.text, docs/security.md)."""

from django import template

from books.text import without_bidi_controls

register = template.Library()


@register.filter(is_safe=True)
def bidi_safe(value: object) -> object:
    # is_safe: removing these characters makes no markup, so escaped text stays escaped
    # and a search result's <mark> (already safe) stays safe.
    if isinstance(value, str):
        return without_bidi_controls(value)
    return value
