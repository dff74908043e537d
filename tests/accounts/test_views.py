import pytest
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

    def test_it_explains_mismatched_passwords(self, client: Client) -> None:
        response = client.post(
            reverse("signup"),
            {"username": "carol", "password1": PASSWORD, "password2": PASSWORD + "x"},
        )
        assert response.status_code == 200
        assert b"didn" in response.content  # the two passwords did not match
        assert not User.objects.filter(username="carol").exists()

    def test_it_sends_a_logged_in_reader_home(self, alice_client: Client) -> None:
        assert alice_client.get(reverse("signup"))["Location"] == reverse("home")


@pytest.mark.django_db
class LoginLogoutTests:
    def test_it_logs_in_and_out(self, client: Client, alice: User) -> None:
        response = client.post(reverse("login"), {"username": "alice", "password": PASSWORD})
        assert response.status_code == 302
        assert client.get(reverse("home")).status_code == 200
        assert client.post(reverse("logout")).status_code == 302
        assert client.get(reverse("home")).status_code == 302

    def test_it_rejects_a_wrong_password(self, client: Client, alice: User) -> None:
        response = client.post(reverse("login"), {"username": "alice", "password": "nope"})
        assert response.status_code == 200
        assert b"correct username and password" in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["home", "library", "import", "library_progress"])
def test_anonymous_readers_are_sent_to_login(client: Client, name: str) -> None:
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=")
