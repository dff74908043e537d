"""Hashtags in a reader's note (`#artist #being`, as Apple Books readers tag) become tags of
the highlight at import, in every format but Exogram's own export, whose tags are listed;
the note keeps its words. Only a note that arrives or changes brings tags, those it names
anew: a second import adds nothing, a tag the reader deleted stays deleted, and a note that
gave way to a newer one or to the reader's edit brings no tag back (books.importing.enrich).
"""

import json
import unicodedata
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from accounts.models import User
from books.exporting.services import library_export
from books.importing import enrich
from books.importing.hashtags import HASHTAGS_PER_NOTE, hashtags_named_anew, note_hashtags
from books.importing.services import clippings_import
from books.models import Highlight, Import, Tag
from books.services import (
    highlight_note_update,
    highlight_tag,
    highlight_untag,
    tag_delete,
    tag_rename,
)
from tests.books.importing.devices import (
    SIDECAR_ANNOTATIONS,
    AppleRow,
    KoboRow,
    apple_books_zip,
    kobo_database,
)
from tests.books.kindle import BORGES, Entry, clippings_file

ARTIST = "The artist is the one who keeps looking."
COAL = "An unlit lump of coal at room temperature emits light."
CHAPTERS = "Chapter three begins where the second one ended."
ALBA = "La alba llega despacio sobre el río."
FULL_WIDTH_HASH = "\uff03"  # as Chinese and Japanese input methods type `#`
# Core Data seconds: when Apple Books wrote a row, and edited its note later.
MADE, EDITED, EDITED_AGAIN = 555011717.5, 555011782.6, 556408046.8


def _tags(reader: User, text: str) -> list[str]:
    highlight = Highlight.objects.get(reader=reader, text=text)
    return sorted(highlight.tags.values_list("name", flat=True))


def _kindle_highlight(reader: User, text: str, location: int) -> Highlight:
    _import(reader, clippings_file(Entry(BORGES, text, location=str(location))), "k.txt")
    return Highlight.objects.get(reader=reader, text=text)


def _apple(folder: Path, *rows: AppleRow) -> bytes:
    return apple_books_zip(folder, list(rows))


def _import(reader: User, data: bytes, name: str = "library.zip") -> Import:
    return clippings_import(reader=reader, data=data, file_name=name)


