from uuid import UUID

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from accounts.models import User
from books.forms import ImportForm
from books.models import Book, Highlight, Import
from books.selectors import (
    books_for,
    connected_books,
    connections_for,
    import_connections_count,
    import_progress,
    library_connections,
    library_counts,
)
from books.services import ImportRejected, clippings_import, connection_threshold_for_display


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
    latest_import = Import.objects.filter(reader=reader).first()
    return render(
        request,
        "books/home.html",
        {"counts": library_counts(reader), "latest_import": latest_import},
    )


@require_GET
@login_required
def library(request: HttpRequest) -> HttpResponse:
    return render(request, "books/library.html", {"books": books_for(_reader(request))})


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
    }
    return render(request, "books/highlight.html", context)


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
            try:
                the_import = clippings_import(
                    reader=reader, data=upload.read(), file_name=upload.name or "clippings.txt"
                )
            except ImportRejected as rejection:
                form.add_error("file", str(rejection))
            except Exception:
                messages.error(request, "The import failed and nothing was saved.")
                return redirect("import")
            else:
                messages.success(request, f"Imported {the_import.file_name}.")
                return redirect(the_import)
    imports = Import.objects.filter(reader=reader)[:20]
    context = {"form": form, "too_big": too_big, "imports": imports}
    return render(request, "books/import.html", context)


@require_GET
@login_required
def import_report(request: HttpRequest, code: UUID) -> HttpResponse:
    the_import = _get_import_for_user(request, code)
    progress = import_progress(the_import)
    context = {
        "import": the_import,
        "progress": progress,
        "new_connections": import_connections_count(the_import) if progress.done else None,
    }
    return render(request, "books/import_report.html", context)


@require_GET
@login_required
def import_progress_partial(request: HttpRequest, code: UUID) -> HttpResponse:
    the_import = _get_import_for_user(request, code)
    return render(
        request,
        "books/_progress.html",
        {"progress": import_progress(the_import), "poll_url": request.path},
    )


@require_GET
@login_required
def library_progress_partial(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "books/_progress.html",
        {"progress": library_counts(_reader(request)), "poll_url": request.path},
    )
