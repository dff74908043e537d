"""The dedupe key of a stored highlight (Highlight.dedupe_key_from_fields): the key
identity.highlight_dedupe_key gives its own fields, byte for byte, under its book's key or
another's; and the key an import stores for every kind of entry."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounts.models import User
from books.importing.identity import highlight_dedupe_key
from books.importing.services import clippings_import
from books.models import Book, Highlight
from tests.books.kindle import BORGES, Entry, clippings_file

BOOK_KEY = "ficciones\x1fborges jorge luis"


def _highlight(
    *, kind: str, page: str, start: int | None, end: int | None, text: str, book_key: str
) -> Highlight:
    return Highlight(
        book=Book(key=book_key),
        kind=kind,
        page=page,
        location_start=start,
        location_end=end,
        text=text,
    )


def _spelled_out(highlight: Highlight, *, book_key: str) -> str:
    """The key as the import and the merges spelled it out before the method."""
    return highlight_dedupe_key(
        book_key=book_key,
        kind=highlight.kind,
        page=highlight.page,
        start=highlight.location_start,
        end=highlight.location_end,
        text=highlight.text,
    )


locations = st.none() | st.integers(min_value=0, max_value=2**31 - 1)


class DedupeKeyFromFieldsTests:
    # Keys computed before the method existed: a stored key must never change, or a
    # re-import would bring every highlight in again.
    @pytest.mark.parametrize(
        ("fields", "key"),
        [
            (
                {
                    "kind": "highlight",
                    "page": "",
                    "start": 412,
                    "end": 414,
                    "text": "To think is to forget differences,  to generalize.",
                    "book_key": BOOK_KEY,
                },
                "63ac7735726efacdbe7dec9c386a67eb934bd464901fa48a8dc4ef4e93819c86",
            ),
            (
                {
                    "kind": "highlight",
                    "page": "12",
                    "start": None,
                    "end": None,
                    "text": "Page-only words\non a PDF",
                    "book_key": BOOK_KEY,
                },
                "e259b4e028fdd68da6b95e137ced08971dcb1f2b631823fa34bc51baedc71731",
            ),
            (
                {
                    "kind": "note",
                    "page": "7",
                    "start": 380,
                    "end": None,
                    "text": "Read this TWICE.",
                    "book_key": BOOK_KEY,
                },
                "a587648c3563d3ee79d33f031c8f5caf518bb670c08fc6a7accd47dcc35c79e3",
            ),
            (
                {
                    "kind": "highlight",
                    "page": "3-4",
                    "start": None,
                    "end": None,
                    "text": " Ünïcödé ΣΊΣΥΦΟΣ ",
                    "book_key": "",
                },
                "8cde59a94e190a70dae7379d23ee9cc72b7672da19072acf7ac62b07c43ed3ed",
            ),
        ],
    )
    def test_it_gives_the_keys_stored_before_it(self, fields: dict, key: str) -> None:
        assert _highlight(**fields).dedupe_key_from_fields() == key

    @given(
        kind=st.sampled_from(Highlight.Kind.values),
        page=st.text(max_size=32),
        start=locations,
        end=locations,
        text=st.text(),
        own_key=st.text(),
        other_key=st.text(),
    )
    def test_it_is_the_spelled_out_key_under_its_books_key_or_another(
        self,
        kind: str,
        page: str,
        start: int | None,
        end: int | None,
        text: str,
        own_key: str,
        other_key: str,
    ) -> None:
        highlight = _highlight(
            kind=kind, page=page, start=start, end=end, text=text, book_key=own_key
        )
        assert highlight.dedupe_key_from_fields() == _spelled_out(highlight, book_key=own_key)
        assert highlight.dedupe_key_from_fields(book_key=other_key) == _spelled_out(
            highlight, book_key=other_key
        )
        # "" is a key (same_book compares two books' highlights under it), not "its own".
        assert highlight.dedupe_key_from_fields(book_key="") == _spelled_out(highlight, book_key="")


@pytest.mark.django_db
class StoredDedupeKeyTests:
    def test_every_imported_highlight_and_note_holds_the_key_of_its_fields(
        self, alice: User
    ) -> None:
        clippings_import(
            reader=alice,
            data=clippings_file(
                Entry(BORGES, "To think is to forget differences.", location="412-414"),
                Entry(BORGES, "Read this twice.", kind="Note", location="414"),
                Entry(
                    BORGES,
                    "A note of its own, far from any highlight.",
                    kind="Note",
                    location="900",
                ),
                Entry(BORGES, "Words on a page with no locations.", location="", page="12"),
                Entry(BORGES, "A note on a page.", kind="Note", location="", page="30"),
                Entry(BORGES, "One location only.", location="380", page="7"),
                Entry("Essays (Montaigne, Michel)", "  Spaced   out\twords ", location="5-6"),
            ),
            file_name="c.txt",
        )
        stored = list(Highlight.objects.filter(reader=alice).select_related("book"))
        kinds = {(h.kind, h.location_start is None) for h in stored}
        assert kinds == {
            (Highlight.Kind.HIGHLIGHT, False),
            (Highlight.Kind.HIGHLIGHT, True),
            (Highlight.Kind.NOTE, False),
            (Highlight.Kind.NOTE, True),
        }
        for highlight in stored:
            assert highlight.dedupe_key == highlight.dedupe_key_from_fields()
            assert highlight.dedupe_key == _spelled_out(highlight, book_key=highlight.book.key)
