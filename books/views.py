"""The library's own pages: home, the books, a book, a highlight and the reader's edits to
it, tags, words and the library's progress. Imports, connections, search, the map and
exports serve their own pages from their packages."""

from urllib.parse import urlencode
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_GET, require_POST

from accounts.models import User
from accounts.views import landing
from books.access import (
    get_book_for_user,
    get_book_or_merged_for_user,
    get_deleted_or_alive_highlight_for_user,
    get_highlight_for_user,
    get_tag_by_id_for_user,
    get_tag_for_user,
    reader_of,
)
from books.choices import books_cached
from books.connections.said import connections_said
from books.connections.selectors import (
    connected_books,
    fresh_connections,
    highlight_connections,
    library_connections,
)
from books.deleting import deleted_phrase
from books.forms import NoteForm, TagForm, TagRenameForm
from books.importing.selectors import (
    import_behind_embedding,
    import_reading,
    import_saving,
    imports_under_way,
)
from books.library_cache import LibraryCache
from books.models import EMPTY_NOTE, Book, Deletion, Highlight, Import, Tag
from books.purging import deleted_kept_for
from books.selectors import (
    BOOK_HIGHLIGHT_SORTS,
    BOOK_SORTS,
    EmbeddingProgress,
    WordPages,
    book_highlights,
    favourites_for,
    import_progress,
    import_time_left,
    library_counts,
    tags_for,
    unconnected_book,
    word_rows,
    words_by_kind,
    words_for,
)
from books.services import (
    book_deletable,
    delete_count,
    highlight_delete,
    highlight_favourite_toggle,
    highlight_note_update,
    highlight_restore,
    highlight_tag,
    highlight_untag,
    tag_delete,
    tag_merge,
    tag_rename,
)
from exogram.paging import ListPaginator
from review.services import highlight_of_the_day


def _connections_found(reader: User, counts: EmbeddingProgress) -> int | None:
    """The library's connections, said once it is all read; None while it is being read.
    Counted once per version of the library: every stored pair is read to count them (110
    ms at 100,000 pairs), and the home page is the page read most."""
    if not counts.done:
        return None

    def count() -> int:
        return library_connections(reader).order_by().count()

    return LibraryCache(reader.pk).get("connections-found", count)


def _library_eta(reader: User, counts: EmbeddingProgress) -> str:
    """The time left, at the pace of the latest import (the one a reader waits for)."""
    latest = Import.objects.filter(reader=reader).exclude(status=Import.Status.REFUSED).first()
    if counts.done or latest is None:
        return ""
    return import_time_left(latest, import_progress(latest), now=timezone.now())


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return landing(request)
    reader = reader_of(request)
    counts = library_counts(reader)
    # A background import still reading or saving: the page says so instead of "Your
    # library is empty", which invited a second upload of the same file.
    several = imports_under_way(reader.pk)
    under_way = several.followed
    context = {
        "counts": counts,
        "eta": _library_eta(reader, counts),
        "connections_found": _connections_found(reader, counts),
        "latest_import": Import.objects.filter(reader=reader).first(),
        "import_under_way": under_way,
        "imports_under_way": several,
        "import_saving": import_saving(under_way),
        "import_reading": import_reading(under_way),
        "import_behind_embedding": import_behind_embedding(under_way),
        "fresh_connections": fresh_connections(reader),
        "highlight_of_the_day": highlight_of_the_day(reader=reader, today=timezone.localdate()),
    }
    return render(request, "books/home.html", context)


@require_GET
@login_required
def library(request: HttpRequest) -> HttpResponse:
    if request.GET.get("favourite") == "1":
        return _favourites(request)
    sort = request.GET.get("sort", "title")
    sort = sort if sort in BOOK_SORTS else "title"
    query = request.GET.get("q", "").strip()
    reader = reader_of(request)
    shelf = LibraryCache(reader.pk)

    def book_list() -> dict[str, object]:
        books = books_cached(reader, shelf, sort=sort, query=query)
        return {"books": books, "sort": sort, "query": query}

    # The books through their partial were half the page's CPU (2.3 of 4.2 ms for 14
    # books): kept as the books are.
    book_list_html = shelf.html("library-html", "books/library.html#book_list", book_list,
                                sort, query)  # fmt: skip
    context = {"book_list": book_list_html, "sort": sort, "query": query}
    return render(request, "books/library.html", context)


