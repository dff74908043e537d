"""Every file of ../shared/data/readers through its parser and the import (when present).

Each file parses without a crash with every entry accounted for (imported + skipped +
problems = entries), as many highlights as FORMATS.md beside the files counts; each
imports, a second import changes nothing, and a later copy of a device's file adds only
what is new. The files are read in place: the Kobo databases are decompressed into a
temporary file, the Apple Books folders zipped in memory as a reader uploads them.
"""

import gzip
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from accounts.models import User
from books.importing import devices
from books.importing.clippings import ParseResult
from books.importing.formats import detect_format, parse_upload
from books.importing.hashtags import note_hashtags
from books.importing.notes import NOTES_JOINED
from books.importing.rich import RichClipping
from books.importing.services import ImportRejected, clippings_import
from books.models import Highlight
from books.text import fold_spacing_and_bom, tag_name
from tests.corpus import require_readers

# Skipped, saying why, on a clone without the shared folder (see tests/corpus.py).
pytestmark = pytest.mark.corpus
READERS = require_readers()


def upload_bytes(path: Path, tmp_path: Path) -> bytes:
    """The file as a reader uploads it."""
    if path.suffix == ".gz":
        plain = tmp_path / path.stem
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        return plain.read_bytes()
    if path.is_dir():  # an Apple Books Documents folder: its two sub-folders, zipped
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for member in sorted(path.glob("*/*")):
                archive.write(member, str(member.relative_to(path)))
        return buffer.getvalue()
    return path.read_bytes()


def reader_files() -> list[Path]:
    files = sorted(p for p in (READERS / "koreader").rglob("*") if p.is_file())
    files += sorted((READERS / "kobo").glob("*.sqlite.gz"))
    files += sorted(p for p in (READERS / "applebooks").iterdir() if p.is_dir())
    return files


def file_id(path: Path) -> str:
    return str(path.relative_to(READERS))


@dataclass(frozen=True)
class Tally:
    entries: int
    imported: int
    skipped: int
    problems: int

    @classmethod
    def of(cls, result: ParseResult) -> "Tally":
        bookmarks = sum(1 for c in result.clippings if c.kind == "bookmark")
        return cls(
            entries=result.entries,
            imported=len(result.clippings) - bookmarks,
            skipped=bookmarks + sum(result.skipped.values()),
            problems=len(result.problems),
        )


# Highlights per file as FORMATS.md counts them (the Kobo count is rows not hidden).
HIGHLIGHTS = {
    "BookLoreSync-plugin__metadata.epub.lua": 4,
    "book-highlights-manager__highlights-sample.json": 37,
    "kindle-clippings__myclippings_koreader_lf.txt": 3,
    "kobosyncy__048f607__metadata.epub.lua": 10,
    "kobosyncy__aed08a3__metadata.epub.lua": 17,
    "kohico__metadata.pdf.lua": 12,
    "koreader-calibre-plugin__4d0b58c__Alice's Adventures in Wonderland - Lewis Carroll.sdr": 2,
    "koreader-calibre-plugin__745f4aa__Alice's Adventures in Wonderland - Lewis Carroll.sdr": 1,
    "koreader-calibre-plugin__f77ee3f__Alice's Adventures in Wonderland - Lewis Carroll.sdr": 2,
    "org-remark-koreader__epub-002-unicode-duplicates__source.sdr": 4,
    "org-remark-koreader__epub-004-colors__source.sdr": 9,
    "org-remark-koreader__epub-008-bookmark-offsets__source.sdr": 0,
    "org-remark-koreader__koreader-v2026.07-basic__README.sdr": 0,
    "org-remark-koreader__koreader-v2026.07-basic__source.sdr": 3,
    "org-remark-koreader__md-txt-003-unicode__source.sdr": 6,
    "org-remark-koreader__md-txt-010-whitespace__source.sdr": 3,
    "org-remark-koreader__md-txt-014-lua-string-escapes__source.sdr": 2,
    "epubcfi.js__KoboReader.sqlite.gz": 4,
    "epubcfi.js__KoboReader-mono.sqlite.gz": 6,
    "epubcfi.js__KoboReader-multi.sqlite.gz": 17,
    "epubcfi.js__KoboReader-tri.sqlite.gz": 23 - 17,
    "hlts-applebooks__Documents": 1049,
    "hlts-applebooks__Documents_os_highsierra": 1021,
}


