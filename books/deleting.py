"""Deleting a whole book or what an import added, bringing deleted highlights back, and
the list of them (kept EXOGRAM_DELETED_DAYS, then removed for good: books.purging).

A delete is the highlight delete's soft delete, many rows at once (books.services): the
rows stay, with their dedupe keys, so a re-import does not bring them back, and the reader
can from the Recently deleted list, a book's page or the import's report."""

from datetime import datetime
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_GET, require_POST

from books import services
from books.access import (
    get_book_for_user,
    get_deleted_or_alive_highlight_for_user,
    get_deletion_for_user,
    get_import_for_user,
    reader_of,
)
from books.deleted_list import deleted_groups
from books.purging import deleted_kept_for
from books.services import DeleteCount


def _number(count: int) -> str:
    """1,049 in English, 1.049 in Spanish: as `intcomma` writes it on the pages."""
    return number_format(count, force_grouping=True)


def deleted_phrase(counts: DeleteCount) -> str:
    """What a delete takes, in the reader's language: "29 highlights and the notes on 6 of
    them", "1 highlight and its note", "3 highlights and 2 standalone notes".

    A note on a highlight goes with it, so it is said as part of it, never as a count of
    "notes" beside the highlights (which read as though the notes stayed). Standalone notes
    (a note typed on no passage) are rows of their own, and said only when there are some."""
    went = ngettext("%(count)s highlight", "%(count)s highlights", counts.highlights) % {
        "count": _number(counts.highlights)
    }
    if counts.with_notes and counts.with_notes == counts.highlights:
        went = ngettext(
            "%(highlights)s and its note", "%(highlights)s and their notes", counts.highlights
        ) % {"highlights": went}
    elif counts.with_notes:
        went = ngettext(
            "%(highlights)s and the note on %(count)s of them",
            "%(highlights)s and the notes on %(count)s of them",
            counts.with_notes,
        ) % {"highlights": went, "count": _number(counts.with_notes)}
    if not counts.notes:
        return went
    notes = ngettext("%(count)s standalone note", "%(count)s standalone notes", counts.notes) % {
        "count": _number(counts.notes)
    }
    if not counts.highlights:
        return notes
    if counts.with_notes:
        # "29 highlights and the notes on 6 of them, and 2 standalone notes": the comma keeps
        # the standalone notes from reading as more notes on the highlights.
        return gettext("%(highlights)s, and %(notes)s") % {"highlights": went, "notes": notes}
    return gettext("%(highlights)s and %(notes)s") % {"highlights": went, "notes": notes}


def _brought_back(counts: DeleteCount) -> str:
    """ "Brought back 26 highlights and 1 standalone note.": what came back, as a delete says
    what went (deleted_phrase)."""
    return gettext("Brought back %(what)s.") % {"what": deleted_phrase(counts)}


@require_POST
@login_required
def book_delete(request: HttpRequest, code: UUID) -> HttpResponse:
    the_book = get_book_for_user(request, code)
    counts, at = services.book_delete(book=the_book)
    # The undo form on the next page reads this (templates/_undo.html): it brings back
    # what this delete took, not what was deleted before it, and is the one message that
    # says what went (a second one beside it said the same without the undo).
    request.session["undo_book"] = {
        "code": str(the_book.code),
        "at": at.isoformat(),
        "title": the_book.title,
        "went": deleted_phrase(counts),
    }
    return redirect("library")


@require_POST
@login_required
def book_bring_back(request: HttpRequest, code: UUID) -> HttpResponse:
    """Every deleted highlight of the book, or those of one delete (`at`, the undo)."""
    the_book = get_book_for_user(request, code)
    at = request.POST.get("at", "")
    try:
        when = datetime.fromisoformat(at) if at else None
    except ValueError:
        restored = DeleteCount(highlights=0, notes=0, with_notes=0)
    else:
        restored = services.book_bring_back(book=the_book, at=when)
    messages.success(request, _brought_back(restored))
    if request.POST.get("next") == "deleted":
        return redirect("deleted")
    return redirect(the_book)


@require_POST
@login_required
def highlight_bring_back(request: HttpRequest, code: UUID) -> HttpResponse:
    the_highlight = get_deleted_or_alive_highlight_for_user(request, code)
    restored = services.highlight_bring_back(highlight=the_highlight)
    messages.success(request, _brought_back(restored))
    if request.POST.get("next") == "deleted":
        return redirect("deleted")
    return redirect(the_highlight)


@require_POST
@login_required
def import_delete(request: HttpRequest, code: UUID) -> HttpResponse:
    the_import = get_import_for_user(request, code)
    counts, _at = services.import_delete(the_import=the_import)
    messages.success(
        request,
        gettext("Deleted what this import added: %(went)s.") % {"went": deleted_phrase(counts)},
    )
    return redirect("import_report", code=the_import.code)


@require_POST
@login_required
def import_bring_back(request: HttpRequest, code: UUID) -> HttpResponse:
    """Every deleted highlight this import added, however it was deleted."""
    the_import = get_import_for_user(request, code)
    restored = services.import_bring_back(the_import=the_import)
    messages.success(request, _brought_back(restored))
    return redirect("import_report", code=the_import.code)


@require_POST
@login_required
def deletion_bring_back(request: HttpRequest, code: UUID) -> HttpResponse:
    """Every highlight one delete of a book or of an import took that is still deleted
    (Recently deleted's "Bring back all")."""
    deletion = get_deletion_for_user(request, code)
    restored = services.deletion_bring_back(deletion=deletion)
    messages.success(request, _brought_back(restored))
    return redirect("deleted")


@require_GET
@login_required
def deleted(request: HttpRequest) -> HttpResponse:
    """The reader's deletes, the latest first, each to bring back whole or highlight by
    highlight, and until when each is kept before the daily purge removes it
    (books.purging)."""
    kept_for = deleted_kept_for()
    page, groups = deleted_groups(
        reader=reader_of(request), page_number=request.GET.get("page"), kept_for=kept_for
    )
    context = {"page": page, "groups": groups, "kept_days": kept_for.days if kept_for else 0}
    return render(request, "books/deleted.html", context)
