"""One book is one book, in libraries imported before the identity rule
(`books.importing.identity`) folded what it folds now.

`books_merge_duplicates(reader=...)` re-reads every book of a reader under the current
rule: a title line read the wrong way round is turned, `authors_normalized` is written
again, and books that now share a key, or a title with authors spelt two ways, become the
oldest of them. Nothing is lost: the
highlights move (with their notes, tags, favourites, review state, connections and merge
records); a highlight that both books held (the same passage, the same place) becomes one,
keeping every note, tag and favourite of both and the longer review history. Connections
between the two copies go: a connection is between two books. A book with no highlight
at all (none alive, none deleted) goes; it was never a book the reader read.

Each import runs it first (a few queries when nothing changed), and `manage.py
merge_duplicate_books` runs it for every reader, so a re-import afterwards adds nothing.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import CharField, Count, F, Q, Value
from django.db.models.functions import Cast, Concat

from accounts.models import User
from books.connections.services import connections_follow_books
from books.importing.identity import (
    book_key,
    family_names,
    looks_like_a_file_name,
    may_name_a_known_author,
    normalize_author,
    normalize_title,
    oriented_title_author,
    same_author,
    turned_by_its_own_words,
)
from books.importing.joining import highlights_join, highlights_update
from books.models import Book, BookAlias, Highlight


@dataclass
class BookMergeReport:
    # kept book's title -> the titles (as written) of the books merged into it
    merged: dict[str, list[str]] = field(default_factory=dict)
    turned: list[str] = field(default_factory=list)  # titles read the right way round now
    highlights_joined: int = 0  # highlights both copies held, now one
    authors_renormalized: int = 0
    empty_removed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(
            self.merged
            or self.turned
            or self.highlights_joined
            or self.authors_renormalized
            or self.empty_removed
        )


def _wait_for_the_embedding_writer(reader: User) -> None:
    """The reader's row, as books.purging.lock_reader_for_change takes it after the import
    lock (an import holds that one when it merges): the embedding worker share-locks the row
    while it writes vectors and connections, so no pair judged while two copies were two
    books names the copy after it is gone."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM accounts_user WHERE id = %s FOR NO KEY UPDATE", [reader.pk])


def books_merge_duplicates(*, reader: User) -> BookMergeReport:
    report = BookMergeReport()
    # Only what the rule reads: no timestamps to parse (every import calls this).
    books = list(
        Book.objects.filter(reader=reader)
        .only("reader_id", "key", "title", "authors", "authors_normalized")
        .order_by("pk")
    )
    _turn_round(books, report)
    groups = _one_book_groups(books)
    with transaction.atomic():
        if any(len(group) > 1 for group in groups.values()):
            _wait_for_the_embedding_writer(reader)
        # Keys about to change step aside first: the unique (reader, key) must hold after
        # each statement, and a book's new key may be another's old one.
        moving = [b.pk for k, group in groups.items() for b in group if b.key != k]
        Book.objects.filter(pk__in=moving).update(
            key=Concat(Value("\x1e"), Cast("pk", output_field=CharField()))
        )
        for key, group in groups.items():
            kept, *absorbed = group
            normalized = normalize_author(kept.authors)[:1000]
            if not absorbed and kept.key == key and kept.authors_normalized == normalized:
                continue
            if kept.authors_normalized != normalized:
                report.authors_renormalized += 1
            if absorbed:
                report.merged[kept.title] = [book.title for book in absorbed]
                titled = [b for b in absorbed if not looks_like_a_file_name(b.title)]
                if looks_like_a_file_name(kept.title) and titled:
                    kept.title = titled[0].title  # the book's own title, not its file's name
                Highlight.objects.filter(book__in=absorbed).update(book=kept)
                # Pairs between two copies of one book are now within one book: not
                # connections; the others' books follow their passages.
                connections_follow_books(
                    reader_id=reader.pk, books=[book.pk for book in [kept, *absorbed]]
                )
                _keep_exclusions(kept, absorbed)
                # Books the reader merged into a copy (books.importing.same_book) follow it.
                BookAlias.objects.filter(book__in=absorbed).update(book=kept)
                Book.objects.filter(pk__in=[book.pk for book in absorbed]).delete()
            kept.key, kept.authors_normalized = key, normalized
            kept.save(update_fields=["key", "authors_normalized", "title", "authors"])
            if moving:
                report.highlights_joined += _rekey_highlights(kept)
        empty = Book.objects.filter(reader=reader, highlights__isnull=True)
        report.empty_removed = list(empty.values_list("title", flat=True))
        if report.empty_removed:
            empty.delete()
    return report


def _one_book_groups(books: list[Book]) -> dict[str, list[Book]]:
    """The books (oldest first) that are one book, by the key the oldest will have: one key
    (`identity.book_key`), or one title whose authors share a person, spelt two ways
    (`Richard P. Feynman and Ralph Leighton`, `Richard Phillips Feynman; Edward Hutchings;
    Ralph Leighton`), as an import now reads them (reader_books.clippings_unify_authors)."""
    by_key: defaultdict[str, list[Book]] = defaultdict(list)
    for book in books:
        by_key[book_key(book.title, book.authors)].append(book)
    groups: dict[str, list[Book]] = {}
    by_title: defaultdict[str, list[str]] = defaultdict(list)  # title -> keys kept in groups
    for key, group in by_key.items():
        title, authors = normalize_title(group[0].title), normalize_author(group[0].authors)
        kin = next(
            (
                kept_key
                for kept_key in by_title[title]
                if same_author(normalize_author(groups[kept_key][0].authors), authors)
            ),
            None,
        )
        if kin is None:
            groups[key] = list(group)
            by_title[title].append(key)
        else:
            groups[kin].extend(group)
    return groups