# The sidecars with nothing to keep, and the book each names.
NOTHING_TO_KEEP = {
    "org-remark-koreader__epub-008-bookmark-offsets__source.sdr": "CorpusGen bookmark offsets",
    "org-remark-koreader__koreader-v2026.07-basic__README.sdr": "README",
}


def expected_highlights(path: Path) -> int:
    return HIGHLIGHTS.get(path.name, HIGHLIGHTS.get(path.parent.name, -1))


@pytest.mark.parametrize("path", reader_files(), ids=file_id)
class ReaderFileParseTests:
    def test_it_parses_with_every_entry_accounted_for(self, path: Path, tmp_path: Path) -> None:
        data = upload_bytes(path, tmp_path)
        result = parse_upload(data)
        tally = Tally.of(result)
        assert tally.imported + tally.skipped + tally.problems == tally.entries
        assert tally.imported == expected_highlights(path)
        assert detect_format(data) != "clippings" or path.suffix == ".txt"
        if tally.imported:
            assert tally.problems == 0, result.problems


@pytest.mark.django_db
@pytest.mark.parametrize("path", reader_files(), ids=file_id)
class ReaderFileImportTests:
    def test_it_imports_and_a_second_import_changes_nothing(
        self, path: Path, tmp_path: Path, alice: User
    ) -> None:
        data = upload_bytes(path, tmp_path)
        if all(c.kind == "bookmark" for c in parse_upload(data).clippings):
            # Nothing to keep (a sidecar of a book never highlighted, or only bookmarked):
            # refused, saying so and naming the book.
            title = NOTHING_TO_KEEP[path.parent.name]
            with pytest.raises(ImportRejected, match=f"KOReader sidecar of “{title}” holds"):
                clippings_import(reader=alice, data=data, file_name="upload")
            return
        first = clippings_import(reader=alice, data=data, file_name="upload")
        assert first.counts["new_highlights"] <= expected_highlights(path)
        before = sorted(
            Highlight.objects.filter(reader=alice).values_list("pk", "text", "note", "updated")
        )
        again = clippings_import(reader=alice, data=data, file_name="upload")
        assert (again.counts["new_highlights"], again.counts["extended_merged"]) == (0, 0)
        assert again.counts["notes_attached"] == 0
        after = sorted(
            Highlight.objects.filter(reader=alice).values_list("pk", "text", "note", "updated")
        )
        assert after == before


# A device's file at an earlier and a later date: the later one adds only what is new.
SEQUENCES = {
    "kobosyncy": ["koreader/kobosyncy__048f607__metadata.epub.lua",
                  "koreader/kobosyncy__aed08a3__metadata.epub.lua"],
    "kobo": ["kobo/epubcfi.js__KoboReader.sqlite.gz", "kobo/epubcfi.js__KoboReader-mono.sqlite.gz",
             "kobo/epubcfi.js__KoboReader-multi.sqlite.gz",
             "kobo/epubcfi.js__KoboReader-tri.sqlite.gz"],
    "applebooks": ["applebooks/hlts-applebooks__Documents_os_highsierra",
                   "applebooks/hlts-applebooks__Documents"],
}  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_a_later_copy_adds_only_what_is_new(name: str, tmp_path: Path, alice: User) -> None:
    seen: set[str] = set()
    for relative in SEQUENCES[name]:
        data = upload_bytes(READERS / relative, tmp_path)
        texts = {c.text for c in parse_upload(data).clippings if c.kind != "bookmark"}
        stored_before = Highlight.objects.filter(reader=alice).count()
        done = clippings_import(reader=alice, data=data, file_name=relative)
        new = Highlight.objects.filter(reader=alice).count() - stored_before
        assert done.counts["new_highlights"] == new
        # Nothing the earlier copies brought comes in again.
        assert new <= len(texts - seen)
        seen |= texts
    stored = set(Highlight.objects.filter(reader=alice).values_list("text", flat=True))
    # A passage the reader re-selected longer in a later copy is merged into the longer
    # one (Apple Books: "Ever", then "Ever more scholars see cultures…"): every word kept.
    folded = [fold_spacing_and_bom(text) for text in stored]
    lost = {
        text for text in seen - stored if not any(fold_spacing_and_bom(text) in f for f in folded)
    }
    assert lost == set()


DOCUMENTS = "applebooks/hlts-applebooks__Documents"
HIGH_SIERRA = "applebooks/hlts-applebooks__Documents_os_highsierra"


