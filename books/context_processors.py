from django.http import HttpRequest


def undo(request: HttpRequest) -> dict[str, str]:
    """The code of a just-deleted highlight, offered for undo on the next page only."""
    session = getattr(request, "session", None)
    if session is None or "undo_highlight" not in session:
        return {}
    return {"undo_highlight": session.pop("undo_highlight")}
