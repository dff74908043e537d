"""What richer formats bring beyond a My Clippings entry, applied after the import wrote
the highlights: a note on the highlight itself, favourites, tags, chapter and colour.

Apart from the merge on purpose: the merge decides which highlight each clipping became;
this finds that highlight again by the same dedupe key and adds to it. Within the
import's transaction, so an import is still all or nothing. The reader's own work wins:
a note edited here is never replaced, a favourite never unset, a tag never removed. A
note from the file takes the place of the one held only when it is newer, and is kept
beside it when no date tells (books.importing.notes.note_kept); a book whose highlight
gained or changed anything here is one the import changed (its report's count).

Tags are the file's own (Readwise's, an Exogram export's), added when the highlight's
entry first lists them and then only those it lists anew (the highlight keeps what the last
such file listed: `file_tags`; a file with no place for tags, Bookcision's or a Readwise
CSV without a Tags column, leaves it), and the hashtags of its notes (`#artist #being`:
books.importing.hashtags), on highlights and in note entries alike, except in an Exogram
export, which lists every tag itself. The note keeps its words as written; its tags go
beside them. A note's hashtags are tags when the note arrives or changes in this import
(a new highlight's, a note attached or changed here), and only those it names anew: an
unchanged note brings none, so a tag the reader deleted or renamed stays so when the
file comes again ("Nothing new in this file"). A library imported before hashtags were
read got its tags once, from the notes it held (migration 0043). A hashtag counts only
while the note the highlight keeps names it too: an older copy's note that gave way (to a
newer note, to the reader's edit) brings no tag. One file's hashtags make at most
`HASHTAG_TAGS_PER_FILE` tags the reader did not have; the report says how many more it
named.
"""

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import Q
from django.utils import timezone

from books.importing.clippings import ParseResult
from books.importing.hashtags import hashtag_names, hashtags_named_anew
from books.importing.identity import book_key, highlight_dedupe_key
from books.importing.notes import note_kept
from books.importing.rich import RichClipping
from books.models import Highlight, Import, Tag
from books.services import highlights_tag
from books.text import fold_spacing, tag_name

# The most tags one file's hashtags make that the reader did not have: the shared Apple
# Books libraries (about 1,000 notes each) name about 200, so five times the most a real
# library names, where a crafted file of 50,000 notes of 20 hashtags each would otherwise
# make a million (HASHTAGS_PER_NOTE bounds only a note). Tags the reader has are not
# counted: a file naming them tags as many highlights as it names.
HASHTAG_TAGS_PER_FILE = 1_000

# The columns enriching a highlight may change.
_ENRICHED_FIELDS = [
    "note", "note_edited", "note_edited_at", "note_added_at", "favourite", "chapter", "colour",
    "search_text", "file_tags",
]  # fmt: skip


def _key(clipping: RichClipping) -> str:
    kind = Highlight.Kind.NOTE if clipping.kind == "note" else Highlight.Kind.HIGHLIGHT
    return highlight_dedupe_key(
        book_key=book_key(clipping.title, clipping.author),
        kind=kind,
        page=clipping.page or "",
        start=clipping.location_start,
        end=clipping.location_end,
        text=clipping.text,
    )


# What enriching never reads: a highlight's vectors (1.5 to 2 kB a row, parsed row by row),
# on every highlight of a richer format's file at each import of it.
_VECTORS = ("embedding", "english_embedding", "theme_embedding")


