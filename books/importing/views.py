"""The import page (upload a file), an import's report and its progress."""

import logging
from uuid import UUID

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.models import User
from books.access import get_import_for_user, reader_of
from books.connections.selectors import import_connections_count
from books.deleting import deleted_phrase
from books.forms import ImportForm, TooLargeForm
from books.importing.background import import_queue, imports_in_background
from books.importing.reader_books import AT_CLIPPING_LIMIT, BOOKMARKS, EMPTY_NOTES
from books.importing.selectors import (
    import_behind_embedding,
    import_nothing_else_new,
    import_nothing_new,
    import_nothing_to_keep,
    import_reading,
    import_saving,
    imports_page,
    merges_of,
)
from books.importing.services import (
    IMPORT_FAILED_ON_THE_SERVER,
    ImportFailed,
    clippings_import,
    refusal_record,
)
from books.importing.upload import (
    FORMATS_READ,
    MEGABYTE,
    ImportRejected,
    check_size,
    check_upload,
)
from books.models import EMPTY_NOTE, Highlight, Import
from books.selectors import (
    EmbeddingProgress,
    import_progress,
    import_time_left,
    passages_waiting,
)
from books.services import delete_count, import_deletable, import_deleted_since
from books.wording import translated
from exogram.paging import ListPaginator
from exogram.wording import LIST_JOINED

logger = logging.getLogger(__name__)

# Sent by static/js/upload.js with each file of several, one request a file (so that the
# upload limit is each file's, never the batch's): the answer is no page, and the page
# that follows the last file says every file's outcome.
ONE_OF_SEVERAL = "X-Exogram-One-Of-Several"


@require_http_methods(["GET", "POST"])
@login_required
def import_upload(request: HttpRequest) -> HttpResponse:
    reader = reader_of(request)
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
            uploads = form.cleaned_data["file"]
            one_of_several = ONE_OF_SEVERAL in request.headers
            if len(uploads) > 1 or one_of_several:
                # Several files dropped at once: each is its own import with its own
                # report, all listed under Past imports (a refused one too, alone);
                # each file's outcome is said.
                for upload in uploads:
                    _import_one(request, reader, upload, several=True)
                return HttpResponse(status=204) if one_of_several else redirect("import")
            outcome = _import_one(request, reader, uploads[0], several=False)
            if isinstance(outcome, Import):
                return redirect(outcome)
            if outcome is not None:
                form.add_error("file", outcome)
            else:
                return redirect("import")
    page = imports_page(reader.pk, number=request.GET.get("page"))
    context = {
        "form": form,
        "too_big": too_big,
        "imports": page.object_list,
        "page": page,
        # What js/upload.js never sends, refusing it by name instead (import_too_large).
        "limit_bytes": settings.EXOGRAM_MAX_UPLOAD_MB * MEGABYTE,
        # The formats read, as a refused file is told them (one sentence for both).
        "formats_read": gettext(FORMATS_READ),
    }
    return render(request, "books/import.html", context)


def _import_one(
    request: HttpRequest, reader: User, upload: UploadedFile[bytes], *, several: bool
) -> Import | str | None:
    """Import one uploaded file: its Import (a report to show), the reason it was refused
    (said on the form, or as a message naming the file when `several`), or None when the
    server failed before any Import was recorded (said as a message)."""
    file_name = upload.name or "clippings.txt"
    try:
        # A file past the limit (in a request of several that fits it) is never read.
        check_size(upload.size or 0)
        data = upload.read()
        if imports_in_background(data):
            check_upload(data)
            the_import = import_queue(reader=reader, data=data, file_name=file_name)
            messages.success(
                request, gettext("%(file)s is being imported.") % {"file": the_import.file_name}
            )
            return the_import
        the_import = clippings_import(reader=reader, data=data, file_name=file_name)
    except ImportRejected as rejection:
        return _refuse(request, reader, file_name, str(rejection), several=several)
    except ImportFailed as failure:
        # Its report says why, in the reader's words, and stays in "Past imports".
        failed = failure.the_import
        messages.error(
            request, gettext("%(file)s could not be imported.") % {"file": failed.file_name}
        )
        return failed
    except Exception:
        # Before any Import was recorded (the upload could not be queued): logged for
        # the operator, said to the reader as the server's failure it is.
        logger.exception("an upload of %s for %s failed", file_name, reader)
        messages.error(request, gettext(IMPORT_FAILED_ON_THE_SERVER))
        return None
    messages.success(request, _import_message(the_import))
    return the_import


