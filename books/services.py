"""The reader's own edits to their highlights (notes, tags, favourites, delete and undo)
and to their tags (rename, merge, delete).

Each one bumps the library's version (books.library_cache): the cached pages show it at
the next request."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from books.embedding.pipeline import readers_embeddings_changed
from books.library_cache import library_version_bump
from books.models import Highlight, Tag

# How long a deleted highlight can be brought back from the undo link.
UNDO_WINDOW = timedelta(minutes=30)
TAG_MAX_LENGTH = 64


def highlight_note_update(*, highlight: Highlight, note: str) -> None:
    """The reader's own words: marked edited, so no re-import ever overwrites them."""
    highlight.note = note.strip()
    highlight.note_edited = True
    highlight.refresh_search_text()
    highlight.save(update_fields=["note", "note_edited", "search_text", "updated"])
    library_version_bump(reader_ids={highlight.reader_id})


def highlight_tag(*, highlight: Highlight, name: str) -> Tag:
    clean = _clean_tag_name(name)
    if not clean:
        raise ValueError("A tag needs a name.")
    tag, _ = Tag.objects.get_or_create(reader_id=highlight.reader_id, name=clean)
    highlight.tags.add(tag)
    library_version_bump(reader_ids={highlight.reader_id})
    return tag


def highlight_untag(*, highlight: Highlight, tag: Tag) -> None:
    highlight.tags.remove(tag)
    library_version_bump(reader_ids={highlight.reader_id})
    # A tag that labels nothing any more is not worth keeping in the reader's list.
    if not tag.highlights.exists():
        tag.delete()


def highlight_favourite_toggle(*, highlight: Highlight) -> bool:
    highlight.favourite = not highlight.favourite
    highlight.save(update_fields=["favourite", "updated"])
    library_version_bump(reader_ids={highlight.reader_id})
    return highlight.favourite


def highlight_delete(*, highlight: Highlight) -> None:
    """Soft delete: gone from every read path at once; its dedupe key keeps a re-import
    from bringing it back, and the undo link can restore it for UNDO_WINDOW."""
    highlight.deleted_at = timezone.now()
    highlight.save(update_fields=["deleted_at", "updated"])
    readers_embeddings_changed(reader_ids={highlight.reader_id})
    library_version_bump(reader_ids={highlight.reader_id})


def highlight_restore(*, highlight: Highlight) -> bool:
    """Undo a delete made within UNDO_WINDOW. False when it is too late (or not deleted)."""
    if highlight.deleted_at is None or highlight.deleted_at < timezone.now() - UNDO_WINDOW:
        return False
    highlight.deleted_at = None
    highlight.save(update_fields=["deleted_at", "updated"])
    readers_embeddings_changed(reader_ids={highlight.reader_id})
    library_version_bump(reader_ids={highlight.reader_id})
    return True


def _clean_tag_name(name: str) -> str:
    return " ".join(name.split())[:TAG_MAX_LENGTH].casefold()


def tag_merge(*, source: Tag, target: Tag) -> int:
    """Every highlight of `source` carries `target` instead; `source` is gone. Returns how
    many highlights were moved (those already carrying both just lose `source`)."""
    if source.pk == target.pk or source.reader_id != target.reader_id:
        raise ValueError("A tag merges only into another tag of the same reader.")
    with transaction.atomic():
        moving = list(source.highlights.exclude(pk__in=target.highlights.values("pk")))
        moved = len(moving)
        target.highlights.add(*moving)
        source.delete()
    library_version_bump(reader_ids={target.reader_id})
    return moved


def tag_rename(*, tag: Tag, name: str) -> Tag:
    """Rename a tag; renaming it to the name of another of the reader's tags merges the
    two. Returns the tag that now carries the name."""
    clean = _clean_tag_name(name)
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
    count = tag.highlights.count()
    tag.delete()
    library_version_bump(reader_ids={tag.reader_id})
    return count
