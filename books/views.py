from uuid import UUID

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.models import User
from books.connections.selectors import (
    connected_books,
    connections_for,
    fresh_connections,
    import_connections_count,
    library_connections,
)
from books.connections.services import connection_threshold_for_display
from books.forms import ImportForm, NoteForm, TagForm
from books.importing.background import IMPORT_INLINE_MAX_BYTES, import_queue
from books.importing.services import ImportRejected, check_upload, clippings_import
from books.models import Book, Highlight, Import, Tag
from books.selectors import (
    BOOK_SORTS,
    books_for,
    highlight_of_the_day,
    import_progress,
    library_counts,
    tags_for,
)
from books.semantic_map import HEIGHT, WIDTH, library_map
from books.services import (
    highlight_delete,
    highlight_favourite_toggle,
    highlight_note_update,
    highlight_restore,
    highlight_tag,
    highlight_untag,
)


def _reader(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _get_book_for_user(request: HttpRequest, code: UUID) -> Book:
    return get_object_or_404(Book, code=code, reader=_reader(request))


def _get_import_for_user(request: HttpRequest, code: UUID) -> Import:
    return get_object_or_404(Import, code=code, reader=_reader(request))


def _get_highlight_for_user(request: HttpRequest, code: UUID) -> Highlight:
    return get_object_or_404(
        Highlight.objects.alive().select_related("book"), code=code, reader=_reader(request)
    )


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    reader = _reader(request)
    context = {
        "counts": library_counts(reader),
        "latest_import": Import.objects.filter(reader=reader).first(),
        "fresh_connections": fresh_connections(reader),
        "highlight_of_the_day": highlight_of_the_day(reader, today=timezone.localdate()),
    }
    return render(request, "books/home.html", context)


@require_GET
@login_required
def library(request: HttpRequest) -> HttpResponse:
    sort = request.GET.get("sort", "title")
    query = request.GET.get("q", "").strip()
    books = books_for(_reader(request), sort=sort, query=query)
    context = {"books": books, "sort": sort if sort in BOOK_SORTS else "title", "query": query}
    return render(request, "books/library.html", context)


@require_GET
@login_required
def semantic_map(request: HttpRequest) -> HttpResponse:
    the_map = library_map(_reader(request))
    books = sorted(enumerate(the_map.books), key=lambda item: -item[1]["count"])
    context = {
        "map": the_map,
        "points": [{**p, "colour": the_map.books[p["book"]]["colour"]} for p in the_map.points],
        "legend": [book for _, book in books[:12]],
        "width": WIDTH,
        "height": HEIGHT,
    }
    return render(request, "books/map.html", context)


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
    return render(request, "books/tag.html", {"tag": the_tag, "page": page})


@require_GET
@login_required
def book(request: HttpRequest, code: UUID) -> HttpResponse:
    the_book = _get_book_for_user(request, code)
    highlights = the_book.highlights.alive().order_by("location_start", "page", "created")
    page = Paginator(highlights, 100).get_page(request.GET.get("page"))
    context = {"book": the_book, "page": page, "connected_books": connected_books(the_book)}
    return render(request, "books/book.html", context)


@require_GET
@login_required
def highlight(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = _get_highlight_for_user(request, code)
    other_authors_only = request.GET.get("other_authors") == "1"
    context = {
        "highlight": the_highlight,
        "connections": connections_for(the_highlight, other_authors_only=other_authors_only),
        "other_authors_only": other_authors_only,
        "threshold": connection_threshold_for_display(),
        "note_form": NoteForm(initial={"note": the_highlight.note}),
        "tag_form": TagForm(),
        "reader_tags": Tag.objects.filter(reader=the_highlight.reader),
    }
    return render(request, "books/highlight.html", context)


def _after_change(
    request: HttpRequest, highlight: Highlight, part: str, status: str, *, ok: bool = True
) -> HttpResponse:
    """htmx swaps in the changed part, with the status in it; a plain post (no JS) gets
    the status as a message on the highlight page."""
    if request.headers.get("HX-Request"):
        context = {
            "highlight": highlight,
            "note_form": NoteForm(initial={"note": highlight.note}),
            "tag_form": TagForm(),
            "reader_tags": Tag.objects.filter(reader=highlight.reader),
            "status": status,
            "ok": ok,
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
        return _after_change(request, the_highlight, "note", "The note is too long.", ok=False)
    highlight_note_update(highlight=the_highlight, note=form.cleaned_data["note"])
    return _after_change(request, the_highlight, "note", "Note saved.")


@require_POST
@login_required
def highlight_tag_add(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = _get_highlight_for_user(request, code)
    form = TagForm(request.POST)
    if not form.is_valid():
        status = "A tag needs a name of up to 64 characters."
        return _after_change(request, the_highlight, "tags", status, ok=False)
    tag = highlight_tag(highlight=the_highlight, name=form.cleaned_data["name"])
    return _after_change(request, the_highlight, "tags", f"Tagged “{tag.name}”.")


@require_POST
@login_required
def highlight_tag_remove(request: HttpRequest, code: UUID, tag_id: int) -> HttpResponse:
    the_highlight = _get_highlight_for_user(request, code)
    tag = get_object_or_404(Tag, pk=tag_id, reader=_reader(request))
    highlight_untag(highlight=the_highlight, tag=tag)
    return _after_change(request, the_highlight, "tags", f"Removed the tag “{tag.name}”.")


@require_POST
@login_required
def highlight_favourite(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = _get_highlight_for_user(request, code)
    favourite = highlight_favourite_toggle(highlight=the_highlight)
    status = "Added to favourites." if favourite else "Removed from favourites."
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
        messages.success(request, "Highlight restored.")
        return redirect(the_highlight)
    messages.error(request, "It is too late to undo that delete.")
    return redirect(the_highlight.book)


@require_GET
@login_required
def connections(request: HttpRequest) -> HttpResponse:
    reader = _reader(request)
    book_code = request.GET.get("book", "")
    the_book = None
    if book_code:
        try:
            the_book = _get_book_for_user(request, UUID(book_code))
        except ValueError:
            the_book = None
    latest_import = Import.objects.filter(reader=reader, status=Import.Status.DONE).first()
    new_only = request.GET.get("new") == "1" and latest_import is not None
    pairs = library_connections(
        reader, book=the_book, since_import=latest_import if new_only else None
    )
    context = {
        "page": Paginator(pairs, 25).get_page(request.GET.get("page")),
        "books": books_for(reader),
        "book": the_book,
        "new_only": new_only,
        "latest_import": latest_import,
        "threshold": connection_threshold_for_display(),
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
            too_big = f"The file is larger than the {limit_mb} MB limit; nothing was imported."
        else:
            form = ImportForm(request.POST, request.FILES)
        if form.is_bound and form.is_valid():
            upload = form.cleaned_data["file"]
            data, file_name = upload.read(), upload.name or "clippings.txt"
            try:
                if len(data) > IMPORT_INLINE_MAX_BYTES:
                    check_upload(data)
                    the_import = import_queue(reader=reader, data=data, file_name=file_name)
                    messages.success(request, f"{the_import.file_name} is being imported.")
                    return redirect(the_import)
                the_import = clippings_import(reader=reader, data=data, file_name=file_name)
            except ImportRejected as rejection:
                form.add_error("file", str(rejection))
            except Exception:
                messages.error(request, "The import failed and nothing was saved.")
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
        return f"{the_import.file_name} was already in your library: nothing new to add."
    return f"Imported {the_import.file_name}."


@require_GET
@login_required
def import_report(request: HttpRequest, code: UUID) -> HttpResponse:
    the_import = _get_import_for_user(request, code)
    progress = import_progress(the_import)
    context = {
        "import": the_import,
        "under_way": Import.UNDER_WAY,
        "progress": progress,
        "new_connections": import_connections_count(the_import) if progress.done else None,
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
        "poll_url": request.path,
        "new_connections": import_connections_count(the_import) if progress.done else None,
    }
    return render(request, "books/_progress.html", context)


@require_GET
@login_required
def library_progress_partial(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "books/_progress.html",
        {"progress": library_counts(_reader(request)), "poll_url": request.path},
    )
