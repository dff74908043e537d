"""The tokens command, and the API token admin: an operator lists, makes and revokes a
reader's tokens without raw SQL or logging in as the reader."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from accounts.models import User
from api.models import ApiToken
from api.services import api_token_create, api_token_reader


def _run(*args: str) -> str:
    out = StringIO()
    call_command("tokens", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
class TokensCommandTests:
    def test_it_makes_a_token_and_prints_it_once(self, alice: User) -> None:
        out = _run("--user", "alice", "--create", "reading scripts")
        raw = out.strip().splitlines()[-1]
        assert api_token_reader(raw=raw) == alice
        assert ApiToken.objects.get(reader=alice).name == "reading scripts"
        assert raw not in _run("--user", "alice")

    def test_it_lists_the_readers_tokens_only(self, alice: User, bob: User) -> None:
        api_token_create(reader=alice, name="laptop")
        api_token_create(reader=alice, name="phone")
        api_token_create(reader=bob, name="bob's tool")
        out = _run("--user", "alice")
        assert "alice has 2 API tokens." in out
        assert "laptop" in out
        assert "phone" in out
        assert "bob's tool" not in out

    def test_it_revokes_a_token_by_prefix_or_code(self, alice: User) -> None:
        first, first_raw = api_token_create(reader=alice, name="leaked")
        second, second_raw = api_token_create(reader=alice, name="also leaked")
        assert "Revoked “leaked”" in _run("--user", "alice", "--revoke", first.prefix)
        assert api_token_reader(raw=first_raw) is None
        _run("--user", "alice", "--revoke", str(second.code))
        assert api_token_reader(raw=second_raw) is None
        assert "revoked already" in _run("--user", "alice", "--revoke", first.prefix)

    def test_it_never_revokes_another_readers_token(self, alice: User, bob: User) -> None:
        token, raw = api_token_create(reader=bob, name="bob's")
        with pytest.raises(CommandError, match="alice has no token"):
            _run("--user", "alice", "--revoke", str(token.code))
        assert api_token_reader(raw=raw) == bob

    def test_it_refuses_a_prefix_two_tokens_share(self, alice: User) -> None:
        api_token_create(reader=alice, name="one")
        api_token_create(reader=alice, name="two")
        with pytest.raises(CommandError, match="More than one"):
            _run("--user", "alice", "--revoke", "exo_")
        assert ApiToken.objects.filter(revoked_at__isnull=True).count() == 2

    def test_it_names_a_reader_who_is_not_there(self, db: None) -> None:
        with pytest.raises(CommandError, match="No reader named 'nobody'"):
            _run("--user", "nobody")


@pytest.mark.django_db
class ApiTokenAdminTests:
    def test_it_lists_tokens_without_their_secret(self, alice: User, client: Client) -> None:
        token, raw = api_token_create(reader=alice, name="laptop")
        client.force_login(User.objects.create_superuser("admin", password="x"))
        listing = client.get(reverse("admin:api_apitoken_changelist")).content.decode()
        change = client.get(reverse("admin:api_apitoken_change", args=[token.pk])).content.decode()
        for page in (listing, change):
            assert "laptop" in page
            assert token.prefix in page
            assert raw not in page
            assert token.token_hash not in page
        assert client.get(reverse("admin:api_apitoken_add")).status_code == 403

    def test_its_revoke_action_revokes_the_chosen_tokens(self, alice: User, client: Client) -> None:
        leaked, leaked_raw = api_token_create(reader=alice, name="leaked")
        _kept, kept_raw = api_token_create(reader=alice, name="kept")
        client.force_login(User.objects.create_superuser("admin", password="x"))
        response = client.post(
            reverse("admin:api_apitoken_changelist"),
            {"action": "revoke", "_selected_action": [leaked.pk]},
            follow=True,
        )
        assert "Revoked 1 token." in response.content.decode()
        assert api_token_reader(raw=leaked_raw) is None
        assert api_token_reader(raw=kept_raw) == alice
