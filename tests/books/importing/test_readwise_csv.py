from datetime import UTC, datetime
from pathlib import Path

from books.importing.readwise_csv import NO_HIGHLIGHT_COLUMN, UNCLOSED_QUOTE, parse_readwise_csv
from books.importing.rich import RichClipping
from books.importing.screening import screen_entries

FIXTURES = Path(__file__).parent / "fixtures"


class ReadwiseCsvTests:
    def test_it_reads_every_column(self) -> None:
        result = parse_readwise_csv((FIXTURES / "readwise.csv").read_bytes())
        first = result.clippings[0]
        assert isinstance(first, RichClipping)
        assert first.text == "Memory is the diary that we all carry about with us."
        assert first.title == "The Importance of Being Earnest"
        assert first.author == "Oscar Wilde"
        assert first.note == "Compare Funes."
        assert first.location_start == 1020
        assert first.added_at == datetime(2021, 5, 4, 12, 34, 56, tzinfo=UTC)
        assert first.line == 2

    def test_it_reads_ranges_multi_line_cells_and_spelled_dates(self) -> None:
        result = parse_readwise_csv((FIXTURES / "readwise.csv").read_bytes())
        two_lines = result.clippings[3]
        assert two_lines.text == 'A highlight over\ntwo lines, with "quotes".'
        assert (two_lines.location_start, two_lines.location_end) == (1030, 1032)
        assert two_lines.added_at == datetime(2021, 5, 6, 21, 15, tzinfo=UTC)

    def test_it_reads_quoted_tag_names_and_the_favorite_tag_as_a_favourite(self) -> None:
        data = (
            b"Highlight,Title,Tags\r\n"
            b'Words,A Book,"""Smith, John"", memoria, Favorite"\r\n'
            b"More words,A Book,a tag\r\n"
        )
        first, second = parse_readwise_csv(data).clippings
        assert isinstance(first, RichClipping)
        assert isinstance(second, RichClipping)
        assert (first.tags, first.favourite) == (("Smith, John", "memoria"), True)
        assert (second.tags, second.favourite) == (("a tag",), False)

    def test_it_reads_readwises_export_layout(self) -> None:
        # Book Title, Book Author and Highlighted at, not the import template's names:
        # every row was an "Untitled" book with no author and no date.
        result = parse_readwise_csv((FIXTURES / "readwise_export.csv").read_bytes())
        assert result.problems == []
        assert [(c.title, c.author) for c in result.clippings] == [
            ("The Salt Ledger", "Marta Quillfeather"),
            ("The Salt Ledger", "Marta Quillfeather"),
            ("Orchards Without Maps", "Tobías Ferreira"),
            ("Orchards Without Maps", "Tobías Ferreira"),
            ("Notes on Slow Software", "Ida Brandt"),
            ("Episode 41: Bridges", "The Span Podcast"),
        ]
        # Readwise writes its dates so, with the offset: 2021-03-14 18:07:00+00:00.
        assert [c.added_at for c in result.clippings] == [
            datetime(2021, 3, 14, 18, 7, tzinfo=UTC),
            datetime(2021, 3, 15, 7, 45, 12, tzinfo=UTC),
            datetime(2022, 11, 2, 21, 30, tzinfo=UTC),
            datetime(2022, 11, 3, 8, tzinfo=UTC),
            datetime(2023, 6, 1, 12, tzinfo=UTC),
            datetime(2024, 2, 10, 19, 20, 5, tzinfo=UTC),
        ]

    def test_its_location_type_tells_a_kindle_location_from_a_page(self) -> None:
        # A page, an order (3) and a time (1834 seconds) were all Kindle locations.
        result = parse_readwise_csv((FIXTURES / "readwise_export.csv").read_bytes())
        assert [(c.location_start, c.page) for c in result.clippings] == [
            (1412, None),  # location
            (1530, None),  # location
            (None, "87"),  # page
            (None, "112"),  # page
            (None, None),  # order: only the order of an article's highlights
            (None, None),  # time: a place in a recording
        ]

    def test_a_page_typed_range_or_numeral_is_a_page_and_no_type_is_read_as_before(
        self,
    ) -> None:
        data = (
            b"Highlight,Book Title,Location Type,Location\r\n"
            b"One.,A Book,page,13-14\r\n"
            b"Two.,A Book,Page,xii\r\n"
            b"Three.,A Book,,120-124\r\n"
            b"Four.,A Book,offset,5120\r\n"
        )
        result = parse_readwise_csv(data)
        assert [(c.page, c.location_start, c.location_end) for c in result.clippings] == [
            ("13-14", None, None),
            ("xii", None, None),
            (None, 120, 124),
            (None, None, None),
        ]

    def test_document_tags_are_every_highlights_tags_and_a_favourite_book_is_none(
        self,
    ) -> None:
        result = parse_readwise_csv((FIXTURES / "readwise_export.csv").read_bytes())
        assert [(c.tags, c.favourite) for c in result.clippings] == [
            (("harbours", "Quill, Marta", "sea"), False),
            (("sea",), True),  # its own "favorite" tag
            (("gardens",), False),
            (("gardens",), False),
            ((), False),
            ((), False),
        ]
        assert all(c.tags_carried for c in result.clippings)

    def test_document_tags_alone_carry_tags_and_a_tag_in_both_is_kept_once(self) -> None:
        data = b'Highlight,Book Title,Document tags\r\nWords.,A Book,"Sea, harbours"\r\n'
        [alone] = parse_readwise_csv(data).clippings
        assert (alone.tags, alone.tags_carried) == (("Sea", "harbours"), True)
        data = b'Highlight,Tags,Document tags\r\nWords.,"sea, tide",Sea\r\n'
        [both] = parse_readwise_csv(data).clippings
        assert both.tags == ("sea", "tide")

    def test_title_author_and_date_come_before_their_export_names_where_they_say_something(
        self,
    ) -> None:
        data = (
            b"Highlight,Title,Book Title,Author,Book Author,Date,Highlighted at\r\n"
            b"One.,Mine,Theirs,Me,Them,2020-01-02,2021-03-14 18:07:00+00:00\r\n"
            b"Two.,,Theirs,,Them,,2021-03-14 18:07:00+00:00\r\n"
        )
        first, second = parse_readwise_csv(data).clippings
        assert (first.title, first.author, first.added_at) == (
            "Mine",
            "Me",
            datetime(2020, 1, 2, tzinfo=UTC),
        )
        assert (second.title, second.author, second.added_at) == (
            "Theirs",
            "Them",
            datetime(2021, 3, 14, 18, 7, tzinfo=UTC),
        )

    def test_it_marks_the_rows_an_older_exogram_read_into_untitled(self) -> None:
        # Before 2026-12-07 only Title and Author named a row's book: a row whose book only
        # Book Title names went into "Untitled" with no author (books.importing.untitled).
        export = parse_readwise_csv((FIXTURES / "readwise_export.csv").read_bytes())
        assert [isinstance(c, RichClipping) and c.untitled_before for c in export.clippings] == [
            True
        ] * 6
        data = (
            b"Highlight,Title,Book Title,Author,Book Author\r\n"
            b"One.,Mine,Theirs,,Them\r\n"  # Title read then too
            b"Two.,,Theirs,,Them\r\n"  # Untitled then
            b"Three.,,Theirs,Me,\r\n"  # "Untitled" by Me then: not the book with no author
            b"Four.,,,,\r\n"  # Untitled then and now
        )
        marked = parse_readwise_csv(data).clippings
        assert [isinstance(c, RichClipping) and c.untitled_before for c in marked] == [
            False,
            True,
            False,
            False,
        ]
        template = parse_readwise_csv((FIXTURES / "readwise.csv").read_bytes())
        assert not any(
            isinstance(c, RichClipping) and c.untitled_before for c in template.clippings
        )

    def test_it_takes_a_note_without_a_highlight_as_a_note(self) -> None:
        result = parse_readwise_csv((FIXTURES / "readwise.csv").read_bytes())
        note = result.clippings[4]
        assert (note.kind, note.text, note.location_start) == (
            "note",
            "A note with no highlight.",
            1100,
        )

    def test_it_takes_off_the_formula_guard(self) -> None:
        result = parse_readwise_csv((FIXTURES / "readwise.csv").read_bytes())
        assert result.clippings[2].text == "=1+1 is not a formula here"

    def test_it_reports_bad_rows_with_their_lines_and_keeps_the_rest(self) -> None:
        result = parse_readwise_csv((FIXTURES / "readwise.csv").read_bytes())
        assert result.entries == 7
        assert len(result.clippings) == 5
        assert [(p.line, p.message) for p in result.problems] == [
            (8, "a row without a Highlight (or a Note)"),
            (9, "unrecognised date 'the day after tomorrow'"),
        ]

    def test_it_reads_semicolons_and_lower_case_headers(self) -> None:
        result = parse_readwise_csv((FIXTURES / "readwise_semicolon.csv").read_bytes())
        [clipping] = result.clippings
        assert clipping.text == "Semicolons, as a Spanish Excel writes them"
        assert clipping.title == "Hojas de cálculo"

    def test_it_needs_a_highlight_column_and_says_which_columns_it_found(self) -> None:
        result = parse_readwise_csv(b"Title,Author\nA,B\n")
        assert result.clippings == []
        [problem] = result.problems
        assert (problem.line, problem.message) == (
            1,
            NO_HIGHLIGHT_COLUMN % {"found": "Title, Author"},
        )
        assert "Highlight column, which Exogram needs" in problem.message

    def test_an_unclosed_quote_is_reported_on_its_line_and_every_other_row_is_kept(
        self,
    ) -> None:
        # The quote on line 3 was never closed: the csv module read every later line into
        # its cell, up to the next quote, and the reader was told of a date two lines on.
        data = (
            b"Highlight,Title,Date\r\n"
            b"The lamp was lit.,Harbour Notes,2022-03-01\r\n"
            b'"A quote left open,Harbour Notes,2022-03-02\r\n'
            b"The tide came in.,Harbour Notes,2022-03-03\r\n"
            b"The gulls left.,Harbour Notes,someday\r\n"
            b'"Quoted, and closed",Harbour Notes,2022-03-05\r\n'
            b'"Over two\r\nlines, ""quoted""",Harbour Notes,2022-03-06\r\n'
        )
        result = parse_readwise_csv(data)
        assert [(c.line, c.text) for c in result.clippings] == [
            (2, "The lamp was lit."),
            (4, "The tide came in."),
            (6, "Quoted, and closed"),
            (7, 'Over two\nlines, "quoted"'),
        ]
        assert [(p.line, p.message) for p in result.problems] == [
            (3, UNCLOSED_QUOTE),
            (5, "unrecognised date 'someday'"),
        ]
        assert result.entries == len(result.clippings) + len(result.problems)

    def test_a_quote_never_closed_keeps_the_rows_before_it_and_after_its_line(self) -> None:
        data = b'Highlight,Title\nKept.,A Book\nAlso kept.,A Book\n"Open,A Book\nLost,A Book\n'
        result = parse_readwise_csv(data)
        assert [c.text for c in result.clippings] == ["Kept.", "Also kept.", "Lost"]
        assert [(p.line, p.message) for p in result.problems] == [(4, UNCLOSED_QUOTE)]

    def test_untidy_quotes_on_one_line_are_still_read_as_before(self) -> None:
        data = b'Highlight,Title\n"He said "no" twice",A Book\nNext.,A Book\n'
        result = parse_readwise_csv(data)
        assert result.problems == []
        assert [c.text for c in result.clippings] == ['He said no" twice"', "Next."]

    def test_a_huge_cell_is_reported_on_its_row_and_every_later_row_is_kept(self) -> None:
        # The csv module refused a cell over 131,072 characters with an error that ended
        # the reading: every row after it was lost without a word.
        huge = "m" * 210_000
        data = (
            "Highlight,Title\r\n"
            "Before the long one.,A Book\r\n"
            f'"{huge}",A Book\r\n'
            "After the long one.,A Book\r\n"
            "And the last.,Another Book\r\n"
        ).encode()
        result = screen_entries(parse_readwise_csv(data))
        assert [c.text for c in result.clippings] == [
            "Before the long one.",
            "After the long one.",
            "And the last.",
        ]
        [problem] = result.problems
        assert problem.line == 3
        assert "210,000 characters" in problem.message

    def test_a_closed_multi_line_cell_is_no_unclosed_quote_with_spaces_or_tabs_after_it(
        self,
    ) -> None:
        spaced = parse_readwise_csv(b'Highlight,Title\n"two\nlines" ,A Book\nNext,A Book\n')
        assert spaced.problems == []
        assert [c.text for c in spaced.clippings] == ["two\nlines", "Next"]
        tabbed = parse_readwise_csv(
            b'Highlight\tTitle\n"two\nlines"\tA Book\n"open\tA Book\nNext\tA Book\n'
        )
        assert [c.text for c in tabbed.clippings] == ["two\nlines", "Next"]
        assert [(p.line, p.message) for p in tabbed.problems] == [(4, UNCLOSED_QUOTE)]
