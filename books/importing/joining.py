"""One passage held twice becomes one highlight: a merge of two copies of a book
(books.importing.book_merge, books.importing.same_book) joins every passage both held.

`highlights_join(joins)` takes (survivor, copy) pairs in the order they join. Everything of
the reader's on each copy goes to its survivor (every note, tag and favourite of both, the
longer review history, the day's cards, merge records, connections), then the copies go.

Done for all pairs at once: each kind of row is read once, the rule applied in memory in
the order of the joins, as one join after another would (a survivor may take in several
copies), and the result written in one statement per table: the same queries for 3
joined passages as for 3,000. One join at a time it was ~40 queries each, minutes for a
merge of two copies of a long book (docs/operations.md, 2026-12-07).
"""

import json
from collections import defaultdict
from collections.abc import Collection, Sequence
from datetime import date

from django.db import connection, transaction
from django.db.models import Field, JSONField, Model, Q

from books.models import Connection, Highlight, HighlightMerge

# What a survivor takes from its copies (_fields_join), written once for all survivors.
_JOINED_FIELDS = [
    "note", "note_edited", "note_edited_at", "note_added_at", "favourite", "chapter", "colour",
    "added_at", "added_raw", "file_tags", "deleted_at", "deletion", "search_text",
]  # fmt: skip

# Read whole but for the vectors: a join neither reads nor writes them.
_VECTORS = ["embedding", "english_embedding", "theme_embedding"]


def highlights_join(joins: Sequence[tuple[int, int]]) -> dict[int, Highlight]:
    """Join each (survivor id, copy id) pair, in order; no id is both a survivor and a copy,
    and a copy joins one survivor. Returns the survivors as written, by id (a caller may
    write more on them)."""
    if not joins:
        return {}
    copies = [copy for _, copy in joins]
    if len(set(copies)) < len(copies) or {survivor for survivor, _ in joins} & set(copies):
        # A chain (B into A, C into B) would send C's tags and history to B, then delete B.
        raise ValueError("a copy joins one survivor, and no survivor is a copy")
    with transaction.atomic():
        return _join(joins)


def _join(joins: Sequence[tuple[int, int]]) -> dict[int, Highlight]:
    from review.models import ReviewCard, WordCard  # review's models import books'

    # Locked as read, in id order as the embedding worker locks: a delete or a note edit
    # committed meanwhile is not written over with what was read before it.
    ids = sorted({pk for pair in joins for pk in pair})
    rows = {
        row.pk: row
        for row in Highlight.objects.defer(*_VECTORS)
        .select_for_update(no_key=True)
        .filter(pk__in=ids)
        .order_by("pk")
    }
    for survivor, copy in joins:
        _fields_join(rows[survivor], rows[copy])
    survivors = {survivor: rows[survivor] for survivor, _ in joins}
    highlights_update(survivors.values(), _JOINED_FIELDS)
    _tags_join(joins)
    to_survivor = [(copy, survivor) for survivor, copy in joins]
    _point_at(HighlightMerge, key="highlight_id", moves=to_survivor)
    _point_at(WordCard, key="highlight_id", moves=to_survivor)
    _point_at(ReviewCard, key="id", moves=_cards_join(joins))
    _review_join(joins)
    _connections_join(joins)
    # What did not move goes with its copy (connections, cards of a day the survivor had,
    # the shorter review history, tags' links).
    Highlight.objects.filter(pk__in=[copy for _, copy in joins]).delete()
    return survivors


