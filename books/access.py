"""Ownership lookups: every view finds a reader's row through one of these.

Each one 404s for a row of another reader (or none), the same answer as for a code that
never existed, so a code reveals nothing about a library that is not yours. Views never
`Model.objects.get` user data themselves; tests/test_privacy.py walks every URL.
"""

from uuid import UUID

from django.http import HttpRequest
from django.shortcuts import get_object_or_404

from accounts.models import User
from books.models import Book, BookAlias, Deletion, Highlight, Import, LibraryMap, Tag


def reader_of(request: HttpRequest) -> User:
    """The signed-in reader (views behind `login_required`)."""
    assert isinstance(request.user, User)
    return request.user


def get_book_for_user(request: HttpRequest, code: UUID) -> Book:
    return get_object_or_404(Book, code=code, reader=reader_of(request))


def get_book_or_merged_for_user(request: HttpRequest, code: UUID) -> Book:
    """One of the reader's books, or the book a book of theirs was merged into (its old
    code, from a second POST of the merge or an old link); a 404 for anything else."""
    book = Book.objects.filter(code=code, reader=reader_of(request)).first()
    if book is not None:
        return book
    alias = get_object_or_404(
        BookAlias.objects.select_related("book"), code=code, reader=reader_of(request)
    )
    return alias.book


def owns_book(reader: User, code: UUID) -> bool:
    """Whether the code names one of the reader's books (a filter shown as chosen)."""
    return Book.objects.filter(reader=reader, code=code).exists()


def optional_book_for_user(request: HttpRequest, parameter: str) -> Book | None:
    """The reader's own book named by a query parameter, or None when there is none; a
    code of another reader's book is a 404, as everywhere."""
    code = request.GET.get(parameter, "")
    try:
        return get_book_for_user(request, UUID(code)) if code else None
    except ValueError:
        return None


def get_highlight_for_user(request: HttpRequest, code: UUID) -> Highlight:
    """One of the reader's highlights that is not deleted, with its book."""
    return get_object_or_404(
        Highlight.objects.alive().select_related("book"), code=code, reader=reader_of(request)
    )


def get_deleted_or_alive_highlight_for_user(request: HttpRequest, code: UUID) -> Highlight:
    """One of the reader's highlights, deleted or not (the undo of a delete looks for it)."""
    return get_object_or_404(
        Highlight.objects.select_related("book"), code=code, reader=reader_of(request)
    )


def get_deletion_for_user(request: HttpRequest, code: UUID) -> Deletion:
    """One delete of a whole book or of what an import added (Recently deleted's groups)."""
    return get_object_or_404(Deletion, code=code, reader=reader_of(request))


def get_import_for_user(request: HttpRequest, code: UUID) -> Import:
    return get_object_or_404(Import, code=code, reader=reader_of(request))


def get_tag_for_user(request: HttpRequest, name: str) -> Tag:
    return get_object_or_404(Tag, name=name, reader=reader_of(request))


def get_tag_by_id_for_user(request: HttpRequest, tag_id: int) -> Tag:
    return get_object_or_404(Tag, pk=tag_id, reader=reader_of(request))


def get_library_map_for_user(request: HttpRequest) -> LibraryMap:
    return get_object_or_404(LibraryMap, reader=reader_of(request))