def _device_notes(data: bytes) -> dict[str, str]:
    """Each noted highlight's note in a device's file, by its folded text."""
    return {
        fold_spacing_and_bom(c.text): c.note.strip()
        for c in parse_upload(data).clippings
        if isinstance(c, RichClipping) and c.kind == "highlight" and c.note.strip()
    }


def _stored_notes(reader: User) -> dict[str, str]:
    return {
        fold_spacing_and_bom(text): note
        for text, note in Highlight.objects.filter(reader=reader).values_list("text", "note")
    }


@pytest.mark.django_db
@pytest.mark.parametrize("order", [(DOCUMENTS, HIGH_SIERRA), (HIGH_SIERRA, DOCUMENTS)])
def test_two_snapshots_of_apple_books_keep_the_newer_notes_and_settle(
    order: tuple[str, str], tmp_path: Path, alice: User
) -> None:
    """The same Mac's library at two dates, 12 notes differing between them (3 edited in
    between, 9 differing under one modification date): in either order every word of the
    newer notes stays, the edited ones alone, and uploading both again changes nothing."""
    files = {relative: upload_bytes(READERS / relative, tmp_path) for relative in order}
    for data in files.values():
        clippings_import(reader=alice, data=data, file_name="library.zip")
    settled = _stored_notes(alice)
    newer, older = _device_notes(files[DOCUMENTS]), _device_notes(files[HIGH_SIERRA])
    assert {t: n for t, n in newer.items() if n not in settled.get(t, n)} == {}
    [cynic] = [text for text, note in older.items() if note == "#cyn"]
    assert (newer[cynic], settled[cynic]) == ("#cynicism", "#cynicism")
    for data in files.values():
        again = clippings_import(reader=alice, data=data, file_name="library.zip")
        assert (again.counts["notes_attached"], again.counts["books_changed"]) == (0, 0)
        assert _stored_notes(alice) == settled


def _named(note: str) -> set[str]:
    return {tag_name(word) for word in note_hashtags(note)}


def _tags_and_hashtags(reader: User) -> list[tuple[str, set[str], set[str]]]:
    """Each alive highlight's folded text, its tags, and the tags its note names as
    hashtags (a note of its own is its text)."""
    rows = []
    for highlight in Highlight.objects.alive().filter(reader=reader).prefetch_related("tags"):
        note = highlight.text if highlight.kind == Highlight.Kind.NOTE else highlight.note
        tags = {t.name for t in highlight.tags.all()}
        rows.append((fold_spacing_and_bom(highlight.text), tags, _named(note)))
    return sorted(rows, key=lambda row: (row[0], sorted(row[1])))


@pytest.mark.django_db
@pytest.mark.parametrize("order", [(DOCUMENTS, HIGH_SIERRA), (HIGH_SIERRA, DOCUMENTS)])
def test_the_hashtags_of_the_notes_kept_are_tags_and_settle(
    order: tuple[str, str], tmp_path: Path, alice: User
) -> None:
    """Most Apple Books notes in these libraries are hashtags (`#artist #being`): after both
    snapshots each highlight carries the tags its kept note names. Newer first, only those:
    the older copy's "#cyn", which gave way to "#cynicism", brings none. Older first, its
    tags stay beside the newer note's (an import never removes a tag). Both again add none."""
    files = [upload_bytes(READERS / relative, tmp_path) for relative in order]
    for data in files:
        clippings_import(reader=alice, data=data, file_name="library.zip")
    settled = _tags_and_hashtags(alice)
    assert sum(len(tags) for _, tags, _ in settled) > 1000
    assert [row for row in settled if not row[2] <= row[1]] == []
    first_notes = _device_notes(files[0])
    extra = {text: tags - named for text, tags, named in settled if tags - named}
    if order[0] == DOCUMENTS:
        assert extra == {}
    else:
        assert {text: _named(first_notes[text]) & tags for text, tags in extra.items()} == extra
        assert {text: tags for text, tags in extra.items() if "cyn" in tags} != {}
    for data in files:
        again = clippings_import(reader=alice, data=data, file_name="library.zip")
        assert (again.counts["tags_added"], again.counts["books_changed"]) == (0, 0)
    assert _tags_and_hashtags(alice) == settled


