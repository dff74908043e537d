"""A passage two copies of a book held becomes one highlight when the copies become one book
(the reader's merge, books.importing.same_book, and merging duplicate books,
books.importing.book_merge): what each join keeps, pinned on a mixed case, and its cost in
queries, the same for 3 joined passages as for 30."""

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from books.importing.book_merge import books_merge_duplicates
from books.importing.identity import book_key, highlight_dedupe_key
from books.importing.joining import highlights_join
from books.importing.same_book import books_merge
from books.models import Book, Connection, Deletion, Highlight, HighlightMerge, Import, Tag
from review.models import ReviewCard, ReviewState, WordCard

START = datetime(2026, 1, 1, tzinfo=UTC)
MONDAY = date(2026, 1, 5)
TITLE, AUTHORS = "The San Francisco Fallacy", "Jonathan Siegel"


def _at(days: int) -> datetime:
    return START + timedelta(days=days)


class Library:
    """One reader's rows, each named by a label (`p0/kept`), so that an outcome reads the
    same whatever ids the database gave."""

    def __init__(self, reader: User) -> None:
        self.reader = reader
        self.labels: dict[int, str] = {}
        self.positions = iter(range(1, 10_000))
        self.the_import = Import.objects.create(reader=reader, file_name="kindle.txt", sha256="0")
        self.deletion = Deletion.objects.create(reader=reader, kind=Deletion.Kind.IMPORT, at=_at(9))
        other = Book.objects.create(reader=reader, key="meditations", title="Meditations")
        self.stoic = self.highlight(other, "stoic", 50, "You have power over your mind.")
        self.calm = self.highlight(other, "calm", 60, "Calm is a choice, like anything else.")

    def book(self, key: str, title: str = TITLE) -> Book:
        return Book.objects.create(reader=self.reader, key=key, title=title, authors=AUTHORS)

    def highlight(
        self, book: Book, label: str, location: int, text: str, **fields: Any
    ) -> Highlight:
        highlight = Highlight(
            reader=self.reader, book=book, text=text, location_start=location,
            location_end=location + 1,
            dedupe_key=highlight_dedupe_key(
                book_key=book.key, kind="highlight", page="", start=location,
                end=location + 1, text=text,
            ),
            **fields,
        )  # fmt: skip
        highlight.refresh_search_text()
        highlight.save()
        self.labels[highlight.pk] = label
        return highlight

    def tag(self, highlight: Highlight, *names: str) -> None:
        for name in names:
            highlight.tags.add(Tag.objects.get_or_create(reader=self.reader, name=name)[0])

    def review(self, highlight: Highlight, reviews: int, due: int) -> None:
        ReviewState.objects.create(
            reader=self.reader, highlight=highlight, reviews=reviews,
            due=MONDAY + timedelta(days=due),
        )  # fmt: skip

    def card(self, highlight: Highlight, day: int, answer: str = "") -> None:
        ReviewCard.objects.create(
            reader=self.reader, highlight=highlight, day=MONDAY + timedelta(days=day),
            position=next(self.positions), answer=answer,
        )  # fmt: skip

    def word_card(self, highlight: Highlight, word: str) -> None:
        WordCard.objects.create(
            reader=self.reader, highlight=highlight, word=word, day=MONDAY,
            position=next(self.positions),
        )  # fmt: skip

    def merge_record(self, highlight: Highlight, text: str) -> None:
        HighlightMerge.objects.create(
            reader=self.reader, source_import=self.the_import, highlight=highlight,
            how=HighlightMerge.How.EXTENDED, merged_text=text,
        )  # fmt: skip

    def connect(self, a: Highlight, b: Highlight, distance: float) -> None:
        low, high = sorted((a, b), key=lambda h: h.pk)
        Connection.objects.create(
            reader=self.reader, highlight_a=low, highlight_b=high,
            book_low_id=min(a.book_id, b.book_id), book_high_id=max(a.book_id, b.book_id),
            distance=distance, embedding_model="test",
        )  # fmt: skip

    def outcome(self) -> dict[str, Any]:
        """Every highlight of the reader's that stays, with what the reader added to it."""
        days = {None: None} | {_at(d): d for d in range(-30, 30)}
        rows: dict[str, Any] = {}
        for h in Highlight.objects.filter(reader=self.reader).order_by("pk"):
            state = ReviewState.objects.filter(highlight=h).first()
            rows[self.labels[h.pk]] = {
                "note": h.note,
                "note_edited": (h.note_edited, days[h.note_edited_at]),
                "note_added_at": days[h.note_added_at],
                "favourite": h.favourite,
                "chapter": h.chapter,
                "colour": h.colour,
                "added": (days[h.added_at], h.added_raw),
                "file_tags": h.file_tags,
                "deleted": (days[h.deleted_at], h.deletion_id == self.deletion.pk),
                "search_text_has_note": bool(h.note) and h.note.split()[0].lower() in h.search_text,
                "tags": sorted(h.tags.values_list("name", flat=True)),
                "review": (state.reviews, (state.due - MONDAY).days) if state else None,
                "cards": sorted(
                    ((c.day - MONDAY).days, c.answer)
                    for c in ReviewCard.objects.filter(highlight=h)
                ),
                "word_cards": sorted(
                    WordCard.objects.filter(highlight=h).values_list("word", flat=True)
                ),
                "merges": sorted(
                    HighlightMerge.objects.filter(highlight=h).values_list("merged_text", flat=True)
                ),
            }
        rows["connections"] = sorted(
            (self.labels[c.highlight_a_id], self.labels[c.highlight_b_id], c.distance)
            for c in Connection.objects.filter(reader=self.reader)
        )
        return rows


