"""What one import changes as it goes, and what it reports.

`ImportWork` gathers, step by step, the rows the import will write (new, changed, kept
deleted), the entry each new highlight was made from and the entries each highlight took
in (`Version`), and what the later steps read; `ImportReport` is the counts and problems
its Import keeps. Shared by the import's steps (`services`) and its rule for versions of
one passage (`versions`).
"""

from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from books.importing.merging import How
from books.importing.purged import Purged
from books.importing.rich import RichClipping
from books.models import Highlight


@dataclass
class ImportReport:
    # The books the file holds something of to keep, changed or not…
    books_touched: int = 0
    # …and those it added a highlight or a note to, or changed one in: what the report
    # shows (a file imported again touches every book and changes none). An Import saved
    # before this count was kept has none: its report shows the books touched instead.
    books_changed: int = 0
    # Of those, the books the import added to the library. An Import saved before this
    # count was kept has none in its counts: its report leaves the line out, not a wrong 0.
    new_books: int = 0
    new_highlights: int = 0
    duplicates_skipped: int = 0
    extended_merged: int = 0
    notes_attached: int = 0
    standalone_notes: int = 0
    bookmarks_skipped: int = 0
    # Notes with no text (a Kindle's note box closed empty): left out, as bookmarks are.
    empty_notes_skipped: int = 0
    deleted_skipped: int = 0
    # Entries of highlights the reader deleted and the purge removed for good
    # (books.importing.purged): left out, as a deleted one is.
    already_deleted: int = 0
    # Entries of highlights the reader deleted on the device (books.importing.device_deleted),
    # from an older copy of the file: left out…
    deleted_on_device: int = 0
    # …and highlights an earlier import brought that this file says were deleted on the
    # device: moved to Recently deleted.
    moved_deleted_on_device: int = 0
    # An Exogram export's record of what its reader deleted: the highlights kept deleted
    # here (in Recently deleted, with their date), and the traces of those removed for good
    # now remembered here. An Import saved before these counts were kept has none.
    deleted_kept: int = 0
    removed_remembered: int = 0
    # Highlights an older Exogram put in "Untitled" that this file places in their books
    # (books.importing.untitled): moved there, or made one with the highlight the book held
    # already; and whether "Untitled", left empty, went (1). An Import saved before these
    # counts were kept has none.
    untitled_moved: int = 0
    untitled_joined: int = 0
    untitled_removed: int = 0
    truncated_by_book: dict[str, int] = field(default_factory=dict)
    # Books the file named but brought nothing of (bookmarks, clipping-limit placeholders):
    # no Book is made for them, and the report says why.
    books_with_nothing: dict[str, str] = field(default_factory=dict)
    # The first few titles of the books touched, in title order: what Past imports shows
    # beside the file's name (every KOReader sidecar is called "metadata.epub.lua")…
    book_titles: list[str] = field(default_factory=list)
    # …unless it changed some (`books_changed`): then the first few of those. Every import of
    # a growing My Clippings.txt touches the same books: their first three titles said
    # nothing of what each import brought.
    changed_titles: list[str] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Version:
    """An entry of the file as it was, kept for the record of what merged into what."""

    text: str
    where: str
    added_at: datetime | None


@dataclass
class ImportWork:
    """What one import changes: rows to insert, rows to update, books it touched."""

    # by id(): new highlights have no primary key yet, and a merge can take one out again
    created: dict[int, Highlight] = field(default_factory=dict)
    changed: dict[int, Highlight] = field(default_factory=dict)  # existing rows, by pk
    touched: set[int] = field(default_factory=set)
    truncated: Counter[str] = field(default_factory=Counter)
    # The entry each new highlight was made from, and the entries merged into a highlight.
    origins: dict[int, Version] = field(default_factory=dict)
    merges: dict[int, list[tuple[How, Version]]] = field(default_factory=dict)
    # Existing rows whose words changed: their vectors go (versions.VECTORS_RESET).
    reembed: set[int] = field(default_factory=set)
    # What is known of the highlights of these books that were removed for good.
    purged: Purged | None = None
    # Stored highlights that an entry of the file was found in (by id()).
    covered: set[int] = field(default_factory=set)
    # The stored, alive highlight each entry's words were found in (id() of the entry → the
    # highlight's pk): where what the entry carries goes (books.importing.enrich), though
    # its place differs (Readwise writes a Kindle highlight's first location only).
    held_by: dict[int, int] = field(default_factory=dict)
    # An Exogram export's highlights its reader deleted, and the rows they become.
    deleted_entries: list[RichClipping] = field(default_factory=list)
    kept_deleted: list[Highlight] = field(default_factory=list)
    # Each note entry that arrived or changed a note, the highlight holding it (the one it
    # was attached to, or the note of its own) and the note that one held before: its new
    # hashtags are tags of that highlight (books.importing.enrich).
    notes_brought: list[tuple[Highlight, str, str]] = field(default_factory=list)
    # Books that gained highlights from "Untitled" (books.importing.untitled), which the
    # import changed, and those highlights with a vector: to be connected in their books.
    moved_in: set[int] = field(default_factory=set)
    embed_again: list[int] = field(default_factory=list)

    def change(self, highlight: Highlight) -> None:
        if highlight.pk:
            self.changed[highlight.pk] = highlight

    def holds_an_entry(self, highlight: Highlight) -> bool:
        """Whether a highlight is one of the file's own: new, grown or found by an entry."""
        return not highlight.pk or highlight.pk in self.changed or id(highlight) in self.covered
