"""A highlight the reader extended on a KOReader, Kobo or Apple Books device between two
uploads: one highlight, the longer text, the note kept, the merge recorded, as a Kindle's.

The device writes where the passage is (an xpointer, a Kobo container path, a CFI); the
later version's range overlaps the earlier one's, its words hold every word of it.
"""

from collections.abc import Callable
from pathlib import Path

import pytest

from accounts.models import User
from books.exporting.services import library_export
from books.importing.services import clippings_import
from books.models import Highlight, HighlightMerge
from tests.books.importing.devices import AppleRow, KoboRow, apple_books_zip, kobo_database

SHORT = "Machines hum when they are lonely."
LONG = "Machines hum when they are lonely. They sing when someone listens."
# Elsewhere in the book, words that are also in the longer text: not a version of it.
ELSEWHERE = "They sing when someone listens"
NOTE = "The engine as a lonely animal."

_SIDECAR = """return {{
    ["annotations"] = {{
        [1] = {{
            ["chapter"] = "Chapter 1",
            ["datetime"] = "2026-02-20 18:08:18",
            ["drawer"] = "lighten",
            {note}
            ["pageno"] = {page},
            ["pos0"] = "/body/DocFragment[7]/body/div/p[12]/text().14",
            ["pos1"] = "{end}",
            ["text"] = "{text}",
        }},
        [2] = {{
            ["chapter"] = "Chapter 9",
            ["datetime"] = "2026-02-22 10:00:00",
            ["drawer"] = "lighten",
            ["pageno"] = 140,
            ["pos0"] = "/body/DocFragment[19]/body/div/p[3]/text().0",
            ["pos1"] = "/body/DocFragment[19]/body/div/p[3]/text().30",
            ["text"] = "{elsewhere}",
        }},
    }},
    ["doc_props"] = {{ ["authors"] = "Chidi Okonkwo", ["title"] = "The Quiet Engine" }},
}}
"""


def _koreader(tmp_path: Path, *, extended: bool) -> tuple[bytes, str]:
    sidecar = _SIDECAR.format(
        text=LONG if extended else SHORT,
        # The font changed between the two: the page number moved, the xpointer did not.
        page=31 if extended else 21,
        end="/body/DocFragment[7]/body/div/p[13]/text().20"
        if extended
        else "/body/DocFragment[7]/body/div/p[12]/text().48",
        # The reader's note stays on the device's entry; here it is only in the first file.
        note="" if extended else f'["note"] = "{NOTE}",',
        elsewhere=ELSEWHERE,
    )
    return sidecar.encode(), "metadata.epub.lua"


def _kobo(tmp_path: Path, *, extended: bool) -> tuple[bytes, str]:
    path = "OEBPS/Text/Unknown_split_001.html#point(/1/4/770/1:{})"
    # The longer selection is a new bookmark; the device dropped the shorter one.
    first = KoboRow("short", SHORT, NOTE, kind="note", start=path.format(550), end=path.format(584))
    rows = [
        KoboRow("long", LONG, start=path.format(550), end=path.format(620)) if extended else first,
        KoboRow(
            "far",
            ELSEWHERE,
            start="OEBPS/Text/Unknown_split_005.html#point(/1/4/398/1:162)",
            end="OEBPS/Text/Unknown_split_005.html#point(/1/4/398/1:192)",
        ),
    ]
    return kobo_database(tmp_path / "KoboReader.sqlite", rows), "KoboReader.sqlite"


def _apple(tmp_path: Path, *, extended: bool) -> tuple[bytes, str]:
    rows = [
        AppleRow(
            1,
            LONG if extended else SHORT,
            None if extended else NOTE,
            location="epubcfi(/6/24[c_Split3]!/4/2/296/2,/1:0,/3:70)"
            if extended
            else "epubcfi(/6/24[c_Split3]!/4/2/296/2,/1:0,/1:34)",
        ),
        AppleRow(2, ELSEWHERE, location="epubcfi(/6/30[c_Split6]!/4/2/12,/1:0,/1:30)"),
    ]
    return apple_books_zip(tmp_path / "apple", rows), "Library.zip"


Files = Callable[..., tuple[bytes, str]]