def _fields_join(survivor: Highlight, copy: Highlight) -> None:
    """The copy's note, favourite, chapter, colour, tags the file listed and earliest date
    on the survivor (in memory)."""
    if copy.note.strip() and copy.note.strip() not in survivor.note:
        # The device's date of the note goes with it (notes.note_kept reads it when a file
        # brings the note again): the latest of the two, as note_kept dates two joined.
        # An empty note keeps its date too: the reader cleared the device's note, and its
        # date is what keeps that note out when the file brings it again.
        written = [d for d in (survivor.note_added_at, copy.note_added_at) if d is not None]
        survivor.note_added_at = max(written, default=None)
        survivor.note = f"{survivor.note}\n\n{copy.note}".strip()
        survivor.note_edited = survivor.note_edited or copy.note_edited
        edits = [d for d in (survivor.note_edited_at, copy.note_edited_at) if d is not None]
        survivor.note_edited_at = max(edits, default=None)
    survivor.favourite = survivor.favourite or copy.favourite
    survivor.chapter = survivor.chapter or copy.chapter
    survivor.colour = survivor.colour or copy.colour
    # What the files listing tags listed for either (books.importing.enrich): a tag either
    # listed is one the next such file does not add again, where the reader deleted it.
    if copy.file_tags is not None:
        listed = [*(survivor.file_tags or []), *copy.file_tags]
        survivor.file_tags = list(dict.fromkeys(listed))
    if copy.added_at and (survivor.added_at is None or copy.added_at < survivor.added_at):
        survivor.added_at, survivor.added_raw = copy.added_at, copy.added_raw
    if survivor.deleted_at is not None and copy.deleted_at is None:
        # Deleted in one copy, kept in the other: kept, nothing of the reader's is lost.
        survivor.deleted_at = None
        survivor.deletion = None
    survivor.refresh_search_text()


def _tags_join(joins: Sequence[tuple[int, int]]) -> None:
    """The survivor has every tag either had."""
    through = Highlight.tags.through
    survivor_of = {copy: survivor for survivor, copy in joins}
    links = through.objects.filter(highlight_id__in=list(survivor_of)).values_list(
        "highlight_id", "tag_id"
    )
    through.objects.bulk_create(
        [through(highlight_id=survivor_of[copy], tag_id=tag) for copy, tag in links],
        ignore_conflicts=True,  # a tag both had
    )


