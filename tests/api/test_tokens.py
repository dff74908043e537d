"""Settings → API tokens: made and shown once, listed, revoked; each reader's own."""

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from api.models import ApiToken
from api.services import api_token_create, api_token_reader


@pytest.mark.django_db
class TokensPageTests:
    def test_it_creates_a_token_and_shows_it_once(self, alice_client: Client, alice: User) -> None:
        response = alice_client.post(reverse("api_tokens"), {"name": "laptop scripts"})
        assert response.status_code == 302
        response = alice_client.get(response["Location"])
        raw = response.context["new_token"]
        assert raw.startswith("exo_")
        assert raw in response.content.decode()
        assert api_token_reader(raw=raw) == alice
        again = alice_client.get(reverse("api_tokens")).content.decode()
        assert raw not in again
        assert "laptop scripts" in again
        assert raw[:10] in again
        assert response["Cache-Control"].startswith("max-age=0")

    def test_it_shows_the_new_token_whole_with_a_copy_button(
        self, alice_client: Client, alice: User
    ) -> None:
        response = alice_client.post(reverse("api_tokens"), {"name": "laptop"}, follow=True)
        raw = response.context["new_token"]
        page = response.content.decode()
        assert f'class="token-full" spellcheck="false">{raw}</textarea>' in page
        assert f'class="copy-citation" data-citation="{raw}"' in page
        assert "Copy token" in page

    def test_it_needs_a_name(self, alice_client: Client, alice: User) -> None:
        response = alice_client.post(reverse("api_tokens"), {"name": ""})
        assert response.status_code == 400
        assert not ApiToken.objects.exists()

    def test_it_revokes_a_token(self, alice_client: Client, alice: User) -> None:
        token, raw = api_token_create(reader=alice, name="old")
        response = alice_client.post(reverse("api_token_revoke", args=[token.code]))
        assert response.status_code == 302
        assert api_token_reader(raw=raw) is None
        page = alice_client.get(reverse("api_tokens")).content.decode()
        assert "revoked" in page

    def test_it_lists_only_the_readers_own_tokens(self, alice: User, bob_client: Client) -> None:
        api_token_create(reader=alice, name="alice's secret tool")
        page = bob_client.get(reverse("api_tokens")).content.decode()
        assert "alice&#x27;s secret tool" not in page
        assert "No tokens yet." in page

    def test_another_reader_cannot_revoke_it(self, alice: User, bob_client: Client) -> None:
        token, raw = api_token_create(reader=alice, name="mine")
        response = bob_client.post(reverse("api_token_revoke", args=[token.code]))
        assert response.status_code == 404
        assert api_token_reader(raw=raw) == alice

    def test_it_sends_anonymous_visitors_to_log_in(self, client: Client, alice: User) -> None:
        token, _ = api_token_create(reader=alice, name="mine")
        for response in [
            client.get(reverse("api_tokens")),
            client.post(reverse("api_tokens"), {"name": "x"}),
            client.post(reverse("api_token_revoke", args=[token.code])),
        ]:
            assert response.status_code == 302
            assert response["Location"].startswith(reverse("login"))
        assert ApiToken.objects.get().revoked_at is None

    def test_the_settings_page_links_to_it(self, alice_client: Client) -> None:
        assert reverse("api_tokens") in alice_client.get(reverse("settings")).content.decode()
