"""The search page and its JSON twin (shared with the MCP server): same parameters, same order."""

import re
from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import quote
from uuid import UUID

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import render
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from accounts.models import User
from books.access import get_book_for_user, owns_book, reader_of
from books.choices import author_choices, book_choices
from books.library_cache import LibraryCache
from books.search.search import MODES, PAGE_SIZE, SearchResult, SearchResults, tag_named
from books.search.search import search as search_highlights
from books.search.spelling import suggestion_for
from books.text import CJK_RUN, fold
from exogram import form_messages
from exogram.reader_slots import ReaderBusy, reader_slot, searches_at_once

# Letters, digits and combining accents: a word written decomposed (A + U+0308) stays whole.
_WORD = re.compile(r"[\w\u0300-\u036f]+")
# A word of the query outside quotes and prefixes, to quote when it named a book.
_NAME_TOKEN = re.compile(r'"[^"]*"?|\b(?:author|book|title):\S+|[\w\u0300-\u036f]+')
# A query that is one quoted phrase, in straight or typographic quotes.
_ONE_PHRASE = re.compile(r'["“”«»]([^"“”«»]+)["“”«»]')
JSON_MAX_LIMIT = 100
# The highest page a URL asks for; the page shows the last one past the last.
PAGE_MAX = 1000
FILTER_PARAMETERS = ("book", "author", "added_from", "added_to", "has_note")


class SearchForm(forms.Form):
    # No max_length: a longer query is cut to QUERY_MAX_LENGTH by the search, which says so.
    q = forms.CharField(required=False, label=_("Search for"), error_messages=form_messages.TEXT)
    mode = forms.ChoiceField(
        required=False,
        choices=[
            ("auto", _("Words and meaning")),
            ("keyword", _("Words")),
            ("meaning", _("Meaning")),
        ],
        error_messages=form_messages.CHOICE,
    )
    book = forms.UUIDField(required=False, error_messages=form_messages.BOOK)
    author = forms.CharField(
        required=False, max_length=200, label=_("Author"), error_messages=form_messages.TEXT
    )
    added_from = forms.DateField(
        required=False, label=_("Added from"), error_messages=form_messages.DATE
    )
    added_to = forms.DateField(
        required=False, label=_("Added until"), error_messages=form_messages.DATE
    )
    has_note = forms.ChoiceField(
        required=False,
        label=_("Note"),
        choices=[
            ("", _("With or without")),
            ("yes", _("With a note")),
            ("no", _("Without a note")),
        ],
        error_messages=form_messages.CHOICE,
    )
    recency = forms.BooleanField(required=False, label=_("Favour recent highlights"))
    page = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=PAGE_MAX,
        label=_("Page"),
        error_messages=form_messages.WHOLE_NUMBER,
    )
    limit = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=JSON_MAX_LIMIT,
        error_messages=form_messages.WHOLE_NUMBER,
    )

    def clean_mode(self) -> str:
        mode: str = self.cleaned_data["mode"] or "auto"
        assert mode in MODES
        return mode

    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        start, end = (cleaned or {}).get("added_from"), (cleaned or {}).get("added_to")
        if start and end and start > end:
            self.add_error("added_to", _("The end of the range is before its start."))
        return cleaned


def mark_words(text: str, words: frozenset[str]) -> SafeString:
    """The text, escaped, with each word whose folded form is a query word in <mark>.

    Escaping happens piece by piece around the marks, so nothing of the text is ever
    trusted: `<script>` in a highlight stays text.
    """
    if not words or not text:
        return escape(text)
    parts: list[str] = []
    last = 0
    for match in _WORD.finditer(text):
        if fold(match.group()) in words:
            parts.append(escape(text[last : match.start()]))
            parts.append(format_html("<mark>{}</mark>", match.group()))
            last = match.end()
        elif CJK_RUN.search(match.group()):
            parts.append(escape(text[last : match.start()]))
            parts.append(_mark_pairs(match.group(), words))
            last = match.end()
    parts.append(escape(text[last:]))
    return mark_safe("".join(parts))


