"""Download the library, or one book, as Markdown, CSV or JSON.

Without a format (a typed or bookmarked /export/) the page lists the three to choose from;
with one Exogram does not write, the same page says so, with a 400.

Streamed a book at a time (books.exporting.streaming), one export at a time per reader:
a second one while the first is still being sent is refused with 429, not queued behind
it on a web thread.
"""

from collections.abc import Iterator
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from accounts.models import User
from books.access import get_book_for_user, reader_of
from books.exporting.services import FORMATS, ExportStream, library_export_stream
from books.models import Book
from exogram.reader_slots import (
    EXPORTS_AT_ONCE,
    ReaderBusy,
    reader_slot_release,
    reader_slot_take,
)

BUSY = gettext_lazy(
    "An export of your library is still being prepared or downloaded. Wait for it to "
    "finish, then ask again."
)


def _released_after(chunks: Iterator[bytes], reader_id: int) -> Iterator[bytes]:
    # The slot is the response's: given back when the last chunk is sent or the download
    # is abandoned (the server closes the response, which closes this generator).
    try:
        yield from chunks
    finally:
        reader_slot_release(kind="export", reader_id=reader_id)


def _download(reader: User, chosen: str, book: Book | None = None) -> HttpResponse:
    try:
        reader_slot_take(kind="export", reader_id=reader.pk, limit=EXPORTS_AT_ONCE)
    except ReaderBusy:
        response = HttpResponse(str(BUSY), status=429, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = "10"
        return response
    try:
        export: ExportStream = library_export_stream(reader=reader, format=chosen, book=book)
    except BaseException:
        reader_slot_release(kind="export", reader_id=reader.pk)
        raise
    streamed = StreamingHttpResponse(
        _released_after(export.chunks, reader.pk), content_type=export.content_type
    )
    streamed["Content-Disposition"] = content_disposition_header(True, export.name)
    # A reader's whole library: never kept by a shared cache.
    streamed["Cache-Control"] = "private, no-store"
    return streamed  # type: ignore[return-value]


def _choice_page(request: HttpRequest, *, asked: str, book: Book | None = None) -> HttpResponse:
    """The formats to choose from, for the library or one book; `asked`, a format Exogram
    does not write, is named on the page and answered with a 400."""
    export_url = reverse("book_export", args=[book.code]) if book else reverse("library_export")
    context = {"book": book, "asked": asked, "export_url": export_url}
    return render(request, "books/export.html", context, status=400 if asked else 200)


@require_GET
@login_required
def library_download(request: HttpRequest) -> HttpResponse:
    chosen = request.GET.get("format", "")
    if chosen not in FORMATS:
        return _choice_page(request, asked=chosen)
    return _download(reader_of(request), chosen)


@require_GET
@login_required
def book_download(request: HttpRequest, code: UUID) -> HttpResponse:
    book = get_book_for_user(request, code)
    chosen = request.GET.get("format", "")
    if chosen not in FORMATS:
        return _choice_page(request, asked=chosen, book=book)
    return _download(reader_of(request), chosen, book)
