"""The reader's own edits to their highlights (notes, tags, favourites, delete and undo)
and to their tags (rename, merge, delete).

Each one bumps the library's version (books.library_cache): the cached pages show it at
the next request."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from books.embedding.pipeline import readers_embeddings_changed
from books.importing.hashtags import hashtags_named_anew
from books.library_cache import library_version_bump
from books.models import EMPTY_NOTE, Book, Deletion, Highlight, HighlightMerge, Import, Tag
from books.text import tag_name

# How long a deleted highlight can be brought back from the undo link.
UNDO_WINDOW = timedelta(minutes=30)


def highlight_note_update(*, highlight: Highlight, note: str) -> list[str]:
    """The reader's own words: marked edited, so no re-import ever overwrites them.

    The hashtags the note names anew are tags of the highlight, by the rule an import
    follows (books.importing.hashtags.hashtags_named_anew): those the note held before
    named are not added again (the reader may have deleted or renamed one), and a hashtag
    taken out of the note leaves its tag. Returns the names of the tags the highlight
    gained.

    The note it replaces is the row's, read locked: two saves of one note at once (two
    tabs, the page and the review card) each read the other's words, not the ones the
    reader's page was showing, so a hashtag one save named is not named anew by the other."""
    with transaction.atomic():
        before = (
            Highlight.objects.select_for_update()
            .values_list("note", flat=True)
            .get(pk=highlight.pk)
        )
        highlight.note = note.strip()
        highlight.note_edited = True
        highlight.note_edited_at = timezone.now()
        highlight.refresh_search_text()
        anew = hashtags_named_anew(highlight.note, before=before)
        highlight.save(
            update_fields=["note", "note_edited", "note_edited_at", "search_text", "updated"]
        )
        tagged = highlights_tag(
            reader_id=highlight.reader_id, tagging=[(highlight, name) for name in anew]
        )
    library_version_bump(reader_ids={highlight.reader_id})
    gained = {name for _, name in tagged}
    return [name for name in anew if name in gained]  # in the note's order


def highlights_tag(
    *, reader_id: int, tagging: Iterable[tuple[Highlight, str]]
) -> list[tuple[Highlight, str]]:
    """Tag each highlight with its names (tag names already, books.text.tag_name), making
    the reader's tags it lacks, in a few queries, not one per highlight (an import tags
    thousands); returns each highlight and tag name that was new on it, in the order of the
    highlights' ids and then the names.

    A tag the reader deletes meanwhile (tag_delete, or untagging its last highlight) is
    made again, and the tags are held (FOR KEY SHARE) until the caller's transaction
    ends: a delete waits for it, rather than this transaction failing at its end on a
    link to a tag gone. Taggers of one tag do not wait for each other."""
    tagging = list(tagging)
    if not tagging:
        return []
    names = list(dict.fromkeys(name for _, name in tagging))  # new tags made in this order
    tags: dict[str, int] = {}
    with transaction.atomic():
        missing = names
        while missing:
            Tag.objects.bulk_create(
                [Tag(reader_id=reader_id, name=name) for name in missing], ignore_conflicts=True
            )
            # One that existed may have been deleted since: it is missing, and made again.
            tags.update(_tags_held(reader_id, missing))
            missing = [name for name in missing if name not in tags]
        through = Highlight.tags.through
        existing = set(
            through.objects.filter(highlight_id__in={h.pk for h, _ in tagging}).values_list(
                "highlight_id", "tag_id"
            )
        )
        wanted = {(h.pk, tags[name]) for h, name in tagging} - existing
        through.objects.bulk_create(
            [through(highlight_id=h, tag_id=t) for h, t in wanted], ignore_conflicts=True
        )
    by_pk = {h.pk: h for h, _ in tagging}
    name_of = {pk: name for name, pk in tags.items()}
    return [(by_pk[h], name_of[t]) for h, t in sorted(wanted)]