def _favourites(request: HttpRequest) -> HttpResponse:
    """The library's favourite highlights, across books (/library/?favourite=1)."""
    page = ListPaginator(favourites_for(reader_of(request)), 50).get_page(request.GET.get("page"))
    context = {"page": page, "query_string": "favourite=1"}
    return render(request, "books/favourites.html", context)


@require_GET
@login_required
def tags(request: HttpRequest) -> HttpResponse:
    return render(request, "books/tags.html", {"tags": tags_for(reader_of(request))})


@require_GET
@login_required
def tag(request: HttpRequest, name: str) -> HttpResponse:
    the_tag = get_tag_for_user(request, name)
    highlights = (
        the_tag.highlights.alive()
        .select_related("book")
        .order_by("book__title_sort", "book_id", "location_start", "reading_key", "created", "pk")
    )
    page = ListPaginator(highlights, 50).get_page(request.GET.get("page"))
    context = {
        "tag": the_tag,
        "page": page,
        "rename_form": TagRenameForm(initial={"name": the_tag.name}),
        "other_tags": Tag.objects.filter(reader=the_tag.reader).exclude(pk=the_tag.pk),
    }
    return render(request, "books/tag.html", context)


@require_POST
@login_required
def tag_rename_view(request: HttpRequest, name: str) -> HttpResponse:
    the_tag = get_tag_for_user(request, name)
    form = TagRenameForm(request.POST)
    if not form.is_valid():
        messages.error(
            request, gettext("A tag needs a name of up to 64 characters; nothing changed.")
        )
        return redirect("tag", name=the_tag.name)
    old_name = the_tag.name
    renamed = tag_rename(tag=the_tag, name=form.cleaned_data["name"])
    if renamed.pk != the_tag.pk:
        messages.success(
            request,
            gettext("Merged “%(old)s” into “%(new)s”.") % {"old": old_name, "new": renamed.name},
        )
    else:
        messages.success(
            request,
            gettext("Renamed “%(old)s” to “%(new)s”.") % {"old": old_name, "new": renamed.name},
        )
    return redirect("tag", name=renamed.name)


@require_POST
@login_required
def tag_merge_view(request: HttpRequest, name: str) -> HttpResponse:
    the_tag = get_tag_for_user(request, name)
    into = request.POST.get("into", "").strip()
    target = (
        Tag.objects.filter(reader_id=the_tag.reader_id, pk=int(into)).exclude(pk=the_tag.pk).first()
        if into.isdigit()
        else None
    )
    if target is None:
        messages.error(
            request, gettext("Choose another of your tags to merge into; nothing changed.")
        )
        return redirect("tag", name=the_tag.name)
    moved = tag_merge(source=the_tag, target=target)
    message = ngettext(
        "Merged “%(old)s” into “%(new)s”: %(count)d highlight moved.",
        "Merged “%(old)s” into “%(new)s”: %(count)d highlights moved.",
        moved,
    )
    messages.success(request, message % {"old": name, "new": target.name, "count": moved})
    return redirect("tag", name=target.name)


@require_POST
@login_required
def tag_delete_view(request: HttpRequest, name: str) -> HttpResponse:
    the_tag = get_tag_for_user(request, name)
    count = tag_delete(tag=the_tag)
    messages.success(
        request,
        ngettext(
            "Deleted the tag “%(name)s” from %(count)d highlight; the highlights stay.",
            "Deleted the tag “%(name)s” from %(count)d highlights; the highlights stay.",
            count,
        )
        % {"name": name, "count": count},
    )
    return redirect("tags")


BOOK_PAGE_SIZE = 50
WORDS_PAGE_SIZE = 100


