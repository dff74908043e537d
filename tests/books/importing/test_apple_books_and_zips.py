"""Apple Books' two databases (with their -wal), and zips of sidecars: read, and read safely."""

import io
import os
import zipfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.importing import devices
from books.importing.devices import APPLE_ALONE, parse_zip
from books.importing.formats import detect_format, parse_upload
from books.importing.rich import DELETED, EMPTY, RichClipping
from books.models import Highlight
from tests.books.importing.devices import (
    SIDECAR_ANNOTATIONS,
    SIDECAR_OLD,
    apple_books_zip,
    hostile_sidecar,
    kobo_database,
    padded_sidecar,
    peak_memory,
    zip_of,
)
from tests.books.kindle import MEMORY_LIBRARY, Entry, clippings_file


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


class AppleBooksTests:
    def test_it_reads_the_rows_that_are_only_in_the_wal(self, tmp_path: Path) -> None:
        data = apple_books_zip(tmp_path / "mac")
        assert detect_format(data) == "zip"
        result = parse_upload(data)
        assert result.problems == []
        assert result.skipped == {DELETED: 1, EMPTY: 2}
        assert result.entries == 7 == len(result.clippings) + sum(result.skipped.values())
        first, second, underlined, alone = result.clippings
        # A note with no selected text is a note on its own, not lost.
        assert (alone.kind, alone.text) == ("note", "A note on its own")
        assert isinstance(first, RichClipping)
        assert isinstance(underlined, RichClipping)
        assert (first.title, first.author, first.note, first.colour, first.chapter) == (
            "Tidal Pools", "Mara Quist & Idris Marrow", "#opposites", "yellow",
            "LETTER OF CRITICISM",
        )  # fmt: skip
        assert first.added_at == datetime(2017, 10, 18, 20, 8, 11, 242899, tzinfo=UTC)
        assert second.text == "It was quite dark inside, for the window was small."
        assert underlined.colour == "underline"

    def test_without_the_wal_its_rows_are_not_there(self, tmp_path: Path) -> None:
        # What a reader who zips only the .sqlite files would get: why the page asks for all.
        result = parse_upload(apple_books_zip(tmp_path / "mac", companions=False))
        assert result.clippings == []

    def test_the_annotations_without_the_library_are_refused_saying_what_to_upload(
        self, tmp_path: Path
    ) -> None:
        result = parse_upload(apple_books_zip(tmp_path / "mac", library=False))
        assert result.clippings == []
        assert APPLE_ALONE in result.problems[0].message

    def test_the_annotation_database_alone_is_refused_saying_what_to_upload(
        self, tmp_path: Path
    ) -> None:
        apple_books_zip(tmp_path / "mac")
        data = (tmp_path / "mac" / "AEAnnotation_v10312011_1727_local.sqlite").read_bytes()
        result = parse_upload(data)
        assert [p.message for p in result.problems] == [APPLE_ALONE]