def _refuse(
    request: HttpRequest, reader: User, file_name: str, reason: str, *, several: bool
) -> str:
    """Keep a refused file in Past imports and say why, by its name when `several`: the
    reason in the reader's language (it is stored in English)."""
    refusal_record(reader=reader, file_name=file_name, reason=reason)
    said = translated(reason)
    if several:
        messages.error(
            request,
            # The reason is a sentence of its own ("The file is empty: …"): after a full stop.
            gettext("%(file)s was not imported. %(reason)s") % {"file": file_name, "reason": said},
        )
    return said


@require_POST
@login_required
def import_too_large(request: HttpRequest) -> HttpResponse:
    """A file that static/js/upload.js did not send, being larger than the upload limit
    (alone or one of several): refused alone, kept in Past imports and said by its name
    with the limit, as the page would refuse it."""
    form = TooLargeForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest(form.errors.as_text(), content_type="text/plain")
    file_name = _plain_file_name(form.cleaned_data["name"])
    try:
        check_size(form.cleaned_data["size"])
    except ImportRejected as rejection:
        _refuse(request, reader_of(request), file_name, str(rejection), several=True)
    return HttpResponse(status=204)


def _plain_file_name(name: str) -> str:
    """A file's name as the browser gave it, as Django keeps an uploaded file's: no
    folders, nothing unprintable."""
    name = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    name = "".join(char for char in name if char.isprintable())
    return name if name not in {"", ".", ".."} else "clippings.txt"


def _import_message(the_import: Import) -> str:
    """What the page says of one file's import, alone or one of several: what it brought,
    or that it brought nothing new, and the entries it could not read."""
    file_name = the_import.file_name
    unread = the_import.unread
    nothing_new = import_nothing_new(the_import) or import_nothing_else_new(the_import)
    if nothing_new and not unread and not the_import.left_out.total:
        # A second submit of the same file (or two tabs at once): it waited for the first
        # and found everything there. A file that changed a note changed the library.
        return gettext("%(file)s was already in your library: nothing new to add.") % {
            "file": file_name
        }
    counts = the_import.counts
    if import_nothing_to_keep(the_import):
        return _nothing_to_keep_message(the_import)
    parts = []
    if nothing_new:
        parts.append(gettext("nothing new"))
    else:
        highlights, notes = counts.get("new_highlights", 0), counts.get("standalone_notes", 0)
        if highlights:
            parts.append(
                ngettext("%(count)s new highlight", "%(count)s new highlights", highlights)
                % {"count": number_format(highlights, force_grouping=True)}
            )
        if notes:
            parts.append(
                ngettext("%(count)s new note", "%(count)s new notes", notes)
                % {"count": number_format(notes, force_grouping=True)}
            )
    left_out = the_import.left_out.total
    if left_out:
        parts.append(
            ngettext(
                "%(count)s entry left out: you deleted it",
                "%(count)s entries left out: you deleted them",
                left_out,
            )
            % {"count": number_format(left_out, force_grouping=True)}
        )
    if unread:
        parts.append(
            ngettext(
                "%(count)s entry could not be read (see the report)",
                "%(count)s entries could not be read (see the report)",
                unread,
            )
            % {"count": number_format(unread, force_grouping=True)}
        )
    if not parts:  # it changed what it holds (a merge, a note, a tag): its report says what
        return gettext("Imported %(file)s.") % {"file": file_name}
    return gettext("Imported %(file)s: %(what)s.") % {"file": file_name, "what": "; ".join(parts)}


