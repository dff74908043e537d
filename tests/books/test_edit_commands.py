"""The tags, favourite and note commands: a reader's edits of their highlights, for an
operator, through the same services as the pages."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight, Tag
from books.services import highlight_tag
from tests.books.kindle import MEMORY_LIBRARY, clippings_file


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def passages(alice: User) -> list[Highlight]:
    clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
    return list(Highlight.objects.filter(reader=alice, kind=Highlight.Kind.HIGHLIGHT)[:3])


def _tags(highlight: Highlight) -> set[str]:
    return set(highlight.tags.values_list("name", flat=True))


@pytest.mark.django_db
class TagsCommandTests:
    def test_it_tags_and_untags_a_highlight(self, alice: User, passages: list[Highlight]) -> None:
        code = str(passages[0].code)
        assert "Tagged the highlight “memory”." in _run(
            "tags", "--user", "alice", "--highlight", code, "--add", " Memory "
        )
        assert _tags(passages[0]) == {"memory"}
        assert "memory  1 highlight" in _run("tags", "--user", "alice")
        _run("tags", "--user", "alice", "--highlight", code, "--remove", "memory")
        assert _tags(passages[0]) == set()
        # A tag that labels nothing is dropped, as on the page.
        assert not Tag.objects.filter(reader=alice).exists()

    def test_it_renames_merges_and_deletes_tags(
        self, alice: User, passages: list[Highlight]
    ) -> None:
        first, second, third = passages
        highlight_tag(highlight=first, name="time")
        highlight_tag(highlight=second, name="memory")
        highlight_tag(highlight=third, name="forgetting")
        assert "Renamed “time” to “tiempo”." in _run(
            "tags", "--user", "alice", "--rename", "time", "tiempo"
        )
        assert "Merged “tiempo” into “memory”." in _run(
            "tags", "--user", "alice", "--rename", "tiempo", "memory"
        )
        assert _tags(first) == {"memory"}
        out = _run("tags", "--user", "alice", "--merge", "forgetting", "memory")
        assert "Merged “forgetting” into “memory”: 1 highlight moved." in out
        out = _run("tags", "--user", "alice", "--delete", "memory")
        assert "Deleted the tag “memory” from 3 highlights; the highlights stay." in out
        assert Highlight.objects.filter(reader=alice).count() >= 3
        assert not Tag.objects.exists()

    def test_it_never_touches_another_readers_tags(
        self, alice: User, bob: User, passages: list[Highlight]
    ) -> None:
        highlight_tag(highlight=passages[0], name="memory")
        with pytest.raises(CommandError, match="bob has no tag 'memory'"):
            _run("tags", "--user", "bob", "--delete", "memory")
        with pytest.raises(CommandError, match="bob has no highlight"):
            _run("tags", "--user", "bob", "--highlight", str(passages[0].code), "--add", "x")
        assert _tags(passages[0]) == {"memory"}

    def test_it_refuses_an_empty_tag(self, alice: User, passages: list[Highlight]) -> None:
        with pytest.raises(CommandError, match="A tag needs a name"):
            _run("tags", "--user", "alice", "--highlight", str(passages[0].code), "--add", "  ")


@pytest.mark.django_db
class FavouriteCommandTests:
    def test_it_marks_and_unmarks_a_favourite(self, alice: User, passages: list[Highlight]) -> None:
        code = str(passages[0].code)
        _run("favourite", "--user", "alice", "--highlight", code, "on")
        _run("favourite", "--user", "alice", "--highlight", code, "on")  # stays on
        passages[0].refresh_from_db()
        assert passages[0].favourite
        assert "alice has 1 favourite." in _run("favourite", "--user", "alice")
        _run("favourite", "--user", "alice", "--highlight", code, "off")
        passages[0].refresh_from_db()
        assert not passages[0].favourite

    def test_it_never_marks_another_readers_highlight(
        self, alice: User, bob: User, passages: list[Highlight]
    ) -> None:
        with pytest.raises(CommandError, match="bob has no highlight"):
            _run("favourite", "--user", "bob", "--highlight", str(passages[0].code), "on")


@pytest.mark.django_db
class NoteCommandTests:
    def test_it_writes_prints_and_clears_a_note(
        self, alice: User, passages: list[Highlight]
    ) -> None:
        code = str(passages[0].code)
        assert "Note saved." in _run(
            "note", "--user", "alice", "--highlight", code, "--set", " Read again. "
        )
        passages[0].refresh_from_db()
        assert passages[0].note == "Read again."
        assert passages[0].note_edited
        assert _run("note", "--user", "alice", "--highlight", code).strip() == "Read again."
        assert "Note cleared." in _run("note", "--user", "alice", "--highlight", code, "--clear")

    def test_it_refuses_a_note_the_page_refuses(
        self, alice: User, passages: list[Highlight]
    ) -> None:
        with pytest.raises(CommandError, match="Nothing changed"):
            _run(
                "note",
                "--user",
                "alice",
                "--highlight",
                str(passages[0].code),
                "--set",
                "x" * 100_000,
            )

    def test_it_never_writes_on_another_readers_highlight(
        self, alice: User, bob: User, passages: list[Highlight]
    ) -> None:
        with pytest.raises(CommandError, match="bob has no highlight"):
            _run("note", "--user", "bob", "--highlight", str(passages[0].code), "--set", "mine")