# A device's earlier copy, its later one, and how many highlights the reader deleted on the
# device in between (Apple Books marks the row deleted, Kobo hides it).
DELETED_BETWEEN = {
    "applebooks": (HIGH_SIERRA, DOCUMENTS, 9),
    "kobo": ("kobo/epubcfi.js__KoboReader-multi.sqlite.gz",
             "kobo/epubcfi.js__KoboReader-tri.sqlite.gz", 17),
}  # fmt: skip


def _alive_highlights(reader: User) -> list[tuple[str, str, list[str]]]:
    """Each alive highlight, and its note's paragraphs: two notes under one date are both
    kept, the one held first (books.importing.notes.note_kept), so their order can differ."""
    rows = Highlight.objects.alive().filter(reader=reader)
    return sorted(
        (title, text, sorted(note.split(NOTES_JOINED)))
        for title, text, note in rows.values_list("book__title", "text", "note")
    )


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(DELETED_BETWEEN))
def test_an_earlier_copy_does_not_bring_back_what_was_deleted_on_the_device(
    name: str, tmp_path: Path, alice: User, bob: User
) -> None:
    """The later copy first, then the earlier one: what the reader deleted on the device in
    between stays out, said so; in the other order it goes to Recently deleted. Either way
    the same library, and each copy again changes nothing."""
    earlier, later, deleted = DELETED_BETWEEN[name]
    files = {relative: upload_bytes(READERS / relative, tmp_path) for relative in (earlier, later)}
    clippings_import(reader=alice, data=files[later], file_name="later")
    back = clippings_import(reader=alice, data=files[earlier], file_name="earlier")
    assert (back.counts["new_highlights"], back.counts["deleted_on_device"]) == (0, deleted)
    clippings_import(reader=bob, data=files[earlier], file_name="earlier")
    forward = clippings_import(reader=bob, data=files[later], file_name="later")
    assert forward.counts["moved_deleted_on_device"] == deleted
    settled = _alive_highlights(alice)
    assert _alive_highlights(bob) == settled
    for reader in (alice, bob):
        for data in files.values():
            again = clippings_import(reader=reader, data=data, file_name="again")
            assert again.counts["new_highlights"] == again.counts["moved_deleted_on_device"] == 0
        assert _alive_highlights(reader) == settled


# Each device's folder zipped whole, as a reader uploads a copy of it: the KOReader
# sidecars together, the four Kobo databases together, each Apple Books library alone (two
# libraries in one zip would be one library too many).
DEVICE_FOLDERS = {
    "koreader": ["koreader"],
    "kobo": ["kobo"],
    "applebooks-documents": [DOCUMENTS],
    "applebooks-high-sierra": [HIGH_SIERRA],
}


def _device_zip(name: str, tmp_path: Path) -> tuple[bytes, int]:
    """The zip of a device's folder, and how many highlights its files hold one by one."""
    buffer = io.BytesIO()
    highlights = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for relative in DEVICE_FOLDERS[name]:
            folder = READERS / relative
            if relative.startswith("applebooks/"):
                for member in sorted(folder.glob("*/*")):
                    archive.write(member, str(member.relative_to(folder)))
                highlights += Tally.of(parse_upload(upload_bytes(folder, tmp_path))).imported
                continue
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                if path.suffix not in (".lua", ".gz"):
                    continue  # the other exports in the folder are not a device's files
                data = upload_bytes(path, tmp_path)
                member = str(path.relative_to(folder)).removesuffix(".gz")
                if path.suffix == ".gz":  # each Kobo database in a folder of its own name
                    member = f"{path.name.removesuffix('.sqlite.gz')}/KoboReader.sqlite"
                archive.writestr(member, data)
                highlights += Tally.of(parse_upload(data)).imported
    return buffer.getvalue(), highlights


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(DEVICE_FOLDERS))
def test_a_zip_of_a_devices_folder_passes_the_zip_checks_and_imports(
    name: str, tmp_path: Path, alice: User
) -> None:
    data, highlights = _device_zip(name, tmp_path)
    assert highlights > 0
    assert devices.zip_refusal(data) is None
    result = devices.parse_zip(data)
    assert result.problems == []
    assert Tally.of(result).imported == highlights
    first = clippings_import(reader=alice, data=data, file_name=f"{name}.zip")
    assert 0 < first.counts["new_highlights"] <= highlights
    again = clippings_import(reader=alice, data=data, file_name=f"{name}.zip")
    assert (again.counts["new_highlights"], again.counts["extended_merged"]) == (0, 0)
