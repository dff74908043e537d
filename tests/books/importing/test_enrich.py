"""Every format through the one import workflow: the same report, idempotent, and what the
richer formats carry (notes on highlights, tags, favourites, chapters) kept. The Exogram
JSON round trip: export → import into a fresh reader → the same library."""

import itertools
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from accounts.models import User
from books.exporting.services import library_export
from books.importing.services import ImportRejected, clippings_import
from books.models import Book, Highlight, Import, Tag
from books.services import highlight_favourite_toggle, highlight_note_update, highlight_tag
from books.text import tag_name
from tests.books.exporting.library import FUNES as FUNES_LINE
from tests.books.exporting.library import build_library
from tests.books.kindle import Entry, clippings_file

FIXTURES = Path(__file__).parent / "fixtures"


def _import(reader: User, name: str) -> Import:
    data = (FIXTURES / name).read_bytes()
    return clippings_import(reader=reader, data=data, file_name="upload.bin")


def _library(reader: User) -> list[tuple[object, ...]]:
    """Everything a reader owns in their library, without ids or codes."""
    rows = []
    for h in (
        Highlight.objects.filter(reader=reader)
        .select_related("book")
        .order_by("book__title", "location_start", "text")
    ):
        rows.append(
            (
                h.book.title, h.book.authors, h.kind, h.text, h.note, h.note_edited, h.page,
                h.location_start, h.location_end, h.added_at, h.added_raw, h.favourite,
                tuple(sorted(h.tags.values_list("name", flat=True))), h.chapter, h.colour,
                h.deleted_at,
            )
        )  # fmt: skip
    return rows


