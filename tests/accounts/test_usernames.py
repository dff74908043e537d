"""A username drawn like another reader's is refused wherever an account is made: the
sign-up page (tests/accounts/test_login_throttle.py), the admin and createsuperuser."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from accounts.models import User
from accounts.usernames import username_skeleton, validate_not_confusable

CYRILLIC_ALICE = "\u0430lice"


@pytest.mark.django_db
class UsernameTests:
    def test_the_skeleton_folds_scripts_case_and_invisible_characters(self) -> None:
        assert username_skeleton(CYRILLIC_ALICE) == username_skeleton("ALICE\u200b")
        assert username_skeleton("alicia") != username_skeleton("alice")

    def test_the_validator_refuses_another_readers_look_alike_only(self, alice: User) -> None:
        with pytest.raises(ValidationError, match="looks the same"):
            validate_not_confusable(CYRILLIC_ALICE)
        validate_not_confusable("alice")  # the reader's own name, saved again
        validate_not_confusable("alicia")

    def test_the_admin_refuses_to_add_a_look_alike(self, alice: User) -> None:
        admin = User.objects.create_superuser("admin", password="x")
        client = Client()
        client.force_login(admin)
        response = client.post(
            reverse("admin:accounts_user_add"),
            {
                "username": CYRILLIC_ALICE,
                "password1": "a long and unguessable passphrase",
                "password2": "a long and unguessable passphrase",
                "usable_password": "true",
            },
        )
        assert response.status_code == 200
        assert "looks the same as another reader" in response.content.decode()
        assert not User.objects.filter(username=CYRILLIC_ALICE).exists()
        # The reader's own page still saves under the name they have.
        change = client.get(reverse("admin:accounts_user_change", args=[alice.pk]))
        assert change.status_code == 200

    def test_createsuperuser_refuses_a_look_alike(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a long and unguessable passphrase")
        with pytest.raises(CommandError, match="looks the same"):
            call_command(
                "createsuperuser", "--noinput", username=CYRILLIC_ALICE, email="a@example.org"
            )
        assert not User.objects.filter(username=CYRILLIC_ALICE).exists()
        call_command("createsuperuser", "--noinput", username="admin", email="b@example.org")
        assert User.objects.filter(username="admin", is_superuser=True).exists()
