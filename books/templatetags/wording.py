"""`{{ message|translated }}`: a message stored in English, in the reader's language;
`{{ import.error|import_failure }}`: why an import failed, as its reader is told."""

from django import template

from books.wording import import_failure as _import_failure
from books.wording import translated as _translated

register = template.Library()


@register.filter
def translated(message: object) -> str:
    return _translated(str(message)) if message else ""


@register.filter
def import_failure(error: object) -> str:
    return _import_failure(str(error or ""))