def _utc(year: int, month: int, day: int, hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


# What a reader may name a tag (the tag form folds its spacing), all but Readwise's
# "favorite", which the CSV reads as a favourite: commas, quotes, a formula's sign, accents.
TAG_NAMES = st.text(
    st.sampled_from([*"ab Zé,\"'=+-@#ñ中", "\u00a0", "\t"]), min_size=1, max_size=20
).filter(lambda name: tag_name(name).casefold() != "favorite")
_readers = itertools.count()


def _marks(reader: User) -> list[tuple[object, ...]]:
    """What a reader marked each highlight with: its tags, favourite and colour."""
    marks = []
    for h in Highlight.objects.filter(reader=reader):
        tags = tuple(sorted(h.tags.values_list("name", flat=True), key=str.casefold))
        marks.append((h.kind, h.text, tags, h.favourite, h.colour))
    return sorted(marks)


@pytest.mark.django_db
class FormatImportTests:
    def test_it_imports_a_kindle_notebook_with_notes_attached_and_chapters_kept(
        self, alice: User
    ) -> None:
        the_import = _import(alice, "notebook_desktop.html")
        assert the_import.counts["new_highlights"] == 3
        assert the_import.counts["notes_attached"] == 1
        assert the_import.counts["bookmarks_skipped"] == 1
        engine = Highlight.objects.get(reader=alice, location_start=61)
        assert engine.note == "Compare with Heraclitus."
        assert (engine.chapter, engine.colour) == ("Part One > Chapter 1", "pink")
        assert engine.book.title == "The Quiet Engine"

    def test_it_reports_problems_with_their_lines(self, alice: User) -> None:
        the_import = _import(alice, "notebook_mobile.html")
        assert the_import.problems == [
            {
                "line": 54,
                "message": "no location or page in the heading 'Highlight (blue) - Somewhere'",
            }
        ]
        assert the_import.counts["new_highlights"] == 3

    @pytest.mark.parametrize(
        "name",
        ["notebook_desktop.html", "notebook_mobile.html", "notebook_zh.html", "readwise.csv",
         "readwise_export.csv", "bookcision.json", "exogram.json"],
    )  # fmt: skip
    def test_a_second_import_changes_nothing(self, alice: User, name: str) -> None:
        first = _import(alice, name)
        before = _library(alice)
        second = _import(alice, name)
        assert _library(alice) == before
        assert second.counts["new_highlights"] == 0
        assert second.counts["notes_attached"] == 0
        assert second.counts["tags_added"] == second.counts["favourites"] == 0
        assert second.counts["duplicates_skipped"] >= first.counts["new_highlights"]

    def test_it_imports_readwise_notes_on_their_highlights(self, alice: User) -> None:
        the_import = _import(alice, "readwise.csv")
        assert the_import.counts["new_highlights"] == 4
        assert the_import.counts["standalone_notes"] == 1
        assert the_import.counts["notes_attached"] == 1
        diary = Highlight.objects.get(reader=alice, location_start=1020)
        assert diary.note == "Compare Funes."
        assert "compare funes" in diary.search_text
        assert len(the_import.problems) == 2

    def test_it_imports_readwises_export_with_its_books_dates_places_and_tags(
        self, alice: User
    ) -> None:
        # Readwise's export names its columns Book Title, Book Author, Highlighted at: every
        # highlight went into one "Untitled" book, undated, and a page or an article's
        # order was shown as a Kindle location.
        the_import = _import(alice, "readwise_export.csv")
        assert the_import.problems == []
        assert the_import.counts["new_highlights"] == 6
        assert sorted(Book.objects.filter(reader=alice).values_list("title", "authors")) == [
            ("Episode 41: Bridges", "The Span Podcast"),
            ("Notes on Slow Software", "Ida Brandt"),
            ("Orchards Without Maps", "Tobías Ferreira"),
            ("The Salt Ledger", "Marta Quillfeather"),
        ]
        places = {
            h.text[:12]: (h.book.title, h.location_start, h.page, h.added_at)
            for h in Highlight.objects.filter(reader=alice).select_related("book")
        }
        assert places == {
            "A lighthouse": ("The Salt Ledger", 1412, "", _utc(2021, 3, 14, 18, 7)),
            "Fog is only ": ("The Salt Ledger", 1530, "", _utc(2021, 3, 15, 7, 45, 12)),
            "Every map of": ("Orchards Without Maps", None, "87", _utc(2022, 11, 2, 21, 30)),
            "Pruning is a": ("Orchards Without Maps", None, "112", _utc(2022, 11, 3, 8)),
            "The newslett": ("Notes on Slow Software", None, "", _utc(2023, 6, 1, 12)),  # order
            "A bridge is ": ("Episode 41: Bridges", None, "", _utc(2024, 2, 10, 19, 20, 5)),  # time
        }
        assert _marks(alice) == [
            ("highlight", "A bridge is a promise two banks keep to each other.", (), False, ""),
            (
                "highlight",
                "A lighthouse keeper counts the ships that never come, and calls the count a "
                "harvest.",
                ("harbours", "quill, marta", "sea"),
                False,
                "yellow",
            ),
            (
                "highlight",
                "Every map of the orchard was drawn in winter, when the trees could not argue.",
                ("gardens",),
                False,
                "",
            ),
            ("highlight", "Fog is only the sea deciding to stand up for a while.", ("sea",), True,
             "blue"),
            ("highlight", "Pruning is a conversation held one cut at a time.", ("gardens",), False,
             ""),
            ("highlight", "The newsletter argued that slowness is a kind of maintenance.", (),
             False, ""),
        ]  # fmt: skip
        pruning = Highlight.objects.get(reader=alice, page="112")
        assert pruning.note == "Ask grandmother about the pear tree."
        assert not Tag.objects.filter(reader=alice, name__iexact="favorite").exists()

    def test_readwises_tags_reach_the_kindle_highlights_a_library_holds(self, alice: User) -> None:
        """Readwise's export gives a Kindle highlight's first location only (`412` for
        412-414): the entry's words are found in the highlight held, and its tags, its
        favourite and its note went nowhere (only the exact place's key was looked up)."""
        kindle = clippings_file(
            Entry("Ficciones (Borges, Jorge Luis)", "To think is to forget differences.",
                  location="412-414"),
        )  # fmt: skip
        clippings_import(reader=alice, data=kindle, file_name="My Clippings.txt")
        readwise = (
            b"Highlight,Book Title,Book Author,Amazon Book ID,Note,Color,Tags,Location Type,"
            b"Location,Highlighted at,Document tags\r\n"
            b'"To think is to forget differences.",Ficciones,"Jorge Luis Borges",,'
            b'"Funes, again",yellow,"memory, favorite",location,412,'
            b"2025-03-03 10:00:00+00:00,\r\n"
        )
        first = clippings_import(reader=alice, data=readwise, file_name="readwise.csv")
        [held] = Highlight.objects.filter(reader=alice)
        assert [t.name for t in held.tags.all()] == ["memory"]
        assert (held.favourite, held.colour, held.note) == (True, "yellow", "Funes, again")
        assert (first.counts["new_highlights"], first.counts["tags_added"]) == (0, 1)
        again = clippings_import(reader=alice, data=readwise + b"\r\n", file_name="again.csv")
        assert (again.counts["new_highlights"], again.counts["tags_added"]) == (0, 0)
        assert Highlight.objects.filter(reader=alice).count() == 1

    def test_another_selections_note_is_kept_beside_the_readers_not_over_it(
        self, alice: User
    ) -> None:
        """A row holding a piece of the Kindle passage (found by its words, not its place)
        and a newer note: "the newer note wins" is for two copies of one highlight's note;
        here it replaced the reader's note on the whole passage, for good. Of two such rows,
        the one with the passage's words gives what a highlight has one of (its colour)."""
        passage = "To think is to forget differences, to generalize, to abstract."
        kindle = clippings_file(
            Entry("Ficciones (Borges, Jorge Luis)", passage, location="412-414",
                  added="Monday, 3 March 2023 10:00:00"),
            Entry("Ficciones (Borges, Jorge Luis)", "my kindle thought", kind="Note",
                  location="414", added="Monday, 3 March 2023 10:00:00"),
        )  # fmt: skip
        clippings_import(reader=alice, data=kindle, file_name="My Clippings.txt")
        header = (
            b"Highlight,Book Title,Book Author,Note,Color,Tags,Location Type,Location,"
            b"Highlighted at\r\n"
        )
        rows = (
            b'"to forget differences",Ficciones,"Jorge Luis Borges","a newer note",blue,,'
            b"location,413,2026-03-03 10:00:00+00:00\r\n"
            + f'"{passage}",Ficciones,"Jorge Luis Borges",,yellow,,location,412,'.encode()
            + b"2026-03-03 10:00:00+00:00\r\n"
        )
        clippings_import(reader=alice, data=header + rows, file_name="readwise.csv")
        [held] = Highlight.objects.filter(reader=alice)
        assert "my kindle thought" in held.note
        assert "a newer note" in held.note
        assert held.colour == "yellow"
        again = clippings_import(reader=alice, data=header + rows + b"\r\n", file_name="b.csv")
        assert again.counts["books_changed"] == 0
        assert Highlight.objects.get(pk=held.pk).note == held.note

    def test_it_imports_bookcision(self, alice: User) -> None:
        the_import = _import(alice, "bookcision.json")
        assert the_import.counts["new_highlights"] == 2
        assert the_import.counts["standalone_notes"] == 1
        assert Highlight.objects.get(reader=alice, location_start=380).note == "Funes again."

    def test_it_keeps_a_note_the_reader_edited_and_a_changed_one_from_the_file_beside_it(
        self, alice: User
    ) -> None:
        _import(alice, "bookcision.json")
        funes = Highlight.objects.get(reader=alice, location_start=380)
        highlight_note_update(highlight=funes, note="My words, not the file's.")
        changed = json.loads((FIXTURES / "bookcision.json").read_text())
        changed["highlights"][0]["note"] = "A newer note in the file."
        data = json.dumps(changed).encode()

        update = clippings_import(reader=alice, data=data, file_name="b.json")
        again = clippings_import(reader=alice, data=data, file_name="b.json")

        funes.refresh_from_db()
        # Bookcision dates no note: which is newer is unknown, and both words stay.
        assert funes.note == "My words, not the file's.\n\nA newer note in the file."
        assert (update.counts["notes_attached"], update.counts["books_changed"]) == (1, 1)
        assert (again.counts["notes_attached"], again.counts["books_changed"]) == (0, 0)

    def test_it_keeps_exogram_tags_favourites_and_edited_notes(self, alice: User) -> None:
        the_import = _import(alice, "exogram.json")
        engine = Highlight.objects.get(reader=alice, kind="highlight")
        assert engine.note == "My own words."
        assert engine.note_edited is True
        assert engine.favourite is True
        assert sorted(engine.tags.values_list("name", flat=True)) == ["machines", "solitude"]
        assert the_import.counts["tags_added"] == 2
        assert the_import.counts["favourites"] == 1
        assert Highlight.objects.get(reader=alice, kind="note").location_start == 900

    def test_a_book_it_only_tags_is_one_it_changed_and_past_imports_names_it(
        self, alice: User
    ) -> None:
        _import(alice, "exogram.json")
        engine = Highlight.objects.get(reader=alice, kind="highlight")
        engine.tags.clear()
        export = json.loads((FIXTURES / "exogram.json").read_text())
        export["books"][0]["highlights"][0]["tags"] += ["engines", "hum"]

        again = clippings_import(
            reader=alice, data=json.dumps(export).encode(), file_name="upload.bin"
        )

        # Only the tags it lists anew: the two the reader took away stay away.
        assert sorted(engine.tags.values_list("name", flat=True)) == ["engines", "hum"]
        assert again.counts["tags_added"] == 2
        assert again.counts["books_changed"] == 1
        assert again.counts["changed_titles"] == [engine.book.title]

    def test_it_rejects_json_it_does_not_know_and_writes_nothing(self, alice: User) -> None:
        with pytest.raises(ImportRejected, match="neither an Exogram export"):
            clippings_import(reader=alice, data=b'{"hello": "world"}', file_name="x.json")
        assert not Highlight.objects.filter(reader=alice).exists()


@pytest.mark.django_db
class RoundTripTests:
    def test_an_exogram_export_reimports_into_a_fresh_reader_without_loss(
        self, alice: User, bob: User
    ) -> None:
        build_library(alice)
        _import(alice, "notebook_desktop.html")  # chapters and colours too
        exported = library_export(reader=alice, format="json")
        the_import = clippings_import(reader=bob, data=exported.data, file_name=exported.name)
        assert the_import.problems == []
        assert _library(bob) == _library(alice)
        again = clippings_import(reader=bob, data=exported.data, file_name=exported.name)
        assert again.counts["new_highlights"] == 0
        assert _library(bob) == _library(alice)

    def test_a_readwise_csv_export_carries_tags_favourites_and_colours_to_a_fresh_reader(
        self, alice: User, bob: User
    ) -> None:
        rows = build_library(alice)
        _import(alice, "notebook_desktop.html")  # colours too
        highlight_tag(highlight=rows["We"], name="psicología aplicada")
        highlight_tag(highlight=rows["We"], name="Smith, John")
        highlight_tag(highlight=rows["A"], name="=1+1")  # a formula's sign, guarded and back
        highlight_favourite_toggle(highlight=rows["A"])  # a note on its own
        exported = library_export(reader=alice, format="csv")

        the_import = clippings_import(reader=bob, data=exported.data, file_name=exported.name)

        assert the_import.problems == []
        assert _marks(bob) == _marks(alice)
        assert ("memory", "psicología aplicada", "smith, john") in {m[2] for m in _marks(bob)}
        assert sum(m[3] for m in _marks(bob)) == 2
        assert not Tag.objects.filter(reader=bob, name__iexact="favorite").exists()

    @given(names=st.lists(TAG_NAMES, min_size=1, max_size=6), favourite=st.booleans())
    @example(names=["'=1", "smith, john", '"real"'], favourite=True)
    @settings(
        max_examples=30,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    def test_any_tag_a_reader_can_name_comes_back_from_the_csv(
        self, db: None, names: list[str], favourite: bool
    ) -> None:
        mine, theirs = (User.objects.create_user(f"csv-{next(_readers)}") for _ in "ab")
        entry = Entry(FUNES_LINE, "To think is to forget differences.", location="412-414")
        clippings_import(reader=mine, data=clippings_file(entry), file_name="c.txt")
        [highlight] = Highlight.objects.filter(reader=mine)
        for name in names:
            if tag_name(name):
                highlight_tag(highlight=highlight, name=name)
        if favourite:
            highlight_favourite_toggle(highlight=highlight)
        exported = library_export(reader=mine, format="csv")
        clippings_import(reader=theirs, data=exported.data, file_name=exported.name)
        assert _marks(theirs) == _marks(mine)

    def test_it_keeps_highlights_with_no_text_with_their_place_and_date(
        self, alice: User, bob: User
    ) -> None:
        # An image or a figure highlighted on a Kindle: no text, a location and a date.
        image = Entry(FUNES_LINE, "", location="700-701", added="Tuesday, 4 March 2025 08:00:00")
        clippings_import(reader=alice, data=clippings_file(image), file_name="c.txt")
        exported = library_export(reader=alice, format="json")

        the_import = clippings_import(reader=bob, data=exported.data, file_name=exported.name)

        assert the_import.problems == []
        assert _library(bob) == _library(alice)
        [kept] = _library(bob)
        assert (kept[3], kept[7], kept[8], kept[9].isoformat()) == (
            "",
            700,
            701,
            "2025-03-04T08:00:00+00:00",
        )


@pytest.mark.django_db
class ChapterShownTests:
    def test_the_book_page_shows_each_highlights_chapter(self, alice: User) -> None:
        from django.test import Client

        _import(alice, "notebook_desktop.html")
        client = Client()
        client.force_login(alice)
        book = Highlight.objects.filter(reader=alice).first().book  # type: ignore[union-attr]
        page = client.get(book.get_absolute_url()).content.decode()
        # The chapter stands just before the location, a separator (text) between them.
        assert (
            '<span class="sep">Part One &gt; Chapter 1</span><span class="sep"> · location 52'
            in page
        )