def _mark_pairs(run: str, words: frozenset[str]) -> str:
    """A run of Chinese or Japanese (and what is written into it), escaped, with each pair
    of characters that is a marked word (books.text.search_fold), or a lone marked
    character, in <mark>: `休ませる` found in `脳を休ませる` is marked there."""
    folded = [fold(character) for character in run]
    marked = [False] * len(run)
    for i, character in enumerate(folded):
        if character in words:
            marked[i] = True
        if i + 1 < len(run) and character + folded[i + 1] in words:
            marked[i] = marked[i + 1] = True
    pieces: list[str] = []
    start = 0
    for i in range(1, len(run) + 1):
        if i == len(run) or marked[i] != marked[start]:
            piece = run[start:i]
            pieces.append(format_html("<mark>{}</mark>", piece) if marked[start] else escape(piece))
            start = i
    return "".join(pieces)


class MarkedHighlight:
    """A highlight for books/_highlight.html whose text and note carry the marks.

    Both are already escaped (SafeString), so the partial's `linebreaksbr` leaves them as
    they are; everything else is the highlight's own.
    """

    def __init__(self, result: SearchResult) -> None:
        self._highlight = result.highlight
        self.text = mark_words(result.highlight.text, result.marked_words)
        self.note = mark_words(result.highlight.note, result.marked_words)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._highlight, name)


def _run(
    request: HttpRequest, form: SearchForm, *, limit: int, page: int | None = None
) -> SearchResults:
    data = form.cleaned_data
    the_book = get_book_for_user(request, data["book"]) if data["book"] else None
    has_note = {"yes": True, "no": False}.get(data["has_note"])
    reader = reader_of(request)
    with reader_slot(kind="search", reader_id=reader.pk, limit=searches_at_once()):
        return search_highlights(
            reader,
            data["q"],
            mode=data["mode"],
            book=the_book,
            author=data["author"],
            added_from=data["added_from"],
            added_to=data["added_to"],
            has_note=has_note,
            recency_boost=data["recency"],
            limit=limit,
            page=page or data["page"] or 1,
        )


def _readable(params: QueryDict) -> QueryDict:
    """The page's parameters with a page or mode it cannot read set aside, rather than
    refusing the whole search (a hand-edited or old link): a page that is no number, or
    below 1, is the first; one past PAGE_MAX is past the last (search() shows the last); a
    mode of no known name is words and meaning. search.json refuses them instead (400)."""
    readable = params.copy()
    if readable.get("mode", "") not in ("", *MODES):
        readable.pop("mode")
    page = readable.get("page", "")
    if not re.fullmatch(r"0*[1-9][0-9]*", page):
        readable.pop("page", None)
    elif len(page.lstrip("0")) > len(str(PAGE_MAX)) or int(page) > PAGE_MAX:
        readable["page"] = str(PAGE_MAX)
    return readable


def _quotable(query: str) -> str:
    """The query as the page quotes it back (“…”): a phrase already in quotes loses its own,
    or the reader would read `“"the river"”`."""
    phrase = _ONE_PHRASE.fullmatch(query.strip())
    return phrase.group(1).strip() if phrase else query


def _page_link(request: HttpRequest, page: int) -> str:
    params = request.GET.copy()
    params["page"] = str(page)
    return f"?{params.urlencode()}"


def _unnamed_link(request: HttpRequest, found: SearchResults) -> str:
    """The same search with the words that named a book in quotes: quoted words are text,
    never a name."""
    if not found.named_words:
        return ""
    query = _NAME_TOKEN.sub(
        lambda m: f'"{m.group()}"' if fold(m.group()) in found.named_words else m.group(),
        found.query,
    )
    return _query_link(request, query)


def _tag_query(tag: str) -> str:
    """`tag:` and the tag's name, in quotes when it has more than one word."""
    words = " ".join(re.findall(r"[^\W_]+", tag))
    return f'tag:"{words}"' if " " in words else f"tag:{words}"


def _query_link(request: HttpRequest, query: str) -> str:
    """The same search, from its first page, for `query`."""
    params = request.GET.copy()
    params["q"] = query
    params.pop("page", None)
    return f"?{params.urlencode()}"


def _mode_link(request: HttpRequest, mode: str) -> str:
    params = request.GET.copy()
    params["mode"] = mode
    params.pop("page", None)
    return f"?{params.urlencode()}"


