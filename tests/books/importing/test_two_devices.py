"""One passage highlighted on two devices (a KOReader and a Kindle): one highlight.

The Kindle places it by locations, KOReader by an xpointer and a page that follows the font
size: where each is cannot be compared, so the versions are found by their words, which
must share a long run (merging.SHARED_RUN_WORDS). A short phrase in common is not enough.
"""

import io

import pytest
from django.core.management import call_command

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight, HighlightMerge

SHORT = (
    "The river kept the names of every boat that sank in it, and the town forgot them "
    "one winter at a time."
)
LONG = SHORT + " Only the ferryman still counted them aloud."
OTHER = "The ferryman counted them aloud on the last night of the fair."

_SIDECAR = """return {{
    ["annotations"] = {{
        [1] = {{
            ["chapter"] = "Chapter 9",
            ["datetime"] = "2026-02-20 18:08:18",
            ["drawer"] = "lighten",
            ["note"] = "koreader note",
            ["pageno"] = 346,
            ["pos0"] = "/body/DocFragment[12]/body/div/p[24]/text().0",
            ["pos1"] = "/body/DocFragment[12]/body/div/p[24]/text().98",
            ["text"] = "{text}",
        }},
    }},
    ["doc_props"] = {{ ["authors"] = "Chidi Okonkwo", ["title"] = "The Quiet Engine" }},
}}
"""


def _koreader(text: str = SHORT) -> bytes:
    return _SIDECAR.format(text=text).encode()


def _kindle(text: str = LONG, note: str = "") -> bytes:
    return (
        "The Quiet Engine (Okonkwo, Chidi)\r\n"
        "- Your Highlight on page 346 | Location 4100-4102 | "
        "Added on Friday, May 19, 2023 11:42:17 PM\r\n\r\n"
        f"{text}\r\n==========\r\n"
    ).encode() + (
        (
            "The Quiet Engine (Okonkwo, Chidi)\r\n"
            "- Your Note on page 346 | Location 4102 | "
            "Added on Friday, May 19, 2023 11:43:00 PM\r\n\r\n"
            f"{note}\r\n==========\r\n"
        ).encode()
        if note
        else b""
    )


def _texts(reader: User) -> list[str]:
    return sorted(Highlight.objects.filter(reader=reader).values_list("text", flat=True))


@pytest.mark.django_db
class TwoDevicesTests:
    def test_it_merges_a_kindle_extension_of_a_koreader_highlight(self, alice: User) -> None:
        clippings_import(reader=alice, data=_koreader(), file_name="metadata.epub.lua")
        (first,) = Highlight.objects.filter(reader=alice)

        kindle = _kindle(note="kindle note")
        update = clippings_import(reader=alice, data=kindle, file_name="My Clippings.txt")

        assert (update.counts["new_highlights"], update.counts["extended_merged"]) == (0, 1)
        # The Kindle's note finds the highlight by its locations, which it now has too (and,
        # older than the KOReader's note, does not replace it).
        assert update.counts["standalone_notes"] == 0
        (merged,) = Highlight.objects.filter(reader=alice)
        assert (merged.pk, merged.text, merged.note) == (first.pk, LONG, "koreader note")
        assert (merged.location_start, merged.page, merged.position) == (
            4100,
            "346",
            first.position,
        )
        (merge,) = HighlightMerge.objects.filter(source_import=update)
        assert merge.merged_text == LONG
        for data, name in [(_koreader(), "metadata.epub.lua"), (kindle, "My Clippings.txt")]:
            again = clippings_import(reader=alice, data=data, file_name=name)
            assert (again.counts["new_highlights"], again.counts["extended_merged"]) == (0, 0)
        assert _texts(alice) == [LONG]

    def test_it_keeps_a_koreader_highlight_the_kindle_one_holds_once(self, alice: User) -> None:
        clippings_import(reader=alice, data=_kindle(), file_name="My Clippings.txt")
        (first,) = Highlight.objects.filter(reader=alice)

        update = clippings_import(reader=alice, data=_koreader(), file_name="metadata.epub.lua")

        assert update.counts["new_highlights"] == 0
        (kept,) = Highlight.objects.filter(reader=alice)
        assert (kept.pk, kept.text, kept.location_start) == (first.pk, LONG, 4100)
        again = clippings_import(reader=alice, data=_koreader(), file_name="metadata.epub.lua")
        assert again.counts["new_highlights"] == 0
        assert _texts(alice) == [LONG]

    def test_it_stitches_two_devices_selections_that_overlap_by_a_long_run(
        self, alice: User
    ) -> None:
        head = "Every boat that sank in the river had a name the town forgot one winter at a time,"
        tail = "the town forgot one winter at a time, and only the ferryman kept them."
        clippings_import(reader=alice, data=_koreader(head), file_name="metadata.epub.lua")
        update = clippings_import(reader=alice, data=_kindle(tail), file_name="My Clippings.txt")
        assert update.counts["extended_merged"] == 1
        assert _texts(alice) == [
            "Every boat that sank in the river had a name the town forgot one winter at a "
            "time, and only the ferryman kept them."
        ]

    def test_a_short_phrase_in_common_is_two_highlights(self, alice: User) -> None:
        clippings_import(reader=alice, data=_koreader(OTHER), file_name="metadata.epub.lua")
        # "the ferryman … counted them aloud": a few words both hold, not one passage.
        short = "Only the ferryman still counted them aloud."
        update = clippings_import(reader=alice, data=_kindle(short), file_name="My Clippings.txt")
        assert (update.counts["new_highlights"], update.counts["extended_merged"]) == (1, 0)
        assert _texts(alice) == sorted([OTHER, short])


@pytest.mark.django_db
class TwoDevicesRepairTests:
    def test_merge_duplicate_books_joins_a_passage_kept_twice(self, alice: User) -> None:
        """A library imported before: the KOReader's and the Kindle's copies are two rows."""
        clippings_import(reader=alice, data=_koreader(), file_name="metadata.epub.lua")
        clippings_import(reader=alice, data=_kindle(OTHER), file_name="My Clippings.txt")
        Highlight.objects.filter(reader=alice, text=OTHER).update(text=LONG)
        other = clippings_import(
            reader=alice,
            data=_kindle("A line of its own, far away.").replace(b"4100-4102", b"9"),
            file_name="Other.txt",
        )
        assert other.counts["new_highlights"] == 1
        out = io.StringIO()

        call_command("merge_duplicate_books", user="alice", stdout=out)

        assert "alice: 1 highlights kept twice" in out.getvalue()
        (kept,) = Highlight.objects.filter(reader=alice, text=LONG)
        assert (kept.location_start, kept.note) == (4100, "koreader note")
        assert _texts(alice) == sorted([LONG, "A line of its own, far away."])
        call_command("merge_duplicate_books", user="alice", stdout=io.StringIO())
        assert len(_texts(alice)) == 2
