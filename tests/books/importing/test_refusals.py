"""What a refused upload is told: what IS accepted, and a count and line only where they
mean something (a database's or a zip's problem is the whole file's)."""

import io
import zipfile

import pytest
from django.utils import translation

from books.importing.upload import ImportRejected, upload_parse
from books.wording import translated

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
