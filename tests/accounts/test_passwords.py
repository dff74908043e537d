import re

import pytest
from django.core import mail
from django.test import Client, override_settings
from django.urls import reverse

from accounts.models import User
from tests.conftest import PASSWORD

NEW_PASSWORD = "another long and unguessable passphrase"


@pytest.mark.django_db
class PasswordChangeTests:
    def test_it_changes_the_password(self, alice: User, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("password_change"),
            {
                "old_password": PASSWORD,
                "new_password1": NEW_PASSWORD,
                "new_password2": NEW_PASSWORD,
            },
        )
        assert response["Location"] == reverse("password_change_done")
        alice.refresh_from_db()
        assert alice.check_password(NEW_PASSWORD)

    def test_it_wants_the_old_password(self, alice: User, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("password_change"),
            {"old_password": "wrong", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        )
        assert response.status_code == 200
        alice.refresh_from_db()
        assert alice.check_password(PASSWORD)

    def test_anonymous_readers_are_sent_to_login(self, client: Client) -> None:
        response = client.get(reverse("password_change"))
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class PasswordResetTests:
    def test_it_mails_a_link_that_sets_a_new_password(self, alice: User, client: Client) -> None:
        alice.email = alice.verified_email = "alice@example.org"
        alice.save()
        response = client.post(reverse("password_reset"), {"email": "alice@example.org"})
        assert response["Location"] == reverse("password_reset_done")
        assert len(mail.outbox) == 1
        assert mail.outbox[0].subject == "Reset your Exogram password"
        link = re.search(r"http://testserver(/password-reset/\S+/)", mail.outbox[0].body)
        assert link is not None
        form = client.get(link.group(1), follow=True)
        assert "Choose a new password" in form.content.decode()
        done = client.post(
            form.redirect_chain[-1][0],
            {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        )
        assert done["Location"] == reverse("password_reset_complete")
        alice.refresh_from_db()
        assert alice.check_password(NEW_PASSWORD)

    def test_it_says_the_same_for_an_unknown_address_and_sends_nothing(
        self, client: Client
    ) -> None:
        response = client.post(reverse("password_reset"), {"email": "nobody@example.org"})
        assert response["Location"] == reverse("password_reset_done")
        assert mail.outbox == []

    def test_it_tells_a_reader_without_an_email_whom_to_ask(self, client: Client) -> None:
        page = client.get(reverse("password_reset")).content.decode()
        assert "ask the person who runs this Exogram to set a new password" in page
        assert "python manage.py changepassword" in page

    def test_its_reply_says_the_same_for_an_account_without_an_email(
        self, alice: User, client: Client
    ) -> None:
        # alice has no address: the reply is the one an unknown address gets, word for word.
        unknown = client.post(reverse("password_reset"), {"email": "nobody@example.org"})
        alices = client.post(reverse("password_reset"), {"email": "alice@example.org"})
        assert unknown["Location"] == alices["Location"] == reverse("password_reset_done")
        done = client.get(reverse("password_reset_done")).content.decode()
        assert "An account with no confirmed e-mail address gets no mail" in done
        assert "alice" not in done
        assert mail.outbox == []

    def test_it_mails_only_an_address_its_reader_confirmed(
        self, alice: User, client: Client
    ) -> None:
        alice.email = "typed-by-someone@example.org"
        alice.save()
        response = client.post(reverse("password_reset"), {"email": alice.email})
        assert response["Location"] == reverse("password_reset_done")  # says the same
        assert mail.outbox == []

    @override_settings(EXOGRAM_BASE_URL="https://books.example.org", EXOGRAM_BASE_URL_SET=True)
    def test_its_link_is_built_from_the_base_url_not_the_request(
        self, alice: User, client: Client
    ) -> None:
        alice.email = alice.verified_email = "alice@example.org"
        alice.save()
        client.post(
            reverse("password_reset"), {"email": "alice@example.org"}, HTTP_HOST="localhost:9999"
        )
        [message] = mail.outbox
        assert "https://books.example.org/password-reset/" in message.body
        assert "localhost:9999" not in message.body

    @override_settings(EXOGRAM_RESET_MAILS_PER_HOUR=3)
    def test_it_limits_the_mails_an_address_can_ask_for(self, alice: User, client: Client) -> None:
        alice.email = alice.verified_email = "alice@example.org"
        alice.save()
        for _ in range(3):
            response = client.post(reverse("password_reset"), {"email": "alice@example.org"})
            assert response.status_code == 302
        refused = client.post(reverse("password_reset"), {"email": "alice@example.org"})
        assert refused.status_code == 429
        assert len(mail.outbox) == 3
        # The same address, asked for from elsewhere: the limit is the address's too.
        elsewhere = client.post(
            reverse("password_reset"), {"email": "alice@example.org"}, REMOTE_ADDR="10.9.9.9"
        )
        assert elsewhere.status_code == 429

    @override_settings(EXOGRAM_RESET_MAILS_PER_HOUR=1)
    def test_a_refused_request_is_the_page_again_with_why_in_the_readers_language(
        self, alice: User, client: Client
    ) -> None:
        # It was a bare text page in English, unstyled, with no way back.
        alice.email = alice.verified_email = "alice@example.org"
        alice.save()
        client.post(reverse("password_reset"), {"email": "alice@example.org"})
        refused = client.post(
            reverse("password_reset"),
            {"email": "alice@example.org"},
            headers={"Accept-Language": "es"},
        )
        assert refused.status_code == 429
        page = refused.content.decode()
        assert "Demasiadas solicitudes desde tu dirección de red." in page
        assert 'class="errorlist' in page
        assert 'value="alice@example.org"' in page
        assert '<header class="site">' in page
        assert reverse("login") in page
        assert len(mail.outbox) == 1

    def test_the_login_page_links_to_it(self, client: Client) -> None:
        assert reverse("password_reset") in client.get(reverse("login")).content.decode()


@pytest.mark.django_db
class EmailChangeTests:
    def test_it_saves_the_address(self, alice: User, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("email_change"), {"email": "alice@example.org", "password": PASSWORD}
        )
        assert response["Location"] == reverse("settings")
        alice.refresh_from_db()
        assert alice.email == "alice@example.org"

    def test_it_needs_the_password(self, alice: User, alice_client: Client) -> None:
        for password in ("", "a guess"):
            response = alice_client.post(
                reverse("email_change"), {"email": "mallory@example.org", "password": password}
            )
            assert response.status_code == 400
        alice.refresh_from_db()
        assert alice.email == ""

    def test_it_mails_a_link_that_confirms_the_address(
        self, alice: User, alice_client: Client, client: Client
    ) -> None:
        alice_client.post(
            reverse("email_change"), {"email": "alice@example.org", "password": PASSWORD}
        )
        alice.refresh_from_db()
        assert alice.verified_email == ""
        [message] = mail.outbox
        assert message.to == ["alice@example.org"]
        link = re.search(r"https?://[^/\s]+(/settings/email/verify/\S+/)", message.body)
        assert link is not None
        # Anyone with the link (it went to the address) confirms it, logged in or not.
        assert client.get(link.group(1)).status_code == 302
        alice.refresh_from_db()
        assert alice.verified_email == "alice@example.org"
        # A changed address is not confirmed by the old link.
        alice.email = "other@example.org"
        alice.save()
        assert client.get(link.group(1)).status_code == 400
        alice.refresh_from_db()
        assert alice.verified_email == "alice@example.org" != alice.email

    def test_a_made_up_link_confirms_nothing(self, alice: User, client: Client) -> None:
        response = client.get(reverse("email_verify", args=["not-a-token"]))
        assert response.status_code == 400

    def test_it_refuses_a_bad_address(self, alice: User, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("email_change"), {"email": "not an address", "password": PASSWORD}
        )
        assert response.status_code == 400
        alice.refresh_from_db()
        assert alice.email == ""

    def test_each_reader_changes_only_their_own(
        self, alice: User, bob: User, bob_client: Client
    ) -> None:
        bob_client.post(reverse("email_change"), {"email": "bob@example.org", "password": PASSWORD})
        alice.refresh_from_db()
        assert alice.email == ""

    def test_anonymous_readers_are_sent_to_login(self, client: Client) -> None:
        response = client.post(reverse("email_change"), {"email": "x@example.org"})
        assert response["Location"].startswith(reverse("login"))
