"""`make fuzz`: the parser and the import under Hypothesis, at volume.

In the suite (and CI) a few hundred examples each run; `make fuzz` sets
EXOGRAM_FUZZ_EXAMPLES=10000 and a deadline per input (EXOGRAM_FUZZ_DEADLINE_MS), so that an
input that makes the parser hang or crawl fails by name. The properties: nothing raises,
every entry is a clipping or a problem, no highlight comes back with an empty title, and
an import of whatever the parser accepts saves it or says why (ImportRejected), never more.
"""

import os
import random
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from books.importing.clippings import ParseResult, parse_clippings
from books.importing.screening import screen_entries
from tests.books.importing.test_clippings_properties import (
    FORMAT_TOKENS,
    assert_every_entry_accounted_for,
    entries,
    written_file,
)

EXAMPLES = int(os.environ.get("EXOGRAM_FUZZ_EXAMPLES", "100"))
# No deadline in the suite (no timed assertions there); `make fuzz` sets one.
_deadline_ms = int(os.environ.get("EXOGRAM_FUZZ_DEADLINE_MS", "0"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(milliseconds=_deadline_ms) if _deadline_ms else None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# The import writes to the database: a fiftieth as many examples.
IMPORT_FUZZ = settings(FUZZ, max_examples=max(20, EXAMPLES // 50))


def assert_sound(result: ParseResult) -> None:
    assert_every_entry_accounted_for(result)
    for clipping in result.clippings:
        assert clipping.title.strip(), clipping


ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "cp1252"]
SEPARATORS = ["==========", "=========", "===========", "==========  ", "=========="]


@st.composite
def hostile_files(draw: st.DrawFn) -> bytes:
    """Well-formed files, then damaged: odd separators, NULs, huge lines, stray bytes."""
    generated = draw(st.lists(entries(), min_size=1, max_size=8))
    layout = draw(st.randoms(use_true_random=False))
    text, _ = written_file(generated, layout)
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, max(0, len(lines) - 1)))
        lines.insert(
            at,
            draw(
                st.sampled_from(SEPARATORS)
                | st.sampled_from(FORMAT_TOKENS)
                | st.text(max_size=30)
                | st.just("\x00" * draw(st.integers(1, 3)))
                | st.just("word " * draw(st.integers(1, 5000)))
            ),
        )
    text = draw(st.sampled_from(["\n", "\r\n", "\r"])).join(lines)
    data = text.encode(draw(st.sampled_from(ENCODINGS)), errors="replace")
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(max_size=16)) + data[at:]
    return data


class ParserFuzzTests:
    @FUZZ
    @given(st.binary(max_size=4000))
    def test_arbitrary_bytes(self, data: bytes) -> None:
        assert_sound(parse_clippings(data))

    @FUZZ
    @given(
        st.lists(st.sampled_from(FORMAT_TOKENS) | st.text(max_size=12), max_size=120),
        st.sampled_from(ENCODINGS),
    )
    def test_text_made_of_format_pieces(self, pieces: list[str], encoding: str) -> None:
        data = "".join(pieces).encode(encoding, errors="replace")
        assert_sound(parse_clippings(data))

    @FUZZ
    @given(hostile_files())
    def test_damaged_well_formed_files(self, data: bytes) -> None:
        result = parse_clippings(data)
        assert_sound(result)
        screened = screen_entries(result)
        assert_sound(screened)
        assert not any("\x00" in c.text or "\x00" in c.title for c in screened.clippings)


@pytest.mark.django_db
class ImportFuzzTests:
    @IMPORT_FUZZ
    @given(st.one_of(hostile_files(), st.binary(max_size=2000)))
    def test_an_import_saves_or_says_why(self, data: bytes) -> None:
        from accounts.models import User
        from books.importing.services import ImportRejected, clippings_import
        from books.models import Book, Import

        reader, _ = User.objects.get_or_create(username=f"fuzz{random.randrange(10**9)}")
        try:
            the_import = clippings_import(reader=reader, data=data, file_name="fuzz.txt")
        except ImportRejected as rejection:
            reason = str(rejection)
            the_import = None
        if the_import is None:
            assert reason  # rejected, with a reason the reader sees
            return
        assert the_import.status == Import.Status.DONE
        assert not Book.objects.filter(reader=reader, title="").exists()
