""" "This is the same book as…": from a book's page, the reader chooses the other book (the
likely ones first), reads what the merge will do and which title stays, and merges
(books.importing.same_book). `manage.py merge_books` does the same."""

from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_GET, require_POST

from books.access import get_book_for_user, get_book_or_merged_for_user, reader_of
from books.choices import books_cached
from books.forms import BookMergeForm
from books.importing.same_book import BookMerge, book_merge_preview, books_merge, merge_suggestions
from books.library_cache import LibraryCache
from books.models import EMPTY_NOTE


def _number(count: int) -> str:
    return number_format(count, force_grouping=True)


@require_GET
@login_required
def book_merge_choose(request: HttpRequest, code: UUID) -> HttpResponse:
    the_book = get_book_for_user(request, code)
    reader = reader_of(request)
    # The library page's list, kept once per version of the library (hundreds of books).
    others = [b for b in books_cached(reader, LibraryCache(reader.pk)) if b.pk != the_book.pk]
    context = {
        "book": the_book,
        "others": others,
        "suggestions": merge_suggestions(book=the_book, others=others),
    }
    return render(request, "books/book_merge_choose.html", context)


@require_GET
@login_required
def book_merge_confirm(request: HttpRequest, code: UUID, other: UUID) -> HttpResponse:
    the_book = get_book_for_user(request, code)
    other_book = get_book_for_user(request, other)
    if other_book.pk == the_book.pk:
        return redirect("book_merge_choose", code=the_book.code)
    context = {
        "book": the_book,
        "other": other_book,
        "book_total": the_book.highlights.alive().exclude(EMPTY_NOTE).count(),
        "other_total": other_book.highlights.alive().exclude(EMPTY_NOTE).count(),
        "preview": book_merge_preview(kept=the_book, absorbed=other_book),
    }
    return render(request, "books/book_merge_confirm.html", context)


def _merged_message(absorbed_title: str, kept_title: str, done: BookMerge) -> str:
    said = [
        # Not a title at the end of a sentence: "…Content.”." (and so everywhere a title is said).
        gettext("“%(absorbed)s” is now part of “%(kept)s”, no longer a book of its own.")
        % {"absorbed": absorbed_title, "kept": kept_title},
        ngettext("%(count)s highlight moved.", "%(count)s highlights moved.", done.moved)
        % {"count": _number(done.moved)},
    ]
    if done.joined:
        said.append(
            ngettext(
                "%(count)s passage both books held, word for word or in two versions, is now "
                "one, with the notes and tags of both.",
                "%(count)s passages both books held, word for word or in two versions, are now "
                "one, with the notes and tags of both.",
                done.joined,
            )
            % {"count": _number(done.joined)}
        )
    if done.connections_dropped:
        said.append(
            ngettext(
                "%(count)s connection between the two books went.",
                "%(count)s connections between the two books went.",
                done.connections_dropped,
            )
            % {"count": _number(done.connections_dropped)}
        )
    return " ".join(said)


@require_POST
@login_required
def book_merge(request: HttpRequest, code: UUID) -> HttpResponse:
    # A code of a book merged away leads to the book it became part of: a second POST of
    # the same merge finds the two books already one and says so. Otherwise the three codes
    # must be books as they are: a page shown before one of them was merged into a third
    # book would merge a book the reader never saw.
    the_book = get_book_or_merged_for_user(request, code)
    form = BookMergeForm(request.POST)
    if not form.is_valid():
        messages.error(request, gettext("Choose the other book first."))
        return redirect("book_merge_choose", code=the_book.code)
    other = get_book_or_merged_for_user(request, form.cleaned_data["other"])
    keep = get_book_or_merged_for_user(request, form.cleaned_data["keep"])
    if the_book.pk == other.pk:
        if keep.pk != the_book.pk:
            raise Http404
        messages.info(request, gettext("These two books are already one."))
        return redirect(keep)
    given = (code, form.cleaned_data["other"], form.cleaned_data["keep"])
    if (the_book.code, other.code, keep.code) != given:
        messages.warning(
            request,
            gettext(
                "One of these books was merged into another since the page was shown. "
                "Read again what the merge does before merging."
            ),
        )
        return redirect("book_merge_confirm", code=the_book.code, other=other.code)
    if keep.pk not in (the_book.pk, other.pk):
        raise Http404
    absorbed = other if keep.pk == the_book.pk else the_book
    done = books_merge(kept=keep, absorbed=absorbed)
    if done is None:
        messages.info(request, gettext("These two books are already one."))
        return redirect(keep)
    messages.success(request, _merged_message(absorbed.title, keep.title, done))
    return redirect(keep)
