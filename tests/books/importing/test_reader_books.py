"""Which books an import makes: one per book, the right way round, none for nothing."""

# Real title lines and names: their curly quotes, dashes and full-width forms are the point.
# ruff: noqa: RUF001

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.exporting.exogram_json import library_json
from books.exporting.library import books_to_export
from books.importing.same_book import book_merge_preview
from books.importing.services import clippings_import
from books.models import Book, Deletion, Highlight
from books.selectors import books_for, library_counts
from books.services import (
    DeleteCount,
    book_bring_back,
    book_deletable,
    book_delete,
    delete_count,
    deletion_bring_back,
    highlight_delete,
)
from tests.books.kindle import Entry, clippings_file

STRAIGHT = "It Doesn't Have to Be Crazy at Work (Jason Fried;David Heinemeier Hansson)"
CURLY = "It Doesn’t Have to Be Crazy at Work (David Heinemeier Hansson;Jason Fried)"
KUNDERA = "Milan Kundera"
LIMITED = "Le Livre verrouillé (Camille Morel)"
BOOKMARKED = "A Book Only Bookmarked (Noor Saleh)"


def _import(reader: User, *entries: Entry, name: str = "clips.txt"):  # type: ignore[no-untyped-def]
    return clippings_import(reader=reader, data=clippings_file(*entries), file_name=name)


@pytest.mark.django_db
class BookIdentityImportTests:
    def test_it_makes_one_book_of_two_title_lines_of_one_book(self, alice: User) -> None:
        _import(
            alice,
            Entry(STRAIGHT, "Calm is a choice, like anything else.", location="100-101"),
            Entry(CURLY, "Calm is a choice, like anything else.", location="100-101"),
            Entry(CURLY, "Long hours are not a badge of honour.", location="200-202"),
        )

        assert Book.objects.filter(reader=alice).count() == 1
        assert Highlight.objects.filter(reader=alice).count() == 2

    def test_it_makes_one_book_of_a_title_whose_authors_are_spelt_two_ways(
        self, alice: User
    ) -> None:
        # Two devices' title lines of one book (a walk through the shared Kindle files).
        first = "Surely You're Joking, Mr. Feynman! (Richard P. Feynman and Ralph Leighton)"
        second = (
            "“Surely You’re Joking, Mr. Feynman”"
            " (Richard Phillips Feynman;Edward Hutchings;Ralph Leighton)"
        )
        _import(alice, Entry(first, "Cargo cult science.", location="10-11"))
        report = _import(
            alice,
            Entry(second, "Cargo cult science.", location="10-11"),
            Entry(second, "The first principle is that you must not fool yourself.", location="20"),
            name="other-device.txt",
        )

        assert report.counts["new_highlights"] == 1
        book = Book.objects.get(reader=alice)
        assert book.authors == "Richard P. Feynman and Ralph Leighton"
        assert Highlight.objects.filter(book=book).count() == 2
        again = _import(alice, Entry(second, "Cargo cult science.", location="10-11"), name="3")
        assert again.counts["new_highlights"] == 0

    def test_it_keeps_two_books_of_one_title_by_different_authors(self, alice: User) -> None:
        _import(
            alice,
            Entry("Poems (Emily Dickinson)", "Hope is the thing with feathers.", location="1"),
            Entry("Poems (Wisława Szymborska)", "Nothing can ever happen twice.", location="1"),
        )

        assert Book.objects.filter(reader=alice, title="Poems").count() == 2

    def test_it_makes_one_book_of_a_title_and_its_files_name(self, alice: User) -> None:
        file_name = "Oreilly.Charting.the.Tides.Apr.2012 (Ines Marlow)"
        _import(
            alice,
            Entry(file_name, "The tide waits for the moon.", location="10-11"),
            Entry("Charting the Tides (Ines Marlow)", "Charts lie at low water.", location="40"),
        )
        again = _import(alice, Entry(file_name, "A new one.", location="70"), name="2")

        book = Book.objects.get(reader=alice)
        assert (book.title, book.authors) == ("Charting the Tides", "Ines Marlow")
        assert book.highlights.count() == 3
        assert again.counts["new_books"] == 0

    def test_it_reads_a_dashed_title_line_by_the_files_other_books(self, alice: User) -> None:
        _import(
            alice,
            Entry(
                f"La Plaisanterie ({KUNDERA})", "Un optimiste est opium du peuple.", location="10"
            ),
            Entry(
                f"L'Immortalité ({KUNDERA})",
                "Le geste est plus individuel que l'individu.",
                location="20",
            ),
            Entry(
                f"{KUNDERA} - La Fête de l'insignifiance",
                "L'insignifiance, c'est l'essence.",
                location="30",
            ),
        )

        fete = Book.objects.get(reader=alice, title="La Fête de l'insignifiance")
        assert fete.authors == KUNDERA
        assert fete.authors_normalized == "milan kundera"
        assert not Book.objects.filter(reader=alice, title=KUNDERA).exists()

    def test_it_reads_a_dashed_title_line_by_the_library(self, alice: User) -> None:
        _import(alice, Entry(f"La Plaisanterie ({KUNDERA})", "Un optimiste.", location="10"))
        _import(
            alice,
            Entry(f"{KUNDERA} - La Fête de l'insignifiance", "L'essence.", location="30"),
            name="later.txt",
        )

        assert Book.objects.get(reader=alice, title="La Fête de l'insignifiance").authors == KUNDERA

    def test_it_adds_nothing_when_the_other_title_line_comes_later(self, alice: User) -> None:
        _import(alice, Entry(STRAIGHT, "Calm is a choice.", location="100-101"))
        again = _import(alice, Entry(CURLY, "Calm is a choice.", location="100-101"), name="b.txt")

        assert again.counts["new_highlights"] == 0
        assert again.counts["duplicates_skipped"] == 1
        assert Book.objects.filter(reader=alice).count() == 1


