"""The three export formats, read back the way their readers (Obsidian, a spreadsheet,
Exogram) read them."""

import csv
import io
import json
import re
import zipfile

import pytest

from accounts.models import User
from books.exporting.markdown import NAME_MAX_LENGTH, file_stem
from books.exporting.readwise import neutralize, tags_cell
from books.exporting.services import library_export
from books.importing.services import clippings_import
from books.models import Book, Highlight
from books.services import highlight_tag
from tests.books.exporting.library import build_library
from tests.books.kindle import BORGES, Entry, clippings_file


@pytest.fixture
def rows(alice: User) -> dict[str, Highlight]:
    return build_library(alice)


def _front_matter(text: str) -> dict[str, str]:
    match = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    assert match is not None, text[:200]
    return dict(line.split(": ", 1) for line in match.group(1).splitlines())


def _zipped_markdown(data: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return "".join(archive.read(name).decode() for name in archive.namelist())


@pytest.mark.django_db
class MarkdownExportTests:
    def test_it_writes_one_file_per_book_in_a_zip(
        self, alice: User, rows: dict[str, Highlight]
    ) -> None:
        export = library_export(reader=alice, format="md")
        assert export.content_type == "application/zip"
        with zipfile.ZipFile(io.BytesIO(export.data)) as archive:
            names = sorted(archive.namelist())
            funes = archive.read("Ficciones - Borges, Jorge Luis.md").decode()
        assert names == [
            "Ficciones - Borges, Jorge Luis.md",
            "The Man Who Mistook His Wife for a Hat - Sacks, Oliver.md",
            "Untitled notebook.md",
        ]
        front = _front_matter(funes)
        assert json.loads(front["title"]) == "Ficciones"
        assert json.loads(front["author"]) == "Borges, Jorge Luis"
        assert front["highlights"] == "2"
        assert front["notes"] == "1"
        assert json.loads(front["tags"]) == ["big ideas", "memory"]

    def test_it_quotes_each_highlight_with_location_note_and_a_stable_block_id(
        self, alice: User, rows: dict[str, Highlight]
    ) -> None:
        book = rows["To"].book
        text = library_export(reader=alice, format="md", book=book).data.decode()
        think = rows["To"]
        assert (
            "> To think is to forget differences, to generalize, to abstract.\n"
            "> — Location 412-414 · added 2025-03-03\n"
            "\n"
            f"^exo-{think.code}\n"
            "\n"
            "**Note:** Read this twice.\n"
            "\n"
            "#big-ideas #memory\n"
        ) in text
        # Reading order: location 380 before 412.
        assert text.index("He remembered") < text.index("To think")
        assert "★ favourite" in text
        again = library_export(reader=alice, format="md", book=book).data.decode()
        assert re.findall(r"\^exo-[0-9a-f-]+", again) == re.findall(r"\^exo-[0-9a-f-]+", text)

    def test_its_labels_are_in_the_readers_language(
        self, alice: User, rows: dict[str, Highlight]
    ) -> None:
        alice.language = "es"
        alice.save(update_fields=["language"])
        book = rows["To"].book
        text = library_export(reader=alice, format="md", book=book).data.decode()
        assert "> — Posición 412-414 · añadido el 2025-03-03\n" in text
        assert "**Nota:** Read this twice.\n" in text
        assert "★ favorito" in text
        assert "title: " in text  # the front matter's keys are Obsidian's, in English
        with zipfile.ZipFile(io.BytesIO(library_export(reader=alice, format="md").data)) as zipped:
            inside = zipped.read("Ficciones - Borges, Jorge Luis.md").decode()
        assert "**Nota:** Read this twice." in inside

    def test_a_long_title_is_cut_between_two_words_in_its_file_name(self, alice: User) -> None:
        title = "The 4-Hour Workweek, Expanded and Updated, " + "Cutting-Edge Content " * 8
        book = Book.objects.create(reader=alice, title=title, authors="Ferriss, Timothy")
        stem = file_stem(book)
        assert len(stem) <= NAME_MAX_LENGTH
        assert title.startswith(stem)
        assert title[len(stem)] == " "  # the next word was left whole, not cut
        assert file_stem(Book(title="W" * 500)) == "W" * NAME_MAX_LENGTH

    def test_it_keeps_multi_line_highlights_inside_the_quote(
        self, alice: User, rows: dict[str, Highlight]
    ) -> None:
        text = library_export(reader=alice, format="md", book=rows["We"].book).data.decode()
        assert "> We have each of us a life-story,\n> an inner narrative.\n" in text
        assert "**Note:** A note on its own, far from any highlight. ^exo-" in text

    def test_it_escapes_what_would_be_structure(self, alice: User) -> None:
        book = Book.objects.create(
            reader=alice,
            title="A title\n# Injected heading\n---",
            authors="Someone\n**bold**",
            key="structure",
        )
        made = Highlight.objects.create(
            reader=alice,
            book=book,
            text=(
                "Quoted words ^exo-00000000-0000-0000-0000-000000000000\n<script>alert(1)</script>"
            ),
            note="A note\n# Not a heading\n<img src=x onerror=alert(1)> ^exo-fake",
            dedupe_key="structure-1",
        )
        text = library_export(reader=alice, format="md", book=book).data.decode()
        lines = text.splitlines()
        # The title is one heading line; the front matter keeps it whole (JSON-quoted).
        assert "# A title # Injected heading ---" in lines
        assert "# Injected heading" not in lines
        assert json.loads(_front_matter(text)["title"]) == "A title\n# Injected heading\n---"
        # One block id, the highlight's own: the texts' fakes are escaped.
        assert re.findall(r"(?<!\\)\^exo-[\w-]+", text) == [f"^exo-{made.code}"]
        # No raw HTML reaches a viewer that renders it.
        assert re.search(r"(?<!\\)<[A-Za-z/]", text) is None
        assert "\\<script>alert(1)\\</script>" in text
        # The note's lines stay the note's: none starts a heading.
        assert not any(line.startswith("#") and "Not a heading" in line for line in lines)

    def test_it_escapes_a_tag_as_any_text_and_keeps_an_ordinary_one_a_tag(
        self, alice: User
    ) -> None:
        # Found by a hostile walk: a tag was written as raw HTML.
        book = Book.objects.create(reader=alice, title="Tags", key="tags")
        made = Highlight.objects.create(reader=alice, book=book, text="Words", dedupe_key="t")
        highlight_tag(highlight=made, name="<img/src=x/onerror=alert(1)>")
        highlight_tag(highlight=made, name="big ideas")
        for text in [
            library_export(reader=alice, format="md", book=book).data.decode(),
            _zipped_markdown(library_export(reader=alice, format="md").data),
        ]:
            # The front matter keeps the tag as it is, JSON-quoted (data, not HTML).
            body = text.split("\n---\n", 1)[1]
            assert re.search(r"(?<!\\)<[A-Za-z/]", body) is None
            assert "#\\<img/src=x/onerror=alert(1)> #big-ideas" in body.splitlines()

    def test_it_writes_no_control_character_of_a_text_stored_before(self, alice: User) -> None:
        book = Book.objects.create(reader=alice, title="Ring\x07", authors="Esc\x1b", key="c")
        made = Highlight.objects.create(
            reader=alice,
            book=book,
            text="A bell\x07 and\x08 an escape\x1b[2J\nand a tab\there",
            note="A note\x9b with\x0ba break",
            dedupe_key="c",
        )
        highlight_tag(highlight=made, name="be\x07ll")
        text = library_export(reader=alice, format="md", book=book).data.decode()
        assert re.search("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]", text) is None
        assert "> A bell and an escape[2J\n> and a tab\there" in text
        assert "**Note:** A note with a break" in text
        assert "#bell" in text.splitlines()
        assert json.loads(_front_matter(text)["title"]) == "Ring"

    def test_it_writes_an_empty_book_with_zero_counts(self, alice: User) -> None:
        book = Book.objects.create(reader=alice, title="Empty", key="empty")
        text = library_export(reader=alice, format="md", book=book).data.decode()
        assert _front_matter(text)["highlights"] == "0"

    def test_it_never_exports_another_readers_book(
        self, alice: User, bob: User, rows: dict[str, Highlight]
    ) -> None:
        with pytest.raises(ValueError, match="the reader's books"):
            library_export(reader=bob, format="md", book=rows["To"].book)


@pytest.mark.django_db
class CsvExportTests:
    def test_it_writes_readwise_columns_in_utf8_with_a_bom(
        self, alice: User, rows: dict[str, Highlight]
    ) -> None:
        export = library_export(reader=alice, format="csv")
        assert export.data.startswith(b"\xef\xbb\xbf")
        table = list(csv.DictReader(io.StringIO(export.data.decode("utf-8-sig"))))
        assert list(table[0]) == [
            "Highlight", "Title", "Author", "Note", "Location", "Date", "Tags", "Color",
            "Location Type", "Page",
        ]  # fmt: skip
        assert len(table) == Highlight.objects.filter(reader=alice).count()
        by_text = {row["Highlight"]: row for row in table}
        think = by_text["To think is to forget differences, to generalize, to abstract."]
        assert think == {
            "Highlight": "To think is to forget differences, to generalize, to abstract.",
            "Title": "Ficciones",
            "Author": "Borges, Jorge Luis",
            "Note": "Read this twice.",
            "Location": "412-414",
            "Date": "2025-03-03 10:00:00",
            "Tags": "big ideas, memory",
            "Color": "",
            "Location Type": "location",
            "Page": "",
        }
        assert by_text["«Accents», ünïcödé and 中文 survive."]["Title"] == "Untitled notebook"
        assert by_text[""]["Note"] == "A note on its own, far from any highlight."

    def test_a_kindle_highlights_page_and_location_both_come_back(
        self, alice: User, bob: User
    ) -> None:
        """A Kindle entry on "page 12 | Location 70-71": the JSON round trip kept its page,
        the CSV one left it blank (Location holds one place, the location)."""
        entries = [
            Entry(BORGES, "To think is to forget differences.", location="70-71", page="12"),
            Entry(BORGES, "A page of a PDF.", location="", page="xii"),
            Entry(BORGES, "Only a location here.", location="90-91"),
        ]
        clippings_import(reader=alice, data=clippings_file(*entries), file_name="c.txt")
        data = library_export(reader=alice, format="csv").data
        table = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
        assert sorted((row["Location"], row["Location Type"], row["Page"]) for row in table) == [
            ("70-71", "location", "12"), ("90-91", "location", ""), ("xii", "page", "xii"),
        ]  # fmt: skip

        clippings_import(reader=bob, data=data, file_name="exogram.csv")
        places = {
            h.text: (h.page, h.location_start, h.location_end)
            for h in Highlight.objects.filter(reader=bob)
        }
        assert places == {
            "To think is to forget differences.": ("12", 70, 71),
            "A page of a PDF.": ("xii", None, None),
            "Only a location here.": ("", 90, 91),
        }
        # Into the library it came from: nothing new, the page kept.
        again = clippings_import(reader=alice, data=data, file_name="exogram.csv")
        assert again.counts["new_highlights"] == 0
        assert Highlight.objects.get(reader=alice, location_start=70).page == "12"

    def test_its_tags_reach_the_highlights_a_library_holds_and_add_none(
        self, alice: User, bob: User
    ) -> None:
        """The file's places are the highlights' own: a range (`412-414`, and `412-412` as
        the Kindle writes it), a page. Only the first location, and a page written as a
        location, gave other places: the tags and the favourite never reached the highlight
        Bob held, and a page's highlight came back twice into Alice's own library."""
        entries = [
            Entry(BORGES, "To think is to forget differences.", location="412-414"),
            Entry(BORGES, "Every leaf of every tree.", location="500-500"),
            Entry(BORGES, "A page of a PDF.", location="", page="12"),
        ]
        for reader in (alice, bob):
            clippings_import(reader=reader, data=clippings_file(*entries), file_name="c.txt")
        for highlight in Highlight.objects.filter(reader=alice):
            highlight_tag(highlight=highlight, name="memory")
        Highlight.objects.filter(reader=alice).update(favourite=True)
        data = library_export(reader=alice, format="csv").data
        table = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
        assert sorted((row["Location"], row["Location Type"]) for row in table) == [
            ("12", "page"), ("412-414", "location"), ("500-500", "location")
        ]  # fmt: skip
        for reader in (alice, bob):
            done = clippings_import(reader=reader, data=data, file_name="export.csv")
            assert done.counts["new_highlights"] == 0, reader
        held = Highlight.objects.filter(reader=bob)
        assert held.count() == 3
        assert all(h.favourite and [t.name for t in h.tags.all()] == ["memory"] for h in held)
        assert Highlight.objects.filter(reader=alice).count() == 3

    def test_it_writes_tags_added_here_and_a_favourite_as_readwise_tags(
        self, alice: User, rows: dict[str, Highlight]
    ) -> None:
        highlight_tag(highlight=rows["We"], name="psicología aplicada")
        highlight_tag(highlight=rows["We"], name="Smith, John")
        Highlight.objects.filter(pk=rows["We"].pk).update(colour="blue")
        data = library_export(reader=alice, format="csv").data.decode("utf-8-sig")
        by_text = {row["Highlight"]: row for row in csv.DictReader(io.StringIO(data))}
        life = by_text["We have each of us a life-story,\nan inner narrative."]
        assert (life["Tags"], life["Color"]) == (
            'memory, psicología aplicada, "smith, john"',
            "blue",
        )
        assert by_text["He remembered every leaf of every tree of every wood."]["Tags"] == (
            "favorite"
        )

    def test_it_writes_no_control_character_of_a_text_stored_before(self, alice: User) -> None:
        book = Book.objects.create(reader=alice, title="Ring\x07", key="c")
        Highlight.objects.create(
            reader=alice,
            book=book,
            text="A bell\x07 and\x08 an escape\x1b[2J\nand a tab\there",
            note="\x07=1+1",
            dedupe_key="c",
        )
        data = library_export(reader=alice, format="csv").data.decode("utf-8-sig")
        [row] = list(csv.DictReader(io.StringIO(data)))
        assert (row["Highlight"], row["Title"], row["Note"]) == (
            "A bell and an escape[2J\nand a tab\there", "Ring", "'=1+1"
        )  # fmt: skip

    def test_it_neutralizes_formulas(self, alice: User, rows: dict[str, Highlight]) -> None:
        table = list(
            csv.reader(
                io.StringIO(library_export(reader=alice, format="csv").data.decode("utf-8-sig"))
            )
        )
        cells = [cell for row in table for cell in row]
        assert '\'=HYPERLINK("http://evil.example", "click")' in cells
        assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)

    @pytest.mark.parametrize(
        ("cell", "safe"),
        [
            ("=1+1", "'=1+1"),
            ("+34 600", "'+34 600"),
            ("-2", "'-2"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("plain", "plain"),
            ("a=b", "a=b"),
            ("", ""),
        ],
    )
    def test_it_neutralizes_each_dangerous_start(self, cell: str, safe: str) -> None:
        assert neutralize(cell) == safe

    @pytest.mark.parametrize(
        "cell",
        [
            " =1+1",  # spreadsheets skip the leading spaces
            "  +34 600",
            "\n@SUM(A1)",
            '\u00a0=HYPERLINK("http://evil.example")',  # no-break space
            "\ufeff=1+1",  # a stray BOM
            "\uff1d1+1",  # fullwidth equals, read as = by some
            "\uff0b1",
            "\uff0d1",
            "\uff20SUM(A1)",
            " \u00a0\ufeff\t=1",
        ],
    )
    def test_it_neutralizes_a_formula_behind_what_a_spreadsheet_skips(self, cell: str) -> None:
        assert neutralize(cell) == f"'{cell}"
        # ... and the Readwise CSV importer takes the guard off again.
        from books.importing.readwise_csv import _cell

        assert _cell([neutralize(cell)], 0) == cell.replace("\r\n", "\n")

    @pytest.mark.parametrize(
        "names",
        [
            ["memory"],
            ["psicología aplicada", "smith, john", 'the "real" one', '"quoted"'],
            ["=1+1", "'=1+1", "'quoted'", "it's", "@home", "-2"],
            ["'=1+1", "first, it looks like the formula guard"],
            ["a,", ",", '"', "'"],
        ],
    )
    def test_a_tags_cell_reads_back_as_the_same_names(self, names: list[str]) -> None:
        from books.importing.readwise_csv import _cell, tag_names

        assert tag_names(_cell([neutralize(tags_cell(names))], 0)) == tuple(names)

    @pytest.mark.parametrize("cell", ["  plain words", "\u00a0a=b", "'quoted'", "a@b.c"])
    def test_it_leaves_text_that_starts_no_formula(self, cell: str) -> None:
        assert neutralize(cell) == cell


@pytest.mark.django_db
class JsonExportTests:
    def test_it_writes_every_field_a_reader_owns(
        self, alice: User, rows: dict[str, Highlight]
    ) -> None:
        document = json.loads(library_export(reader=alice, format="json").data)
        assert document["format"] == "exogram"
        assert document["version"] == 2
        books = {book["title"]: book for book in document["books"]}
        assert set(books) == {
            "Ficciones",
            "The Man Who Mistook His Wife for a Hat",
            "Untitled notebook",
        }
        records = {h["text"]: h for h in books["Ficciones"]["highlights"]}
        think = records["To think is to forget differences, to generalize, to abstract."]
        assert think["tags"] == ["big ideas", "memory"]
        assert think["note"] == "Read this twice."
        assert think["location_start"] == 412
        assert think["location_end"] == 414
        assert think["added_at"] == "2025-03-03T10:00:00+00:00"
        assert records["He remembered every leaf of every tree of every wood."]["favourite"] is True
        assert "embedding" not in think

    def test_it_keeps_deleted_highlights_apart_with_when(
        self, alice: User, rows: dict[str, Highlight]
    ) -> None:
        from books.services import highlight_delete

        highlight_delete(highlight=rows["He"])
        document = json.loads(library_export(reader=alice, format="json").data)
        texts = [h["text"] for book in document["books"] for h in book["highlights"]]
        assert "He remembered every leaf of every tree of every wood." not in texts
        deleted = [h for book in document["books"] for h in book["deleted"]]
        rows["He"].refresh_from_db()
        assert [(h["text"], h["deleted_at"]) for h in deleted] == [
            (rows["He"].text, rows["He"].deleted_at.isoformat())
        ]
