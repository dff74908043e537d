"""Reads about imports that pages reuse."""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.paginator import Page
from django.db.models import Case, Count, Min, Q, QuerySet, Value, When

from books.embedding.pipeline import embedding_turn_under_way
from books.models import (
    Highlight,
    HighlightMerge,
    Import,
    ImportSaving,
    percent_step,
    percent_under_way,
)
from exogram.paging import ListPaginator


def merges_of(the_import: Import) -> QuerySet[HighlightMerge]:
    """What an import merged into which highlight, in the order it merged them.

    Only highlights the reader still has: a deleted one has no page to show it on.
    """
    return (
        HighlightMerge.objects.filter(source_import=the_import, highlight__deleted_at__isnull=True)
        .select_related("highlight", "highlight__book")
        .order_by("id")
    )


def import_saving(the_import: Import | None) -> ImportSaving | None:
    """How far a saving import has got, for the page that shows it under way; None when
    it is not saving, or no count was written (an import saved before counts were)."""
    if the_import is None or the_import.status != Import.Status.SAVING:
        return None
    return ImportSaving.objects.filter(the_import=the_import).first()


def import_behind_embedding(the_import: Import | None) -> bool:
    """Whether a queued import waits for a worker to finish its turn of embedding: what the
    page tells its reader instead of "shortly" (an upload waited six minutes behind two
    turns before turns were bounded in time, EXOGRAM_EMBEDDING_TURN_SECONDS).

    Only with a broker that hands out the imports' queue first (Redis, the file broker);
    RabbitMQ picks among the queues at random, so an upload may wait for a few turns
    (exogram.queues), and the page then says nothing about turns."""
    if the_import is None or the_import.status != Import.Status.QUEUED:
        return False
    if settings.CELERY_BROKER_URL.startswith(("amqp", "pyamqp")):
        return False
    return embedding_turn_under_way()


@dataclass(frozen=True)
class Reading:
    """How far the reading of a file in pieces has got (background.ReadingCount)."""

    done: int
    size: int
    entries: int

    @property
    def percent(self) -> int:
        return percent_under_way(self.done, self.size)  # screened after the last piece

    @property
    def percent_step(self) -> int:
        return percent_step(self.percent)


def import_reading(the_import: Import | None) -> Reading | None:
    """How far a reading import has got, for the page that shows it under way; None when
    it is not reading, or no count was written (a format parsed whole, the first piece)."""
    if the_import is None or the_import.status != Import.Status.READING:
        return None
    counts = the_import.counts
    if "reading_size" not in counts:
        return None
    return Reading(
        done=counts["reading_done"], size=counts["reading_size"], entries=counts["reading_entries"]
    )


# What an import adds or changes, by its counts; none of them: the file held nothing new.
_NEW_OR_CHANGED = (
    "books_changed", "new_books", "new_highlights", "extended_merged", "notes_attached",
    "standalone_notes", "tags_added", "favourites", "deleted_kept", "removed_remembered",
    "moved_deleted_on_device", "untitled_moved", "untitled_joined",
)  # fmt: skip


def _added_nothing(the_import: Import) -> bool:
    counts = the_import.counts
    return (
        the_import.status == Import.Status.DONE
        and "new_highlights" in counts
        and not any(counts.get(name) for name in _NEW_OR_CHANGED)
    )


def import_nothing_new(the_import: Import) -> bool:
    """Whether a finished import added, merged and changed nothing and left nothing out: a
    file imported again, everything in it already in the library. A file of bookmarks and
    empty notes alone found nothing there either (import_nothing_to_keep)."""
    return (
        _added_nothing(the_import)
        and not the_import.left_out.total
        and the_import.counts.get("duplicates_skipped", 0) > 0
    )


def import_nothing_to_keep(the_import: Import) -> bool:
    """Whether a finished import found nothing to keep in its file and nothing of it in the
    library: bookmarks, empty notes and clipping-limit placeholders alone. "Already in your
    library" was untrue of a first import of such a file."""
    return (
        _added_nothing(the_import)
        and not the_import.left_out.total
        and not the_import.counts.get("duplicates_skipped", 0)
    )


