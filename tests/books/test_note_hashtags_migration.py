"""books 0043 gives a library imported before hashtags were read the tags its notes name,
once: an import reads only a note that arrives or changes (books.importing.enrich); books
0044 does the same for the hashtags written with the full-width U+FF03, read since."""

from importlib import import_module

import pytest
from django.apps import apps

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight, Tag
from books.services import highlight_delete, highlight_tag
from tests.books.kindle import BORGES, Entry, clippings_file

note_hashtags_tagged = import_module(
    "books.migrations.0043_note_hashtags_tagged"
).note_hashtags_tagged
full_width_hashtags_tagged = import_module(
    "books.migrations.0044_highlight_file_tags"
).full_width_hashtags_tagged
FULL_WIDTH_HASH = "\uff03"

ARTIST = "The artist is the one who keeps looking."
COAL = "An unlit lump of coal at room temperature emits light."
GONE = "A deleted passage keeps its note and gains nothing."
ALONE = "#Memoria, on its own"


def _library_imported_before(reader: User) -> None:
    """As an import before hashtags were read left a library: the notes, no tags."""
    data = clippings_file(
        Entry(BORGES, ARTIST, location="100-102"),
        Entry(BORGES, "#artist #Año #ff0000 C# #1", kind="Note", location="102"),
        Entry(BORGES, COAL, location="200-202"),
        Entry(BORGES, "#artist", kind="Note", location="202"),
        Entry(BORGES, GONE, location="300-302"),
        Entry(BORGES, "#gone", kind="Note", location="302"),
        Entry(BORGES, ALONE, kind="Note", location="900"),
    )
    clippings_import(reader=reader, data=data, file_name="My Clippings.txt")
    Tag.objects.filter(reader=reader).delete()


def _tags(reader: User) -> dict[str, list[str]]:
    return {
        h.text: sorted(t.name for t in h.tags.all())
        for h in Highlight.objects.filter(reader=reader).prefetch_related("tags")
    }


@pytest.mark.django_db
class NoteHashtagsBackfillTests:
    def test_each_alive_highlight_gains_the_tags_its_note_names(
        self, alice: User, bob: User
    ) -> None:
        _library_imported_before(alice)
        _library_imported_before(bob)
        highlight_delete(highlight=Highlight.objects.get(reader=alice, text=GONE))
        highlight_tag(highlight=Highlight.objects.get(reader=alice, text=COAL), name="mine")

        note_hashtags_tagged(apps, None)

        assert _tags(alice) == {
            ARTIST: ["artist", "año"],
            COAL: ["artist", "mine"],
            GONE: [],
            ALONE: ["memoria"],
        }
        assert _tags(bob) == {
            ARTIST: ["artist", "año"],
            COAL: ["artist"],
            GONE: ["gone"],
            ALONE: ["memoria"],
        }
        assert Tag.objects.filter(reader=alice, name="artist").count() == 1

    def test_running_it_again_changes_nothing(self, alice: User) -> None:
        _library_imported_before(alice)
        note_hashtags_tagged(apps, None)
        tagged = _tags(alice)
        tags = list(Tag.objects.filter(reader=alice).values_list("pk", "name"))

        note_hashtags_tagged(apps, None)

        assert _tags(alice) == tagged
        assert list(Tag.objects.filter(reader=alice).values_list("pk", "name")) == tags

    def test_after_it_the_same_file_again_is_nothing_new(self, alice: User) -> None:
        _library_imported_before(alice)
        note_hashtags_tagged(apps, None)

        again = clippings_import(
            reader=alice,
            data=clippings_file(
                Entry(BORGES, ARTIST, location="100-102"),
                Entry(BORGES, "#artist #Año #ff0000 C# #1", kind="Note", location="102"),
            ),
            file_name="My Clippings.txt",
        )

        assert (again.counts.get("tags_added", 0), again.counts["books_changed"]) == (0, 0)


@pytest.mark.django_db
class FullWidthHashtagsBackfillTests:
    def test_a_note_gains_the_tags_of_its_full_width_hashtags_only(
        self, alice: User, bob: User
    ) -> None:
        mixed = f"#artist {FULL_WIDTH_HASH}読書\u3000{FULL_WIDTH_HASH}Año C{FULL_WIDTH_HASH}"
        alone = f"{FULL_WIDTH_HASH}記憶 on its own"
        for reader in (alice, bob):
            clippings_import(
                reader=reader,
                data=clippings_file(
                    Entry(BORGES, ARTIST, location="100-102"),
                    Entry(BORGES, mixed, kind="Note", location="102"),
                    Entry(BORGES, GONE, location="300-302"),
                    Entry(BORGES, f"{FULL_WIDTH_HASH}gone", kind="Note", location="302"),
                    Entry(BORGES, alone, kind="Note", location="900"),
                ),
                file_name="My Clippings.txt",
            )
            # As 0043 and an import before U+FF03 was read left it: the `#` tags only.
            Tag.objects.filter(reader=reader).exclude(name="artist").delete()
        # alice removed the `#artist` tag 0043 gave her: it stays removed.
        Tag.objects.filter(reader=alice, name="artist").delete()
        highlight_delete(highlight=Highlight.objects.get(reader=alice, text=GONE))

        full_width_hashtags_tagged(apps, None)
        after_once = (_tags(alice), _tags(bob))
        full_width_hashtags_tagged(apps, None)

        assert _tags(alice) == {ARTIST: ["año", "読書"], GONE: [], alone: ["記憶"]}
        assert _tags(bob) == {
            ARTIST: ["artist", "año", "読書"], GONE: ["gone"], alone: ["記憶"]
        }  # fmt: skip
        assert (_tags(alice), _tags(bob)) == after_once