# Deleted highlights listed on a book's page; the rest are on the Recently deleted page.
RECENTLY_DELETED_SHOWN = 20

# Words shown on a book's page; the rest are on its words page.
BOOK_WORDS_SHOWN = 40


def _only_filter(filters: dict[str, object]) -> str:
    used = [name for name, value in filters.items() if value]
    return used[0] if len(used) == 1 else "several"


@require_GET
@login_required
def book(request: HttpRequest, code: UUID) -> HttpResponse:
    the_book = get_book_or_merged_for_user(request, code)
    if the_book.code != code:
        return redirect(the_book)  # merged into another book: an old link leads there
    # What was deleted, listed and counted as the header counts: not an empty note an older
    # import kept (EMPTY_NOTE), which "Bring back all" still brings back with the rest.
    deleted = the_book.highlights.filter(deleted_at__isnull=False).exclude(EMPTY_NOTE)
    total = the_book.highlights.alive().exclude(EMPTY_NOTE).count()
    recently_deleted = list(deleted.order_by("-deleted_at", "pk")[:RECENTLY_DELETED_SHOWN])
    if not total and recently_deleted:
        return _deleted_book_page(request, the_book, deleted, recently_deleted)
    sort = request.GET.get("sort", "location")
    sort = sort if sort in BOOK_HIGHLIGHT_SORTS else "location"
    filters = {
        "query": request.GET.get("q", "").strip()[:200],
        "favourite": request.GET.get("favourite") == "1",
        "notes": request.GET.get("notes") == "1",
        "tag": request.GET.get("tag", "").strip(),
    }
    highlights = book_highlights(the_book, sort=sort, **filters)  # type: ignore[arg-type]
    page = ListPaginator(highlights, BOOK_PAGE_SIZE).get_page(request.GET.get("page"))
    kept = {k: v for k, v in request.GET.items() if k != "page" and v}
    words = words_for(reader_of(request), book=the_book, with_a_note=False)
    connected = connected_books(the_book)
    context = {
        "book": the_book,
        "page": page,
        "total": total,
        "filtered": any(filters.values()),
        # The one filter an empty page speaks of ("No favourites in this book yet"), or
        # "several" when they were combined.
        "only_filter": _only_filter(filters),
        "sort": sort,
        **filters,
        "book_tags": Tag.objects.filter(
            reader=reader_of(request), highlights__book=the_book, highlights__deleted_at=None
        ).distinct(),
        "query_string": urlencode(kept),
        "reader_tags": Tag.objects.filter(reader=reader_of(request)),
        "connected_books": connected,
        # Embedded and still paired with no other book: said, and why, not left out, so a
        # reader does not wonder whether the page forgot (a novel alone in its language).
        "unconnected": None if connected else unconnected_book(the_book),
        # Look-ups, headings, fragments: each listed as what it is (books.vocabulary).
        "word_groups": words_by_kind(words, shown=BOOK_WORDS_SHOWN),
        # What "Delete this book" takes, said before it does; what was deleted, to bring back.
        "delete_counts": (counts := delete_count(book_deletable(book=the_book))),
        "delete_phrase": deleted_phrase(counts),
        "recently_deleted": recently_deleted,
        "deleted_total": deleted.count(),
    }
    return render(request, "books/book.html", context)


def _deleted_book_page(
    request: HttpRequest,
    the_book: Book,
    deleted: QuerySet[Highlight],
    recently_deleted: list[Highlight],
) -> HttpResponse:
    """A book with nothing left but what was deleted: it says so, when and what, with
    bringing it back as the one action; not an empty book offering downloads of nothing
    and a merge. A 404 for the deleted highlight's page's reason (_deleted_highlight_page):
    the page is not gone for good, yet the book is not in the library."""
    latest = recently_deleted[0]
    # The book goes when the last of what it holds does (books.purging): the newest delete.
    newest = deleted.order_by("-deleted_at").values_list("deleted_at", flat=True).first()
    kept_for = deleted_kept_for()
    context = {
        "book": the_book,
        # The last delete took the book whole (not its highlights one by one).
        "deleted_whole": latest.deletion is not None and latest.deletion.kind == Deletion.Kind.BOOK,
        "deleted_at": latest.deleted_at,
        "deleted_phrase": deleted_phrase(delete_count(deleted)),
        "kept_until": newest + kept_for if kept_for is not None and newest else None,
        "recently_deleted": recently_deleted,
        "deleted_total": deleted.count(),
    }
    return render(request, "books/book_deleted.html", context, status=404)


