"""Where a highlight is in its book, written one way on every page: a single location as
"1201", a range with an en dash between its ends, and a range whose ends are one number
(a Kindle writes "Location 1201-1201" for a one-line highlight) as the single one.

Pure Python, no Django: the highlight pages use it through the `location_span` filter
(books.templatetags.places), the import report through HighlightMerge.place.
"""

__all__ = ["location_span"]


def location_span(start: object, end: object = None) -> str:
    """The location or range as a reader reads it; "" without a start."""
    if start is None or start == "":
        return ""
    if end is None or end == "" or str(end) == str(start):
        return str(start)
    return f"{start}\N{EN DASH}{end}"
