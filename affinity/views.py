from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods

from affinity.forms import KEEP_ALL, SharingForm
from affinity.models import SharingProfile
from affinity.selectors import (
    Standing,
    closeness_of,
    distance_between,
    kindred_readers,
    other_sharing_readers,
    public_profile,
    similarity_spread,
    standing_for,
    with_closeness,
)
from affinity.services import (
    MIN_HIGHLIGHTS,
    centroid_catch_up,
    sharing_profile_for,
    sharing_update,
)
from books.access import reader_of
from books.models import Book
from books.selectors import library_counts

KINDRED_SHOWN = 10
# The sharing page lists this many books or fewer unfolded.
BOOKS_LISTED_OPEN = 12


def _get_sharing_profile_for_sharing_reader(request: HttpRequest, code: UUID) -> SharingProfile:
    """A discoverable reader's profile; 404 for anything else, so a code reveals nothing
    about a reader who does not share (or no longer does)."""
    return get_object_or_404(
        SharingProfile.objects.select_related("reader"), code=code, discoverable=True
    )


def _not_sharing(request: HttpRequest) -> HttpResponse:
    messages.info(
        request,
        gettext("Kindred readers are for readers who share their reading. Turn sharing on first."),
    )
    return redirect("sharing_settings")


@require_http_methods(["GET", "POST"])
@login_required
def sharing_settings(request: HttpRequest) -> HttpResponse:
    reader = reader_of(request)
    profile = sharing_profile_for(reader)
    if request.method == "POST":
        form = SharingForm(request.POST, reader=reader)
        if form.is_valid():
            discoverable: bool = form.cleaned_data["discoverable"]
            try:
                sharing_update(
                    reader=reader,
                    discoverable=discoverable,
                    display_name=form.cleaned_data["display_name"],
                    excluded_books=list(form.cleaned_data["excluded_books"]),
                )
            except IntegrityError:
                # Another reader took the same name between the form's check and the save.
                form.add_error(
                    "display_name", gettext("Another reader shares under this name already.")
                )
            else:
                if form.keep:
                    # Ticked all or none from the books' list: the reader stays on the page
                    # to see the list as it now is.
                    messages.success(
                        request,
                        gettext("All your books are kept to yourself now.")
                        if form.keep == KEEP_ALL
                        else gettext("No book is kept to yourself now."),
                    )
                    return redirect("sharing_settings")
                if discoverable:
                    messages.success(
                        request,
                        gettext("You share your reading as “%(name)s”.")
                        % {"name": form.cleaned_data["display_name"]},
                    )
                    return redirect("kindred")
                messages.success(
                    request, gettext("Sharing is off: no other reader sees you or your reading.")
                )
                return redirect("sharing_settings")
    else:
        form = SharingForm(
            reader=reader,
            initial={
                "discoverable": profile.discoverable,
                "display_name": profile.display_name,
                "excluded_books": list(profile.excluded_books.values_list("pk", flat=True)),
            },
        )
    books = Book.objects.filter(reader=reader).count()
    context = {
        "form": form,
        "profile": profile,
        "books": books,
        "kept": profile.excluded_books.count(),
        # A short list is open at once; a long one (a whole Kindle: hundreds of books)
        # folds, so the page's Save is not thousands of pixels down.
        "books_open": books <= BOOKS_LISTED_OPEN or bool(form.errors.get("excluded_books")),
    }
    return render(request, "affinity/sharing.html", context)


@require_GET
@login_required
def kindred(request: HttpRequest) -> HttpResponse:
    reader = reader_of(request)
    standing: Standing = standing_for(reader)
    if not standing.sharing:
        return _not_sharing(request)
    embedded = 0
    if not standing.ready:
        # Counted from the highlights themselves, not from the centroid, which the
        # background refresh rewrites a while after the vectors land (it said "0 so far"
        # with every highlight embedded); with enough, the centroid is computed now.
        embedded = centroid_catch_up(reader=reader)
        standing = standing_for(reader)
    found = (
        with_closeness(kindred_readers(standing, limit=KINDRED_SHOWN), standing)
        if standing.ready
        else []
    )
    context = {
        "standing": standing,
        "min_highlights": MIN_HIGHLIGHTS,
        "kindred": found,
        # With none to list, whether others share: "No other reader shares" was said while
        # one did, their place not yet worked out.
        "others_sharing": other_sharing_readers(reader.pk) if standing.ready and not found else 0,
        # Why the list may be empty: highlights still waiting for their vectors.
        "counts": None if standing.ready else library_counts(reader),
        "embedded": embedded,
        "missing": max(0, MIN_HIGHLIGHTS - embedded),
    }
    return render(request, "affinity/kindred.html", context)


@require_GET
@login_required
def reader_profile(request: HttpRequest, code: UUID) -> HttpResponse:
    standing = standing_for(reader_of(request))
    if not standing.sharing:
        return _not_sharing(request)
    other = _get_sharing_profile_for_sharing_reader(request, code)
    is_me = other.reader_id == standing.profile.reader_id
    distance = None if is_me else distance_between(standing, other)
    context = {
        "public": public_profile(other),
        "is_me": is_me,
        "closer_than": None
        if distance is None or standing.centroid is None
        else closeness_of(1.0 - distance, similarity_spread(standing.centroid.embedding_model)),
    }
    return render(request, "affinity/profile.html", context)