class NoteHashtagsTests:
    def test_it_reads_each_hashtag_of_a_note(self) -> None:
        assert note_hashtags("#artist #being") == ["artist", "being"]
        assert note_hashtags("#rape #note This is fantastic.") == ["rape", "note"]
        assert note_hashtags("#being #becoming\n#discipline") == ["being", "becoming", "discipline"]

    @pytest.mark.parametrize(
        "note",
        ["#1", "#3", "Chapter #12", "#1984", "C#", "I write C# at work",
         "http://example.org/page#part", "# Heading", "## Heading", "#", "x#y", "#_", "#-"],
    )  # fmt: skip
    def test_numbers_a_hash_inside_a_word_and_headings_are_not_tags(self, note: str) -> None:
        assert note_hashtags(note) == []

    def test_it_reads_accents_and_other_scripts(self) -> None:
        assert note_hashtags("#bien-être #año #clichés #हिंदी") == [
            "bien-être", "año", "clichés", "हिंदी"
        ]  # fmt: skip
        # An accent written apart from its letter (as macOS may) reads as the same letter.
        assert note_hashtags(unicodedata.normalize("NFD", "#año")) == ["año"]

    def test_the_word_ends_at_punctuation(self) -> None:
        assert note_hashtags("So #mood, then #books/fiction. #a1 #2nd") == [
            "mood", "books", "a1", "2nd"
        ]  # fmt: skip

    def test_it_gives_each_tag_once(self) -> None:
        assert note_hashtags("#love and #love again") == ["love"]

    @pytest.mark.parametrize("note", ["#ff0000", "#FF0000", "#C0C0C0", "#0af", "#123abc", "#f0f"])
    def test_a_hex_colour_with_a_digit_is_not_a_tag(self, note: str) -> None:
        assert note_hashtags(f"{note}, the colour") == []

    def test_a_word_of_hex_letters_and_other_lengths_are_tags(self) -> None:
        assert note_hashtags("#fff #fee #facade #ff00 #ff00000 #fade") == [
            "fff", "fee", "facade", "ff00", "ff00000", "fade"
        ]  # fmt: skip

    def test_it_takes_at_most_twenty_tags_of_a_note_its_first(self) -> None:
        # A crafted file's note of thousands of hashtags makes no thousands of tags.
        note = " ".join(f"#tag{i}" for i in range(5000))
        assert HASHTAGS_PER_NOTE == 20
        assert note_hashtags(note) == [f"tag{i}" for i in range(20)]
        assert note_hashtags("#a1 #a1 " + note)[:2] == ["a1", "tag0"]

    def test_a_full_width_hash_reads_as_a_hash(self) -> None:
        # U+FF03, as Chinese and Japanese input methods type `#`, after an ideographic space.
        assert note_hashtags(f"{FULL_WIDTH_HASH}読書\u3000{FULL_WIDTH_HASH}哲学、良い") == [
            "読書", "哲学"
        ]  # fmt: skip
        assert note_hashtags(f"メモ {FULL_WIDTH_HASH}memoria #art") == ["memoria", "art"]

    @pytest.mark.parametrize(
        "note", ["C\uff03", "言語C\uff03で", "\uff03\uff11", "\uff031984", "\uff03 見出し",
                 "x\uff03y", "\uff03ff0000", "\uff03"],
    )  # fmt: skip
    def test_a_full_width_hash_in_a_word_numbers_and_headings_are_not_tags(self, note: str) -> None:
        assert note_hashtags(note) == []

    def test_a_note_names_anew_only_what_the_note_before_did_not(self) -> None:
        assert hashtags_named_anew("#Artist #joy #JOY", before="#artist") == ["joy"]
        assert hashtags_named_anew("#artist", before="#artist #being") == []
        assert hashtags_named_anew(f"{FULL_WIDTH_HASH}Año", before="") == ["año"]
        assert hashtags_named_anew("#año", before=f"{FULL_WIDTH_HASH}año") == []

    def test_a_hashtag_the_note_before_named_past_its_twentieth_is_not_named_anew(self) -> None:
        twenty = " ".join(f"#t{i:02d}" for i in range(HASHTAGS_PER_NOTE))
        assert hashtags_named_anew(twenty, before=f"#new {twenty}") == []
        many = " ".join(f"#u{i:02d}" for i in range(25))
        assert hashtags_named_anew(f"{twenty} {many}", before=twenty) == [
            f"u{i:02d}" for i in range(HASHTAGS_PER_NOTE)
        ]

    @given(st.text())
    def test_every_tag_is_written_after_a_hash_in_the_note(self, note: str) -> None:
        composed = unicodedata.normalize("NFC", note)
        for word in note_hashtags(note):
            assert f"#{word}" in composed or f"{FULL_WIDTH_HASH}{word}" in composed
            assert any(character.isalpha() for character in word)


