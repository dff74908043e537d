import hashlib

import pytest
from django.db import DatabaseError, connection
from django.test import override_settings
from django.utils import timezone

from accounts.models import User
from books.importing.services import ImportFailed, ImportRejected, clippings_import
from books.models import Book, Highlight, HighlightMerge, Import
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
            "books_changed": 2,
            "new_books": 2,
            "new_highlights": 5,
            "duplicates_skipped": 0,
            "extended_merged": 0,
            "notes_attached": 1,
            "standalone_notes": 0,
            "bookmarks_skipped": 1,
            "empty_notes_skipped": 0,
            "deleted_skipped": 0,
            "already_deleted": 0,
            "deleted_on_device": 0,
            "moved_deleted_on_device": 0,
            "deleted_kept": 0,
            "removed_remembered": 0,
            "untitled_moved": 0,
            "untitled_joined": 0,
            "untitled_removed": 0,
            "truncated_by_book": {},
            "books_with_nothing": {},
            "book_titles": ["Ficciones", "The Man Who Mistook His Wife for a Hat"],
            "changed_titles": ["Ficciones", "The Man Who Mistook His Wife for a Hat"],
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
            # The file names both books, and changes neither.
            assert (again.counts["books_touched"], again.counts["books_changed"]) == (2, 0)
        assert _rows(alice) == before
        assert Book.objects.filter(reader=alice).count() == 2

    def test_it_counts_the_books_it_adds_apart_from_the_books_it_adds_to(
        self, alice: User, bob: User
    ) -> None:
        first = _import(alice, *MEMORY_LIBRARY[:3])  # Ficciones only
        assert (first.counts["books_touched"], first.counts["new_books"]) == (1, 1)
        later = _import(alice, *MEMORY_LIBRARY)  # Ficciones again, and Sacks
        assert (later.counts["books_touched"], later.counts["new_books"]) == (2, 1)
        # Ficciones gained a note, Sacks came new: both changed.
        assert later.counts["books_changed"] == 2
        again = _import(alice, *MEMORY_LIBRARY)
        assert again.counts["new_books"] == 0
        # Her books are not his: the same file adds both to bob's library.
        assert _import(bob, *MEMORY_LIBRARY).counts["new_books"] == 2

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

    def test_it_keeps_a_note_the_reader_edited_and_a_newer_device_note_beside_it(
        self, alice: User
    ) -> None:
        entries = [
            Entry(SACKS, "A life-story, an inner narrative.", location="1520-1522"),
            Entry(SACKS, "device note", kind="Note", location="1522"),
        ]
        _import(alice, *entries)
        Highlight.objects.filter(reader=alice).update(note="edited here", note_edited=True)
        newer = [
            *entries,
            Entry(
                SACKS,
                "newer device note",
                kind="Note",
                location="1522",
                added="Friday, 7 March 2025 10:00:00",
            ),
        ]

        later = _import(alice, *newer)

        highlight = Highlight.objects.get(reader=alice)
        # The note the reader edited over ("device note") stays out; the newer one is kept.
        assert highlight.note == "edited here\n\nnewer device note"
        assert highlight.note_edited is True
        assert (later.counts["notes_attached"], later.counts["books_changed"]) == (1, 1)
        for again in (_import(alice, *newer), _import(alice, *entries)):
            assert (again.counts["notes_attached"], again.counts["books_changed"]) == (0, 0)
        assert Highlight.objects.get(reader=alice).note == "edited here\n\nnewer device note"

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

    def test_it_keeps_the_words_saved_before_a_placeholder(self, alice: User) -> None:
        placeholder = "<You have reached the clipping limit for this item>"
        the_import = _import(
            alice,
            Entry(
                BORGES, f"An issue is something you can do something about, but as {placeholder}"
            ),
            Entry(BORGES, placeholder, location="20-21"),
        )
        assert the_import.counts["truncated_by_book"] == {"Ficciones": 2}
        highlight = Highlight.objects.get(reader=alice)
        assert highlight.text == "An issue is something you can do something about, but as"
        assert "clipping" not in highlight.search_text

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

    def test_it_imports_a_file_with_a_few_damaged_bytes_in_one_entry(self, alice: User) -> None:
        good = clippings_file(*MEMORY_LIBRARY[:2]).decode("utf-8")
        damaged = "Ficciones (Borges)\r\n- Your Highlight on Location 9-10 | Added on Monday, "
        damaged += "March 4, 2024 9:01:22 PM\r\n\r\nlo\x00\x00st\r\n==========\r\n"
        data = (good + damaged + clippings_file(MEMORY_LIBRARY[4]).decode("utf-8")).encode()

        the_import = clippings_import(reader=alice, data=data, file_name="damaged.txt")

        # Not refused as a binary file: the damaged bytes go, every entry stays.
        assert the_import.status == Import.Status.DONE
        assert Highlight.objects.filter(reader=alice, text="lost").exists()
        assert Highlight.objects.filter(reader=alice).count() == 4