def _cards_join(joins: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The copies' review cards that go to their survivor, as (card id, survivor id): one a
    day, the survivor's own first, then the first copy's to join."""
    from review.models import ReviewCard

    ids = {pk for pair in joins for pk in pair}
    cards: defaultdict[int, list[tuple[int, date]]] = defaultdict(list)
    for card, highlight, day in ReviewCard.objects.filter(highlight_id__in=ids).values_list(
        "pk", "highlight_id", "day"
    ):
        cards[highlight].append((card, day))
    days = {survivor: {day for _, day in cards[survivor]} for survivor, _ in joins}
    moves = []
    for survivor, copy in joins:
        for card, day in cards[copy]:
            if day not in days[survivor]:
                days[survivor].add(day)
                moves.append((card, survivor))
    return moves


def _review_join(joins: Sequence[tuple[int, int]]) -> None:
    """The survivor keeps the longer review history: a copy's with more reviews than the
    one it has replaces it (of as many, the one it had first)."""
    from review.models import ReviewState

    ids = {pk for pair in joins for pk in pair}
    rows = ReviewState.objects.filter(highlight_id__in=ids)
    held = {
        h: (state, reviews)
        for state, h, reviews in rows.values_list("pk", "highlight_id", "reviews")
    }
    best = {survivor: held.get(survivor) for survivor, _ in joins}
    for survivor, copy in joins:
        theirs, mine = held.get(copy), best[survivor]
        if theirs is not None and (mine is None or theirs[1] > mine[1]):
            best[survivor] = theirs
    moves = [
        (state_reviews[0], survivor)
        for survivor, state_reviews in best.items()
        if state_reviews is not None and state_reviews != held.get(survivor)
    ]
    # The survivor's own goes first: a highlight has one review state.
    replaced = [held[survivor][0] for _, survivor in moves if survivor in held]
    ReviewState.objects.filter(pk__in=replaced).delete()
    _point_at(ReviewState, key="id", moves=moves)


def _connections_join(joins: Sequence[tuple[int, int]]) -> None:
    """Each copy's connections become its survivor's, one per pair: a pair the survivor
    already has, or one with the survivor itself, stays with the copy (and goes with it).
    Joined in order, as one join after another would: a connection between two copies
    follows both."""
    ids = {pk for pair in joins for pk in pair}
    rows = Connection.objects.filter(Q(highlight_a__in=ids) | Q(highlight_b__in=ids))
    pairs = {pk: (a, b) for pk, a, b in rows.values_list("pk", "highlight_a_id", "highlight_b_id")}
    first = dict(pairs)
    held = {pair: pk for pk, pair in pairs.items()}
    touching: defaultdict[int, set[int]] = defaultdict(set)
    for pk, (a, b) in pairs.items():
        touching[a].add(pk)
        touching[b].add(pk)
    for survivor, copy in joins:
        for pk in sorted(touching.pop(copy, ())):
            a, b = pairs.pop(pk)
            del held[a, b]
            other = b if a == copy else a
            touching[other].discard(pk)
            pair = (min(other, survivor), max(other, survivor))
            if other != survivor and pair not in held:
                pairs[pk], held[pair] = pair, pk
                touching[other].add(pk)
                touching[survivor].add(pk)
    # Each pair one that no other row holds, before or after: no unique check can trip.
    moved = [(pk, a, b) for pk, (a, b) in pairs.items() if first[pk] != (a, b)]
    if moved:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE books_connection AS c SET highlight_a_id = moved.a, "
                "highlight_b_id = moved.b "
                "FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS moved(id, a, b) "
                "WHERE c.id = moved.id",
                [list(column) for column in zip(*moved, strict=True)],
            )


def _point_at(model: type[Model], *, key: str, moves: Sequence[tuple[int, int]]) -> None:
    """Rows of `model` whose `key` (their id, or the highlight they point at) is the first of
    a pair point at the second, in one statement whatever the number."""
    if not moves:
        return
    table = model._meta.db_table  # the model's, never the reader's words
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET highlight_id = moved.target "
            f"FROM unnest(%s::bigint[], %s::bigint[]) AS moved(source, target) "
            f"WHERE {table}.{key} = moved.source",
            [[source for source, _ in moves], [target for _, target in moves]],
        )


def highlights_update(rows: Collection[Highlight], fields: list[str]) -> None:
    """Write these fields of each row, as bulk_update(rows, fields) would, in one
    UPDATE … FROM unnest(…): Django's bulk_update builds a CASE of one WHEN per row for each
    field, and building it was most of a merge's time (bench.bench_merge, 2026-12-07: a
    merge joining 1,350 passages took 15.8 s with it, 4.6 s with this). Plain columns and
    JSON (no vectors)."""
    if not rows:
        return
    quote = connection.ops.quote_name
    arrays: list[list[object]] = [[row.pk for row in rows]]
    unnested, sets, columns = ["%s::bigint[]"], [], ["id"]
    for name in fields:
        field = Highlight._meta.get_field(name)
        assert isinstance(field, Field)  # a column of the row's own, not a relation
        assert field.column
        values = [getattr(row, field.attname) for row in rows]
        column = quote(field.column)
        columns.append(column)
        if isinstance(field, JSONField):
            # Sent as text, read as JSON again.
            arrays.append([None if value is None else json.dumps(value) for value in values])
            unnested.append("%s::text[]")
            sets.append(f"{column} = new.{column}::jsonb")
        else:
            arrays.append(values)
            unnested.append(f"%s::{field.db_type(connection)}[]")
            sets.append(f"{column} = new.{column}")
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE books_highlight SET {', '.join(sets)} "
            f"FROM unnest({', '.join(unnested)}) AS new({', '.join(columns)}) "
            "WHERE books_highlight.id = new.id",
            arrays,
        )
