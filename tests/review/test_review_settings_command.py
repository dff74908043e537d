"""`manage.py review_settings`: a reader's review settings shown, and changed by the Review
settings page's own form (tests/review/test_views.py ReviewSettingsTests)."""

from io import StringIO

import pytest
from django.core import mail
from django.core.management import CommandError, call_command

from accounts.models import User
from review.models import ReviewSettings
from tests.conftest import PASSWORD


def _run(*args: str) -> str:
    out = StringIO()
    call_command("review_settings", *args, stdout=out)
    return out.getvalue()


def _kept(reader: User) -> tuple[int, int, bool]:
    settings = ReviewSettings.objects.get(reader=reader)
    return settings.cards_per_day, settings.words_per_day, settings.daily_email


@pytest.mark.django_db
class ReviewSettingsCommandTests:
    def test_it_shows_the_settings(self, alice: User) -> None:
        alice.email = alice.verified_email = "alice@example.org"
        alice.save()
        ReviewSettings.objects.create(reader=alice, cards_per_day=7, words_per_day=0)

        output = _run("--user", "alice")

        assert output == (
            "alice's daily review:\n"
            "  highlights a day  7\n"
            "  words a day       0 (the deck is off)\n"
            "  daily e-mail      off\n"
            "  e-mail address    alice@example.org\n"
        )

    def test_it_shows_the_defaults_of_a_reader_who_never_saved(self, alice: User) -> None:
        output = _run("--user", "alice")

        assert "  highlights a day  5\n  words a day       10\n" in output
        assert "  e-mail address    none\n" in output

    def test_it_changes_the_counts_and_keeps_the_rest(self, alice: User, bob: User) -> None:
        ReviewSettings.objects.create(reader=bob, cards_per_day=9)

        output = _run("--user", "alice", "--cards-per-day", "3", "--words-per-day", "0")

        assert output.startswith("Saved alice's review settings.\n")
        assert "  words a day       0 (the deck is off)\n" in output
        assert _kept(alice) == (3, 0, False)
        assert _kept(bob) == (9, 10, False)
        assert not mail.outbox

    def test_it_sets_the_address_with_the_password_and_mails_its_link(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("sys.stdin", StringIO(PASSWORD + "\n"))
        output = _run(
            "--user",
            "alice",
            "--daily-email",
            "on",
            "--email",
            "alice@example.org",
            "--password-stdin",
        )

        assert _kept(alice) == (5, 10, True)
        alice.refresh_from_db()
        assert alice.email == "alice@example.org"
        assert "alice@example.org (not confirmed yet: nothing is mailed to it)" in output
        assert output.endswith("Mailed alice@example.org a link to confirm it.\n")
        assert [m.to for m in mail.outbox] == [["alice@example.org"]]
        # Turned off again: the address stays, and no second link is asked for by it.
        _run("--user", "alice", "--daily-email", "off")
        assert _kept(alice) == (5, 10, False)

    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (["--cards-per-day", "500"], "--cards-per-day: At most 50."),
            (["--cards-per-day", "0"], "--cards-per-day: At least 1."),
            (["--words-per-day", "-1"], "--words-per-day: At least 0."),
            (["--words-per-day", "ten"], "--words-per-day: Write a whole number."),
            (["--daily-email", "on"], "--email: The daily e-mail needs an address to go to."),
            (
                ["--email", "nobody"],
                "--email: Write an e-mail address, such as reader@example.com.",
            ),
            (
                ["--email", "mallory@example.org"],
                "--password-stdin: Type your password to change the address.",
            ),
        ],
    )
    def test_it_refuses_what_the_form_refuses_and_says_it_as_the_form(
        self, alice: User, args: list[str], said: str
    ) -> None:
        ReviewSettings.objects.create(reader=alice, cards_per_day=4)

        with pytest.raises(CommandError) as refused:
            _run("--user", "alice", *args)

        assert str(refused.value) == f"Nothing changed. {said}"
        assert _kept(alice) == (4, 10, False)
        alice.refresh_from_db()
        assert alice.email == ""

    def test_it_refuses_a_wrong_password(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("sys.stdin", StringIO("not the password\n"))
        with pytest.raises(CommandError, match="Type your password to change the address"):
            _run("--user", "alice", "--email", "a@example.org", "--password-stdin")
        alice.refresh_from_db()
        assert alice.email == ""

    def test_it_names_a_reader_who_is_not_there(self, alice: User) -> None:
        with pytest.raises(CommandError, match="No reader named 'zed'"):
            _run("--user", "zed", "--cards-per-day", "3")
        with pytest.raises(CommandError, match="--password-stdin goes with --email"):
            _run("--user", "alice", "--password-stdin")