@pytest.mark.django_db
class EmptyBookTests:
    def _file(self) -> list[Entry]:
        limit = "<You have reached the clipping limit for this item>"
        return [
            Entry(STRAIGHT, "Calm is a choice.", location="100-101"),
            *[Entry(LIMITED, limit, location=f"{n}0-{n}1") for n in range(1, 4)],
            Entry(BOOKMARKED, "", kind="Bookmark", location="55"),
        ]

    def test_it_makes_no_book_of_placeholders_and_bookmarks_and_says_why(self, alice: User) -> None:
        the_import = _import(alice, *self._file())

        assert list(Book.objects.filter(reader=alice).values_list("title", flat=True)) == [
            "It Doesn't Have to Be Crazy at Work"
        ]
        assert the_import.counts["new_books"] == 1  # the books it made, not the ones named
        assert the_import.counts["books_with_nothing"] == {
            "A Book Only Bookmarked": "1 bookmark: no highlight or note to keep",
            "Le Livre verrouillé": (
                "3 entries at the publisher's clipping limit: no highlight or note to keep"
            ),
        }

    def test_it_counts_on_home_the_books_the_exports_hold(self, alice: User) -> None:
        _import(alice, *self._file())
        _import(alice, Entry("Gone Soon (Ana Ferreira)", "A passage.", location="9"), name="b.txt")
        Highlight.objects.filter(book__title="Gone Soon").update(deleted_at="2026-01-01T00:00Z")

        exported = [export.book.title for export in books_to_export(alice)]
        assert library_counts(alice).books == len(exported) == 1
        assert [book.title for book in books_for(alice)] == exported

    def test_it_shows_the_reason_on_the_import_report(self, alice: User, alice_client) -> None:  # type: ignore[no-untyped-def]
        the_import = _import(alice, *self._file())

        page = alice_client.get(the_import.get_absolute_url()).content.decode()

        assert "Not added as books" in page
        assert "A Book Only Bookmarked" in page
        assert "3 entries at the publisher&#x27;s clipping limit" in page

    def test_it_says_the_reason_in_the_readers_language(self, alice: User, alice_client) -> None:  # type: ignore[no-untyped-def]
        the_import = _import(
            alice, *self._file(), Entry(BOOKMARKED, "", kind="Note", location="56")
        )
        # As an import stored it before empty notes were told apart.
        the_import.counts["books_with_nothing"]["Gone"] = (
            "2 bookmarks, 1 entry with no text: no highlight or note to keep"
        )
        the_import.save(update_fields=["counts"])

        url = the_import.get_absolute_url()
        page = alice_client.get(url, headers={"Accept-Language": "es"}).content.decode()

        assert "1 marcador, 1 nota vacía: ningún subrayado ni nota que guardar" in page
        assert (
            "3 entradas en el límite de recortes de la editorial: ningún subrayado ni nota"
        ) in page
        assert "2 marcadores, 1 entrada sin texto: ningún subrayado ni nota que guardar" in page
        assert "bookmark" not in page


EMPTY_NOTE_BOOK = "Empty Note Book (Jane Doe)"
PASSAGE = "A long passage about the sea and the people who live by it."


