"""The sharing command: a reader's Sharing page, for an operator."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import User
from affinity.services import sharing_profile_for
from tests.affinity.library import book, share


def _run(*args: str) -> str:
    out = StringIO()
    call_command("sharing", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
class SharingCommandTests:
    def test_it_turns_sharing_on_under_a_name_and_off_again(self, alice: User) -> None:
        assert "alice's sharing is off" in _run("--user", "alice")
        out = _run("--user", "alice", "on", "--name", "Lectora")
        assert "alice shares their reading as “Lectora”." in out
        assert sharing_profile_for(alice).discoverable
        assert "on, as “Lectora”" in _run("--user", "alice")
        assert "sharing is off" in _run("--user", "alice", "off")
        profile = sharing_profile_for(alice)
        assert not profile.discoverable
        assert profile.display_name == "Lectora"

    def test_it_keeps_the_books_the_reader_keeps_to_themselves(self, alice: User) -> None:
        private = book(alice, "Diario")
        share(alice, "Lectora", excluded=[private])
        _run("--user", "alice", "off")
        _run("--user", "alice", "on")
        profile = sharing_profile_for(alice)
        assert profile.discoverable
        assert list(profile.excluded_books.all()) == [private]

    def test_it_refuses_what_the_sharing_page_refuses(self, alice: User, bob: User) -> None:
        with pytest.raises(CommandError, match="Choose a display name"):
            _run("--user", "alice", "on")
        share(bob, "Lectora")
        with pytest.raises(CommandError, match="Another reader shares under this name"):
            _run("--user", "alice", "on", "--name", "lectora")
        assert not sharing_profile_for(alice).discoverable
