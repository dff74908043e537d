from typing import Any

from django.http import HttpRequest


def undo(request: HttpRequest) -> dict[str, Any]:
    """A just-deleted highlight's code, or a just-deleted book's, offered for undo on the
    next page only."""
    session = getattr(request, "session", None)
    if session is None:
        return {}
    found = {}
    for key in ("undo_highlight", "undo_book"):
        if key in session:
            found[key] = session.pop(key)
    return found