def import_nothing_else_new(the_import: Import) -> bool:
    """Whether a finished import left entries out because the reader had deleted them
    (Import.left_out) and found every other entry already in the library. Entries left
    out are not in the library: "everything in it is already there" was untrue of them."""
    return (
        _added_nothing(the_import)
        and the_import.left_out.total > 0
        and the_import.counts.get("duplicates_skipped", 0) > 0
    )


# Past imports on /import/, a page at a time: a re-upload of 26 files once pushed every
# import that had added highlights off a list of the latest 20, with no way back to them.
IMPORTS_PAGE_SIZE = 20


def imports_listed(reader_id: int, *, limit: int = IMPORTS_PAGE_SIZE) -> list[Import]:
    """The reader's latest imports, each with `book_titles` (imports_with_book_titles)."""
    return imports_with_book_titles(list(Import.objects.filter(reader_id=reader_id)[:limit]))


def imports_page(reader_id: int, *, number: str | int | None) -> Page[Import]:
    """One page of the reader's imports, the latest first, each with `book_titles`; a
    page past the last is the last, one below the first the first (ListPaginator)."""
    # The pk breaks ties, so that no import is on two pages or none.
    imports = Import.objects.filter(reader_id=reader_id).order_by("-started_at", "-pk")
    page = ListPaginator(imports, IMPORTS_PAGE_SIZE).get_page(number)
    page.object_list = imports_with_book_titles(list(page.object_list))
    return page


def imports_with_book_titles(imports: list[Import]) -> list[Import]:
    """Each import with `book_titles` and `book_count`: the books it changed (added a
    highlight or a note to, or merged one into), the first few by title; when it changed
    none (the same file again), the books the file held. An import kept before either was
    recorded: the books of the highlights it added, read in one query for the page."""
    older = [i.pk for i in imports if "book_titles" not in i.counts]
    found: dict[int, set[str]] = {}
    if older:
        rows = (
            Highlight.objects.filter(source_import_id__in=older)
            .values_list("source_import_id", "book__title")
            .distinct()
        )
        for import_id, title in rows:
            found.setdefault(import_id, set()).add(title)
    for the_import in imports:
        counts = the_import.counts
        titles = counts.get("changed_titles")
        if titles:
            count = counts.get("books_changed", len(titles))
        elif "book_titles" in counts:
            titles = counts["book_titles"]
            count = counts.get("books_touched", len(titles))
        else:
            held = found.get(the_import.pk, set())
            titles = sorted(held, key=str.casefold)[: Import.TITLES_KEPT]
            count = len(held)
        the_import.book_titles = titles  # type: ignore[attr-defined]
        the_import.book_count = max(count, len(titles))  # type: ignore[attr-defined]
    return imports


@dataclass(frozen=True)
class ImportsUnderWay:
    """A reader's background imports not done yet: the one the home page follows (one being
    read or saved before one waiting, the oldest first), and how many of each there are."""

    followed: Import | None
    working: int
    waiting: int

    @property
    def total(self) -> int:
        return self.working + self.waiting


def imports_under_way(reader_id: int) -> ImportsUnderWay:
    # Four Kobo files queued at once: the home page named only one of them.
    under_way = Import.objects.filter(reader_id=reader_id, status__in=Import.UNDER_WAY)
    waiting = Q(status=Import.Status.QUEUED)
    counts = under_way.aggregate(waiting=Count("pk", filter=waiting), all=Count("pk"))
    followed = under_way.order_by(
        Case(When(waiting, then=Value(1)), default=Value(0)), "started_at", "pk"
    ).first()
    return ImportsUnderWay(
        followed=followed, working=counts["all"] - counts["waiting"], waiting=counts["waiting"]
    )


@dataclass(frozen=True)
class ImportsWaiting:
    """Every reader's background imports not done, for an operator (/status/)."""

    waiting: int
    working: int
    oldest_waiting: datetime | None


def imports_waiting_everyone() -> ImportsWaiting:
    waiting = Q(status=Import.Status.QUEUED)
    counts = Import.objects.filter(status__in=Import.UNDER_WAY).aggregate(
        waiting=Count("pk", filter=waiting),
        all=Count("pk"),
        oldest=Min("started_at", filter=waiting),
    )
    return ImportsWaiting(
        waiting=counts["waiting"],
        working=counts["all"] - counts["waiting"],
        oldest_waiting=counts["oldest"],
    )
