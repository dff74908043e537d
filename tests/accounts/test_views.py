import re

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.models import User
from tests.conftest import PASSWORD


@pytest.mark.django_db
class SignupTests:
    def test_it_creates_an_account_and_logs_in(self, client: Client) -> None:
        response = client.post(
            reverse("signup"),
            {"username": "carol", "password1": PASSWORD, "password2": PASSWORD},
        )
        assert response.status_code == 302
        assert response["Location"] == reverse("home")
        home = client.get(reverse("home"))
        assert home.status_code == 200
        assert b"Your library is empty" in home.content
        assert User.objects.filter(username="carol").exists()

    def test_it_says_each_fields_rule_in_one_line_under_it(self, client: Client) -> None:
        content = client.get(reverse("signup")).content.decode()
        # Django's list of password rules squeezed beside the field is gone…
        assert "<ul><li>Your password" not in content
        assert "too similar to your other personal information" not in content
        # …for one line under each field, tied to it for screen readers.
        assert '<p class="hint" id="id_password1_helptext">At least 8 characters' in content
        assert 'aria-describedby="id_password1_helptext"' in content
        assert "Password again" in content

    def test_it_explains_mismatched_passwords(self, client: Client) -> None:
        response = client.post(
            reverse("signup"),
            {"username": "carol", "password1": PASSWORD, "password2": PASSWORD + "x"},
        )
        assert response.status_code == 200
        assert b"The two passwords are not the same." in response.content
        assert not User.objects.filter(username="carol").exists()

    def test_it_asks_for_an_optional_email_only_for_password_resets(self, client: Client) -> None:
        content = client.get(reverse("signup")).content.decode()
        assert 'name="email"' in content
        assert "E-mail address (optional)" in content
        assert "Only for password resets" in content

    def test_an_email_given_at_sign_up_is_confirmed_by_a_mailed_link(self, client: Client) -> None:
        response = client.post(
            reverse("signup"),
            {
                "username": "carol",
                "password1": PASSWORD,
                "password2": PASSWORD,
                "email": "carol@example.org",
            },
            follow=True,
        )
        assert "Follow the link mailed to carol@example.org" in response.content.decode()
        carol = User.objects.get(username="carol")
        assert (carol.email, carol.verified_email) == ("carol@example.org", "")
        [message] = mail.outbox
        assert message.to == ["carol@example.org"]
        link = re.search(r"https?://[^/\s]+(/settings/email/verify/\S+/)", message.body)
        assert link is not None
        client.get(link.group(1))
        carol.refresh_from_db()
        assert carol.verified_email == "carol@example.org"
        # Now a forgotten password can be reset.
        client.logout()
        client.post(reverse("password_reset"), {"email": "carol@example.org"})
        assert mail.outbox[-1].subject == "Reset your Exogram password"

    def test_it_signs_up_without_an_email_and_mails_nothing(self, client: Client) -> None:
        client.post(
            reverse("signup"),
            {"username": "carol", "password1": PASSWORD, "password2": PASSWORD, "email": ""},
        )
        assert User.objects.get(username="carol").email == ""
        assert mail.outbox == []

    def test_it_refuses_a_bad_email(self, client: Client) -> None:
        response = client.post(
            reverse("signup"),
            {"username": "carol", "password1": PASSWORD, "password2": PASSWORD, "email": "carol"},
        )
        assert response.status_code == 200
        assert "Write an e-mail address, such as reader@example.com." in response.content.decode()
        assert not User.objects.filter(username="carol").exists()

    def test_an_email_another_account_has_is_not_refused(self, alice: User, client: Client) -> None:
        # Refusing it would tell anyone which addresses have an account here; it is the
        # new reader's only once they follow the link mailed to it.
        alice.email = alice.verified_email = "shared@example.org"
        alice.save()
        response = client.post(
            reverse("signup"),
            {
                "username": "carol",
                "password1": PASSWORD,
                "password2": PASSWORD,
                "email": "shared@example.org",
            },
        )
        assert response.status_code == 302
        assert User.objects.get(username="carol").verified_email == ""

    def test_it_sends_a_logged_in_reader_home(self, alice_client: Client) -> None:
        assert alice_client.get(reverse("signup"))["Location"] == reverse("home")


@pytest.mark.django_db
class LoginLogoutTests:
    def test_it_logs_in_and_out(self, client: Client, alice: User) -> None:
        response = client.post(reverse("login"), {"username": "alice", "password": PASSWORD})
        assert response.status_code == 302
        assert client.get(reverse("home")).status_code == 200
        assert client.post(reverse("logout")).status_code == 302
        # Logged out, home is the landing page again: no library in it.
        assert b"Your reading memory" not in client.get(reverse("home")).content
        assert client.get(reverse("library")).status_code == 302

    def test_it_rejects_a_wrong_password(self, client: Client, alice: User) -> None:
        response = client.post(reverse("login"), {"username": "alice", "password": "nope"})
        assert response.status_code == 200
        assert b"No account has that username and password." in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["library", "import", "library_progress"])
def test_anonymous_readers_are_sent_to_login(client: Client, name: str) -> None:
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=")


@pytest.mark.django_db
class LandingTests:
    def test_it_tells_a_visitor_what_exogram_is_and_the_way_in(self, client: Client) -> None:
        response = client.get(reverse("home"))
        assert response.status_code == 200
        content = response.content.decode()
        assert "Your Kindle highlights, remembered and connected." in content
        assert 'src="/static/img/landing.svg"' in content
        assert f'href="{reverse("signup")}"' in content
        assert f'href="{reverse("login")}"' in content

    def test_it_offers_no_sign_up_when_sign_up_is_closed(
        self, client: Client, settings: object
    ) -> None:
        settings.EXOGRAM_SIGNUP = "closed"  # type: ignore[attr-defined]
        content = client.get(reverse("home")).content.decode()
        assert "Create your account" not in content
        assert f'href="{reverse("login")}"' in content

    def test_a_reader_gets_their_library_instead(self, alice_client: Client) -> None:
        content = alice_client.get(reverse("home")).content.decode()
        assert "Your reading memory" in content
        assert "Create your account" not in content
