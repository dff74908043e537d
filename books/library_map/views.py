"""The map page, the JSON the browser draws it from, and one point read on tap."""

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_GET

from accounts.models import User
from books.access import get_highlight_for_user, get_library_map_for_user, reader_of
from books.library_map.services import (
    SCALE,
    MapCounts,
    MapState,
    library_map_state,
    map_counts,
    map_point,
    map_version,
)
from books.text import title_sort_key, without_bidi_controls

MAP_REDRAWN = "The map was drawn again since the page loaded it."


def _summary(request: HttpRequest, state: MapState, counts: MapCounts) -> str:
    """What the map shows and what it does not yet, said the same way by the page and by
    the JSON that replaces it when a new map lands."""
    books = state.the_map.books if state.the_map and not state.drawing else []
    context = {"counts": counts, "books": len(books), "state": state}
    return render_to_string("books/_map_summary.html", context, request=request)


def _counts(reader: User, state: MapState) -> MapCounts:
    return map_counts(reader, None if state.drawing else state.the_map)


@require_GET
@login_required
def semantic_map(request: HttpRequest) -> HttpResponse:
    """The page: small and fast; the points come from map_data, drawn by static/js/map.js."""
    reader = reader_of(request)
    state = library_map_state(reader)
    books = state.the_map.books if state.the_map and not state.drawing else []
    counts = _counts(reader, state)
    context = {
        "state": state,
        "books": sorted(
            enumerate(books), key=lambda item: (-item[1]["count"], title_sort_key(item[1]["title"]))
        ),
        "placed": sum(book["count"] for book in books),
        "counts": counts,
        "summary": _summary(request, state, counts),
        "regions": state.the_map.regions if state.the_map and not state.drawing else [],
    }
    return render(request, "books/map.html", context)


@require_GET
@login_required
@gzip_page  # 20,000 points are ~300 KB of JSON, ~80 KB gzipped; nothing secret to leak by size
def map_data(request: HttpRequest) -> JsonResponse:
    """The stored map as the browser draws it, and whether a newer one is being drawn."""
    reader = reader_of(request)
    state = library_map_state(reader)
    summary = _summary(request, state, _counts(reader, state))
    if state.the_map is None or state.drawing:
        status = "drawing" if state.drawing else "empty"
        return JsonResponse({"status": status, "stale": state.stale, "summary": summary})
    the_map = state.the_map
    return JsonResponse(
        {
            "status": "ready",
            "stale": state.stale,
            "scale": SCALE,
            "points": {key: the_map.points[key] for key in ("x", "y", "book")},
            "books": the_map.books,
            "regions": the_map.regions,
            "summary": summary,
            "version": map_version(the_map),
        }
    )


@require_GET
@login_required
def map_point_detail(request: HttpRequest, index: int) -> JsonResponse:
    """One point of the reader's own map, to read on tap: its text, book and link.

    The page says which layout it drew (`?map=`): a layout drawn since then places other
    highlights at that index, so the page is told to draw the new one (409) rather than
    shown the wrong highlight."""
    the_map = get_library_map_for_user(request)
    drawn = request.GET.get("map")
    if drawn and drawn != map_version(the_map):
        return JsonResponse({"error": MAP_REDRAWN}, status=409)
    code = map_point(the_map, index)
    if code is None:
        raise Http404("No such point on your map.")
    highlight = get_highlight_for_user(request, UUID(code))
    # Shown as it is on the pages: no bidirectional control reverses it (docs/security.md).
    shown = without_bidi_controls
    return JsonResponse(
        {
            "text": shown(highlight.text or highlight.note),
            "note": shown(highlight.note) if highlight.text else "",
            "title": shown(highlight.book.title),
            "authors": shown(highlight.book.authors_display),
            "url": highlight.get_absolute_url(),
        }
    )
