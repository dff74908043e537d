"""The connections page: the library's pairs of passages, or one book's."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from books.access import optional_book_for_user, reader_of
from books.choices import book_choices
from books.connections.selectors import PER_BOOK_PAIR, Strength, connections_page
from books.library_cache import LibraryCache
from books.models import Import
from books.selectors import read_passages


@require_GET
@login_required
def connections(request: HttpRequest) -> HttpResponse:
    reader = reader_of(request)
    the_book = optional_book_for_user(request, "book")
    # ?other=: only the pairs between the book and this one (a book page's "see pairs").
    other_book = optional_book_for_user(request, "other") if the_book else None
    if other_book is not None and other_book == the_book:
        # "Pairs between X and X" would list nothing (a connection joins two books): the
        # reader asked for this book's connections, so send them there, filters kept.
        query = request.GET.copy()
        query.pop("other")
        query.pop("page", None)
        return redirect(f"{request.path}?{query.urlencode()}")
    # When it started and whether it added anything are all this page reads of it (not its
    # problems' JSON).
    latest_import = (
        Import.objects.filter(reader=reader, status=Import.Status.DONE)
        .only("started_at", "status", "counts")
        .first()
    )
    new_only = request.GET.get("new") == "1" and latest_import is not None
    strengths = {"same": Strength.SAME_IDEA, "related": Strength.RELATED}
    strength = request.GET.get("strength", "")
    since_import = latest_import if new_only else None
    # The stored verdicts make this an indexed filter: no grading, no cache. The whole
    # library shows at most PER_BOOK_PAIR pairs of two books; a book's own list shows all.
    page = connections_page(
        reader,
        request.GET.get("page"),
        per_page=25,
        book=the_book,
        other=other_book,
        since_import=since_import,
        strength=strengths.get(strength),
        per_book_pair=None if the_book else PER_BOOK_PAIR,
    )
    if the_book is not None:
        # The chosen book's passage on the left of each pair, whichever side it is stored
        # on (the lower id first): only the objects shown are turned, never saved.
        for pair in page.object_list:
            if pair.highlight_a.book_id != the_book.pk:
                pair.highlight_a, pair.highlight_b = pair.highlight_b, pair.highlight_a
    shelf = LibraryCache(reader.pk)
    unfiltered = not (the_book or new_only or strength in strengths)
    context = {
        # An empty library page says which of its cases it is (nothing read, one book read,
        # all read and nothing close enough): counted only then.
        "read": read_passages(reader) if unfiltered and not page.paginator.count else None,
        "page": page,
        "pairs": page.object_list,
        "per_book_pair": None if the_book else PER_BOOK_PAIR,
        "book_choices": book_choices(reader, shelf, selected=the_book.code if the_book else None),
        "book": the_book,
        "other_book": other_book,
        "new_only": new_only,
        "strength": strength if strength in strengths else "",
        "latest_import": latest_import,
    }
    return render(request, "books/connections.html", context)