@require_GET
@login_required
def words(request: HttpRequest) -> HttpResponse:
    """The reader's words across books: highlights too short to carry an idea."""
    return _words_page(request, book=None)


@require_GET
@login_required
def book_words(request: HttpRequest, code: UUID) -> HttpResponse:
    return _words_page(request, book=get_book_for_user(request, code))


def _words_page(request: HttpRequest, *, book: Book | None) -> HttpResponse:
    """A word looked up several times is one row, with where it was met (`word_rows`)."""
    rows = WordPages(word_rows(reader_of(request), book=book))
    page = ListPaginator(rows, WORDS_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "books/words.html", {"page": page, "book": book})


@require_GET
@login_required
def highlight(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = get_deleted_or_alive_highlight_for_user(request, code)
    if the_highlight.deleted_at is not None:
        return _deleted_highlight_page(request, the_highlight)
    return _highlight_page(request, the_highlight)


def _deleted_highlight_page(request: HttpRequest, the_highlight: Highlight) -> HttpResponse:
    """A deleted highlight's address, for its reader only (another reader's 404 comes from
    the ownership lookup, before this): when it was deleted, and a way to bring it back.

    A 404, not a 410 Gone: 410 says the page is gone for good, and this one comes back
    with a click. Once the purge removes the row, the plain 404 is all there is."""
    kept_for = deleted_kept_for()
    deleted_at = the_highlight.deleted_at
    assert deleted_at is not None
    context = {
        "highlight": the_highlight,
        "kept_until": deleted_at + kept_for if kept_for is not None else None,
    }
    return render(request, "books/highlight_deleted.html", context, status=404)


def _highlight_page(
    request: HttpRequest, the_highlight: Highlight, **note_refused: object
) -> HttpResponse:
    """The highlight's page; `note_refused`: the note the reader typed and why it was not
    kept, shown in its place (a plain post, without JS)."""
    # The merges link to their imports by name: not the imports' problems and counts (JSON
    # that a large file's import makes long).
    merges = the_highlight.merges.select_related("source_import").defer(
        "source_import__problems", "source_import__counts"
    )
    connections = highlight_connections(the_highlight, shelf=LibraryCache(the_highlight.reader_id))
    context = {
        "highlight": the_highlight,
        "connections": connections,
        "said": connections_said(the_highlight, connections),
        "show_same_author": request.GET.get("same_author") == "1",
        "reader_tags": Tag.objects.filter(reader_id=the_highlight.reader_id),
        "merges": list(merges.order_by("id")),
        **note_refused,
    }
    return render(request, "books/highlight.html", context)


def _after_change(
    request: HttpRequest, highlight: Highlight, part: str, status: str, *, ok: bool = True
) -> HttpResponse:
    """htmx swaps in the changed part, with the status in it; a plain post (no JS) gets
    the status as a message on the highlight page. `compact`: the part as a list item
    shows it (the book page), not as the highlight page does."""
    if request.headers.get("HX-Request"):
        compact = request.POST.get("compact") == "1"
        if compact and part == "tags":
            part = "tags_compact"
        context = {
            "highlight": highlight,
            "reader_tags": Tag.objects.filter(reader_id=highlight.reader_id),
            "status": status,
            "ok": ok,
            "compact": compact,
        }
        return render(request, f"books/_highlight_{part}.html", context)
    messages.add_message(request, messages.SUCCESS if ok else messages.ERROR, status)
    return redirect(highlight)


@require_POST
@login_required
def highlight_note(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = get_highlight_for_user(request, code)
    form = NoteForm(request.POST)
    if not form.is_valid():
        # Said with the limit and the count, and the typed words kept in the box to shorten.
        status = str(form.errors["note"][0])
        # (A null character, which no page can hold either, is the one thing not kept.)
        typed_note = request.POST.get("note", "").replace("\x00", "")
        if request.headers.get("HX-Request"):
            context = {"highlight": the_highlight, "status": status, "typed_note": typed_note}
            return render(request, "books/_highlight_note.html", {**context, "ok": False})
        return _highlight_page(request, the_highlight, note_status=status, typed_note=typed_note)
    tagged = highlight_note_update(highlight=the_highlight, note=form.cleaned_data["note"])
    if not tagged:
        return _after_change(request, the_highlight, "note", gettext("Note saved."))
    # The note's new hashtags are tags now: said beside the note, and htmx swaps the
    # highlight's tags in too (out of band), which a plain post's redirect shows anyway.
    status = ngettext(
        "Note saved, and tagged from its hashtag: %(names)s.",
        "Note saved, and tagged from its hashtags: %(names)s.",
        len(tagged),
    ) % {"names": ", ".join(tagged)}
    if request.headers.get("HX-Request"):
        context = {
            "highlight": the_highlight,
            "reader_tags": Tag.objects.filter(reader_id=the_highlight.reader_id),
        }
        return render(request, "books/_highlight_note_tagged.html", {**context, "status": status})
    messages.success(request, status)
    return redirect(the_highlight)


@require_POST
@login_required
def highlight_tag_add(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = get_highlight_for_user(request, code)
    form = TagForm(request.POST)
    if not form.is_valid():
        status = gettext("A tag needs a name of up to 64 characters.")
        return _after_change(request, the_highlight, "tags", status, ok=False)
    tag = highlight_tag(highlight=the_highlight, name=form.cleaned_data["name"])
    return _after_change(
        request, the_highlight, "tags", gettext("Tagged “%(name)s”.") % {"name": tag.name}
    )


@require_POST
@login_required
def highlight_tag_remove(request: HttpRequest, code: UUID, tag_id: int) -> HttpResponse:
    the_highlight = get_highlight_for_user(request, code)
    tag = get_tag_by_id_for_user(request, tag_id)
    highlight_untag(highlight=the_highlight, tag=tag)
    return _after_change(
        request, the_highlight, "tags", gettext("Removed the tag “%(name)s”.") % {"name": tag.name}
    )


@require_POST
@login_required
def highlight_favourite(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = get_highlight_for_user(request, code)
    favourite = highlight_favourite_toggle(highlight=the_highlight)
    status = gettext("Added to favourites.") if favourite else gettext("Removed from favourites.")
    return _after_change(request, the_highlight, "favourite", status)


@require_POST
@login_required
def highlight_remove(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = get_highlight_for_user(request, code)
    highlight_delete(highlight=the_highlight)
    # The undo form on the next page reads this (see templates/_undo.html).
    request.session["undo_highlight"] = str(the_highlight.code)
    return redirect(the_highlight.book)


@require_POST
@login_required
def highlight_undo_delete(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = get_deleted_or_alive_highlight_for_user(request, code)
    if highlight_restore(highlight=the_highlight):
        messages.success(request, gettext("Highlight restored."))
        return redirect(the_highlight)
    messages.error(request, gettext("It is too late to undo that delete."))
    return redirect(the_highlight.book)


@require_GET
@login_required
def library_progress_partial(request: HttpRequest) -> HttpResponse:
    reader = reader_of(request)
    counts = library_counts(reader)
    context = {
        "progress": counts,
        "eta": _library_eta(reader, counts),
        "connections_found": _connections_found(reader, counts),
        "poll_url": request.path,
        # The home page's counts ride along (hx-swap-oob): the page says one thing.
        "counts": counts,
        "library": True,
        "oob": True,
    }
    return render(request, "books/_progress.html", context)
