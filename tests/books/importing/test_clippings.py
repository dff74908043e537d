"""The Kindle `My Clippings.txt` parser, one behaviour per test, on fixtures in ./fixtures.

The fixtures are invented text in the exact shapes of FORMAT.md (the real files have no
licence); the ones that matter byte for byte (BOMs, CRLF, UTF-16, cp1252) say so in a test.
"""

# The fixtures' languages come with Cyrillic, CJK, full-width and en-dash characters.
# ruff: noqa: RUF001

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.synthetic import make_clippings_file
from books.importing.clippings import (
    NOT_UTF8_FILE,
    NOT_UTF8_LINE,
    Clipping,
    ParseResult,
    Problem,
    first_words,
    normalize_author,
    normalize_title,
    parse_clippings,
    split_authors,
    split_title_author,
)

FIXTURES = Path(__file__).parent / "fixtures"


def parse_fixture(name: str) -> ParseResult:
    return parse_clippings((FIXTURES / name).read_bytes())


def utc(year: int, month: int, day: int, hour: int, minute: int, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def clipping_at(result: ParseResult, line: int) -> Clipping:
    """The clipping whose title is on `line` of the fixture."""
    [clipping] = [c for c in result.clippings if c.line == line]
    return clipping


class EncodingTests:
    def test_it_reads_utf16_le_with_a_bom(self) -> None:
        data = (FIXTURES / "utf16_le.txt").read_bytes()
        assert data.startswith(b"\xff\xfe")

        [clipping] = parse_clippings(data).clippings

        assert clipping == Clipping(
            title="Crónica del puerto",
            author="Ibarra, Lucía",
            kind="highlight",
            text="Año tras año, el café y la niña volvían al muelle.",
            page=None,
            location_start=10,
            location_end=12,
            added_at=utc(2015, 10, 1, 20, 5, 20),
            added_raw="jueves, 1 de octubre de 2015 20:05:20",
            language="es",
            line=1,
            truncated=False,
        )

    def test_it_reads_utf16_be_with_a_bom(self) -> None:
        data = (FIXTURES / "utf16_be.txt").read_bytes()
        assert data.startswith(b"\xfe\xff")

        [clipping] = parse_clippings(data).clippings

        assert (clipping.title, clipping.author) == ("Crónica del puerto", "Ibarra, Lucía")
        assert clipping.text == "Año tras año, el café y la niña volvían al muelle."
        assert clipping.added_at == utc(2015, 10, 1, 20, 5, 20)

    def test_it_falls_back_to_cp1252_for_a_file_that_is_not_utf8(self) -> None:
        data = (FIXTURES / "cp1252.txt").read_bytes()
        with pytest.raises(UnicodeDecodeError):
            data.decode("utf-8")

        [clipping] = parse_clippings(data).clippings

        assert (clipping.title, clipping.author) == ("Crónica del puerto", "Ibarra, Lucía")
        assert clipping.text == "Año tras año, el café y la niña volvían al muelle."
        assert (clipping.language, clipping.location_start) == ("es", 10)

    def test_it_reads_only_the_bad_bytes_of_a_utf8_file_as_cp1252(self) -> None:
        [clipping] = parse_fixture("utf8_with_a_cp1252_byte.txt").clippings

        assert clipping.title == "静かな朝の時計"
        assert clipping.text == "café と時計。"
        assert clipping.language == "ja"
        assert clipping.added_at == utc(2021, 8, 3, 23, 24, 53)

    def test_it_names_each_line_with_bytes_that_are_not_utf8(self) -> None:
        data = (FIXTURES / "utf8_with_a_cp1252_byte.txt").read_bytes()
        data = data.replace(b"\xe4\xbd\x90", b"\xe4\x90", 1)  # a damaged author too
        result = parse_clippings(data)
        assert [c.text for c in result.clippings] == ["café と時計。"]
        assert result.warnings == [Problem(1, NOT_UTF8_LINE), Problem(4, NOT_UTF8_LINE)]

    def test_a_file_of_windows_1252_throughout_is_said_once(self) -> None:
        result = parse_fixture("cp1252.txt")
        assert [c.title for c in result.clippings] == ["Crónica del puerto"]
        assert result.warnings == [Problem(1, NOT_UTF8_FILE)]

    def test_a_utf8_file_says_nothing_of_its_encoding(self) -> None:
        data = "Crónica (Ibarra)\n- Your Highlight on Location 10-11 | Added on Thursday, "
        data += "1 October 2015 20:05:20\n\nAño tras año\n==========\n"
        result = parse_clippings(data.encode())
        assert (len(result.clippings), result.warnings) == (1, [])

    def test_it_reads_utf16_without_a_bom(self) -> None:
        text = (FIXTURES / "utf16_le.txt").read_bytes().decode("utf-16")
        assert not text.startswith("\ufeff")

        [clipping] = parse_clippings(text.encode("utf-16-le")).clippings

        assert clipping.text == "Año tras año, el café y la niña volvían al muelle."
        assert clipping.added_at == utc(2015, 10, 1, 20, 5, 20)

    def test_it_strips_boms_at_the_file_start_entry_starts_and_inside_titles(self) -> None:
        data = (FIXTURES / "boms_everywhere.txt").read_bytes()
        assert data.startswith(b"\xef\xbb\xbf")
        assert data.count(b"\xef\xbb\xbf") == 7

        first, second = parse_clippings(data).clippings

        assert (first.title, first.author, first.line) == (
            "Field Notes on Tides",
            "Ferreira, Ana",
            1,
        )
        assert first.text == "Low water at noon."
        assert (second.title, second.author, second.line) == (
            "Field Notes on Tides",
            "Ferreira, Ana",
            6,
        )


class LineEndingTests:
    def test_it_reads_a_crlf_device_file(self) -> None:
        data = (FIXTURES / "en_modern.txt").read_bytes()
        # The fixtures must stay byte for byte: git must not convert their line endings.
        assert b"\r\n==========\r\n" in data

        result = parse_clippings(data)

        first = result.clippings[0]
        assert (
            first.text
            == "Machines hum when they are lonely, the engineer said, and nobody laughed."
        )
        assert first.added_raw == "Saturday, January 30, 2016 7:01:31 PM"
        assert not any("\r" in c.text or "\r" in c.title for c in result.clippings)

    def test_it_keeps_a_typed_note_with_bare_lf_inside_a_crlf_file(self) -> None:
        data = (FIXTURES / "en_modern.txt").read_bytes()
        assert b"device:\nthe hum" in data

        note = clipping_at(parse_clippings(data), line=6)

        assert note.kind == "note"
        assert note.text == "Typed on the device:\nthe hum is a metaphor\n\nor is it?"
        assert note.location_start == 440

    def test_it_reads_entries_with_crlf_and_lf_in_one_file(self) -> None:
        data = (FIXTURES / "mixed_line_endings.txt").read_bytes()
        assert b"==========\r\n" in data
        assert b"==========\nLanterns" in data

        result = parse_clippings(data)

        assert [(c.line, c.kind, c.location_start, c.text) for c in result.clippings] == [
            (1, "highlight", 28, "The lamplighter walked the street backwards to see his work."),
            (6, "highlight", 40, "Light is a rumour that darkness keeps repeating."),
            (11, "note", 41, "line one\nline two"),
        ]
        assert result.problems == []


class FileStructureTests:
    def test_it_reads_a_file_that_starts_with_a_separator_and_has_no_final_newline(
        self,
    ) -> None:
        data = (FIXTURES / "starts_with_separator.txt").read_bytes()
        assert data.startswith(b"==========\n")
        assert data.endswith(b"==========")

        result = parse_clippings(data)

        assert [(c.line, c.location_start, c.text) for c in result.clippings] == [
            (2, 267, "The orchard bloomed anyway, quietly."),
            (7, 280, "No one had told it winter was cancelled."),
        ]
        assert (result.entries, result.problems) == (2, [])

    def test_it_reads_a_file_that_starts_with_a_blank_line_and_ends_in_a_partial_separator(
        self,
    ) -> None:
        data = (FIXTURES / "starts_with_blank_line.txt").read_bytes()
        assert data.startswith(b"\r\n==========")
        assert data.endswith(b"\r\n=======")

        result = parse_clippings(data)

        assert [(c.line, c.page, c.text) for c in result.clippings] == [
            (3, "125", "the ferryman kept two clocks"),
            (8, "126", "and trusted neither"),
        ]
        assert result.problems == []

    def test_it_reads_text_written_directly_after_the_metadata_line(self) -> None:
        first, second = parse_fixture("no_blank_line_after_metadata.txt").clippings

        assert first.text == "A soup is a conversation between leftovers."
        assert (first.location_start, first.location_end) == (737, 739)
        assert second.text == "A soup is a conversation between leftovers and salt."
        assert second.added_at == utc(2012, 12, 3, 19, 43, 10)

    def test_it_splits_a_file_whose_separators_were_stripped(self) -> None:
        result = parse_fixture("no_separators.txt")

        assert [(c.line, c.location_start, c.text) for c in result.clippings] == [
            (1, 28, "The lamplighter walked the street backwards to see his work."),
            (5, 40, "Light is a rumour that darkness keeps repeating."),
        ]

    def test_it_reads_an_empty_file_as_no_entries(self) -> None:
        assert parse_clippings(b"") == ParseResult(clippings=[], problems=[], entries=0)
        assert parse_clippings(b"\xef\xbb\xbf\r\n\r\n") == ParseResult(
            clippings=[], problems=[], entries=0
        )

    def test_it_reports_an_html_notebook_export_as_not_a_clippings_file(self) -> None:
        html = (
            b"<html><body><div class='bookTitle'>The Quiet Engine</div>"
            b"<h3 class='noteHeading'>Highlight - Location 52</h3></body></html>"
        )

        result = parse_clippings(html)

        assert result.clippings == []
        assert result.problems == [
            Problem(
                line=1,
                message="not a Kindle 'My Clippings.txt' file (no '==========' separators "
                "and no Kindle metadata lines)",
            )
        ]
        assert result.entries == 1


class ProblemTests:
    def test_it_reports_bad_entries_with_their_line_and_keeps_the_others(self) -> None:
        result = parse_fixture("problems.txt")

        assert result.problems == [
            Problem(line=7, message="unrecognised metadata line '* a line that some tool rewrote'"),
            Problem(
                line=11,
                message="entry has a title but no metadata line "
                "('A title line with nothing after it')",
            ),
            Problem(
                line=13,
                message="entry has no title line (it starts with the metadata line "
                "'- Your Highlight on page 5 | Location 450-451 | Added on Saturday, "
                "January 30, …')",
            ),
        ]
        assert [(c.line, c.text) for c in result.clippings] == [
            (1, "First good entry."),
            (17, "An entry whose date cannot be read is kept, without a date."),
            (22, "Last good entry."),
        ]
        assert result.entries == 6

    def test_it_reports_a_blank_line_where_the_metadata_line_should_be(self) -> None:
        data = (
            b"The Quiet Engine (Okonkwo, Chidi)\n\n"
            b"- Your Highlight on Location 5 | Added on Monday, January 4, 2016 9:18:28 AM\n\n"
            b"Oil.\n==========\n"
        )

        result = parse_clippings(data)

        assert result.problems == [
            Problem(
                line=2, message="expected the metadata line after the title, found a blank line"
            )
        ]
        assert result.clippings == []

    def test_it_keeps_an_entry_whose_date_cannot_be_read(self) -> None:
        clipping = clipping_at(parse_fixture("problems.txt"), line=17)

        assert clipping.added_at is None
        assert clipping.added_raw == "Someday, the 40th of Neverember"
        assert (clipping.page, clipping.location_start, clipping.location_end) == ("6", 460, 461)

    def test_it_warns_of_a_date_it_cannot_read_at_its_metadata_line(self) -> None:
        result = parse_fixture("problems.txt")

        assert result.warnings == [
            Problem(
                line=18,
                message="the date 'Someday, the 40th of Neverember' could not be read; "
                "the entry is kept without one",
            )
        ]

    def test_it_keeps_a_reversed_location_turned_round_and_warns_of_it(self) -> None:
        data = (
            b"The Quiet Engine (Okonkwo, Chidi)\n"
            b"- Your Highlight on Location 99-98 | Added on Blursday, Foo 99\n\n"
            b"Oil and rust.\n==========\n"
        )

        result = parse_clippings(data)

        [clipping] = result.clippings
        assert (clipping.location_start, clipping.location_end) == (98, 99)
        assert clipping.text == "Oil and rust."
        assert result.problems == []
        assert result.warnings == [
            Problem(
                line=2,
                message="the date 'Blursday, Foo 99' could not be read; "
                "the entry is kept without one",
            ),
            Problem(line=2, message="location 99-98 is reversed; read as 98-99"),
        ]

    def test_it_does_not_warn_of_an_abbreviated_kindle_2_range(self) -> None:
        data = (
            b"The Quiet Engine (Okonkwo, Chidi)\n"
            b"- Highlight Loc. 5444-45 | Added on Saturday, October 31, 2009, 09:25 AM\n\n"
            b"Oil.\n==========\n"
        )

        result = parse_clippings(data)

        assert result.warnings == []
        assert (result.clippings[0].location_start, result.clippings[0].location_end) == (
            5444,
            5445,
        )

    def test_it_never_raises_on_a_truncated_file(self) -> None:
        data = (FIXTURES / "ja.txt").read_bytes()

        for end in range(0, len(data), 7):
            result = parse_clippings(data[:end])
            assert len(result.clippings) + len(result.problems) == result.entries


class EnglishTests:
    def test_it_reads_a_kindle_2_highlight_with_an_abbreviated_location_range(self) -> None:
        result = parse_fixture("en_classic.txt")

        assert clipping_at(result, line=1) == Clipping(
            title="The Salt Roads of Vell",
            author="Marrow, Idris",
            kind="highlight",
            text="Every caravan carried two maps: the one it showed the tax men and the one it "
            "trusted.",
            page=None,
            location_start=5444,
            location_end=5445,
            added_at=utc(2009, 10, 31, 9, 25),
            added_raw="Saturday, October 31, 2009, 09:25 AM",
            language="en",
            line=1,
            truncated=False,
        )
        assert clipping_at(result, line=21).location_end == 7204  # `Loc. 7203-4`

    def test_it_reads_a_kindle_3_line_with_two_spaces_before_the_bar(self) -> None:
        clipping = clipping_at(parse_fixture("en_classic.txt"), line=6)

        assert (clipping.page, clipping.location_start, clipping.location_end) == ("31", 474, 475)
        assert clipping.added_at == utc(2012, 3, 16, 18, 20)

    def test_it_reads_kindle_2_bookmarks_and_notes(self) -> None:
        result = parse_fixture("en_classic.txt")

        bookmark, note = clipping_at(result, line=11), clipping_at(result, line=16)
        assert (bookmark.kind, bookmark.text, bookmark.location_start) == ("bookmark", "", 1933)
        assert bookmark.location_end is None
        assert (note.kind, note.text) == ("note", "check the map in chapter two")
        assert note.added_at == utc(2009, 12, 23, 0, 5)  # `12:05 AM` is just after midnight

    def test_it_applies_the_gmt_offsets_of_kindle_3_and_4_uk_dates(self) -> None:
        result = parse_fixture("en_classic.txt")

        plus = clipping_at(result, line=26)
        assert plus.added_raw == "Wednesday, 5 December 12 21:53:37 GMT+00:59"
        assert plus.added_at == utc(2012, 12, 5, 20, 54, 37)
        assert clipping_at(result, line=31).added_at == utc(2012, 12, 3, 19, 42, 30)
        assert clipping_at(result, line=36).added_at == utc(2017, 4, 29, 23, 46, 29)

    def test_it_reads_a_page_without_a_location(self) -> None:
        result = parse_fixture("en_classic.txt")

        clipping = clipping_at(result, line=31)
        assert (clipping.page, clipping.location_start, clipping.location_end) == ("7", None, None)
        assert clipping_at(result, line=41).page == "20"

    def test_it_reads_the_us_firmware(self) -> None:
        assert parse_fixture("en_modern.txt").clippings[0] == Clipping(
            title="The Quiet Engine",
            author="Okonkwo, Chidi",
            kind="highlight",
            text="Machines hum when they are lonely, the engineer said, and nobody laughed.",
            page="4",
            location_start=439,
            location_end=440,
            added_at=utc(2016, 1, 30, 19, 1, 31),
            added_raw="Saturday, January 30, 2016 7:01:31 PM",
            language="en",
            line=1,
            truncated=False,
        )

    def test_it_reads_midnight_on_a_12_hour_clock(self) -> None:
        bookmark = clipping_at(parse_fixture("en_modern.txt"), line=14)

        assert bookmark.added_raw == "Sunday, January 31, 2016 12:02:28 AM"
        assert bookmark.added_at == utc(2016, 1, 31, 0, 2, 28)
        assert (bookmark.kind, bookmark.page, bookmark.location_start) == ("bookmark", "332", 8936)

    def test_it_reads_locations_without_a_page(self) -> None:
        result = parse_fixture("en_modern.txt")

        ranged, single, paperwhite = (clipping_at(result, line=n) for n in (19, 24, 44))
        assert (ranged.page, ranged.location_start, ranged.location_end) == (None, 509, 509)
        assert (single.page, single.location_start, single.location_end) == (None, 883, None)
        assert (paperwhite.location_start, paperwhite.location_end) == (181, 182)
        assert paperwhite.added_at == utc(2013, 11, 19, 13, 23, 50)

    def test_it_reads_pdf_page_ranges_and_roman_page_numbers(self) -> None:
        result = parse_fixture("en_modern.txt")

        same_page, two_pages, roman = (clipping_at(result, line=n) for n in (29, 34, 39))
        assert (same_page.page, same_page.location_start) == ("13", None)
        assert (two_pages.page, two_pages.location_start) == ("20-21", None)
        assert (roman.page, roman.location_start, roman.location_end) == ("xix", 263, 266)

    def test_it_reads_an_empty_highlight(self) -> None:
        clipping = clipping_at(parse_fixture("en_modern.txt"), line=49)

        assert (clipping.kind, clipping.text, clipping.truncated) == ("highlight", "", False)
        assert (clipping.page, clipping.location_start) == ("35", 275)

    def test_it_reads_clip_this_article_entries_as_clips(self) -> None:
        clipping = clipping_at(parse_fixture("en_modern.txt"), line=59)

        assert (clipping.kind, clipping.text) == ("clip", "Clipped from a page about engines.")
        assert (clipping.location_start, clipping.added_at) == (850, utc(2014, 3, 27, 10, 1, 23))

    def test_it_reads_the_kindle_touch_capitalised_page(self) -> None:
        data = (
            b"The Quiet Engine (Okonkwo, Chidi)\n"
            b"- Your Highlight on Page 41 | Location 390-391 | "
            b"Added on Wednesday, November 27, 2013 10:52:56 AM\n\nSteam.\n==========\n"
        )

        [clipping] = parse_clippings(data).clippings

        assert (clipping.page, clipping.location_start, clipping.location_end) == ("41", 390, 391)
        assert clipping.added_at == utc(2013, 11, 27, 10, 52, 56)

    def test_it_reads_a_lower_case_koreader_highlight(self) -> None:
        clipping = clipping_at(parse_fixture("en_modern.txt"), line=64)

        assert (clipping.kind, clipping.page, clipping.language) == ("highlight", "40", "en")
        assert clipping.added_at == utc(2026, 2, 16, 22, 15, 20)

    def test_it_reads_the_uk_firmware(self) -> None:
        highlight, at_location, note, bookmark = parse_fixture("en_uk.txt").clippings

        assert (highlight.page, highlight.location_start, highlight.location_end) == (
            "79",
            1293,
            1295,
        )
        assert highlight.added_at == utc(2022, 8, 30, 19, 31, 58)
        assert (at_location.location_start, at_location.location_end) == (98, 99)
        assert at_location.added_at == utc(2019, 9, 30, 0, 14, 6)
        assert (note.kind, note.location_start, note.text) == ("note", 5170, "the aunt is lying")
        assert (bookmark.kind, bookmark.location_start, bookmark.text) == ("bookmark", 156, "")


class BodyTests:
    def test_it_keeps_a_body_line_that_is_a_whole_metadata_line(self) -> None:
        clipping = parse_fixture("bodies.txt").clippings[0]

        assert clipping.text == (
            "- Your Highlight on page 3 | Location 40-41 | "
            "Added on Monday, March 4, 2024 9:01:22 PM\n"
            "was what the ferryman had written on the back of the ticket."
        )
        assert (clipping.location_start, clipping.location_end) == (40, 42)

    def test_it_keeps_body_lines_that_start_with_a_dash(self) -> None:
        result = parse_fixture("bodies.txt")

        assert result.clippings[1].text == "- Then we cross at dawn, she said.\n– Or not at all."
        russian = clipping_at(parse_fixture("ru.txt"), line=21)
        assert russian.text == "– Я знаю, что ты не спишь, – сказал смотритель."

    def test_it_keeps_blank_lines_and_indentation_inside_a_body(self) -> None:
        clipping = parse_fixture("bodies.txt").clippings[2]

        assert clipping.text == "The river said:\n  wait\n\nand we waited."


class ClippingLimitTests:
    @pytest.mark.parametrize(
        ("fixture", "line", "language"),
        [
            ("en_modern.txt", 54, "en"),
            ("de.txt", 41, "de"),
            ("pt_br.txt", 41, "pt"),
            ("ja.txt", 26, "ja"),
        ],
    )
    def test_it_marks_the_clipping_limit_placeholder_as_truncated(
        self, fixture: str, line: int, language: str
    ) -> None:
        clipping = clipping_at(parse_fixture(fixture), line=line)

        assert (clipping.truncated, clipping.text) == (True, "")
        assert (clipping.kind, clipping.language) == ("highlight", language)
        assert clipping.location_start is not None

    @pytest.mark.parametrize(
        ("body", "kept"),
        [
            ("We tend <You have reached the clipping limit for this item>", "We tend"),
            (
                "Erst kam der Regen,  <Sie haben die maximale Anzahl an Clipboard-Einträgen für "
                "diesen Inhalt erreicht>",
                "Erst kam der Regen,",
            ),
            ("人は怒りを<このアイテムのクリップの上限に達しました>", "人は怒りを"),
        ],
    )
    def test_it_keeps_the_words_before_a_placeholder_and_cuts_the_placeholder(
        self, body: str, kept: str
    ) -> None:
        data = (
            "What Works (Bohnet, Iris)\n"
            "- Your Highlight on page 89 | Location 1261-1263 | Added on Tuesday, March 7, "
            f"2017 11:48:12 PM\n\n{body}\n==========\n"
        ).encode()

        [clipping] = parse_clippings(data).clippings

        assert (clipping.text, clipping.truncated) == (kept, True)

    def test_it_leaves_a_placeholder_inside_a_text_alone(self) -> None:
        body = "She wrote <You have reached the clipping limit for this item> on the wall."
        data = (
            "Notes (Anon)\n- Your Highlight on Location 10-11 | Added on Tuesday, March 7, "
            f"2017 11:48:12 PM\n\n{body}\n==========\n"
        ).encode()

        [clipping] = parse_clippings(data).clippings

        assert (clipping.text, clipping.truncated) == (body, False)

    def test_it_does_not_mark_an_ordinary_highlight_as_truncated(self) -> None:
        result = parse_fixture("de.txt")

        assert [c.line for c in result.clippings if c.truncated] == [41]


class GermanTests:
    def test_it_reads_the_old_formal_firmware(self) -> None:
        result = parse_fixture("de.txt")

        assert result.clippings[0] == Clipping(
            title="Der Uhrmacher von Lindau (German Edition)",
            author="Albers, Greta",
            kind="highlight",
            text="Die Zeit läuft nicht, sie wird getragen.",
            page=None,
            location_start=986,
            location_end=987,
            added_at=utc(2021, 7, 14, 19, 6, 11),
            added_raw="Mittwoch, 14. Juli 2021 19:06:11",
            language="de",
            line=1,
            truncated=False,
        )
        with_page, note, bookmark = (clipping_at(result, line=n) for n in (6, 11, 16))
        assert (with_page.page, with_page.location_start, with_page.location_end) == (
            "178",
            4136,
            4137,
        )
        assert (note.kind, note.location_start, note.text) == (
            "note",
            151,
            "stimmt nicht mit Kapitel 2 überein",
        )
        assert (bookmark.kind, bookmark.location_start) == ("bookmark", 270)
        assert bookmark.added_at == utc(2015, 12, 24, 15, 47, 56)

    def test_it_reads_the_um_uhr_variant(self) -> None:
        clipping = clipping_at(parse_fixture("de.txt"), line=21)

        assert clipping.added_raw == "Mittwoch, 13. November 2019 um 19:08:59 Uhr"
        assert clipping.added_at == utc(2019, 11, 13, 19, 8, 59)
        assert (clipping.page, clipping.location_start, clipping.location_end) == ("10", 149, 150)

    def test_it_reads_the_new_informal_firmware(self) -> None:
        result = parse_fixture("de.txt")

        highlight, note, bookmark = (clipping_at(result, line=n) for n in (26, 31, 36))
        assert [
            (c.kind, c.page, c.location_start, c.location_end)
            for c in (
                highlight,
                note,
                bookmark,
            )
        ] == [
            ("highlight", "112", 1300, 1301),
            ("note", "112", 1300, None),
            ("bookmark", "112", 1300, None),
        ]
        assert {c.language for c in result.clippings} == {"de"}
        assert highlight.added_at == utc(2024, 8, 22, 18, 10, 53)


class SpanishTests:
    def test_it_reads_the_old_tu_firmware(self) -> None:
        result = parse_fixture("es.txt")

        highlight, with_page, bookmark, note = (clipping_at(result, line=n) for n in (1, 6, 11, 16))
        assert (highlight.kind, highlight.location_start, highlight.location_end) == (
            "highlight",
            3116,
            3117,
        )
        assert highlight.added_at == utc(2015, 10, 1, 20, 5, 20)
        assert (with_page.page, with_page.location_start) == ("3", 250)
        assert with_page.added_at == utc(2015, 10, 1, 0, 37, 31)  # `0:37:31`, no padding
        assert (bookmark.kind, bookmark.location_start, bookmark.text) == ("bookmark", 1060, "")
        assert (note.kind, note.text) == ("note", "releer")

    def test_it_reads_the_new_la_subrayado_firmware(self) -> None:
        clipping = clipping_at(parse_fixture("es.txt"), line=21)

        assert clipping.title == "El faro de las horas (Spanish Edition)"
        assert (clipping.kind, clipping.page, clipping.location_start, clipping.location_end) == (
            "highlight",
            "79",
            1293,
            1295,
        )
        assert (clipping.language, clipping.added_at) == ("es", utc(2022, 8, 30, 19, 40, 15))

    def test_it_reads_the_latin_american_12_hour_clock(self) -> None:
        result = parse_fixture("es.txt")

        morning, evening, noon, midnight = (clipping_at(result, line=n) for n in (26, 31, 36, 41))
        assert morning.added_raw == "viernes, 16 de diciembre de 2022 7:15:38 a. m."
        assert morning.added_at == utc(2022, 12, 16, 7, 15, 38)
        assert evening.added_at == utc(2022, 12, 16, 19, 31, 23)
        assert noon.added_at == utc(2022, 12, 16, 12, 24, 21)
        assert midnight.added_at == utc(2022, 12, 16, 0, 10)

    def test_it_reads_a_pdf_page_range(self) -> None:
        clipping = clipping_at(parse_fixture("es.txt"), line=36)

        assert (clipping.page, clipping.location_start, clipping.text) == (
            "16",
            None,
            "Tabla 4: alturas medias.",
        )


class FrenchTests:
    def test_it_reads_highlights_notes_and_bookmarks(self) -> None:
        highlight, note, bookmark, _ = parse_fixture("fr.txt").clippings

        assert highlight == Clipping(
            title="Le Jardin d'hiver",
            author="Morel, Camille",
            kind="highlight",
            text="Les serres gardent l'été comme on garde un secret.",
            page="14",
            location_start=122,
            location_end=123,
            added_at=utc(2025, 7, 3, 14, 6, 49),
            added_raw="jeudi 3 juillet 2025 14:06:49",
            language="fr",
            line=1,
            truncated=False,
        )
        assert (note.kind, note.text, note.location_start) == ("note", "à vérifier", 1300)
        assert (bookmark.kind, bookmark.page) == ("bookmark", "112")
        assert bookmark.added_at == utc(2024, 8, 22, 18, 10, 53)

    def test_it_reads_the_capitalised_emplacement_and_a_before_the_time(self) -> None:
        clipping = parse_fixture("fr.txt").clippings[3]

        assert (clipping.page, clipping.location_start, clipping.location_end) == (
            "242",
            3706,
            3708,
        )
        assert clipping.added_at == utc(2012, 6, 16, 22, 40, 52)


class ItalianTests:
    def test_it_reads_highlights_notes_and_bookmarks(self) -> None:
        highlight, note, bookmark, location_only = parse_fixture("it.txt").clippings

        assert (highlight.kind, highlight.page, highlight.location_start) == (
            "highlight",
            "112",
            1300,
        )
        assert highlight.location_end == 1301
        assert highlight.added_raw == "giovedì 22 agosto 2024 18:10:53"
        assert highlight.added_at == utc(2024, 8, 22, 18, 10, 53)
        assert (note.kind, note.text) == ("note", "bello")
        assert (bookmark.kind, bookmark.location_start) == ("bookmark", 1300)
        assert (location_only.page, location_only.location_start) == (None, 326)
        assert location_only.added_at == utc(2016, 4, 7, 7, 58, 4)
        assert {c.language for c in (highlight, note, bookmark, location_only)} == {"it"}


class DutchTests:
    def test_it_reads_t_m_location_ranges(self) -> None:
        highlight, note, bookmark = parse_fixture("nl.txt").clippings

        assert (highlight.kind, highlight.location_start, highlight.location_end) == (
            "highlight",
            1293,
            1295,
        )
        assert (highlight.language, highlight.page) == ("nl", "79")
        assert highlight.added_at == utc(2022, 8, 30, 19, 46, 26)
        assert (note.kind, note.text, note.location_end) == ("note", "mooi", None)
        assert (bookmark.kind, bookmark.language) == ("bookmark", "nl")


class PortugueseTests:
    def test_it_reads_the_old_ou_posicao_firmware(self) -> None:
        result = parse_fixture("pt_br.txt")

        highlight, note, bookmark = result.clippings[:3]
        assert (highlight.kind, highlight.location_start, highlight.location_end) == (
            "highlight",
            77,
            80,
        )
        assert highlight.added_at == utc(2019, 11, 2, 14, 3)
        assert (note.kind, note.location_start) == ("note", 108)
        assert note.added_at == utc(2019, 11, 2, 9, 5)
        assert (bookmark.kind, bookmark.location_start) == ("bookmark", 46)
        assert {c.language for c in result.clippings} == {"pt"}

    def test_it_reads_pdf_pages_without_a_location(self) -> None:
        result = parse_fixture("pt_br.txt")

        pdf, note = clipping_at(result, line=16), clipping_at(result, line=21)
        assert (pdf.page, pdf.location_start, pdf.title) == (
            "1280-1281",
            None,
            "Relatório das marés",
        )
        assert (note.kind, note.page, note.text) == ("note", "1", "capa")

    def test_it_reads_the_new_firmware(self) -> None:
        clipping = clipping_at(parse_fixture("pt_br.txt"), line=26)

        assert clipping == Clipping(
            title="Maré baixa em Lisboa",
            author="Fonseca, Helena",
            kind="highlight",
            text="As gaivotas sabem as horas melhor do que os relógios.",
            page="68",
            location_start=805,
            location_end=809,
            added_at=utc(2025, 1, 2, 20, 19, 11),
            added_raw="quinta-feira, 2 de janeiro de 2025 20:19:11",
            language="pt",
            line=26,
            truncated=False,
        )


class RussianTests:
    def test_it_reads_the_en_dash_prefix_and_en_dash_ranges(self) -> None:
        clipping = parse_fixture("ru.txt").clippings[0]

        assert clipping == Clipping(
            title="Старый маяк",
            author="Андрей Соколов",
            kind="highlight",
            text="Маяк молчал, но корабли его слышали.",
            page=None,
            location_start=805,
            location_end=806,
            added_at=utc(2024, 12, 6, 0, 14, 51),
            added_raw="пятница, 6 декабря 2024 г. в 00:14:51",
            language="ru",
            line=1,
            truncated=False,
        )

    def test_it_keeps_exact_duplicates_a_few_seconds_apart(self) -> None:
        first, second = parse_fixture("ru.txt").clippings[:2]

        assert first.text == second.text
        assert (second.line, second.added_at) == (6, utc(2024, 12, 6, 0, 14, 53))

    def test_it_reads_notes_bookmarks_and_pages(self) -> None:
        result = parse_fixture("ru.txt")

        note, bookmark, with_page = (clipping_at(result, line=n) for n in (11, 16, 21))
        assert (note.kind, note.location_start, note.text) == ("note", 5685, "перечитать")
        assert (bookmark.kind, bookmark.location_start) == ("bookmark", 1825)
        assert bookmark.added_at == utc(2015, 3, 16, 22, 12, 16)
        assert (with_page.page, with_page.location_start, with_page.location_end) == (
            "486",
            7438,
            7439,
        )
        assert clipping_at(result, line=26).added_at == utc(2025, 1, 9, 7, 2)


class JapaneseTests:
    def test_it_reads_location_first_and_page_first_lines(self) -> None:
        result = parse_fixture("ja.txt")

        assert result.clippings[0] == Clipping(
            title="静かな朝の時計 (文庫)",
            author="佐藤 葵",
            kind="highlight",
            text="時計の音だけが部屋をめぐっていた。",
            page=None,
            location_start=1114,
            location_end=1115,
            added_at=utc(2021, 8, 3, 23, 24, 53),
            added_raw="2021年8月3日火曜日 23:24:53",
            language="ja",
            line=1,
            truncated=False,
        )
        with_page = clipping_at(result, line=6)
        assert (with_page.page, with_page.location_start, with_page.location_end) == (
            "133",
            1647,
            1648,
        )

    def test_it_reads_notes_and_bookmarks_and_the_spaced_variant(self) -> None:
        result = parse_fixture("ja.txt")

        note, bookmark, spaced = (clipping_at(result, line=n) for n in (11, 16, 21))
        assert (note.kind, note.page, note.location_start, note.text) == (
            "note",
            "57",
            783,
            "あとで読む",
        )
        assert note.added_at == utc(2023, 8, 8, 5, 52, 9)
        assert (bookmark.kind, bookmark.page, bookmark.location_start) == ("bookmark", "19", 204)
        assert (spaced.kind, spaced.page, spaced.location_start) == ("bookmark", None, 2011)


class ChineseTests:
    def test_it_reads_the_current_firmware(self) -> None:
        result = parse_fixture("zh.txt")

        assert result.clippings[0] == Clipping(
            title="海风与旧信（上下） (现代文库)",
            author="(加)林远",
            kind="highlight",
            text="海风把旧信吹进抽屉里。",
            page=None,
            location_start=469,
            location_end=471,
            added_at=utc(2013, 12, 27, 1, 58, 30),
            added_raw="2013年12月27日星期五 上午1:58:30",
            language="zh",
            line=1,
            truncated=False,
        )
        note, bookmark = clipping_at(result, line=6), clipping_at(result, line=11)
        assert (note.kind, note.location_start, note.location_end) == ("note", 471, None)
        assert (bookmark.kind, bookmark.location_start) == ("bookmark", 76)
        assert bookmark.added_at == utc(2013, 12, 27, 0, 12, 13)  # 上午12:12 is past midnight

    def test_it_reads_pages_and_full_width_parentheses(self) -> None:
        result = parse_fixture("zh.txt")

        pdf, page_bookmark, both, note = (clipping_at(result, line=n) for n in (16, 21, 26, 31))
        assert (pdf.page, pdf.location_start) == ("17", None)
        assert pdf.added_at == utc(2016, 4, 4, 12, 20, 41)  # 下午12:20 is just after noon
        assert (page_bookmark.kind, page_bookmark.page) == ("bookmark", "5")
        assert page_bookmark.added_at == utc(2016, 4, 4, 18, 35, 21)
        assert (both.page, both.location_start, both.location_end) == ("22", 290, 291)
        assert (note.kind, note.page, note.location_start) == ("note", "112", 1300)

    def test_it_reads_the_2013_firmware(self) -> None:
        result = parse_fixture("zh.txt")

        bookmark, highlight, note = (clipping_at(result, line=n) for n in (36, 41, 46))
        assert (bookmark.kind, bookmark.page, bookmark.language) == ("bookmark", "65", "zh")
        assert bookmark.added_raw == "2013年12月18日星期三 下午04:55:44"
        assert bookmark.added_at == utc(2013, 12, 18, 16, 55, 44)
        assert (highlight.kind, highlight.location_start, highlight.location_end) == (
            "highlight",
            465,
            466,
        )
        assert (note.kind, note.location_start, note.text) == ("note", 466, "为什么")

    def test_it_reads_english_labels_with_a_chinese_date(self) -> None:
        clipping = clipping_at(parse_fixture("zh.txt"), line=51)

        assert (clipping.language, clipping.location_start, clipping.location_end) == (
            "en",
            145,
            146,
        )
        assert clipping.added_at == utc(2013, 8, 5, 1, 11, 28)  # 09:11:28 at GMT+08:00


class MixedLanguageTests:
    def test_it_detects_the_language_of_each_entry(self) -> None:
        result = parse_fixture("mixed_languages.txt")

        assert [(c.line, c.language, c.kind, c.location_start) for c in result.clippings] == [
            (2, "en", "highlight", 1756),
            (7, "en", "highlight", 1760),
            (12, "es", "highlight", 60),
            (17, "zh", "highlight", 2543),
            (22, "ru", "note", 55),
        ]
        assert [c.added_at for c in result.clippings] == [
            utc(2021, 2, 26, 11, 3, 2),
            utc(2021, 2, 27, 8, 15),
            utc(2022, 7, 6, 6, 54, 57),
            utc(2023, 2, 9, 18, 35, 21),
            utc(2024, 3, 3, 18, 48, 36),
        ]


class TitleAuthorTests:
    def test_it_reads_the_title_line_shapes(self) -> None:
        result = parse_fixture("titles.txt")

        assert [(c.title, c.author) for c in result.clippings] == [
            ("Patterns in Tidal Pools (2015)", "Ferreira, Ana"),
            ("Concurrency by Example", "Jo Lindqvist;Bram Ostrowski;Kiri Tane"),
            ("Small Services", "Ilse Varga, Tomas Rue, and Mina Oduya"),
            ("What Is a River?", "Noor Saleh;"),
            ("El faro de las horas (Spanish Edition)", "Ibarra, Lucía"),
            ("La noche del molino (Spanish Edition)", ""),
            ("海风与旧信（上下） (现代文库)", "(加)林远"),
            ("Dive into Harbours", ""),
            ("Hollow Roads 2011 - Notes on Walking", ""),
            ("Lecture Draft", "Unknown"),
            ("Notes from a Shed", "Grosvenor, Alice (ed.)"),
        ]

    def test_it_splits_title_dash_author_without_parentheses(self) -> None:
        clipping = clipping_at(parse_fixture("en_classic.txt"), line=46)

        assert (clipping.title, clipping.author) == ("Tidewater Almanac", "P Quillon Harte")
        assert (clipping.page, clipping.location_start) == ("125", None)

    def test_it_reads_a_dashed_line_that_names_its_author_first(self) -> None:
        assert split_title_author("Ira Vance - Ada's Lantern") == ("Ada's Lantern", "Ira Vance")
        assert split_title_author("Hal J. Moreno III - TideMeter") == (
            "TideMeter",
            "Hal J. Moreno III",
        )
        assert split_title_author("Jornada del Faro - K Lisbet Orm") == (
            "Jornada del Faro",
            "K Lisbet Orm",
        )

    def test_it_takes_the_author_of_a_downloaded_file_name_from_the_parentheses(self) -> None:
        line = (
            "La Mer -- Morel, Camille -- Éditions du Port -- 35a59d26 -- Archive (Morel, Camille)"
        )

        assert split_title_author(line) == (
            "La Mer -- Morel, Camille -- Éditions du Port -- 35a59d26 -- Archive",
            "Morel, Camille",
        )

    def test_it_keeps_an_email_address_as_the_author(self) -> None:
        assert split_title_author("Ask HN: Tides? (b8cd5f21@example.com)") == (
            "Ask HN: Tides?",
            "b8cd5f21@example.com",
        )

    def test_it_does_not_take_an_edition_or_a_year_for_an_author(self) -> None:
        assert split_title_author("El faro (Spanish Edition)") == ("El faro (Spanish Edition)", "")
        assert split_title_author("Der Uhrmacher (Kindle-Ausgabe)") == (
            "Der Uhrmacher (Kindle-Ausgabe)",
            "",
        )
        assert split_title_author("Tidal Pools (2015)") == ("Tidal Pools (2015)", "")

    def test_it_leaves_unbalanced_parentheses_in_the_title(self) -> None:
        assert split_title_author("A Title (with no end") == ("A Title (with no end", "")
        assert split_title_author("A Title with an end)") == ("A Title with an end)", "")


class SplitAuthorsTests:
    def test_it_splits_semicolons_and_drops_a_trailing_one(self) -> None:
        assert split_authors("Jo Lindqvist;Bram Ostrowski;Kiri Tane") == [
            "Jo Lindqvist",
            "Bram Ostrowski",
            "Kiri Tane",
        ]
        assert split_authors("Noor Saleh;") == ["Noor Saleh"]
        assert split_authors("ＭＡＧＥ;Ｃｈｉｙｏ ｓｔ．;梅原") == [
            "ＭＡＧＥ",
            "Ｃｈｉｙｏ ｓｔ．",
            "梅原",
        ]

    def test_it_splits_an_english_list_with_and(self) -> None:
        assert split_authors("Ilse Varga, Tomas Rue, and Mina Oduya") == [
            "Ilse Varga",
            "Tomas Rue",
            "Mina Oduya",
        ]
        assert split_authors("Ilse Varga & Tomas Rue") == ["Ilse Varga", "Tomas Rue"]

    def test_it_splits_a_comma_list_of_three_full_names(self) -> None:
        assert split_authors("Ilse Varga, Tomas Rue, Mina Oduya") == [
            "Ilse Varga",
            "Tomas Rue",
            "Mina Oduya",
        ]

    def test_it_keeps_last_comma_first_as_one_name(self) -> None:
        assert split_authors("Marrow, Idris") == ["Marrow, Idris"]
        assert split_authors("Okonkwo, Chidi Ada") == ["Okonkwo, Chidi Ada"]
        assert split_authors("Van der Berg, Anna K.") == ["Van der Berg, Anna K."]
        assert split_authors("") == []


class NormalizeTitleTests:
    def test_it_folds_case_whitespace_and_boms(self) -> None:
        assert normalize_title("  The\ufeff Quiet   Engine ") == "the quiet engine"

    def test_it_strips_edition_suffixes(self) -> None:
        assert normalize_title("El faro de las horas (Spanish Edition)") == "el faro de las horas"
        assert normalize_title("Der Uhrmacher (German Edition)") == "der uhrmacher"
        assert normalize_title("The Quiet Engine (Kindle Edition)") == "the quiet engine"
        assert normalize_title("Patterns in Tidal Pools (2015)") == "patterns in tidal pools 2015"

    def test_it_folds_full_width_characters(self) -> None:
        assert normalize_title("Ｔｉｄｅｓ；Ｓａｌｔ") == normalize_title("Tides;Salt")


class NormalizeAuthorTests:
    def test_it_gives_last_first_and_first_last_the_same_key(self) -> None:
        assert normalize_author("Marrow, Idris") == normalize_author("Idris Marrow")
        assert normalize_author("Quist, A. B. C.") == normalize_author("A.B.C. Quist")
        assert normalize_author("Van der Berg, Anna K.") == "anna van der berg"

    def test_it_sorts_several_authors(self) -> None:
        assert normalize_author("Tane, Kiri;Lindqvist, Jo") == "jo lindqvist; kiri tane"
        assert normalize_author("Kiri Tane; Jo Lindqvist") == "jo lindqvist; kiri tane"
        assert normalize_author("Noor Saleh;") == "noor saleh"


class SyntheticFileTests:
    def test_it_parses_the_benchmark_file_without_problems(self) -> None:
        data = make_clippings_file(300, seed=3)

        result = parse_clippings(data)

        assert (result.entries, len(result.clippings), result.problems) == (300, 300, [])
        assert {c.language for c in result.clippings} == {
            "en", "es", "de", "pt", "ja", "zh", "ru", "fr", "it", "nl"
        }  # fmt: skip
        assert {c.kind for c in result.clippings} == {"highlight", "note", "bookmark"}
        assert all(c.added_at is not None and c.location_start for c in result.clippings)
        assert 250 <= len(data) / 300 <= 350


def _entry(title: str, meta: str, text: str) -> str:
    return f"{title}\n{meta}\n\n{text}\n==========\n"


META = "- Your Highlight on Location 10-12 | Added on Monday, 3 March 2025 10:00:00"


class HostileEdgeCaseTests:
    @pytest.mark.parametrize(
        "separator", ["=" * 9, "=" * 11, " ==========", "\t==========", "  ========="]
    )
    def test_it_splits_at_a_damaged_separator(self, separator: str) -> None:
        # One equals sign off, or a space or tab in front (hand-edited): the next entry's
        # title and metadata line were read as more of the first highlight's text.
        data = (
            _entry("First Book (Ana Autor)", META, "The first highlight.")
            .replace("==========", separator)
            .encode()
            + _entry("Second Book (Bea Autor)", META, "The second highlight.").encode()
        )
        result = parse_clippings(data)
        assert [(c.title, c.text) for c in result.clippings] == [
            ("First Book", "The first highlight."),
            ("Second Book", "The second highlight."),
        ]
        assert result.problems == []
        assert result.clippings[1].line == 6  # the line numbers still match the file

    def test_it_keeps_a_divider_inside_a_highlight(self) -> None:
        text = "Before the divider.\n=========\nAfter the divider."
        result = parse_clippings(_entry("Book (Ana Autor)", META, text).encode())
        assert [c.text for c in result.clippings] == [text]

    def test_it_reports_a_location_past_any_book_with_its_line(self) -> None:
        huge = META.replace("Location 10-12", "Location 99999999999")
        data = (
            _entry("Good Book (Ana Autor)", META, "Kept.") + _entry("Bad Book (B)", huge, "Lost?")
        ).encode()
        result = parse_clippings(data)
        assert [c.text for c in result.clippings] == ["Kept."]
        assert len(result.problems) == 1
        assert result.problems[0].line == 7
        assert "location 99999999999" in result.problems[0].message

    def test_it_reports_a_location_end_past_any_book(self) -> None:
        huge = META.replace("Location 10-12", "Location 10-99999999999")
        result = parse_clippings(_entry("Bad Book (B)", huge, "Text.").encode())
        assert result.clippings == []
        assert "location 99999999999" in result.problems[0].message

    def test_it_reads_a_long_but_storable_location_exactly(self) -> None:
        meta = META.replace("Location 10-12", "Location 1234567890")
        result = parse_clippings(_entry("Book (A)", meta, "Text.").encode())
        assert result.clippings[0].location_start == 1234567890

    def test_it_does_not_turn_year_0000_into_2000(self) -> None:
        meta = META.replace("2025", "0000")
        result = parse_clippings(_entry("Book (A)", meta, "Text.").encode())
        [clipping] = result.clippings
        assert clipping.added_at is None
        assert "0000" in clipping.added_raw

    def test_it_still_reads_a_two_digit_year_as_this_century(self) -> None:
        meta = "- Your Highlight Location 10-12 | Added on Monday, 3 December 12 10:00:00"
        result = parse_clippings(_entry("Book (A)", meta, "Text.").encode())
        assert result.clippings[0].added_at == utc(2012, 12, 3, 10, 0)


def _without_separator(entry: str) -> str:
    """An entry whose separator line was deleted outright (a hand edit, a sync cut short)."""
    return entry.removesuffix("==========\n")


def _missing_separator(title: str) -> str:
    return (
        f"a separator seems to be missing before this line ('{title}'); "
        "the entries were split there"
    )


BOOKMARK = "- Your Bookmark on Location 20 | Added on Monday, 3 March 2025 10:05:00"
RUSSIAN = (
    "– Ваш выделенный отрывок в месте 805–806 | Добавлено: пятница, 6 декабря 2024 г. в 00:14:51"
)
JAPANESE = "- 位置No. 1114-1115のハイライト |作成日: 2021年8月3日火曜日 23:24:53"


class MissingSeparatorTests:
    """A separator deleted outright in a file that has others: the next entry's title,
    metadata line and text were read as more of the previous highlight's text, silently."""

    @pytest.mark.parametrize(
        ("first_meta", "first_text", "second_meta", "second_line"),
        [
            (META, "The first highlight.", META, 5),
            (BOOKMARK, "", META, 5),  # an empty text: blank lines before the next title
            (META, "A poem,\n\nin two stanzas.", RUSSIAN, 7),
            (META, "The first highlight.", JAPANESE, 5),
        ],
        ids=["highlight", "bookmark", "poem-then-russian", "japanese"],
    )
    def test_it_splits_where_a_separator_is_missing_and_says_where(
        self, first_meta: str, first_text: str, second_meta: str, second_line: int
    ) -> None:
        data = (
            _without_separator(_entry("First Book (Ana Autor)", first_meta, first_text))
            + _entry("Second Book (Bea Autor)", second_meta, "The second highlight.")
            + _entry("Third Book (Cy Autor)", META, "The third highlight.")
        )

        result = parse_clippings(data.encode())

        assert [(c.line, c.title, c.text) for c in result.clippings] == [
            (1, "First Book", first_text),
            (second_line, "Second Book", "The second highlight."),
            (second_line + 5, "Third Book", "The third highlight."),
        ]
        assert (result.entries, result.problems) == (3, [])
        assert result.warnings == [
            Problem(second_line, _missing_separator("Second Book (Bea Autor)"))
        ]

    def test_it_splits_a_crlf_file_at_each_missing_separator(self) -> None:
        data = (
            _without_separator(_entry("First Book (Ana Autor)", META, "One."))
            + _without_separator(_entry("Second Book", META, "Two."))
            + _entry("Third Book (Cy Autor)", META, "Three.")
        ).replace("\n", "\r\n")

        result = parse_clippings(b"\xef\xbb\xbf" + data.encode())

        assert [(c.line, c.title, c.author, c.text) for c in result.clippings] == [
            (1, "First Book", "Ana Autor", "One."),
            (5, "Second Book", "", "Two."),
            (9, "Third Book", "Cy Autor", "Three."),
        ]
        assert result.warnings == [
            Problem(5, _missing_separator("Second Book")),
            Problem(9, _missing_separator("Third Book (Cy Autor)")),
        ]

    def test_it_keeps_the_entry_after_a_bad_one_whose_separator_is_missing(self) -> None:
        data = _without_separator(
            _entry("First Book (Ana Autor)", "* rewritten by a tool", "Lost.")
        ) + _entry("Second Book (Bea Autor)", META, "Kept.")

        result = parse_clippings(data.encode())

        assert [(c.line, c.text) for c in result.clippings] == [(5, "Kept.")]
        assert result.problems == [Problem(2, "unrecognised metadata line '* rewritten by a tool'")]
        assert result.warnings == [Problem(5, _missing_separator("Second Book (Bea Autor)"))]

    @pytest.mark.parametrize(
        "text",
        [
            # A metadata line quoted after a blank line: no title before it.
            "He wrote it down:\n\n" + META + "\nand went on.",
            # A metadata line without its date, after a line of text.
            "He wrote it down:\n- Your Highlight on page 3 | Location 40-41",
            # A divider before a metadata line.
            "Before.\n====\n" + META,
        ],
        ids=["after-a-blank-line", "without-a-date", "after-a-divider"],
    )
    def test_it_keeps_a_text_that_quotes_a_metadata_line_whole(self, text: str) -> None:
        data = _entry("Book (Ana Autor)", META, text) + _entry("Other (Bea Autor)", META, "Two.")

        result = parse_clippings(data.encode())

        assert [c.text for c in result.clippings] == [text, "Two."]
        assert (result.problems, result.warnings) == ([], [])


class WarningOrderTests:
    def test_it_lists_the_warnings_in_the_order_of_the_file(self) -> None:
        # A byte that is not UTF-8 on line 4, an unreadable date on line 7: the encoding's
        # warnings came after every entry's.
        undated = META.replace("Monday, 3 March", "Blursday")
        data = _entry("First Book (Ana Autor)", META, "Caf\xe9.").encode("cp1252")
        data += _entry("Second Book (Bea Autor)", undated, "Très.").encode()

        result = parse_clippings(data)

        assert [c.text for c in result.clippings] == ["Café.", "Très."]
        assert result.warnings == [
            Problem(4, NOT_UTF8_LINE),
            Problem(
                7,
                "the date 'Blursday 2025 10:00:00' could not be read; "
                "the entry is kept without one",
            ),
        ]


def test_an_unread_entrys_first_words_stay_short_without_spaces_to_count() -> None:
    # A Chinese entry of 3,000 characters came back whole as its "first words".
    assert first_words("記" * 3000) == "記" * 100 + " …"
    assert first_words("one two three") == "one two three"
    assert first_words(" ".join(["word"] * 13)) == " ".join(["word"] * 12) + " …"
