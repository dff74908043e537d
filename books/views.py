from collections import Counter
from urllib.parse import urlencode
from uuid import UUID

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.safestring import SafeString
from django.utils.text import Truncator
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.models import User
from accounts.views import landing
from books.connections.selectors import (
    PER_BOOK_PAIR,
    Strength,
    connected_books,
    fresh_connections,
    highlight_connections,
    import_connections_count,
    library_connections,
)
from books.forms import ImportForm, NoteForm, TagForm, TagRenameForm
from books.importing.background import IMPORT_INLINE_MAX_BYTES, import_queue
from books.importing.selectors import merges_of
from books.importing.services import ImportRejected, check_upload, clippings_import
from books.library_cache import LibraryCache
from books.models import UNLISTED_FIELDS, Book, Highlight, Import, Tag
from books.selectors import (
    BOOK_HIGHLIGHT_SORTS,
    BOOK_SORTS,
    EmbeddingProgress,
    book_highlights,
    books_for,
    favourites_for,
    import_progress,
    library_counts,
    tags_for,
    words_by_kind,
    words_for,
)
from books.services import (
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
from books.wording import translated
from review.services import highlight_of_the_day


def _reader(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _get_book_for_user(request: HttpRequest, code: UUID) -> Book:
    return get_object_or_404(Book, code=code, reader=_reader(request))


def _optional_book(request: HttpRequest, parameter: str) -> Book | None:
    """The reader's own book named by a query parameter, or None when there is none; a
    code of another reader's book is a 404, as everywhere."""
    code = request.GET.get(parameter, "")
    try:
        return _get_book_for_user(request, UUID(code)) if code else None
    except ValueError:
        return None


def _get_import_for_user(request: HttpRequest, code: UUID) -> Import:
    return get_object_or_404(Import, code=code, reader=_reader(request))


def _get_highlight_for_user(request: HttpRequest, code: UUID) -> Highlight:
    return get_object_or_404(
        Highlight.objects.alive().select_related("book"), code=code, reader=_reader(request)
    )


def _library_eta(reader: User, counts: EmbeddingProgress) -> str:
    """The time left, at the pace of the latest import (the one a reader waits for)."""
    latest = Import.objects.filter(reader=reader).first()
    if counts.done or latest is None:
        return ""
    return import_progress(latest).remaining(started_at=latest.started_at, now=timezone.now())


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return landing(request)
    reader = _reader(request)
    counts = library_counts(reader)
    context = {
        "counts": counts,
        "eta": _library_eta(reader, counts),
        "latest_import": Import.objects.filter(reader=reader).first(),
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
    reader = _reader(request)
    shelf = LibraryCache(reader.pk)

    def book_list() -> dict[str, object]:
        books = _books_cached(reader, shelf, sort=sort, query=query)
        return {"books": books, "sort": sort, "query": query}

    # The books through their partial were half the page's CPU (2.3 of 4.2 ms for 14
    # books): kept as the books are.
    book_list_html = shelf.html("library-html", "books/library.html#book_list", book_list,
                                sort, query)  # fmt: skip
    context = {"book_list": book_list_html, "sort": sort, "query": query}
    return render(request, "books/library.html", context)


def _books_cached(
    reader: User, shelf: LibraryCache, *, sort: str = "title", query: str = ""
) -> list[Book]:
    """books_for, computed once per version of the library: it counts every highlight of
    every book (76 ms of database on 20,000 highlights)."""
    return shelf.get("books", lambda: books_for(reader, sort=sort, query=query), sort, query)


# A book filter's option shows at most this much of a title.
BOOK_OPTION_CHARS = 70


def book_choices(reader: User, shelf: LibraryCache, *, selected: UUID | None) -> SafeString:
    """The <option>s of a page's book filter (connections, search), rendered once per
    version of the library: a library of hundreds of books was otherwise read (or
    unpickled) and rendered option by option at each page. `selected`: one of the
    reader's own books, already looked up through its ownership test."""

    def context() -> dict[str, object]:
        shown = [
            (book, Truncator(book.title).chars(BOOK_OPTION_CHARS))
            for book in _books_cached(reader, shelf)
        ]
        # Two books shown with one title (two translations, two "Selected Essays") are told
        # apart by their authors; every other option is the title alone.
        counts = Counter(title for _book, title in shown)
        shared = {title for title, count in counts.items() if count > 1}
        return {"books": shown, "selected": selected, "shared_titles": shared}

    return shelf.html("book-options", "books/_book_options.html#books", context, selected or "")


def author_choices(reader: User, shelf: LibraryCache) -> SafeString:
    """The <option>s of the search page's author list, rendered once per version."""

    def context() -> dict[str, object]:
        return {"authors": sorted({b.authors for b in _books_cached(reader, shelf) if b.authors})}

    return shelf.html("author-options", "books/_book_options.html#authors", context)


def _favourites(request: HttpRequest) -> HttpResponse:
    """The library's favourite highlights, across books (/library/?favourite=1)."""
    page = Paginator(favourites_for(_reader(request)), 50).get_page(request.GET.get("page"))
    context = {"page": page, "query_string": "favourite=1"}
    return render(request, "books/favourites.html", context)


@require_GET
@login_required
def tags(request: HttpRequest) -> HttpResponse:
    return render(request, "books/tags.html", {"tags": tags_for(_reader(request))})


@require_GET
@login_required
def tag(request: HttpRequest, name: str) -> HttpResponse:
    the_tag = get_object_or_404(Tag, name=name, reader=_reader(request))
    highlights = (
        the_tag.highlights.alive().select_related("book").order_by("book__title", "location_start")
    )
    page = Paginator(highlights, 50).get_page(request.GET.get("page"))
    context = {
        "tag": the_tag,
        "page": page,
        "rename_form": TagRenameForm(initial={"name": the_tag.name}),
        "other_tags": Tag.objects.filter(reader=the_tag.reader).exclude(pk=the_tag.pk),
    }
    return render(request, "books/tag.html", context)


def _get_tag_for_user(request: HttpRequest, name: str) -> Tag:
    return get_object_or_404(Tag, name=name, reader=_reader(request))


@require_POST
@login_required
def tag_rename_view(request: HttpRequest, name: str) -> HttpResponse:
    the_tag = _get_tag_for_user(request, name)
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
    the_tag = _get_tag_for_user(request, name)
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
    the_tag = _get_tag_for_user(request, name)
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


# Words shown on a book's page; the rest are on its words page.
BOOK_WORDS_SHOWN = 40


@require_GET
@login_required
def book(request: HttpRequest, code: UUID) -> HttpResponse:
    the_book = _get_book_for_user(request, code)
    sort = request.GET.get("sort", "location")
    sort = sort if sort in BOOK_HIGHLIGHT_SORTS else "location"
    filters = {
        "query": request.GET.get("q", "").strip()[:200],
        "favourite": request.GET.get("favourite") == "1",
        "notes": request.GET.get("notes") == "1",
        "tag": request.GET.get("tag", "").strip(),
    }
    highlights = book_highlights(the_book, sort=sort, **filters)  # type: ignore[arg-type]
    page = Paginator(highlights, BOOK_PAGE_SIZE).get_page(request.GET.get("page"))
    kept = {k: v for k, v in request.GET.items() if k != "page" and v}
    words = words_for(_reader(request), book=the_book)
    context = {
        "book": the_book,
        "page": page,
        "total": the_book.highlights.alive().count(),
        "filtered": any(filters.values()),
        "sort": sort,
        **filters,
        "book_tags": Tag.objects.filter(
            reader=_reader(request), highlights__book=the_book, highlights__deleted_at=None
        ).distinct(),
        "query_string": urlencode(kept),
        "reader_tags": Tag.objects.filter(reader=_reader(request)),
        "connected_books": connected_books(the_book),
        # Look-ups, headings, fragments: each listed as what it is (books.vocabulary).
        "word_groups": words_by_kind(words, shown=BOOK_WORDS_SHOWN),
    }
    return render(request, "books/book.html", context)


@require_GET
@login_required
def words(request: HttpRequest) -> HttpResponse:
    """The reader's words across books: highlights too short to carry an idea."""
    page = Paginator(words_for(_reader(request)), 100).get_page(request.GET.get("page"))
    return render(request, "books/words.html", {"page": page, "book": None})


@require_GET
@login_required
def book_words(request: HttpRequest, code: UUID) -> HttpResponse:
    the_book = _get_book_for_user(request, code)
    words = words_for(_reader(request), book=the_book)
    page = Paginator(words, 100).get_page(request.GET.get("page"))
    return render(request, "books/words.html", {"page": page, "book": the_book})


@require_GET
@login_required
def highlight(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = _get_highlight_for_user(request, code)
    # The merges link to their imports by name: not the imports' problems and counts (JSON
    # that a large file's import makes long).
    merges = the_highlight.merges.select_related("source_import").defer(
        "source_import__problems", "source_import__counts"
    )
    context = {
        "highlight": the_highlight,
        "connections": highlight_connections(
            the_highlight, shelf=LibraryCache(the_highlight.reader_id)
        ),
        "show_same_author": request.GET.get("same_author") == "1",
        "reader_tags": Tag.objects.filter(reader_id=the_highlight.reader_id),
        "merges": list(merges.order_by("id")),
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
    the_highlight = _get_highlight_for_user(request, code)
    form = NoteForm(request.POST)
    if not form.is_valid():
        return _after_change(
            request, the_highlight, "note", gettext("The note is too long."), ok=False
        )
    highlight_note_update(highlight=the_highlight, note=form.cleaned_data["note"])
    return _after_change(request, the_highlight, "note", gettext("Note saved."))


@require_POST
@login_required
def highlight_tag_add(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = _get_highlight_for_user(request, code)
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
    the_highlight = _get_highlight_for_user(request, code)
    tag = get_object_or_404(Tag, pk=tag_id, reader=_reader(request))
    highlight_untag(highlight=the_highlight, tag=tag)
    return _after_change(
        request, the_highlight, "tags", gettext("Removed the tag “%(name)s”.") % {"name": tag.name}
    )


@require_POST
@login_required
def highlight_favourite(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = _get_highlight_for_user(request, code)
    favourite = highlight_favourite_toggle(highlight=the_highlight)
    status = gettext("Added to favourites.") if favourite else gettext("Removed from favourites.")
    return _after_change(request, the_highlight, "favourite", status)


@require_POST
@login_required
def highlight_remove(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = _get_highlight_for_user(request, code)
    highlight_delete(highlight=the_highlight)
    # The undo form on the next page reads this (see templates/_undo.html).
    request.session["undo_highlight"] = str(the_highlight.code)
    return redirect(the_highlight.book)


@require_POST
@login_required
def highlight_undo_delete(request: HttpRequest, code: UUID) -> HttpResponse:
    # Not the alive-only helper: this one looks for a deleted highlight, still the reader's.
    the_highlight = get_object_or_404(Highlight, code=code, reader=_reader(request))
    if highlight_restore(highlight=the_highlight):
        messages.success(request, gettext("Highlight restored."))
        return redirect(the_highlight)
    messages.error(request, gettext("It is too late to undo that delete."))
    return redirect(the_highlight.book)


# A pair shows its two passages, not their vectors: 384 numbers each to read and parse.
_UNSHOWN_PAIR_FIELDS = [
    f"{side}__{field}" for side in ("highlight_a", "highlight_b") for field in UNLISTED_FIELDS
]


@require_GET
@login_required
def connections(request: HttpRequest) -> HttpResponse:
    reader = _reader(request)
    the_book = _optional_book(request, "book")
    # ?other=: only the pairs between the book and this one (a book page's "see pairs").
    other_book = _optional_book(request, "other") if the_book else None
    # When it started is all this page reads of it (not its problems' JSON).
    latest_import = (
        Import.objects.filter(reader=reader, status=Import.Status.DONE).only("started_at").first()
    )
    new_only = request.GET.get("new") == "1" and latest_import is not None
    strengths = {"same": Strength.SAME_IDEA, "related": Strength.RELATED}
    strength = request.GET.get("strength", "")
    since_import = latest_import if new_only else None
    # The stored verdicts make this an indexed filter: no grading, no cache. The whole
    # library shows at most PER_BOOK_PAIR pairs of two books; a book's own list shows all.
    pairs = library_connections(
        reader,
        book=the_book,
        other=other_book,
        since_import=since_import,
        strength=strengths.get(strength),
        per_book_pair=None if the_book else PER_BOOK_PAIR,
    ).defer(*_UNSHOWN_PAIR_FIELDS)
    page = Paginator(pairs, 25).get_page(request.GET.get("page"))
    shelf = LibraryCache(reader.pk)
    context = {
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


@require_http_methods(["GET", "POST"])
@login_required
def import_upload(request: HttpRequest) -> HttpResponse:
    reader = _reader(request)
    form = ImportForm()
    too_big = ""
    if request.method == "POST":
        limit_mb = settings.EXOGRAM_MAX_UPLOAD_MB
        # Refuse a huge upload by its declared length, before Django reads the body.
        if int(request.META.get("CONTENT_LENGTH") or 0) > limit_mb * 1024 * 1024 + 64 * 1024:
            too_big = gettext(
                "The file is larger than the %(limit)s MB limit; nothing was imported."
            ) % {"limit": limit_mb}
        else:
            form = ImportForm(request.POST, request.FILES)
        if form.is_bound and form.is_valid():
            upload = form.cleaned_data["file"]
            data, file_name = upload.read(), upload.name or "clippings.txt"
            try:
                if len(data) > IMPORT_INLINE_MAX_BYTES:
                    check_upload(data)
                    the_import = import_queue(reader=reader, data=data, file_name=file_name)
                    messages.success(
                        request,
                        gettext("%(file)s is being imported.") % {"file": the_import.file_name},
                    )
                    return redirect(the_import)
                the_import = clippings_import(reader=reader, data=data, file_name=file_name)
            except ImportRejected as rejection:
                form.add_error("file", translated(str(rejection)))
            except Exception:
                messages.error(request, gettext("The import failed and nothing was saved."))
                return redirect("import")
            else:
                messages.success(request, _import_message(the_import))
                return redirect(the_import)
    imports = Import.objects.filter(reader=reader)[:20]
    context = {"form": form, "too_big": too_big, "imports": imports}
    return render(request, "books/import.html", context)


def _import_message(the_import: Import) -> str:
    counts = the_import.counts
    if not counts.get("new_highlights") and counts.get("duplicates_skipped"):
        # A second submit of the same file (or two tabs at once): it waited for the first
        # and found everything there.
        return gettext("%(file)s was already in your library: nothing new to add.") % {
            "file": the_import.file_name
        }
    return gettext("Imported %(file)s.") % {"file": the_import.file_name}


@require_GET
@login_required
def import_report(request: HttpRequest, code: UUID) -> HttpResponse:
    the_import = _get_import_for_user(request, code)
    progress = import_progress(the_import)
    merges = Paginator(merges_of(the_import), 25).get_page(request.GET.get("page"))
    context = {
        "import": the_import,
        "under_way": Import.UNDER_WAY,
        "progress": progress,
        "eta": progress.remaining(started_at=the_import.started_at, now=timezone.now()),
        "new_connections": import_connections_count(the_import) if progress.done else None,
        "page": merges,
    }
    return render(request, "books/import_report.html", context)


@require_GET
@login_required
def import_progress_partial(request: HttpRequest, code: UUID) -> HttpResponse:
    the_import = _get_import_for_user(request, code)
    if request.GET.get("under_way") and the_import.status not in Import.UNDER_WAY:
        # The background import finished: reload the report to show what it did.
        return HttpResponse(headers={"HX-Refresh": "true"})
    if the_import.status in Import.UNDER_WAY:
        return render(request, "books/_import_stage.html", {"import": the_import})
    progress = import_progress(the_import)
    context = {
        "progress": progress,
        "eta": progress.remaining(started_at=the_import.started_at, now=timezone.now()),
        "poll_url": request.path,
        # The header's phrase rides along (hx-swap-oob): the page says one thing.
        "import": the_import,
        "oob": True,
        "new_connections": import_connections_count(the_import) if progress.done else None,
    }
    return render(request, "books/_progress.html", context)


@require_GET
@login_required
def library_progress_partial(request: HttpRequest) -> HttpResponse:
    reader = _reader(request)
    counts = library_counts(reader)
    context = {
        "progress": counts,
        "eta": _library_eta(reader, counts),
        "poll_url": request.path,
        # The home page's counts ride along (hx-swap-oob): the page says one thing.
        "counts": counts,
        "library": True,
        "oob": True,
    }
    return render(request, "books/_progress.html", context)