def import_enrich(
    *,
    the_import: Import,
    result: ParseResult,
    changed_books: set[int],
    notes: Iterable[tuple[int, str, str]] = (),
    held_by: dict[int, int] | None = None,
) -> None:
    """Apply what the file's richer entries carry, and the hashtags of the note entries
    that arrived or changed a note (`notes`: the id of the highlight holding each, its
    words, and the note that highlight held before this import); `changed_books` are the
    books the save already counted as changed, so a book is counted once.

    An entry goes to the highlight of its dedupe key or, when none, to the stored one the
    save found its words in (`held_by`: id() of the entry → that highlight's pk): a
    Readwise export gives a Kindle highlight's first location only (`412` for 412-414), and
    its tags, favourite and note reached nothing."""
    rich = [c for c in result.clippings if isinstance(c, RichClipping) and c.kind != "bookmark"]
    _tag_deleted(the_import, [c for c in rich if c.deleted_at is not None])
    rich = [c for c in rich if c.deleted_at is None]
    noted: defaultdict[int, list[str]] = defaultdict(list)
    held_before: dict[int, str] = {}
    for pk, words, before in notes:
        noted[pk].append(words)
        held_before.setdefault(pk, before)
    if not rich and not noted:
        if result.skipped:
            the_import.counts = {**the_import.counts, "skipped_in_file": dict(result.skipped)}
            the_import.save(update_fields=["counts"])
        return
    by_key = {_key(c): c for c in rich}
    by_pk: dict[int, list[RichClipping]] = defaultdict(list)
    for entry in rich:
        if (held := (held_by or {}).get(id(entry))) is not None:
            by_pk[held].append(entry)
    highlights = (
        Highlight.objects.filter(reader_id=the_import.reader_id, deleted_at__isnull=True)
        .filter(Q(dedupe_key__in=list(by_key)) | Q(pk__in=[*noted, *by_pk]))
        .select_related("book")
        .defer(*_VECTORS)
        .order_by("pk")  # which hashtags make the capped new tags: the file's first
    )
    counts: defaultdict[str, int] = defaultdict(int)
    changed: list[Highlight] = []
    tagging: list[tuple[Highlight, str]] = []
    hashtagging: list[tuple[Highlight, str]] = []
    listed: list[Highlight] = []  # highlights whose file_tags alone changed
    for highlight in highlights:
        brought = list(noted.get(highlight.pk, []))
        before = held_before.get(highlight.pk, highlight.note)
        clipping = by_key.get(highlight.dedupe_key)
        same_place = clipping is not None
        others: list[RichClipping] = []
        if clipping is None and highlight.pk in by_pk:
            clipping, *others = _closest_first(highlight, by_pk[highlight.pk])
        if clipping is not None:
            note = highlight.note
            enriched = _enrich(
                highlight, clipping, counts, the_import=the_import, same_place=same_place
            )
            # The other selections it holds: their notes beside, a favourite; a colour or a
            # chapter only where the first gave none. Its tags are the first's alone (what
            # the file lists for it: two lists would take turns at each import).
            for other in others:
                added = _enrich(highlight, other, counts, the_import=the_import, same_place=False)
                enriched = added or enriched
            if enriched:
                changed.append(highlight)
            if clipping.tags_carried:  # a file with no place for tags says nothing of them
                held = highlight.file_tags
                tagging += [(highlight, name) for name in _file_tags_new(highlight, clipping)]
                if highlight.file_tags != held and not enriched:
                    listed.append(highlight)
            if highlight.note != note and not clipping.tags_listed:
                brought += [entry.note for entry in (clipping, *others)]
        hashtagging += [(highlight, name) for name in _hashtags_new(highlight, brought, before)]
    given = {name for _, name in tagging}  # the file's own tags, which no cap holds back
    hashtagging, left_out = _capped(the_import.reader_id, hashtagging, given=given)
    tagging += hashtagging
    for highlight in changed:
        highlight.refresh_search_text()
    Highlight.objects.bulk_update(
        changed,
        _ENRICHED_FIELDS,
        batch_size=1000,
    )
    # Not a change to the library the report counts: what the file listed, kept.
    Highlight.objects.bulk_update(listed, ["file_tags"], batch_size=1000)
    tagged = [h for h, _ in highlights_tag(reader_id=the_import.reader_id, tagging=tagging)]
    counts["tags_added"] = len(tagged)
    books = {h.book_id for h in changed} | {h.book_id for h in tagged}
    titles = {h.book.title for h in [*changed, *tagged] if h.book_id not in changed_books}
    titles.update(the_import.counts.get("changed_titles", []))
    the_import.counts = {
        **the_import.counts,
        "books_changed": the_import.counts.get("books_changed", 0) + len(books - changed_books),
        "changed_titles": sorted(titles, key=str.casefold)[: Import.TITLES_KEPT],
        "notes_attached": the_import.counts.get("notes_attached", 0) + counts["notes"],
        "favourites": counts["favourites"],
        "tags_added": counts["tags_added"],
        # The hashtags past the cap, and the cap, which the report names.
        **(
            {"hashtags_left_out": left_out, "hashtag_tags_cap": HASHTAG_TAGS_PER_FILE}
            if left_out
            else {}
        ),
        # Rows a device keeps for what the reader removed: skipped, and said so.
        **({"skipped_in_file": dict(result.skipped)} if result.skipped else {}),
    }
    the_import.save(update_fields=["counts"])


def _hashtags_new(highlight: Highlight, brought: list[str], before: str) -> list[str]:
    """The tags named as hashtags in the notes this import brought to the highlight that the
    note it keeps names too (so an older copy's note, which gave way to a newer one or to
    the reader's edit, brings no tag) and the note it held `before` did not (those were
    its tags already, or the reader took them away)."""
    held = highlight.text if highlight.kind == Highlight.Kind.NOTE else highlight.note
    kept = set(hashtags_named_anew(held, before=before))
    return [name for words in brought for name in hashtag_names(words, limit=None) if name in kept]