def _nothing_to_keep_message(the_import: Import) -> str:
    """A file of bookmarks, empty notes or clipping-limit placeholders alone, on its first
    import or any later one: what it held, not "already in your library"."""
    counts = the_import.counts
    held = [
        (BOOKMARKS, counts.get("bookmarks_skipped", 0)),
        (EMPTY_NOTES, counts.get("empty_notes_skipped", 0)),
        (AT_CLIPPING_LIMIT, sum(counts.get("truncated_by_book", {}).values())),
    ]
    what = LIST_JOINED.join(
        ngettext(*pair, count) % {"count": number_format(count, force_grouping=True)}
        for pair, count in held
        if count
    )
    unread = the_import.unread
    if unread:
        read_not = ngettext(
            "%(count)s entry could not be read (see the report)",
            "%(count)s entries could not be read (see the report)",
            unread,
        ) % {"count": number_format(unread, force_grouping=True)}
        what = f"{what}; {read_not}" if what else read_not
    if not what:
        return gettext("Nothing to import from %(file)s: no highlight or note to keep.") % {
            "file": the_import.file_name
        }
    return gettext("Nothing to import from %(file)s: %(what)s.") % {
        "file": the_import.file_name,
        "what": what,
    }


@require_GET
@login_required
def import_report(request: HttpRequest, code: UUID) -> HttpResponse:
    the_import = get_import_for_user(request, code)
    progress = import_progress(the_import)
    merges = ListPaginator(merges_of(the_import), 25).get_page(request.GET.get("page"))
    context = {
        "import": the_import,
        # Entries the file could not give, and entries kept with a warning.
        "unread": [p for p in the_import.problems if not p.get("kept")],
        "kept_with_warnings": [p for p in the_import.problems if p.get("kept")],
        "under_way": Import.UNDER_WAY,
        "saving": import_saving(the_import),
        "reading": import_reading(the_import),
        "behind_embedding": import_behind_embedding(the_import),
        "progress": progress,
        "eta": import_time_left(the_import, progress, now=timezone.now()),
        **_connections_made(the_import, progress),
        "page": merges,
        "left_out": the_import.left_out,
        "nothing_new": import_nothing_new(the_import),
        "nothing_else_new": import_nothing_else_new(the_import),
        **_import_delete_context(the_import),
    }
    return render(request, "books/import_report.html", context)


def _connections_made(the_import: Import, progress: EmbeddingProgress) -> dict[str, object]:
    """How many connections the import made, once its highlights are embedded (None
    before); with none, whether passages of the library still wait, which may connect."""
    if not progress.done:
        return {"new_connections": None}
    made = import_connections_count(the_import)
    waiting = passages_waiting(the_import.reader_id) if made == 0 else 0
    return {"new_connections": made, "library_waiting": waiting}


def _import_delete_context(the_import: Import) -> dict[str, object]:
    """What "Delete what this import added" takes, what it leaves (changed since), and
    what of this import is deleted, to bring back."""
    deletable = delete_count(import_deletable(the_import=the_import))
    added = Highlight.objects.filter(source_import=the_import)
    # Notes it attached beyond those its own highlights carry went to highlights already in
    # the library (an older copy's note kept beside the newer one): the delete leaves them.
    noted_here = added.exclude(kind=Highlight.Kind.NOTE).exclude(note="").count()
    return {
        "import_deletable": deletable,
        "import_delete_phrase": deleted_phrase(deletable),
        "import_kept": added.alive().exclude(EMPTY_NOTE).count() - deletable.total,
        "import_deleted": (deleted := delete_count(import_deleted_since(the_import=the_import))),
        "import_deleted_phrase": deleted_phrase(deleted),
        "import_noted_older": the_import.counts.get("notes_attached", 0) > noted_here,
    }


@require_GET
@login_required
def import_progress_partial(request: HttpRequest, code: UUID) -> HttpResponse:
    the_import = get_import_for_user(request, code)
    if request.GET.get("under_way") and the_import.status not in Import.UNDER_WAY:
        # The background import finished: reload the report to show what it did.
        return HttpResponse(headers={"HX-Refresh": "true"})
    if the_import.status in Import.UNDER_WAY:
        context: dict[str, object] = {
            "import": the_import,
            "saving": import_saving(the_import),
            "reading": import_reading(the_import),
            "behind_embedding": import_behind_embedding(the_import),
            "on_home": bool(request.GET.get("home")),
        }
        return render(request, "books/_import_stage.html", context)
    progress = import_progress(the_import)
    context = {
        "progress": progress,
        "eta": import_time_left(the_import, progress, now=timezone.now()),
        "poll_url": request.path,
        # The header's phrase rides along (hx-swap-oob): the page says one thing.
        "import": the_import,
        "oob": True,
        **_connections_made(the_import, progress),
    }
    return render(request, "books/_progress.html", context)