def _busy_refused(view: Callable[[HttpRequest], HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest) -> HttpResponse:
        try:
            return view(request)
        except ReaderBusy:
            response = HttpResponse(str(BUSY), status=429, content_type="text/plain; charset=utf-8")
            response["Retry-After"] = "2"
            return response

    return wrapper


BUSY = _("Your other searches are still running. Try again in a moment.")
EMPTY_LIBRARY = _("Your library has no highlights yet: there is nothing to search.")


@require_GET
@login_required
@_busy_refused
def search(request: HttpRequest) -> HttpResponse:
    reader = reader_of(request)
    form = SearchForm(_readable(request.GET) if request.GET else None)
    found = None
    if form.is_bound and form.is_valid():
        found = _run(request, form, limit=PAGE_SIZE)
        if found.total and not found.results:
            # A page past the end (an old link, fewer results now): the last one instead.
            found = _run(request, form, limit=PAGE_SIZE, page=found.pages)
    partial = bool(request.headers.get("HX-Request"))
    mode = found.mode if found else request.GET.get("mode", "auto")
    suggested = suggestion_for(reader.pk, found) if found else ""
    shelf = LibraryCache(reader.pk)
    tag = tag_named(reader, found.query, shelf) if found else ""
    rows = [(r, MarkedHighlight(r)) for r in found.results] if found else []
    close_rows = [(result, marked) for result, marked in rows if not result.loose]
    context = {
        "form": form,
        "found": found,
        "quoted_query": _quotable(found.query) if found else "",
        "mode": mode if mode in MODES else "auto",
        "rows": close_rows,
        # Below the close ones, numbered on from them (books.search.search._loosely_related).
        "loose_rows": [(result, marked) for result, marked in rows if result.loose],
        "loose_start": (found.offset if found else 0) + len(close_rows) + 1,
        "filtered": any(request.GET.get(key) for key in FILTER_PARAMETERS),
        "show_filters": any(request.GET.get(key) for key in (*FILTER_PARAMETERS, "recency")),
        "previous_link": _page_link(request, found.page - 1) if found else "",
        "next_link": _page_link(request, found.page + 1) if found else "",
        "keyword_link": _mode_link(request, "keyword"),
        "unnamed_link": _unnamed_link(request, found) if found else "",
        "meaning_link": _mode_link(request, "meaning"),
        "suggested": suggested,
        "suggested_link": _query_link(request, suggested) if suggested else "",
        "tag": tag,
        "tag_link": _query_link(request, _tag_query(tag)) if tag else "",
    }
    if not partial:
        context["book_choices"] = book_choices(
            reader, shelf, selected=_chosen_book(reader, form, found)
        )
        context["author_choices"] = author_choices(reader, shelf)
    # htmx swaps the results only; the URL, and the full page it gives, are the same.
    template = "books/search.html#results" if partial else "books/search.html"
    return render(request, template, context)


def _chosen_book(reader: User, form: SearchForm, found: SearchResults | None) -> UUID | None:
    """The book filter to show as chosen: one of the reader's own books, never any code a
    URL names (each would be kept as a page of choices of its own)."""
    chosen: UUID | None = form.cleaned_data.get("book") if form.is_bound else None
    if chosen is None or found is not None:
        return chosen  # _run looked it up through its ownership test
    # The form was refused for another field: the book was not looked up yet.
    return chosen if owns_book(reader, chosen) else None


@require_GET
@login_required
@_busy_refused
def search_json(request: HttpRequest) -> HttpResponse:
    """A JSON list of results; the mode that ran and any notice ride in response headers."""
    form = SearchForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
    found = _run(request, form, limit=form.cleaned_data["limit"] or PAGE_SIZE)
    response = JsonResponse([result.as_json() for result in found.results], safe=False)
    response["X-Search-Mode"] = found.mode_used
    response["X-Search-Total"] = str(found.total)
    # The page's words, in the reader's language ("1,234 highlights"; Spanish groups with a
    # no-break space, which latin-1 holds); X-Search-Total is the bare number for scripts.
    response["X-Search-Count"] = found.count_label
    if found.named:
        # Header values are latin-1: the titles ride percent-encoded.
        response["X-Search-Named"] = quote("; ".join(found.named))
    empty = str(EMPTY_LIBRARY) if found.library_empty else ""
    notice = " ".join(said for said in (found.notice, empty) if said)
    if notice:
        response["X-Search-Notice"] = quote(notice)  # percent-encoded, as the others
    suggested = suggestion_for(reader_of(request).pk, found)
    if suggested:
        response["X-Search-Suggestion"] = quote(suggested)
    return response