class ZipTests:
    def test_it_reads_every_sidecar_of_a_devices_folders(self, tmp_path: Path) -> None:
        data = _zip(
            {
                "koreader/The Quiet Engine.sdr/metadata.epub.lua": SIDECAR_ANNOTATIONS.encode(),
                "koreader/Tidal Pools.sdr/metadata.epub.lua": SIDECAR_OLD.encode(),
                "koreader/Tidal Pools.epub": b"PK\x03\x04 not read",
                "koreader/settings.reader.lua": b"return { ['x'] = 1 }",
                "__MACOSX/._metadata.epub.lua": b"\x00\x05",
                "KoboReader.sqlite": kobo_database(tmp_path / "KoboReader.sqlite"),
            }
        )
        result = parse_upload(data)
        titles = {c.title for c in result.clippings}
        assert {"The Quiet Engine", "Tidal Pools"} <= titles
        assert result.entries == 3 + 4 + 7
        assert result.problems == []
        assert (
            len(result.clippings) + sum(result.skipped.values()) + len(result.problems)
            == result.entries
        )

    def test_a_member_named_out_of_the_folder_is_not_read_and_is_reported(
        self, tmp_path: Path
    ) -> None:
        data = _zip(
            {
                "../../outside.sdr/metadata.epub.lua": SIDECAR_OLD.encode(),
                "/etc/cron.d/metadata.epub.lua": SIDECAR_OLD.encode(),
                "ok.sdr/metadata.epub.lua": SIDECAR_ANNOTATIONS.encode(),
            }
        )
        result = parse_upload(data)
        assert {c.title for c in result.clippings} == {"The Quiet Engine"}
        assert sorted(p.message for p in result.problems) == [
            "'../../outside.sdr/metadata.epub.lua' was not read: its name leads out of the "
            "zip's folder",
            "'/etc/cron.d/metadata.epub.lua' was not read: its name leads out of the zip's folder",
        ]
        assert not (tmp_path.parent / "outside.sdr").exists()

    def test_a_zip_bomb_is_refused_before_it_is_unpacked(self) -> None:
        bomb = _zip({"AEAnnotation/AEAnnotation.sqlite": b"\x00" * (devices.BOMB_MIN_BYTES * 2)})
        assert len(bomb) < devices.BOMB_MIN_BYTES / 100
        result = parse_upload(bomb)
        assert result.clippings == []
        assert "(a zip bomb?): the zip was not unpacked" in result.problems[0].message

    def test_a_zip_of_many_members_each_under_the_bomb_size_is_refused_whole(self) -> None:
        # The explorer's bomb, smaller: no member is past BOMB_MIN_BYTES, the zip as a
        # whole would unpack a thousand times its size.
        size = devices.BOMB_MIN_BYTES - 1024
        data = zip_of({f"b{n}.sdr/metadata.epub.lua": padded_sidecar(size) for n in range(4)})
        result, peak = peak_memory(lambda: parse_upload(data))
        assert result.clippings == []
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            packed = sum(info.compress_size for info in archive.infolist())
        assert [p.message for p in result.problems] == [
            f"the files in this zip would unpack {4 * size:,} bytes from {packed:,} "
            "(a zip bomb?): the zip was not unpacked"
        ]
        assert devices.zip_refusal(data) == result.problems[0].message
        assert peak < devices.BOMB_MIN_BYTES

    def test_the_sidecars_of_a_zip_are_read_one_at_a_time(self) -> None:
        # Under BOMB_MIN_BYTES in all, so read: never more than one sidecar held at once.
        data = zip_of({f"b{n}.sdr/metadata.epub.lua": padded_sidecar(2**20) for n in range(6)})
        result, peak = peak_memory(lambda: parse_zip(data))
        assert len(result.clippings) == 6 * 4
        assert peak < 4 * 2**20

    def test_a_synthetic_apple_books_zip_is_far_from_the_limits(self, tmp_path: Path) -> None:
        # The real readers' zips: tests/books/importing/test_readers_corpus.py.
        data = apple_books_zip(tmp_path / "mac")
        assert devices.zip_refusal(data) is None
        assert devices.zip_unpacked_bytes(data) < devices.BOMB_RATIO * len(data)

    @pytest.mark.parametrize("padding", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
    def test_random_bytes_beside_a_bomb_do_not_hide_it(self, padding: int) -> None:
        # The reviewer's zip: 40 -wal members of zeros, each just under BOMB_MIN_BYTES, and
        # 2 MB of random bytes stored as they are, so that the whole file is 2.4 MB and
        # unpacks only ~130 times its size. It made parse_zip peak at 328 MB. A tester's
        # zip then compressed the random bytes, which do not shrink, and got past.
        wal = b"\x00" * (devices.BOMB_MIN_BYTES - 1024)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for n in range(40):
                archive.writestr(f"{n}/x.sqlite-wal", wal)
            archive.writestr("padding.bin", os.urandom(2 * 2**20), padding)
        del wal
        data = buffer.getvalue()
        assert devices.zip_unpacked_bytes(data) < devices.BOMB_RATIO * len(data)
        refusal = devices.zip_refusal(data)
        assert refusal is not None
        assert refusal.endswith("(a zip bomb?): the zip was not unpacked")
        result, peak = peak_memory(lambda: parse_zip(data))
        assert [p.message for p in result.problems] == [refusal]
        assert peak < 2**20

    def test_a_zips_databases_are_unpacked_to_disk_not_held_in_memory(self, tmp_path: Path) -> None:
        # A -wal of 24 MB that no bomb check can tell from a real one (random bytes,
        # stored): what the worker's memory holds of it is one piece at a time.
        data = _zip(
            {
                "KoboReader.sqlite": kobo_database(tmp_path / "KoboReader.sqlite"),
                "KoboReader.sqlite-wal": os.urandom(24 * 2**20),
            },
            zipfile.ZIP_STORED,
        )
        assert devices.zip_refusal(data) is None
        result, peak = peak_memory(lambda: parse_zip(data))
        assert result.problems == []
        assert "The Quiet Engine" in {c.title for c in result.clippings}
        assert peak < 4 * 2**20

    def test_a_wal_without_its_database_is_not_read(self) -> None:
        data = _zip({"x.sqlite-wal": os.urandom(16 * 2**20)}, zipfile.ZIP_STORED)
        result, peak = peak_memory(lambda: parse_zip(data))
        assert "no Kindle 'My Clippings.txt', KOReader sidecar" in result.problems[0].message
        assert peak < 2**20

    def test_a_zip_whose_databases_are_past_their_limit_is_refused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        database = kobo_database(tmp_path / "KoboReader.sqlite")
        monkeypatch.setattr(devices, "MAX_DATABASE_BYTES", len(database) + 1000)
        alone = _zip({"KoboReader.sqlite": database})
        assert parse_zip(alone).problems == []
        data = _zip({"KoboReader.sqlite": database, "KoboReader.sqlite-wal": b"\x00" * 2000})
        result = parse_zip(data)
        assert result.clippings == []
        assert [p.message for p in result.problems] == [
            "the databases in this zip would unpack to 0 MB, more than 0 MB: "
            "the zip was not unpacked"
        ]

    def test_a_sidecar_past_its_limit_is_reported_and_not_read(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(devices, "MAX_SIDECAR_BYTES", 2**20)
        data = zip_of(
            {
                "big.sdr/metadata.epub.lua": padded_sidecar(2**20 + 1),
                "ok.sdr/metadata.epub.lua": SIDECAR_ANNOTATIONS.encode(),
            }
        )
        result = parse_zip(data)
        assert {c.title for c in result.clippings} == {"The Quiet Engine"}
        assert [p.message for p in result.problems] == [
            "'big.sdr/metadata.epub.lua' is too large to read"
        ]

    def test_a_zip_that_would_unpack_past_the_limit_is_refused(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Many members, each harmless: the total is what is too much.
        monkeypatch.setattr(devices, "MAX_UNPACKED_BYTES", 10_000)
        data = _zip({f"{n}.sdr/metadata.epub.lua": SIDECAR_OLD.encode() for n in range(10)})
        result = parse_upload(data)
        assert "would unpack to" in result.problems[0].message
        assert result.clippings == []

    def test_a_zip_of_too_many_files_is_refused(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(devices, "MAX_MEMBERS", 5)
        data = _zip({f"{n}.txt": b"x" for n in range(6)})
        assert "more than 5" in parse_zip(data).problems[0].message

    def test_a_hostile_sidecar_in_a_zip_runs_nothing(self, tmp_path: Path) -> None:
        marker = tmp_path / "ran"
        data = _zip({"Harmless.sdr/metadata.epub.lua": hostile_sidecar(marker).encode()})
        result = parse_upload(data)
        assert [c.text for c in result.clippings] == ["A harmless highlight"]
        assert result.problems[0].message.startswith("Harmless.sdr/metadata.epub.lua: annotation 2")
        assert not marker.exists()

    def test_a_zip_without_anything_to_read_says_so(self) -> None:
        result = parse_upload(_zip({"photo.jpg": b"\xff\xd8\xff"}))
        assert "no Kindle 'My Clippings.txt', KOReader sidecar" in result.problems[0].message

    def test_a_damaged_zip_is_refused_not_a_traceback(self) -> None:
        data = _zip({"a.sdr/metadata.epub.lua": SIDECAR_OLD.encode()})
        result = parse_upload(data[: len(data) // 2])
        assert result.clippings == []
        assert result.problems[0].message.startswith("this zip cannot be read")

    def test_a_member_with_an_empty_name_costs_only_itself(self) -> None:
        # Found by the fuzz test: a damaged central directory can name a member "".
        # The sidecar beside it is still read.
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("a.sdr/metadata.epub.lua", SIDECAR_OLD.encode())
            archive.writestr(zipfile.ZipInfo("x"), b"\x00\x01")
            archive.infolist()[-1].filename = ""
        result = parse_zip(buffer.getvalue())
        assert result.clippings
        accounted = len(result.clippings) + sum(result.skipped.values()) + len(result.problems)
        assert accounted == result.entries


BROKEN = b"Ficciones (Borges)\r\n- not metadata\r\n\r\nlost\r\n==========\r\n"


class KindleClippingsZipTests:
    """A reader zips My Clippings.txt to mail it to themselves (the walk of 2026-12-07)."""

    def test_it_reads_a_zipped_my_clippings_as_the_file_itself(self) -> None:
        text = clippings_file(*MEMORY_LIBRARY) + BROKEN
        data = _zip({"My Clippings.txt": text, "__MACOSX/._My Clippings.txt": b"\x00\x05"})

        zipped, alone = parse_upload(data), parse_upload(text)

        assert [(c.title, c.text, c.kind) for c in zipped.clippings] == [
            (c.title, c.text, c.kind) for c in alone.clippings
        ]
        assert len(zipped.clippings) == len(MEMORY_LIBRARY) == 7
        # Its problems keep their lines, and say which file of the zip they are in.
        assert [(p.line, p.message) for p in zipped.problems] == [
            (p.line, f"My Clippings.txt: {p.message}") for p in alone.problems
        ]

    def test_it_tells_a_clippings_file_too_large_to_read_from_a_zip_to_unzip_it(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(devices, "MAX_CLIPPINGS_BYTES", 1000)
        text = clippings_file(*MEMORY_LIBRARY)
        data = _zip({"kindle/My Clippings.txt": text})

        result = parse_upload(data, upload_limit=len(text))

        assert result.clippings == []
        assert [p.message for p in result.problems] == [
            "'kindle/My Clippings.txt' is 0.1 MB, more than the 0 MB of Kindle clippings read "
            "from one zip: unzip it and upload the file itself"
        ]
        # A file larger than an upload may be is never said to be uploaded on its own.
        result = parse_upload(data, upload_limit=len(text) - 1)
        assert [p.message for p in result.problems] == [
            "'kindle/My Clippings.txt' is 0.1 MB, more than the 0 MB of Kindle clippings read "
            "from one zip: it is larger than the 0 MB upload limit too, so it cannot be imported"
        ]

    def test_its_clippings_files_are_capped_together_and_named(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The review's zip: copies of a clippings file each under the cap, 960,000 clippings.
        text = clippings_file(*MEMORY_LIBRARY)
        monkeypatch.setattr(devices, "MAX_CLIPPINGS_BYTES", 3 * len(text) - 1)
        copies = {f"{n}/My Clippings.txt": text for n in range(3)}
        sidecar = {"koreader/Tidal Pools.sdr/metadata.epub.lua": SIDECAR_OLD.encode()}

        result = parse_upload(_zip({**copies, **sidecar}), upload_limit=len(text))

        assert {c.title for c in result.clippings} == {"Tidal Pools"}  # the rest is read
        assert [p.message for p in result.problems] == [
            "the Kindle clippings files in this zip ('0/My Clippings.txt', '1/My Clippings.txt', "
            "'2/My Clippings.txt') come to 0.1 MB, more than the 0 MB read from one zip: unzip "
            "them and upload each file itself"
        ]
        two = parse_upload(_zip(dict(list(copies.items())[:2])), upload_limit=len(text))
        assert len(two.clippings) == 2 * len(MEMORY_LIBRARY)
        said = parse_upload(_zip(copies), upload_limit=len(text) - 1).problems[0].message
        assert said.endswith(
            "unzip them and upload each file itself; one over the 0 MB upload limit cannot be "
            "imported"
        )

    @pytest.mark.django_db
    def test_an_upload_of_a_zip_too_full_of_clippings_is_refused_naming_them_in_spanish(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        text = clippings_file(*MEMORY_LIBRARY)
        monkeypatch.setattr(devices, "MAX_CLIPPINGS_BYTES", 2 * len(text) - 1)
        data = _zip({"a/My Clippings.txt": text, "b/My Clippings.txt": text})

        response = alice_client.post(
            reverse("import"),
            {"file": SimpleUploadedFile("two.zip", data)},
            headers={"Accept-Language": "es"},
            follow=True,
        )

        page = response.content.decode()
        assert (
            "los archivos de recortes de Kindle de este zip (&#x27;a/My Clippings.txt&#x27;, "
            "&#x27;b/My Clippings.txt&#x27;) suman 0,1 MB, más que los 0 MB que se leen de un "
            "zip: descomprímelos y sube cada archivo tal cual"
        ) in page
        assert not Highlight.objects.exists()

    def test_a_markdown_readme_with_setext_headings_is_not_read_as_clippings(self) -> None:
        # The review's KOReader zip: README.md's "Title\n==========" made three problems.
        readme = b"KOReader notes\n==========\n\nAbout my books.\n\nMore\n==========\nmore\n"
        sidecar = SIDECAR_OLD.encode()
        data = _zip(
            {"koreader/Tidal Pools.sdr/metadata.epub.lua": sidecar, "koreader/README.md": readme}
        )

        result = parse_upload(data)

        assert result.problems == []
        assert result.entries == len(result.clippings) == len(parse_upload(sidecar).clippings)

    def test_it_reads_a_clippings_file_whose_first_highlight_is_longer_than_4_kb(self) -> None:
        long = Entry("Ficciones (Borges, Jorge Luis)", "word " * 1000, location="1-40")
        text = clippings_file(long, *MEMORY_LIBRARY)

        result = parse_upload(_zip({"kindle/clippings-2026.txt": text}))

        assert len(result.clippings) == len(MEMORY_LIBRARY) + 1
        assert result.problems == []
        # Past the 64 KB read to tell it, its name tells it: My Clippings.txt in any case.
        longer = clippings_file(replace(long, text="word " * 14_000), *MEMORY_LIBRARY)
        named = parse_upload(_zip({"Kindle/documents/MY CLIPPINGS.TXT": longer}))
        assert len(named.clippings) == len(MEMORY_LIBRARY) + 1

    def test_a_text_that_is_not_a_kindles_is_not_read(self) -> None:
        result = parse_upload(_zip({"notes.txt": b"A list of books to read.\r\n"}))
        assert result.clippings == []
        assert "no Kindle 'My Clippings.txt'" in result.problems[0].message