def _two_copies(library: Library) -> tuple[Book, Book]:
    """Two copies of one book under two keys, the reader's merge to make: six passages held
    by both, each with something else the reader added to one copy or both."""
    kept = library.book("fallacy-long", f"{TITLE}: The Ten Fallacies")
    absorbed = library.book("fallacy-short")
    h = library.highlight

    def both(n: int, **fields: Any) -> tuple[Highlight, Highlight]:
        text = f"Passage {n} of the book, held by both copies."
        return (
            h(kept, f"p{n}/kept", 100 * (n + 1), text, **fields.get("kept", {})),
            h(absorbed, f"p{n}/absorbed", 100 * (n + 1), text, **fields.get("absorbed", {})),
        )

    # Notes on both, tags on both, the absorbed copy's favourite, longer review history,
    # a day's card of its own and one on a day the kept copy has too, a word card, a merge
    # record; a connection both copies have (one stays) and one only the absorbed has.
    mine, theirs = both(
        0,
        kept={"note": "Kept note.", "note_added_at": _at(1), "added_at": _at(3)},
        absorbed={
            "note": "Absorbed note.", "note_added_at": _at(2), "note_edited": True,
            "note_edited_at": _at(4), "favourite": True, "added_at": _at(1), "added_raw": "Mon",
        },
    )  # fmt: skip
    library.tag(mine, "housing")
    library.tag(theirs, "housing", "rent")
    library.review(mine, reviews=1, due=3)
    library.review(theirs, reviews=3, due=7)
    library.card(mine, 0, "keep")
    library.card(theirs, 0, "favourite")
    library.card(theirs, 1, "open")
    library.word_card(theirs, "permit")
    library.merge_record(theirs, "Passage 0 of the book")
    library.merge_record(mine, "Passage 0")
    library.connect(mine, library.stoic, 0.30)
    library.connect(theirs, library.stoic, 0.20)
    library.connect(theirs, library.calm, 0.25)
    # The kept copy deleted, the absorbed one alive: the passage stays, alive.
    mine, theirs = both(
        1,
        kept={
            "deleted_at": _at(9), "deletion": library.deletion, "file_tags": ["a", "b"],
            "note_added_at": _at(5),
        },
        absorbed={
            "chapter": "One", "colour": "yellow", "file_tags": ["b", "c"], "added_at": _at(2),
            "added_raw": "Tue",
        },
    )  # fmt: skip
    library.review(mine, reviews=2, due=1)
    library.connect(mine, library.calm, 0.40)
    # The absorbed copy's note already in the kept one's; as many reviews on each.
    mine, theirs = both(
        2,
        kept={"note": "A note, then more.", "chapter": "Two"},
        absorbed={"note": " A note, then more. ", "note_edited": True, "chapter": "Deux"},
    )
    library.review(mine, reviews=2, due=4)
    library.review(theirs, reviews=2, due=9)
    # Only the absorbed copy has a review history, and a card.
    mine, theirs = both(3, absorbed={"colour": "blue"})
    library.review(theirs, reviews=5, due=2)
    library.card(theirs, 2)
    # The absorbed copy deleted: the kept one stays, and takes its note's date and tags.
    mine, theirs = both(
        4,
        kept={"note": "Mine."},
        absorbed={"deleted_at": _at(8), "note": "", "note_added_at": _at(6), "file_tags": []},
    )
    library.tag(theirs, "deleted-one")
    # Nothing added to either.
    both(5)
    h(kept, "only-kept", 5000, "Only the kept copy holds this.")
    h(absorbed, "only-absorbed", 6000, "Only the absorbed copy holds this.", favourite=True)
    return kept, absorbed