@pytest.mark.django_db
class AppleBooksHashtagTests:
    def test_a_note_of_hashtags_tags_its_highlight_and_keeps_its_words(
        self, alice: User, tmp_path: Path
    ) -> None:
        the_import = _import(
            alice,
            _apple(
                tmp_path,
                AppleRow(1, ARTIST, "#artist #being"),
                AppleRow(2, COAL, "#Bien-être #año"),
                AppleRow(3, CHAPTERS, "#1 C# http://example.org/p#z\n# Heading"),
                AppleRow(4, None, "#mood A thought on its own", kind=1),
            ),
        )

        assert _tags(alice, ARTIST) == ["artist", "being"]
        assert Highlight.objects.get(reader=alice, text=ARTIST).note == "#artist #being"
        assert _tags(alice, COAL) == ["año", "bien-être"]
        assert _tags(alice, CHAPTERS) == []
        assert _tags(alice, "#mood A thought on its own") == ["mood"]
        assert the_import.counts["tags_added"] == 5

    def test_a_second_import_adds_nothing_and_says_so(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        data = _apple(tmp_path, AppleRow(1, ARTIST, "#artist #being"))
        _import(alice, data)

        again = _import(alice, data)

        assert again.counts["tags_added"] == again.counts["books_changed"] == 0
        assert _tags(alice, ARTIST) == ["artist", "being"]
        page = alice_client.get(again.get_absolute_url()).content.decode()
        assert "Nothing new in this file" in page

    def test_the_report_counts_the_tags_added(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        the_import = _import(alice, _apple(tmp_path, AppleRow(1, ARTIST, "#artist #being")))

        page = alice_client.get(the_import.get_absolute_url()).content.decode()

        assert "Nothing new in this file" not in page
        assert 'Tags added</th><td class="n">2</td>' in page

    def test_the_highlights_own_tags_stay(self, alice: User, tmp_path: Path) -> None:
        _import(alice, _apple(tmp_path / "bare", AppleRow(1, ARTIST)))
        highlight_tag(highlight=Highlight.objects.get(reader=alice, text=ARTIST), name="mine")

        _import(alice, _apple(tmp_path / "noted", AppleRow(1, ARTIST, "#artist")))

        assert _tags(alice, ARTIST) == ["artist", "mine"]

    def test_a_library_imported_before_gains_no_tags_from_the_same_file(
        self, alice: User, tmp_path: Path
    ) -> None:
        # As a library imported before hashtags were read holds them: the note, no tag.
        # Migration 0043 gave it its tags once (test_note_hashtags_migration); an import
        # reads an unchanged note's hashtags no more.
        data = _apple(tmp_path, AppleRow(1, ARTIST, "#artist #being"))
        _import(alice, data)
        Highlight.objects.get(reader=alice, text=ARTIST).tags.clear()

        again = _import(alice, data)

        assert _tags(alice, ARTIST) == []
        assert (again.counts.get("tags_added", 0), again.counts["books_changed"]) == (0, 0)

    def test_a_changed_note_adds_the_hashtags_it_names_anew(
        self, alice: User, tmp_path: Path
    ) -> None:
        _import(alice, _apple(tmp_path / "a", AppleRow(1, ARTIST, "#artist", modified=EDITED)))
        tag_delete(tag=Tag.objects.get(reader=alice, name="artist"))
        newer = _apple(tmp_path / "b", AppleRow(1, ARTIST, "#artist #joy", modified=EDITED_AGAIN))

        update = _import(alice, newer)

        assert Highlight.objects.get(reader=alice, text=ARTIST).note == "#artist #joy"
        # "artist" the old note named too: the reader deleted that tag, and it stays so.
        assert _tags(alice, ARTIST) == ["joy"]
        assert (update.counts["tags_added"], update.counts["books_changed"]) == (1, 1)

    def test_an_older_copys_note_brings_no_tag_back(self, alice: User, tmp_path: Path) -> None:
        older = _apple(tmp_path / "older", AppleRow(1, ARTIST, "#cyn", modified=EDITED))
        newer = _apple(tmp_path / "newer", AppleRow(1, ARTIST, "#cynicism", modified=EDITED_AGAIN))
        _import(alice, newer)

        the_older = _import(alice, older)

        assert Highlight.objects.get(reader=alice, text=ARTIST).note == "#cynicism"
        assert _tags(alice, ARTIST) == ["cynicism"]
        assert the_older.counts["tags_added"] == 0

    def test_a_hashtag_the_reader_edited_out_of_the_note_stays_out(
        self, alice: User, tmp_path: Path
    ) -> None:
        data = _apple(tmp_path, AppleRow(1, ARTIST, "#artist #being", modified=EDITED))
        _import(alice, data)
        highlight = Highlight.objects.get(reader=alice, text=ARTIST)
        highlight_note_update(highlight=highlight, note="#artist, in my own words")
        highlight_untag(highlight=highlight, tag=highlight.tags.get(name="being"))

        again = _import(alice, data)

        highlight.refresh_from_db()
        assert highlight.note == "#artist, in my own words"
        assert _tags(alice, ARTIST) == ["artist"]
        assert again.counts["tags_added"] == 0

    def test_a_newer_device_note_beside_the_readers_edit_adds_its_tags_once(
        self, alice: User, tmp_path: Path
    ) -> None:
        _import(alice, _apple(tmp_path / "a", AppleRow(1, ARTIST, "#artist", modified=EDITED)))
        highlight = Highlight.objects.get(reader=alice, text=ARTIST)
        highlight_note_update(highlight=highlight, note="My own words.")
        newer = _apple(tmp_path / "b", AppleRow(1, ARTIST, "#artist #joy", modified=EDITED_AGAIN))

        update = _import(alice, newer)
        again = _import(alice, newer)

        highlight.refresh_from_db()
        assert highlight.note == "My own words.\n\n#artist #joy"
        assert _tags(alice, ARTIST) == ["artist", "joy"]
        assert (update.counts["tags_added"], again.counts["tags_added"]) == (1, 0)

    def test_a_tag_removed_while_the_note_still_names_it_stays_removed(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        data = _apple(tmp_path, AppleRow(1, ARTIST, "#artist #being"))
        _import(alice, data)
        highlight = Highlight.objects.get(reader=alice, text=ARTIST)
        highlight_untag(highlight=highlight, tag=highlight.tags.get(name="artist"))
        tag_rename(tag=Tag.objects.get(reader=alice, name="being"), name="existence")

        again = _import(alice, data)

        assert _tags(alice, ARTIST) == ["existence"]
        assert again.counts["tags_added"] == 0
        page = alice_client.get(again.get_absolute_url()).content.decode()
        assert "Nothing new in this file" in page

    def test_a_reimport_reads_no_vectors(self, alice: User, tmp_path: Path) -> None:
        # Every highlight of a richer format's file is read again at each import of it:
        # its three vectors (384 + 384 + 512 floats) are of no use there.
        data = _apple(tmp_path, AppleRow(1, ARTIST, "#artist"), AppleRow(2, COAL))
        _import(alice, data)
        vector = [0.1] * 384
        Highlight.objects.filter(reader=alice).update(embedding=vector, english_embedding=vector)

        with CaptureQueriesContext(connection) as queries:
            _import(alice, data)

        vectors = [q["sql"] for q in queries.captured_queries if '"embedding"' in q["sql"]]
        assert vectors == []


@pytest.mark.django_db
class OtherFormatsHashtagTests:
    def test_a_hashtag_that_grows_past_the_tag_length_when_folded_fails_no_import(
        self, alice: User
    ) -> None:
        # 60 letters and four "ß": 64 characters, 68 once case folded ("ß" -> "ss").
        long_tag = "a" * 60 + "ßßßß"
        data = clippings_file(
            Entry(BORGES, ARTIST, location="100-102"),
            Entry(BORGES, f"#{long_tag}", kind="Note", location="102"),
        )

        _import(alice, data, "My Clippings.txt")

        assert _tags(alice, ARTIST) == ["a" * 60 + "ssss"]

    def test_a_tag_the_reader_deleted_stays_deleted_when_the_same_file_comes_again(
        self, alice: User, alice_client: Client
    ) -> None:
        data = clippings_file(
            Entry(BORGES, ARTIST, location="100-102"),
            Entry(BORGES, "colour it #ff0000, #red", kind="Note", location="102"),
            Entry(BORGES, "#memoria, on its own", kind="Note", location="900"),
        )
        _import(alice, data, "My Clippings.txt")
        assert sorted(Tag.objects.filter(reader=alice).values_list("name", flat=True)) == [
            "memoria", "red"
        ]  # fmt: skip
        for tag in Tag.objects.filter(reader=alice):
            tag_delete(tag=tag)

        again = _import(alice, data, "My Clippings.txt")

        assert not Tag.objects.filter(reader=alice).exists()
        assert again.counts.get("tags_added", 0) == 0
        page = alice_client.get(again.get_absolute_url()).content.decode()
        assert "Nothing new in this file" in page

    def test_a_newer_kindle_note_adds_the_hashtags_it_names_anew(self, alice: User) -> None:
        first = clippings_file(
            Entry(BORGES, ARTIST, location="100-102"),
            Entry(BORGES, "#artist", kind="Note", location="102"),
        )
        later = clippings_file(
            Entry(BORGES, ARTIST, location="100-102"),
            Entry(BORGES, "#artist #joy", kind="Note", location="102",
                  added="Tuesday, 4 March 2025 10:00:00"),
        )  # fmt: skip
        _import(alice, first, "a.txt")
        tag_delete(tag=Tag.objects.get(reader=alice, name="artist"))

        the_import = _import(alice, later, "b.txt")

        assert Highlight.objects.get(reader=alice, text=ARTIST).note == "#artist #joy"
        assert _tags(alice, ARTIST) == ["joy"]
        assert the_import.counts["tags_added"] == 1

    def test_a_note_of_many_hashtags_gives_twenty_tags(self, alice: User) -> None:
        many = " ".join(f"#tag{i}" for i in range(500))
        data = clippings_file(
            Entry(BORGES, ARTIST, location="100-102"),
            Entry(BORGES, many, kind="Note", location="102"),
        )

        the_import = _import(alice, data, "My Clippings.txt")

        assert the_import.counts["tags_added"] == HASHTAGS_PER_NOTE == 20
        assert Tag.objects.filter(reader=alice).count() == 20

    def test_a_full_width_hashtag_tags_the_highlight(self, alice: User) -> None:
        data = clippings_file(
            Entry(BORGES, ARTIST, location="100-102"),
            Entry(BORGES, f"{FULL_WIDTH_HASH}読書\u3000{FULL_WIDTH_HASH}芸術", kind="Note",
                  location="102"),
        )  # fmt: skip

        first = _import(alice, data, "My Clippings.txt")
        again = _import(alice, data, "My Clippings.txt")

        assert _tags(alice, ARTIST) == ["芸術", "読書"]
        assert (first.counts["tags_added"], again.counts.get("tags_added", 0)) == (2, 0)

    def test_one_file_makes_at_most_the_cap_of_new_tags_and_says_so(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The cap lowered to 5: a file of 4 notes naming 3 hashtags each (12 names, one of
        # them a tag the reader has, one the file's own tag) makes 5 new tags, its first.
        monkeypatch.setattr(enrich, "HASHTAG_TAGS_PER_FILE", 5)
        highlight_tag(highlight=_kindle_highlight(alice, "Already here.", 10), name="had")
        rows = [
            (f"Passage number {i}.", f"#t{i}a #t{i}b #{'had' if i == 3 else f't{i}c'}")
            for i in range(4)
        ]
        lines = ["Highlight,Title,Author,Note,Location,Date,Tags"]
        lines += [f'"{text}",Amanecer,Ana Ruiz,"{note}",{20 + i},2021-05-04 12:34:56,'
                  + ("t3b" if i == 3 else "") for i, (text, note) in enumerate(rows)]  # fmt: skip

        the_import = _import(alice, "\n".join(lines).encode() + b"\n", "readwise.csv")

        made = set(Tag.objects.filter(reader=alice).values_list("name", flat=True)) - {"had"}
        assert made == {"t0a", "t0b", "t0c", "t1a", "t1b", "t3b"}
        assert _tags(alice, "Passage number 3.") == ["had", "t3b"]
        assert the_import.counts["hashtags_left_out"] == 12 - 1 - 1 - 5 == 5
        page = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert (
            "5 hashtags in this file were not made tags: at most 5 new tags from one file." in page
        )
        spanish = alice_client.get(
            the_import.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es"
        ).content.decode()
        assert (
            "5 hashtags de este archivo no se han convertido en etiquetas: como mucho 5 "
            "etiquetas nuevas por archivo." in spanish
        )
        # A file within the cap says nothing of it.
        within = _import(alice, _readwise((ALBA, ""), note="#alba #luz"), "w.csv")
        assert _tags(alice, ALBA) == ["alba", "luz"]
        assert "hashtags_left_out" not in within.counts
        page = alice_client.get(within.get_absolute_url()).content.decode()
        assert 'id="hashtags-left-out"' not in page

    def test_a_kindle_reimport_reads_no_vectors_to_tag_notes(self, alice: User) -> None:
        data = clippings_file(
            Entry(BORGES, ARTIST, location="100-102"),
            Entry(BORGES, "#artist", kind="Note", location="102"),
        )
        _import(alice, data, "My Clippings.txt")

        with CaptureQueriesContext(connection) as queries:
            _import(alice, data, "My Clippings.txt")

        vectors = [q["sql"] for q in queries.captured_queries if '"embedding"' in q["sql"]]
        assert vectors == []

    def test_a_kindle_note_tags_the_highlight_it_is_attached_to(self, alice: User) -> None:
        data = clippings_file(
            Entry(BORGES, ARTIST, location="100-102"),
            Entry(BORGES, "#artist #being", kind="Note", location="102"),
            Entry(BORGES, "#memoria, on its own", kind="Note", location="900"),
            Entry(BORGES, "C# #1", kind="Note", location="1500"),
        )

        first = _import(alice, data, "My Clippings.txt")
        again = _import(alice, data, "My Clippings.txt")

        assert Highlight.objects.get(reader=alice, text=ARTIST).note == "#artist #being"
        assert _tags(alice, ARTIST) == ["artist", "being"]
        assert _tags(alice, "#memoria, on its own") == ["memoria"]
        assert _tags(alice, "C# #1") == []
        assert first.counts["tags_added"] == 3
        assert (again.counts.get("tags_added", 0), again.counts["books_changed"]) == (0, 0)

    def test_a_kindle_note_for_a_highlight_already_in_the_library(self, alice: User) -> None:
        _import(alice, clippings_file(Entry(BORGES, ARTIST, location="100-102")), "a.txt")
        later = clippings_file(
            Entry(BORGES, ARTIST, location="100-102"),
            Entry(BORGES, "#año", kind="Note", location="102"),
        )

        the_import = _import(alice, later, "b.txt")

        assert _tags(alice, ARTIST) == ["año"]
        assert (the_import.counts["tags_added"], the_import.counts["books_changed"]) == (1, 1)

    def test_a_kobo_annotation_tags_its_highlight(self, alice: User, tmp_path: Path) -> None:
        data = kobo_database(
            tmp_path / "KoboReader.sqlite",
            [KoboRow("b1", ARTIST, "#artist #being", kind="note")],
        )

        first = _import(alice, data, "KoboReader.sqlite")
        again = _import(alice, data, "KoboReader.sqlite")

        assert _tags(alice, ARTIST) == ["artist", "being"]
        assert (first.counts["tags_added"], again.counts["tags_added"]) == (2, 0)

    def test_a_koreader_note_tags_its_highlight(self, alice: User) -> None:
        sidecar = SIDECAR_ANNOTATIONS.split('["note"] = "', 1)
        rest = sidecar[1].split('",\n', 1)[1]
        data = f'{sidecar[0]}["note"] = "#máquinas #soledad",\n{rest}'.encode()

        first = _import(alice, data, "metadata.epub.lua")
        again = _import(alice, data, "metadata.epub.lua")

        assert _tags(alice, "Machines hum when they are lonely. 🧠 café") == ["máquinas", "soledad"]
        assert (first.counts["tags_added"], again.counts["tags_added"]) == (2, 0)

    def test_readwise_tags_and_a_notes_hashtags_both_count(self, alice: User) -> None:
        data = (
            "Highlight,Title,Author,Note,Location,Date,Tags\n"
            f'"{ALBA}",Amanecer,Ana Ruiz,"#río #luz",10,2021-05-04 12:34:56,"luz, alba"\n'
        ).encode()

        first = _import(alice, data, "readwise.csv")
        again = _import(alice, data, "readwise.csv")

        assert _tags(alice, ALBA) == ["alba", "luz", "río"]
        assert (first.counts["tags_added"], again.counts["tags_added"]) == (3, 0)


def _readwise(*rows: tuple[str, str], note: str = "") -> bytes:
    """A Readwise CSV of ALBA's book: each row's text and its Tags column, and one note."""
    lines = ["Highlight,Title,Author,Note,Location,Date,Tags"]
    lines += [f'"{text}",Amanecer,Ana Ruiz,"{note}",{10 + i},2021-05-04 12:34:56,"{tags}"'
              for i, (text, tags) in enumerate(rows)]  # fmt: skip
    return "\n".join(lines).encode() + b"\n"


@pytest.mark.django_db
class FileTagsTests:
    """A file's own tags (a Readwise CSV's column, an Exogram export's list) follow the
    hashtags' rule: added when the entry first lists them, then only those it lists anew."""

    def test_a_tag_the_reader_deleted_stays_deleted_when_the_column_still_names_it(
        self, alice: User, alice_client: Client
    ) -> None:
        data = _readwise((ALBA, "luz, alba"), (COAL, "light"))
        first = _import(alice, data, "readwise.csv")
        tag_delete(tag=Tag.objects.get(reader=alice, name="alba"))
        highlight_untag(
            highlight=Highlight.objects.get(reader=alice, text=COAL),
            tag=Tag.objects.get(reader=alice, name="light"),
        )

        again = _import(alice, data, "readwise.csv")

        assert (_tags(alice, ALBA), _tags(alice, COAL)) == (["luz"], [])
        assert (first.counts["tags_added"], again.counts["tags_added"]) == (3, 0)
        page = alice_client.get(again.get_absolute_url()).content.decode()
        assert "Nothing new in this file" in page

    def test_a_renamed_tag_is_not_added_again_under_its_old_name(self, alice: User) -> None:
        data = _readwise((ALBA, "luz"))
        _import(alice, data, "readwise.csv")
        tag_rename(tag=Tag.objects.get(reader=alice, name="luz"), name="light")

        _import(alice, data, "readwise.csv")

        assert _tags(alice, ALBA) == ["light"]

    def test_a_tag_the_column_names_anew_is_added_and_only_it(self, alice: User) -> None:
        # The highlight made by a file that lists no tag: the first list is all new.
        _import(alice, _readwise((ALBA, "")), "a.csv")
        first = _import(alice, _readwise((ALBA, "luz, alba")), "b.csv")
        tag_delete(tag=Tag.objects.get(reader=alice, name="alba"))

        later = _import(alice, _readwise((ALBA, "luz, alba, Río")), "c.csv")

        assert _tags(alice, ALBA) == ["luz", "río"]
        assert (first.counts["tags_added"], later.counts["tags_added"]) == (2, 1)
        # A tag the column dropped and names again is named anew.
        _import(alice, _readwise((ALBA, "luz")), "d.csv")
        again = _import(alice, _readwise((ALBA, "luz, alba")), "e.csv")
        assert _tags(alice, ALBA) == ["alba", "luz", "río"]
        assert again.counts["tags_added"] == 1

    @pytest.mark.parametrize(
        ("data", "name"),
        [
            (
                json.dumps({"title": "Amanecer", "authors": "Ana Ruiz", "highlights": [
                    {"text": ALBA, "note": "", "location": {"value": 10}}
                ]}).encode(),
                "bookcision.json",
            ),
            (
                "Highlight,Title,Author,Note,Location,Date\n"
                f'"{ALBA}",Amanecer,Ana Ruiz,,10,2021-05-04 12:34:56\n'.encode(),
                "no-tags-column.csv",
            ),
        ],
    )  # fmt: skip
    def test_a_file_with_no_place_for_tags_leaves_what_the_column_listed(
        self, alice: User, data: bytes, name: str
    ) -> None:
        listing = _readwise((ALBA, "luz, alba"))
        _import(alice, listing, "readwise.csv")
        tag_delete(tag=Tag.objects.get(reader=alice, name="alba"))

        with CaptureQueriesContext(connection) as queries:
            _import(alice, data, name)
        again = _import(alice, listing, "readwise.csv")

        assert Highlight.objects.filter(reader=alice).count() == 1  # the same highlight
        updates = [q["sql"] for q in queries.captured_queries if "file_tags" in q["sql"]]
        assert [sql for sql in updates if sql.startswith("UPDATE")] == []
        assert Highlight.objects.get(reader=alice, text=ALBA).file_tags == ["luz", "alba"]
        assert (_tags(alice, ALBA), again.counts["tags_added"]) == (["luz"], 0)

    def test_a_reimport_of_a_file_of_no_tags_writes_no_row(self, alice: User) -> None:
        data = _readwise((ALBA, ""), (COAL, ""))
        _import(alice, data, "readwise.csv")

        with CaptureQueriesContext(connection) as queries:
            _import(alice, data, "readwise.csv")

        updates = [q["sql"] for q in queries.captured_queries if "file_tags" in q["sql"]]
        assert [sql for sql in updates if sql.startswith("UPDATE")] == []
        assert Highlight.objects.get(reader=alice, text=ALBA).file_tags is None


@pytest.mark.django_db
class ExogramExportHashtagTests:
    def test_an_export_brings_its_listed_tags_not_its_notes_hashtags(
        self, alice: User, bob: User, tmp_path: Path
    ) -> None:
        alone = "#mood A thought on its own"
        _import(
            alice,
            _apple(
                tmp_path, AppleRow(1, ARTIST, "#artist #being"), AppleRow(2, None, alone, kind=1)
            ),
        )
        highlight = Highlight.objects.get(reader=alice, text=ARTIST)
        highlight_untag(highlight=highlight, tag=highlight.tags.get(name="being"))
        note = Highlight.objects.get(reader=alice, text=alone)
        highlight_untag(highlight=note, tag=note.tags.get())
        exported = library_export(reader=alice, format="json")

        the_import = clippings_import(reader=bob, data=exported.data, file_name=exported.name)

        assert Highlight.objects.get(reader=bob, text=ARTIST).note == "#artist #being"
        assert (_tags(bob, ARTIST), _tags(bob, alone)) == (["artist"], [])
        assert the_import.counts["tags_added"] == 1


@pytest.mark.django_db
class HashtagPagesTests:
    def test_the_highlight_page_the_tag_page_and_the_tag_filter_show_them(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        _import(alice, _apple(tmp_path, AppleRow(1, ARTIST, "#artist #bien-être")))
        highlight = Highlight.objects.get(reader=alice, text=ARTIST)

        page = alice_client.get(highlight.get_absolute_url()).content.decode()
        by_tag = alice_client.get(reverse("tag", args=["bien-être"])).content.decode()
        found = alice_client.get(reverse("search"), {"q": "tag:artist", "mode": "keyword"})

        assert f'href="{reverse("tag", args=["artist"])}"' in page
        assert f'href="{reverse("tag", args=["bien-être"])}"' in page
        assert ARTIST in by_tag
        assert ARTIST in found.content.decode()