def _tags_held(reader_id: int, names: list[str]) -> dict[str, int]:
    """The reader's tags of these names (name to id), each locked FOR KEY SHARE: no one
    deletes it until this transaction ends (the lock a link to it takes anyway, taken now
    rather than when a deferred constraint is checked at the end). Django says only FOR
    UPDATE and FOR NO KEY UPDATE, which would make two taggers of one tag wait."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name, id FROM books_tag WHERE reader_id = %s AND name = ANY(%s)"
            " ORDER BY id FOR KEY SHARE",
            [reader_id, names],
        )
        return dict(cursor.fetchall())


def _tag_locked(tag: Tag) -> bool:
    """Lock the tag for its delete, within the caller's transaction: a note save or an
    import tagging with it meanwhile (highlights_tag) finishes first, and its links are
    seen. False when it is gone already."""
    return Tag.objects.select_for_update().filter(pk=tag.pk).exists()


def highlight_tag(*, highlight: Highlight, name: str) -> Tag:
    clean = tag_name(name)
    if not clean:
        raise ValueError("A tag needs a name.")
    tag, _ = Tag.objects.get_or_create(reader_id=highlight.reader_id, name=clean)
    highlight.tags.add(tag)
    library_version_bump(reader_ids={highlight.reader_id})
    return tag


def highlight_untag(*, highlight: Highlight, tag: Tag) -> None:
    with transaction.atomic():
        highlight.tags.remove(tag)
        # A tag that labels nothing any more is not worth keeping in the reader's list:
        # asked once it is locked, so a highlight tagged with it meanwhile keeps it.
        if _tag_locked(tag) and not tag.highlights.exists():
            tag.delete()
    library_version_bump(reader_ids={highlight.reader_id})


def highlight_favourite_toggle(*, highlight: Highlight) -> bool:
    highlight.favourite = not highlight.favourite
    highlight.save(update_fields=["favourite", "updated"])
    library_version_bump(reader_ids={highlight.reader_id})
    return highlight.favourite


def highlight_delete(*, highlight: Highlight) -> None:
    """Soft delete: gone from every read path at once; its dedupe key keeps a re-import
    from bringing it back, and the undo link can restore it for UNDO_WINDOW."""
    highlight.deleted_at = timezone.now()
    highlight.deletion = None  # on its own, not with the book or import it was once deleted with
    highlight.save(update_fields=["deleted_at", "deletion", "updated"])
    readers_embeddings_changed(reader_ids={highlight.reader_id})
    library_version_bump(reader_ids={highlight.reader_id})


def highlight_restore(*, highlight: Highlight) -> bool:
    """Undo a delete made within UNDO_WINDOW. False when it is too late (or not deleted)."""
    if highlight.deleted_at is None or highlight.deleted_at < timezone.now() - UNDO_WINDOW:
        return False
    highlight.deleted_at = None
    highlight.deletion = None
    highlight.save(update_fields=["deleted_at", "deletion", "updated"])
    readers_embeddings_changed(reader_ids={highlight.reader_id})
    library_version_bump(reader_ids={highlight.reader_id})
    return True


@dataclass(frozen=True)
class DeleteCount:
    """What a delete of many highlights takes (or took): passages and standalone notes, and
    how many of the passages carry a note of their own."""

    highlights: int
    notes: int
    with_notes: int

    @property
    def total(self) -> int:
        return self.highlights + self.notes


def delete_count(highlights: QuerySet[Highlight]) -> DeleteCount:
    """What `highlights` count as, passages and standalone notes; an empty note an older
    import kept counts as nothing, as everywhere (books.models.EMPTY_NOTE)."""
    counts = highlights.exclude(EMPTY_NOTE).aggregate(
        notes=Count("pk", filter=Q(kind=Highlight.Kind.NOTE)),
        highlights=Count("pk", filter=~Q(kind=Highlight.Kind.NOTE)),
        with_notes=Count("pk", filter=~Q(kind=Highlight.Kind.NOTE) & ~Q(note="")),
    )
    return DeleteCount(**counts)


def book_deletable(*, book: Book) -> QuerySet[Highlight]:
    """Everything of a book the reader still has: its passages, words and notes."""
    return book.highlights.alive()


def import_deletable(*, the_import: Import) -> QuerySet[Highlight]:
    """What an import added and nobody changed since, so deleting it loses nothing the
    reader did: not a highlight whose note the reader wrote or edited here, nor one a later
    import extended or merged into (it holds more than this file did). A highlight this
    import only merged into (an older one) was not added by it: it stays too. A note the
    file itself brought as edited (an Exogram export's) is not an edit made here since."""
    later_merge = HighlightMerge.objects.filter(highlight=OuterRef("pk")).exclude(
        source_import=the_import
    )
    return (
        Highlight.objects.alive()
        .filter(source_import=the_import, reader_id=the_import.reader_id)
        .exclude(note_edited_at__gte=the_import.started_at)
        .exclude(Exists(later_merge))
    )


def highlights_delete(
    *,
    reader_id: int,
    highlights: QuerySet[Highlight],
    book: Book | None = None,
    the_import: Import | None = None,
) -> tuple[DeleteCount, datetime]:
    """Soft delete many of one reader's highlights at once, as highlight_delete does one:
    gone from every read path (their connections with them), their dedupe keys kept. Returns
    what went and the moment stamped on all of them, which the undo brings back.

    The delete of a whole `book` or of what `the_import` added is recorded as one Deletion,
    which /deleted/ lists and brings back as one."""
    now = timezone.now()
    with transaction.atomic():
        pks = list(highlights.filter(reader_id=reader_id).values_list("pk", flat=True))
        chosen = Highlight.objects.filter(pk__in=pks).select_for_update()
        counts = delete_count(chosen)
        deletion = None
        # Whatever goes belongs to the delete, an empty note an older import kept too (which
        # delete_count leaves out): brought back and removed for good with the rest.
        if pks and (book is not None or the_import is not None):
            deletion = Deletion.objects.create(
                reader_id=reader_id,
                kind=Deletion.Kind.BOOK if book is not None else Deletion.Kind.IMPORT,
                book=book,
                source_import=the_import,
                at=now,
            )
        chosen.update(deleted_at=now, deletion=deletion, updated=now)
    readers_embeddings_changed(reader_ids={reader_id})
    library_version_bump(reader_ids={reader_id})
    return counts, now


def highlights_bring_back(*, reader_id: int, highlights: QuerySet[Highlight]) -> DeleteCount:
    """Bring back deleted highlights of one reader, however long ago deleted (the
    Recently deleted list, a book's or an import's): they read as before the delete.
    Returns what came back, passages and standalone notes apart."""
    now = timezone.now()
    with transaction.atomic():
        chosen = highlights.filter(reader_id=reader_id, deleted_at__isnull=False)
        brought = delete_count(chosen)
        deletions = set(chosen.exclude(deletion=None).values_list("deletion_id", flat=True))
        restored = chosen.update(deleted_at=None, deletion=None, updated=now)
        deletions_forget_empty(reader_id=reader_id, ids=deletions)
    if restored:
        readers_embeddings_changed(reader_ids={reader_id})
        library_version_bump(reader_ids={reader_id})
    return brought


def book_delete(*, book: Book) -> tuple[DeleteCount, datetime]:
    """Delete everything of a book the reader still has, as one Deletion; returns what went
    and the moment stamped on it (book_bring_back's `at`, the undo)."""
    return highlights_delete(
        reader_id=book.reader_id, highlights=book_deletable(book=book), book=book
    )


def import_delete(*, the_import: Import) -> tuple[DeleteCount, datetime]:
    """Delete what an import added and nobody changed since (import_deletable), as one
    Deletion; returns what went and the moment stamped on it."""
    return highlights_delete(
        reader_id=the_import.reader_id,
        highlights=import_deletable(the_import=the_import),
        the_import=the_import,
    )


def deletion_at(*, reader_id: int, at: datetime) -> Deletion | None:
    """The Deletion a book_delete or import_delete at `at` made (None: nothing was left)."""
    return Deletion.objects.filter(reader_id=reader_id, at=at).first()


def highlight_bring_back(*, highlight: Highlight) -> DeleteCount:
    """Bring back one deleted highlight, however long ago deleted, or nothing."""
    return highlights_bring_back(
        reader_id=highlight.reader_id, highlights=Highlight.objects.filter(pk=highlight.pk)
    )


def book_bring_back(*, book: Book, at: datetime | None = None) -> DeleteCount:
    """Every deleted highlight of a book, or only those one delete at `at` took (its undo)."""
    highlights = book.highlights.all()
    if at is not None:
        highlights = highlights.filter(deleted_at=at)
    return highlights_bring_back(reader_id=book.reader_id, highlights=highlights)


def import_deleted_since(*, the_import: Import) -> QuerySet[Highlight]:
    """The highlights an import added that were deleted since (HighlightQuerySet.deleted_since)."""
    return Highlight.objects.deleted_since(the_import)


def import_bring_back(*, the_import: Import) -> DeleteCount:
    """Every highlight an import added that was deleted since, however it was deleted."""
    return highlights_bring_back(
        reader_id=the_import.reader_id, highlights=import_deleted_since(the_import=the_import)
    )


def deletion_bring_back(*, deletion: Deletion) -> DeleteCount:
    """Every highlight one delete of a book or of an import took that is still deleted."""
    return highlights_bring_back(
        reader_id=deletion.reader_id, highlights=Highlight.objects.filter(deletion=deletion)
    )


def deletions_forget_empty(*, reader_id: int, ids: set[int] | None = None) -> None:
    """Remove the reader's Deletions (those of `ids`, or all) that no highlight points at
    any more: every one of them brought back or removed for good."""
    empty = Deletion.objects.filter(reader_id=reader_id).exclude(
        Exists(Highlight.objects.filter(deletion=OuterRef("pk")))
    )
    if ids is not None:
        if not ids:
            return
        empty = empty.filter(pk__in=ids)
    empty.delete()


def tag_merge(*, source: Tag, target: Tag) -> int:
    """Every highlight of `source` carries `target` instead; `source` is gone. Returns how
    many highlights were moved (those already carrying both just lose `source`)."""
    if source.pk == target.pk or source.reader_id != target.reader_id:
        raise ValueError("A tag merges only into another tag of the same reader.")
    with transaction.atomic():
        _tag_locked(source)  # a highlight tagged with it meanwhile moves too
        moving = list(source.highlights.exclude(pk__in=target.highlights.values("pk")))
        moved = len(moving)
        target.highlights.add(*moving)
        source.delete()
    library_version_bump(reader_ids={target.reader_id})
    return moved


def tag_rename(*, tag: Tag, name: str) -> Tag:
    """Rename a tag; renaming it to the name of another of the reader's tags merges the
    two. Returns the tag that now carries the name."""
    clean = tag_name(name)
    if not clean:
        raise ValueError("A tag needs a name.")
    existing = Tag.objects.filter(reader_id=tag.reader_id, name=clean).exclude(pk=tag.pk).first()
    if existing is not None:
        tag_merge(source=tag, target=existing)
        return existing
    tag.name = clean
    tag.save(update_fields=["name"])
    library_version_bump(reader_ids={tag.reader_id})
    return tag


def tag_delete(*, tag: Tag) -> int:
    """Remove a tag from every highlight (the highlights stay); returns how many."""
    with transaction.atomic():
        _tag_locked(tag)  # a highlight tagged with it meanwhile loses it too
        count = tag.highlights.count()
        tag.delete()
    library_version_bump(reader_ids={tag.reader_id})
    return count