def _file_tags_new(highlight: Highlight, clipping: RichClipping) -> list[str]:
    """The tags the file lists for the highlight (a Readwise CSV's column, an Exogram
    export's list) that the last file listing them did not (its `file_tags`; none yet: all
    are new), as with a note's hashtags: a tag the reader deleted or renamed stays so while
    the file names it. What the file lists becomes the highlight's `file_tags` (left as it
    is when it names the same tags, or none and none were kept: no row written)."""
    names = list(dict.fromkeys(name for name in map(tag_name, clipping.tags) if name))
    held = highlight.file_tags
    if set(names) == set(held or []):
        return names if held is None else []
    highlight.file_tags = names
    return [name for name in names if held is None or name not in held]


def _capped(
    reader_id: int, tagging: list[tuple[Highlight, str]], *, given: set[str]
) -> tuple[list[tuple[Highlight, str]], int]:
    """The hashtags' tagging within HASHTAG_TAGS_PER_FILE tags new to the reader (the first
    names, in the order of the highlights; a name the reader has, or the file `given` as a
    tag, is not new), and how many names were left out."""
    names = {name for _, name in tagging}
    if len(names) <= HASHTAG_TAGS_PER_FILE:
        return tagging, 0
    had = given | set(
        Tag.objects.filter(reader_id=reader_id, name__in=names).values_list("name", flat=True)
    )
    made: set[str] = set()
    for _, name in tagging:
        if name not in had and len(made) < HASHTAG_TAGS_PER_FILE:
            made.add(name)
    kept = had | made
    return [(h, name) for h, name in tagging if name in kept], len(names - kept)


def _tag_deleted(the_import: Import, deleted: list[RichClipping]) -> None:
    """The tags of the highlights an Exogram export says its reader deleted, on the rows
    this import kept deleted for them (books.importing.services): theirs when brought back.
    Not a change to the library the report counts."""
    by_key = {_key(c): c for c in deleted if c.tags}
    if not by_key:
        return
    kept = Highlight.objects.filter(
        source_import=the_import, dedupe_key__in=list(by_key), deleted_at__isnull=False
    ).defer(*_VECTORS)
    tagging = [(h, name) for h in kept for name in map(tag_name, by_key[h.dedupe_key].tags)]
    highlights_tag(
        reader_id=the_import.reader_id, tagging=[(h, name) for h, name in tagging if name]
    )


def _closest_first(highlight: Highlight, entries: list[RichClipping]) -> list[RichClipping]:
    """The entries whose words the save found in `highlight` (at another place), the one
    with its words first, then the longer: not the file's first, a piece of it."""
    words = fold_spacing(highlight.text)
    return sorted(entries, key=lambda entry: (fold_spacing(entry.text) != words, -len(entry.text)))


def _enrich(
    highlight: Highlight,
    clipping: RichClipping,
    counts: dict[str, int],
    *,
    the_import: Import,
    same_place: bool = True,
) -> bool:
    """`same_place`: the entry is the highlight's own (its dedupe key), not another
    selection whose words the highlight holds, whose note's date says nothing of the
    highlight's note: both notes' words are kept, as without a date (a sub-selection's newer
    note replaced the reader's note on the whole passage)."""
    changed = False
    kept = None
    if highlight.kind == Highlight.Kind.HIGHLIGHT:
        kept = note_kept(
            held=highlight.note,
            held_at=highlight.note_added_at,
            brought=clipping.note,
            # Formats without a note's own date give the highlight's; beside a note the
            # reader edited, whose date is the device note's it was edited from, that date
            # tells nothing, and both notes' words are kept.
            brought_at=None
            if not same_place
            else clipping.note_added_at or (None if highlight.note_edited else clipping.added_at),
            held_edited=highlight.note_edited,
            brought_edited=clipping.note_edited,
        )
    if kept is not None:
        highlight.note, highlight.note_added_at = kept
        # The reader's words, edited here or in the account an export came from, are in it.
        highlight.note_edited = highlight.note_edited or clipping.note_edited
        if clipping.note_edited:
            # When it was edited, in the export's account; on a highlight an earlier import
            # made, the reader's words arrive now: that import's delete spares it.
            if highlight.source_import_id == the_import.pk:
                highlight.note_edited_at = clipping.note_edited_at
            else:
                highlight.note_edited_at = timezone.now()
        counts["notes"] += 1
        changed = True
    if clipping.favourite and not highlight.favourite:
        highlight.favourite = True
        counts["favourites"] += 1
        changed = True
    if clipping.chapter and not highlight.chapter:
        highlight.chapter = clipping.chapter[:500]
        changed = True
    if clipping.colour and not highlight.colour:
        highlight.colour = clipping.colour[:32]
        changed = True
    return changed
