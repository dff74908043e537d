"""Which note a highlight keeps when a file brings another (books.importing.notes.note_kept),
and the Kindle's notes, entries of their own with dates, under the same rule."""

from datetime import UTC, datetime

import pytest

from accounts.models import User
from books.importing.notes import note_kept
from books.importing.services import clippings_import
from books.models import Highlight, Import
from tests.books.kindle import SACKS, Entry, clippings_file

EARLY = datetime(2025, 3, 3, 10, 0, tzinfo=UTC)
LATE = datetime(2025, 3, 7, 10, 0, tzinfo=UTC)


class NoteKeptTests:
    @pytest.mark.parametrize(
        ("held", "held_at", "brought", "brought_at", "kept"),
        [
            # Nothing held: the note brought.
            ("", None, "new", LATE, ("new", LATE)),
            # The same words, spacing and case aside: nothing changes.
            ("#space  #fun-fact", EARLY, "#Space #fun-fact ", LATE, None),
            ("held", EARLY, "   ", LATE, None),
            # Both dated, at different times: the newer wins, an older one never replaces it.
            ("#cyn", EARLY, "#cynicism", LATE, ("#cynicism", LATE)),
            ("#cynicism", LATE, "#cyn", EARLY, None),
            ("a longer note", EARLY, "short", LATE, ("short", LATE)),
            # No date to tell: the words of both; one holding the other's words is kept.
            ("@fun-facts", LATE, "#fun-fact", LATE, ("@fun-facts\n\n#fun-fact", LATE)),
            ("#cynicism", LATE, "#cyn", LATE, None),
            ("yay", LATE, "yay, and a longer thought", LATE, ("yay, and a longer thought", LATE)),
            ("held", None, "brought", LATE, ("held\n\nbrought", LATE)),
            ("held", EARLY, "brought", None, ("held\n\nbrought", EARLY)),
            ("held", None, "brought", None, ("held\n\nbrought", None)),
        ],
    )
    def test_it_keeps_the_newer_note_or_the_words_of_both(
        self,
        held: str,
        held_at: datetime | None,
        brought: str,
        brought_at: datetime | None,
        kept: tuple[str, datetime | None] | None,
    ) -> None:
        assert note_kept(held=held, held_at=held_at, brought=brought, brought_at=brought_at) == kept

    @pytest.mark.parametrize("when", [EARLY, None])
    def test_what_it_keeps_is_kept_when_either_note_comes_again(
        self, when: datetime | None
    ) -> None:
        merged = note_kept(held="one", held_at=when, brought="two", brought_at=when)
        assert merged is not None
        for note in ("one", "two", merged[0]):
            assert (
                note_kept(held=merged[0], held_at=merged[1], brought=note, brought_at=when) is None
            )


def _import(reader: User, *entries: Entry) -> Import:
    return clippings_import(reader=reader, data=clippings_file(*entries), file_name="c.txt")


PASSAGE = Entry(SACKS, "A life-story, an inner narrative.", location="1520-1522")


@pytest.mark.django_db
class KindleNoteTests:
    def test_two_notes_at_one_moment_keep_the_words_of_both(self, alice: User) -> None:
        # A note edited within the same second: the Kindle cannot say which came last.
        first = Entry(SACKS, "continuity", kind="Note", location="1522")
        second = Entry(SACKS, "narrative identity", kind="Note", location="1522")
        _import(alice, PASSAGE, first, second)
        assert Highlight.objects.get(reader=alice).note == "continuity\n\nnarrative identity"

        again = _import(alice, PASSAGE, first, second)

        assert Highlight.objects.get(reader=alice).note == "continuity\n\nnarrative identity"
        assert (again.counts["notes_attached"], again.counts["books_changed"]) == (0, 0)

    def test_a_newer_note_is_a_change_of_its_book(self, alice: User) -> None:
        _import(alice, PASSAGE, Entry(SACKS, "first", kind="Note", location="1522"))
        later = Entry(
            SACKS, "second", kind="Note", location="1522", added="Friday, 7 March 2025 10:00:00"
        )

        update = _import(alice, PASSAGE, later)

        assert (update.counts["notes_attached"], update.counts["books_changed"]) == (1, 1)
        assert Highlight.objects.get(reader=alice).note == "second"