def _three_twins(library: Library) -> list[Book]:
    """One book stored three times under keys an older rule gave (merge_duplicate_books
    makes them one, the oldest kept): passages held by all three, joined two into one."""
    books = [library.book(f"old-{n}") for n in range(3)]
    for n in range(2):
        text = f"Twin passage {n}, in every copy."
        rows = [
            library.highlight(book, f"t{n}/{i}", 700 + n, text, note=f"Note {i}." if i else "")
            for i, book in enumerate(books)
        ]
        # Two copies with as many reviews: the first joined wins; a day both copies have.
        library.review(rows[1], reviews=4, due=1)
        library.review(rows[2], reviews=4, due=2)
        library.card(rows[1], 0, "keep")
        library.card(rows[2], 0, "open")
        library.tag(rows[2], "twin")
        library.connect(rows[1], library.stoic, 0.11 + n)
        library.connect(rows[2], library.stoic, 0.12 + n)
        library.connect(rows[2], library.calm, 0.13 + n)
    return books


def _empty(**rest: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "note": "", "note_edited": (False, None), "note_added_at": None, "favourite": False,
        "chapter": "", "colour": "", "added": (None, ""), "file_tags": None,
        "deleted": (None, False), "search_text_has_note": False, "tags": [], "review": None,
        "cards": [], "word_cards": [], "merges": [],
    }  # fmt: skip
    return row | rest


# What merging the two copies gave before joins were made in bulk (main, 2026-12-07).
TWO_COPIES_MERGED = {
    "stoic": _empty(),
    "calm": _empty(),
    "p0/kept": _empty(
        note="Kept note.\n\nAbsorbed note.",
        note_edited=(True, 4),
        note_added_at=2,
        favourite=True,
        added=(1, "Mon"),
        search_text_has_note=True,
        tags=["housing", "rent"],
        review=(3, 7),
        cards=[(0, "keep"), (1, "open")],
        word_cards=["permit"],
        merges=["Passage 0", "Passage 0 of the book"],
    ),
    "p1/absorbed": _empty(
        chapter="One",
        colour="yellow",
        added=(2, "Tue"),
        file_tags=["b", "c", "a"],
        review=(2, 1),
    ),
    "p2/kept": _empty(
        note="A note, then more.", chapter="Two", search_text_has_note=True, review=(2, 4)
    ),
    "p3/kept": _empty(colour="blue", review=(5, 2), cards=[(2, "")]),
    "p4/kept": _empty(note="Mine.", search_text_has_note=True, file_tags=[], tags=["deleted-one"]),
    "p5/kept": _empty(),
    "only-kept": _empty(),
    "only-absorbed": _empty(favourite=True),
    "connections": [
        ("calm", "p0/kept", 0.25),
        ("calm", "p1/absorbed", 0.4),
        ("stoic", "p0/kept", 0.3),
    ],
}

# What merging the three stored copies gave before joins were made in bulk.
THREE_TWINS_MERGED = {
    "stoic": _empty(),
    "calm": _empty(),
    **{
        f"t{n}/0": _empty(
            note="Note 1.\n\nNote 2.",
            search_text_has_note=True,
            tags=["twin"],
            review=(4, 1),
            cards=[(0, "keep")],
        )
        for n in range(2)
    },
    "connections": [
        ("calm", "t0/0", 0.13),
        ("calm", "t1/0", 1.13),
        ("stoic", "t0/0", 0.11),
        ("stoic", "t1/0", 1.11),
    ],
}


