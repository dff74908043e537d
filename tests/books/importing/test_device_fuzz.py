"""Damaged and hostile device files under Hypothesis: nothing raises, every entry is counted.

The fixtures of tests/books/importing/devices.py, edited at random: Lua sidecars with
syntax, calls and escapes spliced in; Kobo databases and Apple Books zips with bytes
overwritten or cut. `make fuzz` runs them at volume (EXOGRAM_FUZZ_EXAMPLES).
"""

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from books.importing.clippings import ParseResult
from books.importing.formats import parse_upload
from tests.books.importing.devices import (
    SIDECAR_ANNOTATIONS,
    SIDECAR_OLD,
    apple_books_zip,
    kobo_database,
)
from tests.books.importing.test_fuzz import FUZZ

LUA_TOKENS = [
    "{", "}", "[", "]", "=", ",", ";", '"', "'", "\\", "\n", "--", "[[", "]]", "[==[",
    'os.execute("touch /tmp/x")', "function() end", "..", "-", "0x", "1e", "\\z", "\\999",
    "\\u{110000}", "nil", "true", "return", '["annotations"] = ', '["pos0"] = "/p"', "\x00",
]  # fmt: skip


def assert_accounted(result: ParseResult) -> None:
    bookmarks = sum(1 for c in result.clippings if c.kind == "bookmark")
    imported = len(result.clippings) - bookmarks
    skipped = bookmarks + sum(result.skipped.values())
    assert imported + skipped + len(result.problems) == result.entries
    for clipping in result.clippings:
        assert clipping.title.strip(), clipping


@st.composite
def edited(draw: st.DrawFn, text: str) -> str:
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 20))
        token = draw(st.sampled_from(LUA_TOKENS) | st.text(max_size=5))
        text = text[:at] + token + text[at + cut :]
    return text


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """Bytes overwritten here and there (the header kept, so the format is still told),
    or the file cut short."""
    if draw(st.booleans()):
        return data[: draw(st.integers(100, len(data)))]
    buffer = bytearray(data)
    for _ in range(draw(st.integers(1, 20))):
        buffer[draw(st.integers(100, len(buffer) - 1))] = draw(st.integers(0, 255))
    return bytes(buffer)


class DeviceFuzzTests:
    @FUZZ
    @given(st.sampled_from([SIDECAR_ANNOTATIONS, SIDECAR_OLD]).flatmap(edited))
    def test_an_edited_sidecar_parses_with_every_entry_accounted_for(self, text: str) -> None:
        assert_accounted(parse_upload(text.encode("utf-8", errors="surrogatepass")))

    def test_damaged_databases_and_zips_never_raise(self, tmp_path: Path) -> None:
        kobo = kobo_database(tmp_path / "KoboReader.sqlite")
        apple = apple_books_zip(tmp_path / "mac")

        @FUZZ
        @given(st.sampled_from([kobo, apple]).flatmap(damaged))
        def check(data: bytes) -> None:
            assert_accounted(parse_upload(data))

        check()
