import hashlib

import pytest
from django.db import DatabaseError, connection
from django.test import override_settings
from django.utils import timezone

from accounts.models import User
from books.importing.services import ImportRejected, clippings_import
from books.models import Book, Highlight, Import
from tests.books.kindle import BORGES, MEMORY_LIBRARY, SACKS, Entry, clippings_file


def _import(reader: User, *entries: Entry) -> Import:
    return clippings_import(reader=reader, data=clippings_file(*entries), file_name="clips.txt")


def _rows(reader: User) -> list[tuple[str, str, int | None, int | None, str, str]]:
    return sorted(
        Highlight.objects.filter(reader=reader).values_list(
            "book__title", "kind", "location_start", "location_end", "text", "note"
        )
    )


@pytest.mark.django_db
class ImportTests:
    def test_it_imports_books_highlights_notes_and_a_report(self, alice: User) -> None:
        the_import = _import(alice, *MEMORY_LIBRARY)
        assert the_import.status == Import.Status.DONE
        assert the_import.sha256 == hashlib.sha256(clippings_file(*MEMORY_LIBRARY)).hexdigest()
        assert the_import.counts == {
            "books_touched": 2,
            "new_highlights": 5,
            "duplicates_skipped": 0,
            "extended_merged": 0,
            "notes_attached": 1,
            "standalone_notes": 0,
            "bookmarks_skipped": 1,
            "deleted_skipped": 0,
            "truncated_by_book": {},
        }
        books = {b.title: b for b in Book.objects.filter(reader=alice)}
        assert set(books) == {"Ficciones", "The Man Who Mistook His Wife for a Hat"}
        assert books["Ficciones"].authors == "Borges, Jorge Luis"
        think = Highlight.objects.get(reader=alice, location_start=412)
        assert think.note == "Read this twice."
        assert think.text.startswith("To think is to forget")
        assert think.location_end == 414
        assert think.added_at is not None
        assert think.source_import == the_import
        assert think.embedding_status == Highlight.EmbeddingStatus.PENDING

    def test_it_is_idempotent(self, alice: User) -> None:
        _import(alice, *MEMORY_LIBRARY)
        before = _rows(alice)
        for _ in range(2):
            again = _import(alice, *MEMORY_LIBRARY)
            assert again.counts["new_highlights"] == 0
            assert again.counts["duplicates_skipped"] == 6
            assert again.counts["notes_attached"] == 0
        assert _rows(alice) == before
        assert Book.objects.filter(reader=alice).count() == 2

    def test_it_adds_only_what_is_new_from_a_longer_file(self, alice: User) -> None:
        _import(alice, *MEMORY_LIBRARY[:3])
        later = _import(alice, *MEMORY_LIBRARY)
        assert later.counts["new_highlights"] == 2
        assert later.counts["duplicates_skipped"] == 3
        assert Highlight.objects.filter(reader=alice).count() == 5

    def test_it_merges_an_extended_highlight_keeping_the_longest(self, alice: User) -> None:
        short = Entry(BORGES, "To think is to forget differences", location="412-413")
        longer = Entry(
            BORGES,
            "To think is to forget differences, to generalize, to abstract.",
            location="412-414",
            added="Tuesday, 4 March 2025 09:00:00",
        )
        first = _import(alice, short, longer)
        assert first.counts["new_highlights"] == 1
        assert first.counts["extended_merged"] == 1
        (only,) = Highlight.objects.filter(reader=alice)
        assert only.text == longer.text
        assert (only.location_start, only.location_end) == (412, 414)
        # the shorter version again, alone: nothing changes
        again = _import(alice, short)
        assert again.counts["duplicates_skipped"] == 1
        assert Highlight.objects.get(reader=alice).text == longer.text

    def test_it_merges_a_later_extension_and_keeps_the_readers_note(self, alice: User) -> None:
        _import(alice, Entry(BORGES, "He remembered every leaf", location="380"))
        highlight = Highlight.objects.get(reader=alice)
        highlight.note, highlight.note_edited = "my own words", True
        highlight.save(update_fields=["note", "note_edited"])
        extended = _import(
            alice, Entry(BORGES, "He remembered every leaf of every tree.", location="380-381")
        )
        assert extended.counts["extended_merged"] == 1
        highlight.refresh_from_db()
        assert highlight.text == "He remembered every leaf of every tree."
        assert highlight.note == "my own words"
        assert highlight.embedding_status == Highlight.EmbeddingStatus.PENDING

    def test_it_keeps_different_highlights_with_overlapping_ranges(self, alice: User) -> None:
        _import(
            alice,
            Entry(BORGES, "The garden of forking paths is an enormous riddle.", location="500-502"),
            Entry(BORGES, "Time forks perpetually toward innumerable futures.", location="502-503"),
        )
        assert Highlight.objects.filter(reader=alice).count() == 2

    def test_it_attaches_a_note_written_before_its_highlight(self, alice: User) -> None:
        the_import = _import(
            alice,
            Entry(SACKS, "Continuity.", kind="Note", location="1522"),
            Entry(SACKS, "A life-story, an inner narrative.", location="1520-1522"),
        )
        assert the_import.counts["notes_attached"] == 1
        assert Highlight.objects.get(reader=alice).note == "Continuity."

    def test_it_attaches_a_note_to_the_nearest_preceding_highlight(self, alice: User) -> None:
        _import(
            alice,
            Entry(SACKS, "A life-story, an inner narrative.", location="1520-1522"),
            Entry(SACKS, "Near enough.", kind="Note", location="1530"),
        )
        assert Highlight.objects.get(reader=alice, kind="highlight").note == "Near enough."

    def test_it_keeps_a_note_with_no_highlight_as_a_standalone_note(self, alice: User) -> None:
        the_import = _import(
            alice,
            Entry(SACKS, "A life-story, an inner narrative.", location="1520-1522"),
            Entry(SACKS, "Far away thought.", kind="Note", location="1600"),
        )
        assert the_import.counts["standalone_notes"] == 1
        note = Highlight.objects.get(reader=alice, kind=Highlight.Kind.NOTE)
        assert (note.text, note.location_start) == ("Far away thought.", 1600)
        again = _import(alice, Entry(SACKS, "Far away thought.", kind="Note", location="1600"))
        assert again.counts["duplicates_skipped"] == 1
        assert Highlight.objects.filter(reader=alice, kind=Highlight.Kind.NOTE).count() == 1

    def test_it_replaces_a_note_with_a_newer_edit_from_the_device(self, alice: User) -> None:
        highlight = Entry(SACKS, "A life-story, an inner narrative.", location="1520-1522")
        _import(alice, highlight, Entry(SACKS, "first", kind="Note", location="1522"))
        _import(
            alice,
            Entry(
                SACKS,
                "second thoughts",
                kind="Note",
                location="1522",
                added="Friday, 7 March 2025 10:00:00",
            ),
        )
        assert Highlight.objects.get(reader=alice).note == "second thoughts"
        # the older file again does not bring the old note back
        _import(alice, highlight, Entry(SACKS, "first", kind="Note", location="1522"))
        assert Highlight.objects.get(reader=alice).note == "second thoughts"

    def test_it_never_overwrites_a_note_the_reader_edited(self, alice: User) -> None:
        entries = [
            Entry(SACKS, "A life-story, an inner narrative.", location="1520-1522"),
            Entry(SACKS, "device note", kind="Note", location="1522"),
        ]
        _import(alice, *entries)
        Highlight.objects.filter(reader=alice).update(note="edited here", note_edited=True)
        _import(
            alice,
            *entries,
            Entry(
                SACKS,
                "newer device note",
                kind="Note",
                location="1522",
                added="Friday, 7 March 2025 10:00:00",
            ),
        )
        assert Highlight.objects.get(reader=alice).note == "edited here"

    def test_it_does_not_bring_back_a_deleted_highlight(self, alice: User) -> None:
        _import(alice, *MEMORY_LIBRARY)
        Highlight.objects.filter(reader=alice, location_start=380).update(deleted_at=timezone.now())
        again = _import(alice, *MEMORY_LIBRARY)
        assert again.counts["deleted_skipped"] == 1
        assert again.counts["new_highlights"] == 0
        assert Highlight.objects.alive().filter(reader=alice).count() == 4

    def test_it_matches_the_same_book_across_spellings(self, alice: User) -> None:
        _import(alice, Entry("Ficciones (Borges, Jorge Luis)", "One.", location="1"))
        _import(
            alice,
            Entry("\ufeffficciones  (Spanish Edition) (Borges, Jorge Luis)", "Two.", location="9"),
        )
        assert Book.objects.filter(reader=alice).count() == 1

    def test_it_reports_truncated_entries_per_book_without_storing_them(self, alice: User) -> None:
        placeholder = "<You have reached the clipping limit for this item>"
        the_import = _import(
            alice,
            Entry(BORGES, placeholder, location="10-11"),
            Entry(BORGES, placeholder, location="20-21"),
            Entry(SACKS, "Kept.", location="5"),
        )
        assert the_import.counts["truncated_by_book"] == {"Ficciones": 2}
        assert Highlight.objects.filter(reader=alice).count() == 1

    def test_it_keeps_readers_apart(self, alice: User, bob: User) -> None:
        _import(alice, *MEMORY_LIBRARY)
        bobs = _import(bob, *MEMORY_LIBRARY)
        assert bobs.counts["new_highlights"] == 5
        assert Highlight.objects.filter(reader=bob).count() == 5
        assert Book.objects.filter(reader=bob).count() == 2

    def test_it_keeps_the_good_entries_of_a_file_with_a_broken_one(self, alice: User) -> None:
        good = clippings_file(*MEMORY_LIBRARY[:2]).decode("utf-8")
        broken = (
            "Ficciones (Borges)\r\n- this line is no metadata at all\r\n\r\nlost\r\n==========\r\n"
        )
        data = (good + broken + clippings_file(MEMORY_LIBRARY[4]).decode("utf-8")).encode()
        the_import = clippings_import(reader=alice, data=data, file_name="broken.txt")
        assert Highlight.objects.filter(reader=alice).count() == 3
        assert len(the_import.problems) == 1
        assert the_import.problems[0]["line"] in (11, 12)