@pytest.mark.django_db
class EmptyNoteTests:
    """A Kindle writes a note the reader closed empty as an entry with no text."""

    def test_it_makes_no_book_of_an_empty_note_and_says_why(self, alice: User) -> None:
        the_import = _import(alice, Entry(EMPTY_NOTE_BOOK, "", kind="Note", location="10"))

        assert not Book.objects.filter(reader=alice).exists()
        assert not Highlight.objects.filter(reader=alice).exists()
        counts = the_import.counts
        assert (counts["new_books"], counts["standalone_notes"]) == (0, 0)
        assert counts["empty_notes_skipped"] == 1
        assert counts["books_with_nothing"] == {
            "Empty Note Book": "1 empty note: no highlight or note to keep"
        }

    @pytest.mark.parametrize("empty", ["\u200b", "\u200c\u200d", " \u2060 ", "\ufeff\u200b"])
    def test_a_note_of_zero_width_characters_alone_is_empty(self, alice: User, empty: str) -> None:
        the_import = _import(
            alice,
            Entry(EMPTY_NOTE_BOOK, "A passage worth keeping.", location="9-10"),
            Entry(EMPTY_NOTE_BOOK, empty, kind="Note", location="300"),
            Entry(EMPTY_NOTE_BOOK, empty, kind="Note", location="10"),
        )

        counts = the_import.counts
        assert (counts["standalone_notes"], counts["notes_attached"]) == (0, 0)
        assert counts["empty_notes_skipped"] == 2
        assert list(Highlight.objects.filter(reader=alice).values_list("kind", "note")) == [
            (Highlight.Kind.HIGHLIGHT, "")
        ]

    def test_it_skips_an_empty_note_beside_a_highlight_and_counts_it(self, alice: User) -> None:
        the_import = _import(
            alice,
            Entry(EMPTY_NOTE_BOOK, "A passage worth keeping.", location="9-10"),
            Entry(EMPTY_NOTE_BOOK, "", kind="Note", location="10"),
            Entry(EMPTY_NOTE_BOOK, "", kind="Note", location="300"),
        )

        counts = the_import.counts
        assert (counts["new_highlights"], counts["standalone_notes"]) == (1, 0)
        assert (counts["notes_attached"], counts["duplicates_skipped"]) == (0, 0)
        assert counts["empty_notes_skipped"] == 2
        assert list(Highlight.objects.filter(reader=alice).values_list("kind", "note")) == [
            (Highlight.Kind.HIGHLIGHT, "")
        ]

    def test_an_export_holding_an_older_empty_note_imports_whole_elsewhere(
        self, alice: User, bob: User
    ) -> None:
        _import(alice, Entry(EMPTY_NOTE_BOOK, "A passage worth keeping.", location="9-10"))
        book = Book.objects.get(reader=alice)
        # What an import made of an empty note before it was skipped.
        Highlight.objects.create(
            reader=alice, book=book, kind=Highlight.Kind.NOTE, text="", location_start=10,
            dedupe_key="an-empty-note",
        )  # fmt: skip
        data = library_json(books_to_export(alice))

        the_import = clippings_import(reader=bob, data=data, file_name="exogram.json")

        assert the_import.problems == []
        assert the_import.counts["empty_notes_skipped"] == 1
        assert list(Highlight.objects.filter(reader=bob).values_list("text", flat=True)) == [
            "A passage worth keeping."
        ]

    def test_an_empty_note_an_older_import_kept_is_not_counted(self, alice: User) -> None:
        _import(alice, Entry("Another Book (Ana Ferreira)", "A passage.", location="9"))
        _import(alice, Entry(EMPTY_NOTE_BOOK, "", kind="Note", location="10"), name="b.txt")
        # What an import made of the empty note before it was skipped.
        book = Book.objects.create(reader=alice, key="empty-note-book", title="Empty Note Book")
        Highlight.objects.create(
            reader=alice, book=book, kind=Highlight.Kind.NOTE, text="", location_start=10,
            dedupe_key="an-empty-note", embedding_status=Highlight.EmbeddingStatus.FAILED,
        )  # fmt: skip

        another = Book.objects.get(reader=alice, title="Another Book")
        Highlight.objects.create(
            reader=alice, book=another, kind=Highlight.Kind.NOTE, text="", location_start=12,
            dedupe_key="another-empty-note", embedding_status=Highlight.EmbeddingStatus.FAILED,
        )  # fmt: skip

        counts = library_counts(alice)
        assert (counts.books, counts.highlights, counts.no_text) == (1, 1, 0)
        assert [(b.title, b.highlight_count) for b in books_for(alice)] == [("Another Book", 1)]

    def test_every_count_of_a_book_leaves_out_an_empty_note_an_older_import_kept(
        self, alice: User, alice_client: Client
    ) -> None:
        # The review: the library said 1 highlight, the book's page 2, its delete card "1
        # highlight and 1 standalone note", and bringing it back the same.
        _import(alice, Entry("Another Book (Ana Ferreira)", "A passage.", location="9"))
        book = Book.objects.get(reader=alice)
        Highlight.objects.create(
            reader=alice, book=book, kind=Highlight.Kind.NOTE, text="", location_start=12,
            dedupe_key="old-empty-note", embedding_status=Highlight.EmbeddingStatus.FAILED,
        )  # fmt: skip
        _import(alice, Entry("Other Book (Ana Ferreira)", "Another.", location="3"), name="o.txt")

        page = alice_client.get(book.get_absolute_url()).content.decode()

        assert {b.title: b.highlight_count for b in books_for(alice)}["Another Book"] == 1
        assert '<span class="highlight-count">1 highlight</span>' in page
        assert "This deletes everything of this book: 1 highlight, with its tags" in page
        second = Book.objects.get(reader=alice, title="Other Book")
        assert book_merge_preview(kept=second, absorbed=book).moved == 1
        assert delete_count(book_deletable(book=book)) == DeleteCount(1, 0, 0)
        went, _ = book_delete(book=book)
        assert went == DeleteCount(1, 0, 0)
        assert book_bring_back(book=book) == DeleteCount(1, 0, 0)

    def _book_with_an_empty_note(self, alice: User) -> tuple[Book, Highlight]:
        _import(alice, Entry("Another Book (Ana Ferreira)", PASSAGE, location="9"))
        book = Book.objects.get(reader=alice)
        # What an import made of an empty note before it was skipped.
        empty = Highlight.objects.create(
            reader=alice, book=book, kind=Highlight.Kind.NOTE, text="", location_start=12,
            dedupe_key="old-empty-note", embedding_status=Highlight.EmbeddingStatus.FAILED,
        )  # fmt: skip
        return book, empty

    def test_no_list_shows_an_empty_note_an_older_import_kept(
        self, alice: User, alice_client: Client
    ) -> None:
        # The review: the book's page said 1 highlight and listed 2; deleted, /deleted/ said
        # "1 highlight · 1 standalone note" with a blank row, the book's page "Recently
        # deleted: 1 highlight" over two rows.
        book, empty = self._book_with_an_empty_note(alice)

        listed = alice_client.get(book.get_absolute_url()).context["page"].object_list
        assert [h.text for h in listed] == [PASSAGE]

        assert book_delete(book=book)[0] == DeleteCount(1, 0, 0)
        response = alice_client.get(book.get_absolute_url())
        assert [h.text for h in response.context["recently_deleted"]] == [PASSAGE]
        assert "You deleted it on " in response.content.decode()
        assert ": 1 highlight." in response.content.decode()
        deleted = alice_client.get(reverse("deleted"))
        [group] = deleted.context["groups"]
        assert (group.highlights, group.notes, [h.text for h in group.shown]) == (
            1, 0, [PASSAGE]
        )  # fmt: skip
        assert "standalone note" not in deleted.content.decode()
        assert str(empty.code) not in deleted.content.decode()
        # Still deleted with its book, and brought back with it.
        empty.refresh_from_db()
        assert empty.deletion == group.deletion
        assert deletion_bring_back(deletion=group.deletion) == DeleteCount(1, 0, 0)
        assert not Highlight.objects.filter(reader=alice, deleted_at__isnull=False).exists()

    def test_an_empty_note_deleted_alone_lists_nothing(
        self, alice: User, alice_client: Client
    ) -> None:
        # The review: "Recently deleted: 0 highlights" and "Bring back all 0 highlights".
        book, empty = self._book_with_an_empty_note(alice)
        highlight_delete(highlight=empty)

        response = alice_client.get(book.get_absolute_url())
        assert response.context["recently_deleted"] == []
        assert 'id="recently-deleted"' not in response.content.decode()
        deleted = alice_client.get(reverse("deleted"))
        assert deleted.context["groups"] == []
        assert "Nothing deleted." in deleted.content.decode()

    def test_a_delete_of_empty_notes_alone_still_takes_them_as_one(self, alice: User) -> None:
        # The review: a delete whose rows were all empty notes recorded no Deletion.
        book, empty = self._book_with_an_empty_note(alice)
        highlight_delete(highlight=Highlight.objects.get(text=PASSAGE))

        went, at = book_delete(book=book)

        assert went == DeleteCount(0, 0, 0)
        deletion = Deletion.objects.get(reader=alice, book=book)
        empty.refresh_from_db()
        assert (empty.deletion, empty.deleted_at) == (deletion, at)
        assert deletion_bring_back(deletion=deletion) == DeleteCount(0, 0, 0)
        empty.refresh_from_db()
        assert empty.deleted_at is None
