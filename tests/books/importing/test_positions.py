"""Where a device says a highlight is, read as a range that compares (no database)."""

from books.importing.positions import (
    cfi_span,
    decode,
    encode,
    kobo_span,
    overlaps,
    union,
    xpointer_span,
)


class PositionTests:
    def test_it_reads_a_cfi_range_and_a_cfi_point(self) -> None:
        span = cfi_span("epubcfi(/6/24[c_x^]y_Split3]!/4/2/296/2,/1:0,/7:257)")
        assert span == (("000000024", (4, 2, 296, 2, 1, 0)), ("000000024", (4, 2, 296, 2, 7, 257)))
        assert cfi_span("epubcfi(/6/2[id]!/4/2/3:0)") == (
            ("000000002", (4, 2, 3, 0)),
            ("000000002", (4, 2, 3, 0)),
        )
        assert cfi_span("epubcfi(/6/2!/4/x)") is None
        assert cfi_span("not a cfi") is None

    def test_it_reads_kobo_container_paths_and_kepub_spans(self) -> None:
        start = "OEBPS/Text/Unknown_split_001.html#point(/1/4/770/1:550)"
        end = "OEBPS/Text/Unknown_split_001.html#point(/1/4/770/1:611)"
        file = "OEBPS/Text/Unknown_split_001.html"
        assert kobo_span(start, end, start_offset=0, end_offset=0, chapter="") == (
            (file, (1, 4, 770, 1, 550)),
            (file, (1, 4, 770, 1, 611)),
        )
        kepub = kobo_span(
            "span#kobo\\.12\\.3", "span#kobo\\.12\\.5", start_offset=7, end_offset=2, chapter="!ch1"
        )
        assert kepub == (("!ch1", (12, 3, 7)), ("!ch1", (12, 5, 2)))
        assert kobo_span(None, end, start_offset=0, end_offset=0, chapter="") is None

    def test_it_reads_koreader_xpointers_and_pdf_coordinates(self) -> None:
        span = xpointer_span(
            "/body/DocFragment[11]/body/div/section/p[30]/text()[2].92",
            "/body/DocFragment[11]/body/div/section/p[31]/text().4",
        )
        assert span == (
            ("000000011", (1, 1, 1, 30, 2, 92)),
            ("000000011", (1, 1, 1, 31, 1, 4)),
        )
        pdf = xpointer_span({"page": 34, "x": 10.4, "y": 200.6}, {"page": 34, "x": 90, "y": 230})
        assert pdf == (("000000034", (201, 10)), ("000000034", (230, 90)))
        assert xpointer_span("", None) is None
        assert xpointer_span({"page": 3, "x": float("nan"), "y": 1}, None) is None

    def test_ranges_overlap_merge_and_survive_storage(self) -> None:
        part = "000000007"
        short = ((part, (12, 14)), (part, (12, 48)))
        longer = ((part, (12, 14)), (part, (13, 20)))
        apart = ((part, (14, 0)), (part, (14, 9)))
        assert overlaps(short, longer)
        assert not overlaps(short, apart)
        assert union(short, apart) == ((part, (12, 14)), (part, (14, 9)))
        assert decode(encode(longer)) == longer
        assert decode("") is None
        assert decode("[1,2]") is None
