"""What a refused upload is told: what IS accepted, and a count and line only where they
mean something (a database's or a zip's problem is the whole file's)."""

import io
import zipfile
from pathlib import Path

import pytest
from django.utils import translation

from books.importing.upload import ImportRejected, upload_parse
from books.wording import translated
from tests.books.importing.devices import (
    BOOKMARKED_SIDECAR,
    EMPTY_SIDECAR,
    AppleRow,
    apple_books_zip,
    kobo_database,
    sidecar,
)

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00"


def _refusal(data: bytes) -> str:
    with pytest.raises(ImportRejected) as refused:
        upload_parse(data)
    return str(refused.value)


def _bomb() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("KoboReader.sqlite", b"\x00" * (16 * 1024 * 1024))
    return buffer.getvalue()


def _broken(count: int) -> bytes:
    entry = "The Quiet Engine (Okonkwo, Chidi)\r\n- not metadata\r\n\r\ntext\r\n==========\r\n"
    return (entry * count).encode()


def test_a_picture_is_told_what_is_accepted() -> None:
    message = _refusal(PNG * 40)
    assert "KoboReader.sqlite" in message
    assert "metadata.epub.lua" in message
    assert "AEAnnotation" in message
    with translation.override("es"):
        assert "las carpetas 'AEAnnotation' y 'BKLibrary' de Apple Books" in translated(message)


def test_a_zip_bomb_is_a_problem_of_the_whole_file() -> None:
    message = _refusal(_bomb())
    assert message.startswith("Nothing in this file could be imported: 'KoboReader.sqlite'")
    assert "(a zip bomb?)" in message
    assert "line" not in message
    assert "problem(s)" not in message
    with translation.override("es"):
        assert translated(message).startswith("No se ha podido importar nada de este archivo")


def test_a_text_file_says_its_problems_in_plain_plurals() -> None:
    one, two = _refusal(_broken(1)), _refusal(_broken(2))
    assert one.startswith("No clipping in this file could be read (1 problem, at line 2: ")
    assert two.startswith(
        "No clipping in this file could be read (2 problems; the first, at line 2"
    )
    with translation.override("es"):
        assert "(2 problemas; el primero, en la línea 2" in translated(two)


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


class DeviceFileWithNothingTests:
    def test_an_empty_sidecar_says_it_holds_no_highlights_naming_its_book(self) -> None:
        message = _refusal(EMPTY_SIDECAR)
        assert message == (
            "This KOReader sidecar of “README” holds no highlights or notes: there is "
            "nothing to import."
        )
        with translation.override("es"):
            assert translated(message) == (
                "Este archivo de KOReader de «README» no tiene subrayados ni notas: no hay "
                "nada que importar."
            )

    def test_a_sidecar_of_bookmarks_only_says_so(self) -> None:
        message = _refusal(BOOKMARKED_SIDECAR)
        assert message == (
            "This KOReader sidecar of “Dune” holds only bookmarks, no highlights or notes: "
            "there is nothing to import."
        )
        with translation.override("es"):
            assert translated(message).startswith(
                "Este archivo de KOReader de «Dune» solo tiene marcadores"
            )

    def test_a_sidecar_that_names_no_book_says_so_plainly(self) -> None:
        message = _refusal(b'return { ["annotations"] = {} }')
        assert message == (
            "This KOReader sidecar holds no highlights or notes: there is nothing to import."
        )

    def test_a_zip_says_it_of_its_one_sidecar_or_of_all_its_files(self) -> None:
        one = _refusal(_zip({"README.sdr/metadata.md.lua": EMPTY_SIDECAR}))
        both = _refusal(
            _zip(
                {
                    "README.sdr/metadata.md.lua": EMPTY_SIDECAR,
                    "Dune.sdr/metadata.epub.lua": BOOKMARKED_SIDECAR,
                }
            )
        )
        assert one.startswith("This KOReader sidecar of “README” holds no highlights")
        assert both == "The files in this zip have no highlights or notes to import."
        with translation.override("es"):
            assert translated(both) == (
                "Los archivos de este zip no tienen subrayados ni notas que importar."
            )

    def test_an_empty_sidecar_beside_a_highlighted_one_is_no_refusal(self) -> None:
        data = _zip(
            {
                "README.sdr/metadata.md.lua": EMPTY_SIDECAR,
                "Dune.sdr/metadata.epub.lua": sidecar("Dune", "Frank Herbert", ["Fear is."]),
            }
        )
        assert [c.text for c in upload_parse(data).clippings] == ["Fear is."]

    def test_a_kobo_database_and_apple_books_without_highlights_say_so(
        self, tmp_path: Path
    ) -> None:
        kobo = _refusal(kobo_database(tmp_path / "KoboReader.sqlite", []))
        apple = _refusal(apple_books_zip(tmp_path / "mac", [AppleRow(1, None, kind=1)]))
        export = _refusal(b'{"version": "json/1.0.0", "documents": []}')
        assert kobo == "This Kobo database has no highlights or notes to import."
        assert apple == "These Apple Books databases have no highlights or notes to import."
        assert export == "This KOReader export has no highlights or notes to import."
        with translation.override("es"):
            assert translated(kobo).startswith("Esta base de datos de Kobo no tiene subrayados")
            assert translated(apple).startswith("Estas bases de datos de Apple Books no tienen")
            assert translated(export).startswith("Esta exportación de KOReader no tiene")

    def test_an_unreadable_sidecar_speaks_of_highlights_not_clippings(self) -> None:
        message = _refusal(b'-- x\nreturn {\n  ["annotations"] = { [1] = { ["pos0"] = "p" } },\n}')
        assert message.startswith("No highlight or note in this file could be read (1 problem,")
        assert "clipping" not in message
        with translation.override("es"):
            assert translated(message).startswith(
                "No se ha podido leer ningún subrayado ni nota de este archivo (1 problema,"
            )
