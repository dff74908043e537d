"""How each merged entry is labelled on the import report: an entry whose every word is in
another single entry is "Contained in a longer highlight", whatever merged it first."""

from importlib import import_module

import pytest
from django.apps import apps

from accounts.models import User
from books.importing.services import clippings_import
from books.models import HighlightMerge

HEAD = "Within the quiet rooms of the old station,"
HALF = "we forget the trains that used to stop"
WHOLE = "we forget the trains that used to stop here every night before the war;"


def _entry(where: str, time: str, text: str) -> str:
    return (
        "The Quiet Engine (Okonkwo, Chidi)\r\n"
        f"- Your Highlight on Location {where} | Added on Tuesday, November 16, 2021 {time} PM"
        f"\r\n\r\n{text}\r\n==========\r\n"
    )


def _file() -> bytes:
    # The first half of a page-turn split, its second half, then the longer re-selection.
    return (
        _entry("96-98", "2:21:00", HEAD)
        + _entry("98-98", "2:21:29", HALF)
        + _entry("98-99", "2:22:26", WHOLE)
    ).encode()


@pytest.mark.django_db
class MergeLabelTests:
    def test_an_entry_inside_a_longer_selection_is_contained(self, alice: User) -> None:
        the_import = clippings_import(reader=alice, data=_file(), file_name="My Clippings.txt")
        labels = dict(
            HighlightMerge.objects.filter(source_import=the_import).values_list(
                "merged_text", "how"
            )
        )
        assert labels == {
            HALF: HighlightMerge.How.CONTAINED,
            WHOLE: HighlightMerge.How.OVERLAPPED,
        }
        (merge,) = HighlightMerge.objects.filter(merged_text=HALF)
        assert merge.get_how_display() == "Contained in a longer highlight"
        assert merge.highlight.text == f"{HEAD} {WHOLE}"

    def test_the_migration_labels_stored_entries(self, alice: User) -> None:
        the_import = clippings_import(reader=alice, data=_file(), file_name="My Clippings.txt")
        HighlightMerge.objects.filter(merged_text=HALF).update(how="page_turn")
        migration = import_module("books.migrations.0031_merge_contained")
        migration.contained_labelled(apps, None)
        labels = dict(
            HighlightMerge.objects.filter(source_import=the_import).values_list(
                "merged_text", "how"
            )
        )
        assert labels == {HALF: "contained", WHOLE: "overlapped"}

    def test_it_says_it_in_spanish(self, alice: User) -> None:
        from django.utils import translation

        clippings_import(reader=alice, data=_file(), file_name="My Clippings.txt")
        (merge,) = HighlightMerge.objects.filter(merged_text=HALF)
        with translation.override("es"):
            assert merge.get_how_display() == "Contenido en un subrayado más largo"