@pytest.mark.django_db
class BadInputTests:
    @pytest.mark.parametrize(
        ("data", "message"),
        [
            (b"", "empty"),
            (b"\xef\xbb\xbf\r\n  \r\n", "empty"),
            (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "KoboReader.sqlite"),
            (b"title,author,text\nA,B,C\n", "no Highlight column"),
            (b"Hello there,\nnothing to read here\n", "in none of the formats Exogram reads"),
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
        with pytest.raises(ImportFailed) as failure:
            clippings_import(reader=alice, data=data, file_name="poisoned.txt")
        assert isinstance(failure.value.__cause__, DatabaseError)
        assert "disk on fire" in str(failure.value.__cause__)
        assert not Highlight.objects.exists()
        assert not Book.objects.exists()
        failed = Import.objects.get(reader=alice)
        assert failure.value.the_import == failed
        assert failed.status == Import.Status.FAILED
        assert "nothing was saved" in failed.error
        assert "disk on fire" in failed.error

    def test_it_imports_a_reversed_range_in_order(self, alice: User) -> None:
        _import(alice, Entry(SACKS, "Backwards.", location="90-80"))
        highlight = Highlight.objects.get(reader=alice)
        assert (highlight.location_start, highlight.location_end) == (80, 90)


@pytest.mark.django_db
class SearchTextTests:
    def test_it_folds_text_and_note_for_keyword_search(self, alice: User) -> None:
        _import(
            alice,
            Entry("Cien años de soledad (García Márquez, Gabriel)", "La LIQUIDACIÓN del Ärger."),
        )
        highlight = Highlight.objects.get(reader=alice)
        assert highlight.search_text == "la liquidacion del arger."
        # Title and authors are fields, searched as such (books.search), never as text.


# The examples, written here (not copied from any reader's file).
LIAR = Entry(
    "Atlas Shrugged (Rand, Ayn)",
    "People think that a liar gains a victory over his victim. What he gains is his own "
    "destruction.",
    location="17794-17796",
    added="Monday, 3 March 2025 21:10:00",
)
SLAVE = Entry(
    "Atlas Shrugged (Rand, Ayn)",
    "The man who lies to the world, is the world's slave from then on-",
    location="17797-17797",
    added="Monday, 3 March 2025 21:11:00",
)
STROKE = "The Man Who Mistook His Wife for a Hat (Sacks, Oliver)"
DIE = Entry(
    STROKE,
    "or, as is too often the case, die. Sometimes the blood clot is carried to the brain",
    location="1012-1014",
    added="Monday, 3 March 2025 10:00:00",
)
DEVELOPS = Entry(
    STROKE,
    "Sometimes the blood clot is carried to the brain, and a new deficit develops.",
    location="1013-1015",
    added="Tuesday, 4 March 2025 10:00:00",
)
UNION = (
    "or, as is too often the case, die. Sometimes the blood clot is carried to the brain, "
    "and a new deficit develops."
)
CLEAN_CODE = "Clean Code (Martin, Robert C.)"
NULL_HEAD = Entry(
    CLEAN_CODE,
    "If you are tempted to return null from a",
    location="2679-2680",
    added="Monday, 3 March 2025 14:20:33",
)
NULL_TAIL = Entry(
    CLEAN_CODE,
    "method, consider throwing an exception or returning a SPECIAL CASE object instead.",
    location="2680-2681",
    added="Monday, 3 March 2025 14:20:51",
)


def _texts(reader: User, *, alive: bool = True) -> list[tuple[int | None, int | None, str]]:
    highlights = Highlight.objects.alive() if alive else Highlight.objects.all()
    return sorted(
        highlights.filter(reader=reader).values_list("location_start", "location_end", "text")
    )


@pytest.mark.django_db
class MergeTests:
    def test_it_keeps_neighbouring_sentences_that_share_words_apart(self, alice: User) -> None:
        the_import = _import(alice, LIAR, SLAVE)

        assert _texts(alice) == [(17794, 17796, LIAR.text), (17797, 17797, SLAVE.text)]
        assert the_import.counts["extended_merged"] == 0

    def test_it_stitches_a_reselection_that_starts_earlier(self, alice: User) -> None:
        the_import = _import(alice, DIE, DEVELOPS)

        assert _texts(alice) == [(1012, 1015, UNION)]
        assert the_import.counts["extended_merged"] == 1
        (merge,) = HighlightMerge.objects.filter(source_import=the_import)
        assert (merge.how, merge.merged_text, merge.where) == (
            HighlightMerge.How.OVERLAPPED,
            DEVELOPS.text,
            "location 1013-1015",
        )

    @pytest.mark.parametrize(
        ("part_added", "whole_added"),
        [("10:00:00", "10:00:40"), ("10:00:40", "10:00:00")],
        ids=["part first", "whole first"],
    )
    def test_of_a_passage_selected_in_part_and_whole_the_report_lists_the_part(
        self, alice: User, part_added: str, whole_added: str
    ) -> None:
        whole = "Envy is the art of counting the other fellow's blessings instead of your own."
        day = "Monday, 3 March 2025"
        part = Entry(SACKS, whole[:36], location="210-211", added=f"{day} {part_added}")
        later = Entry(SACKS, whole, location="210-213", added=f"{day} {whole_added}")

        the_import = _import(alice, part, later)

        assert [text for _start, _end, text in _texts(alice)] == [whole]
        (merge,) = HighlightMerge.objects.filter(source_import=the_import)
        # The version that went in is the part, not the highlight as it now reads.
        assert (merge.how, merge.merged_text, merge.where) == (
            HighlightMerge.How.EXTENDED,
            part.text,
            "location 210-211",
        )

    def test_it_gives_the_same_highlight_whatever_the_order_of_the_entries(
        self, alice: User, bob: User
    ) -> None:
        _import(alice, DIE, DEVELOPS)
        _import(bob, DEVELOPS, DIE)

        assert _texts(alice) == _texts(bob) == [(1012, 1015, UNION)]

    def test_it_stitches_a_reselection_into_a_stored_highlight(self, alice: User) -> None:
        _import(alice, DEVELOPS)
        stored = Highlight.objects.get(reader=alice)
        stored.note, stored.note_edited, stored.favourite = "strokes", True, True
        stored.save(update_fields=["note", "note_edited", "favourite"])

        later = _import(alice, DIE)

        assert later.counts["extended_merged"] == 1
        stored.refresh_from_db()
        assert (stored.text, stored.location_start, stored.location_end) == (UNION, 1012, 1015)
        assert (stored.note, stored.favourite) == ("strokes", True)
        # The earliest date of the two versions: when the reader first marked the passage.
        assert stored.added_at is not None
        assert stored.added_at.day == 3
        assert stored.embedding_status == Highlight.EmbeddingStatus.PENDING

    def test_it_joins_a_highlight_split_at_a_page_turn(self, alice: User) -> None:
        the_import = _import(alice, NULL_HEAD, NULL_TAIL)

        assert _texts(alice) == [(2679, 2681, f"{NULL_HEAD.text} {NULL_TAIL.text}")]
        assert the_import.merges.get().how == HighlightMerge.How.PAGE_TURN

    def test_it_joins_the_halves_of_a_first_law_split(self, alice: User) -> None:
        head = Entry(
            CLEAN_CODE,
            "First Law You may not write production code until you have",
            location="3104-3105",
            added="Monday, 3 March 2025 15:00:01",
        )
        tail = Entry(
            CLEAN_CODE,
            "written a failing unit test.",
            location="3105-3105",
            added="Monday, 3 March 2025 15:00:09",
        )

        _import(alice, tail, head)

        assert _texts(alice) == [(3104, 3105, f"{head.text} {tail.text}")]

    def test_it_keeps_both_halves_when_they_were_made_minutes_apart(self, alice: User) -> None:
        tail = Entry(CLEAN_CODE, NULL_TAIL.text, location="2680-2681", added=NULL_TAIL.added)
        head = Entry(
            CLEAN_CODE, NULL_HEAD.text, location="2679-2680", added="Monday, 3 March 2025 14:10:00"
        )

        _import(alice, head, tail)

        assert _texts(alice) == [(2679, 2680, head.text), (2680, 2681, tail.text)]

    def test_it_merges_a_chain_of_versions_met_out_of_order(self, alice: User) -> None:
        words = [f"word{number}" for number in range(12)]
        a = Entry(BORGES, " ".join(words[0:6]), location="10-11")
        b = Entry(BORGES, " ".join(words[3:9]), location="11-12")
        c = Entry(BORGES, " ".join(words[6:12]), location="12-13")

        the_import = _import(alice, a, c, b)

        assert _texts(alice) == [(10, 13, " ".join(words))]
        assert the_import.counts["extended_merged"] == 2
        assert the_import.merges.count() == 2

    def test_it_extends_one_stored_highlight_and_leaves_its_neighbour_alone(
        self, alice: User
    ) -> None:
        words = [f"word{number}" for number in range(12)]
        a = Entry(BORGES, " ".join(words[0:6]), location="10-11")
        c = Entry(
            BORGES, " ".join(words[6:12]), location="12-13", added="Friday, 7 March 2025 10:00"
        )
        _import(alice, a, c)
        b = Entry(BORGES, " ".join(words[3:9]), location="11-12")

        _import(alice, b)

        # Two stored highlights are never merged into one: each may have its own note.
        assert _texts(alice) == [(10, 12, " ".join(words[0:9])), (12, 13, c.text)]
        assert _import(alice, a, b, c).counts == _import(alice, a, b, c).counts

    def test_it_changes_nothing_when_the_same_file_comes_again(self, alice: User) -> None:
        entries = [LIAR, SLAVE, DIE, DEVELOPS, NULL_HEAD, NULL_TAIL]
        _import(alice, *entries)
        before = list(Highlight.objects.filter(reader=alice).values_list("pk", "text", "updated"))

        again = _import(alice, *entries)

        assert again.counts["new_highlights"] == 0
        assert again.counts["extended_merged"] == 0
        assert again.counts["duplicates_skipped"] == len(entries)
        assert not again.merges.exists()
        after = list(Highlight.objects.filter(reader=alice).values_list("pk", "text", "updated"))
        assert sorted(after) == sorted(before)

    def test_it_keeps_a_deleted_highlight_and_its_versions_deleted(self, alice: User) -> None:
        _import(alice, DEVELOPS)
        Highlight.objects.filter(reader=alice).update(deleted_at=timezone.now())

        later = _import(alice, DIE)

        assert later.counts["deleted_skipped"] == 1
        assert later.counts["new_highlights"] == 0
        assert _texts(alice) == []
        # Its words are kept with it, so the next import knows them too.
        assert _texts(alice, alive=False) == [(1012, 1015, UNION)]
        again = _import(alice, DIE, DEVELOPS)
        assert (again.counts["deleted_skipped"], again.counts["new_highlights"]) == (2, 0)
        assert not HighlightMerge.objects.exists()

    def test_it_merges_versions_on_a_page_without_locations(self, alice: User) -> None:
        first = Entry(SACKS, DIE.text, location="", page="12")
        second = Entry(SACKS, DEVELOPS.text, location="", page="12")
        other = Entry(
            SACKS, "The man who lies to the world is a slave of the brain.", location="", page="12"
        )

        _import(alice, first, second, other)

        texts = sorted(Highlight.objects.filter(reader=alice).values_list("page", "text"))
        assert texts == sorted([("12", UNION), ("12", other.text)])
