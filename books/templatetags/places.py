from django import template

from books.places import location_span as _location_span

register = template.Library()


@register.filter
def location_span(start: object, end: object = None) -> str:
    """`{{ highlight.location_start|location_span:highlight.location_end }}`: "1201", or
    the range with an en dash."""
    return _location_span(start, end)