@pytest.mark.django_db
class PassageJoinTests:
    def test_it_keeps_everything_of_both_copies_as_before(self, alice: User) -> None:
        library = Library(alice)
        kept, absorbed = _two_copies(library)

        done = books_merge(kept=kept, absorbed=absorbed)

        assert done is not None
        assert done.joined == 6
        assert library.outcome() == TWO_COPIES_MERGED

    def test_it_keeps_everything_of_three_stored_copies_as_before(self, alice: User) -> None:
        library = Library(alice)
        books = _three_twins(library)

        report = books_merge_duplicates(reader=alice)

        assert report.highlights_joined == 4
        assert list(Book.objects.filter(reader=alice, title=TITLE)) == books[:1]
        assert Book.objects.get(pk=books[0].pk).key == book_key(TITLE, AUTHORS)
        assert library.outcome() == THREE_TWINS_MERGED

    @pytest.mark.parametrize("chain", [[(0, 1), (1, 2)], [(1, 2), (0, 1)], [(0, 2), (1, 2)]])
    def test_a_chain_or_a_copy_joined_twice_is_refused_and_changes_nothing(
        self, alice: User, chain: list[tuple[int, int]]
    ) -> None:
        library = Library(alice)
        book = library.book("copies")
        rows = [
            library.highlight(book, f"p{i}", 10 + i, "The same words.", note=f"note {i}")
            for i in range(3)
        ]
        before = library.outcome()

        with pytest.raises(ValueError, match="a copy joins one survivor"):
            highlights_join([(rows[s].pk, rows[c].pk) for s, c in chain])

        assert library.outcome() == before


def _copies_with_joined(library: Library, joined: int) -> tuple[Book, Book]:
    """Two copies holding `joined` passages both, word for word, and as many in two
    versions (a selection in one copy, its extension in the other); each copy's with a
    note, tags, the favourite, a review history, a day's card, a merge record and
    connections."""
    kept = library.book(f"kept-{joined}", f"{TITLE}: {joined}")
    absorbed = library.book(f"absorbed-{joined}")
    for n in range(joined):
        text = f"Passage {n}, held by both."
        mine = library.highlight(kept, f"{n}/kept", 100 * n, text, note=f"Mine {n}.")
        theirs = library.highlight(
            absorbed, f"{n}/absorbed", 100 * n, text, note=f"Theirs {n}.", favourite=True
        )
        selected = f"Passage {n} was selected in one copy of the book"
        library.highlight(kept, f"{n}/extended", 100 * n + 50, f"{selected}, and extended.")
        library.highlight(absorbed, f"{n}/selected", 100 * n + 50, selected, note="Mine.")
        library.tag(mine, "mine")
        library.tag(theirs, "theirs")
        library.review(mine, reviews=1, due=1)
        library.review(theirs, reviews=2, due=2)
        library.card(mine, 0)
        library.card(theirs, 0)
        library.card(theirs, 1)
        library.merge_record(theirs, text)
        library.connect(mine, library.stoic, 0.3)
        library.connect(theirs, library.stoic, 0.2)
        library.connect(theirs, library.calm, 0.2)
    return kept, absorbed


def _queries(run: Any) -> int:
    with CaptureQueriesContext(connection) as queries:
        run()
    return len(queries.captured_queries)


@pytest.mark.django_db
class PassageJoinQueriesTests:
    def test_it_costs_the_reader_the_same_queries_for_3_joined_passages_as_for_30(
        self, alice: User, bob: User
    ) -> None:
        few = _copies_with_joined(Library(alice), 3)
        many = _copies_with_joined(Library(bob), 30)

        assert _queries(lambda: books_merge(kept=few[0], absorbed=few[1])) == _queries(
            lambda: books_merge(kept=many[0], absorbed=many[1])
        )
        # Each passage once: 30 held word for word, 30 in two versions.
        assert Highlight.objects.filter(reader=bob, book=many[0]).count() == 60

    def test_it_costs_merging_duplicates_the_same_queries_for_3_joined_as_for_30(
        self, alice: User, bob: User
    ) -> None:
        for reader, joined in ((alice, 3), (bob, 30)):
            library = Library(reader)
            kept, absorbed = _copies_with_joined(library, joined)
            # One book under two keys an older rule gave: merge_duplicate_books joins them.
            Book.objects.filter(pk__in=[kept.pk, absorbed.pk]).update(title=TITLE)

        assert _queries(lambda: books_merge_duplicates(reader=alice)) == _queries(
            lambda: books_merge_duplicates(reader=bob)
        )
        # Versions are the reader's merge's business: only the 30 word for word are one.
        assert Highlight.objects.filter(reader=bob).count() == 2 + 30 + 2 * 30