@pytest.mark.django_db
class DeviceReselectionTests:
    @pytest.mark.parametrize("files", [_koreader, _kobo, _apple], ids=["koreader", "kobo", "apple"])
    def test_it_merges_a_highlight_extended_between_two_uploads(
        self, alice: User, tmp_path: Path, files: Files
    ) -> None:
        data, name = files(tmp_path, extended=False)
        clippings_import(reader=alice, data=data, file_name=name)
        (first,) = Highlight.objects.filter(reader=alice, text=SHORT)
        assert first.note == NOTE
        assert first.position  # where the device put it, kept for the next upload

        data, name = files(tmp_path, extended=True)
        update = clippings_import(reader=alice, data=data, file_name=name)

        assert update.counts["new_highlights"] == 0
        assert update.counts["extended_merged"] == 1
        texts = sorted(Highlight.objects.filter(reader=alice).values_list("text", flat=True))
        assert texts == sorted([LONG, ELSEWHERE])
        merged = Highlight.objects.get(reader=alice, text=LONG)
        assert (merged.pk, merged.note) == (first.pk, NOTE)
        assert merged.embedding_status == Highlight.EmbeddingStatus.PENDING
        (merge,) = HighlightMerge.objects.filter(source_import=update)
        assert (merge.highlight_id, merge.how, merge.merged_text) == (
            first.pk,
            HighlightMerge.How.EXTENDED,
            LONG,
        )

        before = sorted(
            Highlight.objects.filter(reader=alice).values_list("pk", "text", "note", "updated")
        )
        for extended in (True, False):  # the second file again, then the first
            data, name = files(tmp_path, extended=extended)
            again = clippings_import(reader=alice, data=data, file_name=name)
            assert again.counts["new_highlights"] == 0
            assert again.counts["extended_merged"] == 0
            assert not HighlightMerge.objects.filter(source_import=again).exists()
        after = sorted(
            Highlight.objects.filter(reader=alice).values_list("pk", "text", "note", "updated")
        )
        assert after == before

    @pytest.mark.parametrize("files", [_koreader, _kobo, _apple], ids=["koreader", "kobo", "apple"])
    def test_an_exogram_json_export_keeps_the_position_for_the_next_upload(
        self, alice: User, bob: User, tmp_path: Path, files: Files
    ) -> None:
        """Alice moves to another Exogram (bob here) by her JSON export; her device's next
        upload there still finds the highlight she extended."""
        data, name = files(tmp_path, extended=False)
        clippings_import(reader=alice, data=data, file_name=name)
        exported = library_export(reader=alice, format="json")
        clippings_import(reader=bob, data=exported.data, file_name=exported.name)
        (moved,) = Highlight.objects.filter(reader=bob, text=SHORT)
        original = Highlight.objects.get(reader=alice, text=SHORT)
        assert (moved.position, moved.note) == (original.position, NOTE)

        data, name = files(tmp_path, extended=True)
        update = clippings_import(reader=bob, data=data, file_name=name)

        assert update.counts["new_highlights"] == 0
        assert update.counts["extended_merged"] == 1
        texts = sorted(Highlight.objects.filter(reader=bob).values_list("text", flat=True))
        assert texts == sorted([LONG, ELSEWHERE])
        merged = Highlight.objects.get(reader=bob, text=LONG)
        assert (merged.pk, merged.note) == (moved.pk, NOTE)

    def test_a_highlight_imported_before_positions_were_kept_gets_its_position(
        self, alice: User, tmp_path: Path
    ) -> None:
        data, name = _apple(tmp_path, extended=False)
        clippings_import(reader=alice, data=data, file_name=name)
        Highlight.objects.filter(reader=alice).update(position="")

        clippings_import(reader=alice, data=data, file_name=name)
        assert not Highlight.objects.filter(reader=alice, position="").exists()
        data, name = _apple(tmp_path, extended=True)
        update = clippings_import(reader=alice, data=data, file_name=name)
        assert update.counts["extended_merged"] == 1
        assert Highlight.objects.filter(reader=alice, text=SHORT).count() == 0

    def test_words_of_a_highlight_elsewhere_in_the_book_are_not_a_version_of_it(
        self, alice: User, tmp_path: Path
    ) -> None:
        """The short highlight far away is inside the longer text's words, not its range."""
        data, name = _kobo(tmp_path, extended=True)
        clippings_import(reader=alice, data=data, file_name=name)
        assert Highlight.objects.filter(reader=alice, text=ELSEWHERE).count() == 1
        assert Highlight.objects.filter(reader=alice, text=LONG).count() == 1
