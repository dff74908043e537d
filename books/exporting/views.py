"""Download the library, or one book, as Markdown, CSV or JSON."""

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from books.exporting.services import FORMATS, ExportFile, library_export
from books.views import _get_book_for_user, _reader


def _download(export: ExportFile) -> HttpResponse:
    response = HttpResponse(export.data, content_type=export.content_type)
    response["Content-Disposition"] = content_disposition_header(True, export.name)
    # A reader's whole library: never kept by a shared cache.
    response["Cache-Control"] = "private, no-store"
    return response


def _format(request: HttpRequest) -> str | None:
    chosen = request.GET.get("format", "")
    return chosen if chosen in FORMATS else None


@require_GET
@login_required
def library_download(request: HttpRequest) -> HttpResponse:
    chosen = _format(request)
    if chosen is None:
        return HttpResponseBadRequest(f"Choose a format: {', '.join(FORMATS)}.")
    return _download(library_export(reader=_reader(request), format=chosen))


@require_GET
@login_required
def book_download(request: HttpRequest, code: UUID) -> HttpResponse:
    book = _get_book_for_user(request, code)
    chosen = _format(request)
    if chosen is None:
        return HttpResponseBadRequest(f"Choose a format: {', '.join(FORMATS)}.")
    return _download(library_export(reader=_reader(request), format=chosen, book=book))