def _keep_exclusions(kept: Book, absorbed: list[Book]) -> None:
    """A copy the reader kept out of sharing keeps the merged book out too."""
    exclusions_follow(kept=[kept], absorbed=absorbed)


def exclusions_follow(*, kept: list[Book], absorbed: list[Book]) -> None:
    """A book the reader kept out of sharing (`absorbed`) keeps out each of `kept`, the
    books that take its highlights: one read, one write, whatever their number."""
    from affinity.models import SharingProfile

    through = SharingProfile.excluded_books.through
    profiles = set(
        through.objects.filter(book__in=absorbed).values_list("sharingprofile_id", flat=True)
    )
    through.objects.bulk_create(
        [through(sharingprofile_id=p, book_id=book.pk) for p in profiles for book in kept],
        ignore_conflicts=True,
    )


def _turn_round(books: list[Book], report: BookMergeReport) -> None:
    """Title and author of books read from a dashed title line the wrong way round."""
    titles_by_author: defaultdict[str, set[str]] = defaultdict(set)
    for book in books:
        if book.authors:
            titles_by_author[normalize_author(book.authors)].add(normalize_title(book.title))
    families = family_names(titles_by_author)
    for book in books:
        title, authors = turned_by_its_own_words(book.title, book.authors) or (
            book.title,
            book.authors,
        )
        if (title, authors) == (book.title, book.authors) and may_name_a_known_author(
            book.title, book.authors, families
        ):
            own = normalize_title(book.title)
            known = [name for name, titles in titles_by_author.items() if titles - {own}]
            title, authors = oriented_title_author(book.title, book.authors, known)
        if (title, authors) != (book.title, book.authors):
            report.turned.append(title)
            book.title, book.authors = title[:1000], authors[:1000]


def _rekey_highlights(book: Book) -> int:
    """Every highlight of the book under the book's key; returns how many were joined."""
    by_key: defaultdict[str, list[Highlight]] = defaultdict(list)
    # NULLS FIRST said: PostgreSQL sorts NULL last ascending, and alive must come first.
    # book_id too: the related manager reads it on every row (a query each when deferred).
    highlights = book.highlights.order_by(F("deleted_at").asc(nulls_first=True), "pk").only(
        "book_id", "kind", "page", "location_start", "location_end", "text", "dedupe_key",
        "deleted_at",
    )  # fmt: skip
    for highlight in highlights:
        key = highlight.dedupe_key_from_fields(book_key=book.key)
        by_key[key].append(highlight)
    joins = []
    changed = []
    for key, same in by_key.items():
        # Alive first, then the oldest: the survivor is what the reader sees now.
        survivor, *copies = same
        joins += [(survivor.pk, copy.pk) for copy in copies]
        if survivor.dedupe_key != key:
            survivor.dedupe_key = key
            changed.append(survivor)
    highlights_join(joins)
    highlights_update(changed, ["dedupe_key"])
    return len(joins)


def two_devices_pairs(*, reader: User) -> list[tuple[Highlight, Highlight]]:
    """Highlights of one book kept twice by imports before 2026-12-06: one placed by a
    Kindle's locations, the other by a device's position or page, one holding every word of
    the other over a long run (merging.SHARED_RUN_WORDS). As (the longer, the one it holds);
    each highlight in one pair at most."""
    from books.importing.merging import long_run, shingles
    from books.text import fold_spacing_and_bom

    mixed = (
        Highlight.objects.filter(reader=reader, kind=Highlight.Kind.HIGHLIGHT)
        .values("book_id")
        .annotate(
            located=Count("pk", filter=Q(location_start__isnull=False)),
            placed=Count("pk", filter=Q(location_start__isnull=True)),
        )
        .filter(located__gt=0, placed__gt=0)
        .values_list("book_id", flat=True)
    )
    rows = Highlight.objects.filter(
        reader=reader, kind=Highlight.Kind.HIGHLIGHT, book_id__in=list(mixed)
    ).only("book_id", "text", "location_start", "deleted_at")
    by_book: defaultdict[int, list[Highlight]] = defaultdict(list)
    for highlight in rows.order_by("deleted_at", "pk"):
        by_book[highlight.book_id].append(highlight)
    pairs: list[tuple[Highlight, Highlight]] = []
    for highlights in by_book.values():
        folded = {h.pk: fold_spacing_and_bom(h.text) for h in highlights}
        runs: defaultdict[int, list[Highlight]] = defaultdict(list)
        for highlight in highlights:
            for key in shingles(folded[highlight.pk]):
                runs[key].append(highlight)
        used: set[int] = set()
        # Shortest first: each is held by the longest other-device highlight holding it.
        for short in sorted(highlights, key=lambda h: len(folded[h.pk])):
            mine = folded[short.pk]
            if short.pk in used or not long_run(mine):
                continue
            holders = {
                h.pk: h
                for key in shingles(mine)
                for h in runs[key]
                if h.pk not in used
                and h.pk != short.pk
                and (h.location_start is None) != (short.location_start is None)
                and mine in folded[h.pk]
            }
            if holders:
                longer = max(holders.values(), key=lambda h: (len(folded[h.pk]), -h.pk))
                pairs.append((longer, short))
                used.update({longer.pk, short.pk})
    return pairs


def highlights_join_two_devices(*, reader: User) -> int:
    """Join the pairs of two_devices_pairs: the longer highlight keeps its words and takes
    the other's note, tags, favourite, review history and connections. Returns how many."""
    pairs = two_devices_pairs(reader=reader)
    with transaction.atomic():
        highlights_join([(longer.pk, short.pk) for longer, short in pairs])
    return len(pairs)