@pytest.mark.django_db
class BadInputTests:
    @pytest.mark.parametrize(
        ("data", "message"),
        [
            (b"", "empty"),
            (b"\xef\xbb\xbf\r\n  \r\n", "empty"),
            (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "binary"),
            (b"title,author,text\nA,B,C\n", "not a Kindle"),
        ],
    )
    def test_it_rejects_files_it_cannot_import(
        self, alice: User, data: bytes, message: str
    ) -> None:
        with pytest.raises(ImportRejected, match=message):
            clippings_import(reader=alice, data=data, file_name="bad.bin")
        assert not Import.objects.exists()
        assert not Book.objects.exists()

    @pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
    def test_it_imports_utf16_without_a_bom(self, alice: User, codec: str) -> None:
        # Its NUL bytes are text: the parser's own UTF-16 sniffing must get to read it.
        data = clippings_file(*MEMORY_LIBRARY).decode("utf-8").lstrip("\ufeff").encode(codec)
        assert not data.startswith((b"\xff\xfe", b"\xfe\xff"))
        the_import = clippings_import(reader=alice, data=data, file_name="utf16.txt")
        assert the_import.status == Import.Status.DONE
        texts = set(Highlight.objects.filter(reader=alice).values_list("text", flat=True))
        assert "He remembered every leaf of every tree of every wood." in texts

    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_it_rejects_a_file_over_the_size_limit(self, alice: User) -> None:
        data = clippings_file(*MEMORY_LIBRARY) * 3000
        with pytest.raises(ImportRejected, match="the limit is 1 MB"):
            clippings_import(reader=alice, data=data, file_name="huge.txt")
        assert not Highlight.objects.exists()

    def test_it_rolls_back_everything_when_writing_fails(self, alice: User) -> None:
        # A real failure in the middle of the write: a trigger refuses one highlight after
        # the books and other highlights went in. Nothing may stay but the failed record.
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE FUNCTION refuse_poison() RETURNS trigger AS $$ BEGIN "
                "IF NEW.text = 'Poison.' THEN RAISE EXCEPTION 'disk on fire'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                "CREATE TRIGGER refuse_poison BEFORE INSERT ON books_highlight "
                "FOR EACH ROW EXECUTE FUNCTION refuse_poison()"
            )
        data = clippings_file(*MEMORY_LIBRARY[:2], Entry(SACKS, "Poison.", location="90"))
        with pytest.raises(DatabaseError, match="disk on fire"):
            clippings_import(reader=alice, data=data, file_name="poisoned.txt")
        assert not Highlight.objects.exists()
        assert not Book.objects.exists()
        failed = Import.objects.get(reader=alice)
        assert failed.status == Import.Status.FAILED
        assert "nothing was saved" in failed.error
        assert "disk on fire" in failed.error

    def test_it_imports_a_reversed_range_in_order(self, alice: User) -> None:
        _import(alice, Entry(SACKS, "Backwards.", location="90-80"))
        highlight = Highlight.objects.get(reader=alice)
        assert (highlight.location_start, highlight.location_end) == (80, 90)


@pytest.mark.django_db
class SearchTextTests:
    def test_it_folds_text_note_title_and_author_for_keyword_search(self, alice: User) -> None:
        _import(
            alice,
            Entry("Cien años de soledad (García Márquez, Gabriel)", "La LIQUIDACIÓN del Ärger."),
        )
        highlight = Highlight.objects.get(reader=alice)
        assert "la liquidacion del arger" in highlight.search_text
        assert "cien anos de soledad" in highlight.search_text
        assert "garcia marquez, gabriel" in highlight.search_text
