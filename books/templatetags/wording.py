"""`{{ message|translated }}`: a message stored in English, in the reader's language."""

from django import template

from books.wording import translated as _translated

register = template.Library()


@register.filter
def translated(message: object) -> str:
    return _translated(str(message)) if message else ""
