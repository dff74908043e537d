"""The forms' errors speak to a Spanish reader as "tú", like the pages around them, never in
Django's own formal Spanish ("Su contraseña…", "introduzca…", "Asegúrese de que…")."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from tests.books.library import library_of
from tests.conftest import PASSWORD

SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}
# Words of Django's formal Spanish: "usted" and its imperatives and possessive.
FORMAL = re.compile(
    r"\b(usted|[Ss]u contraseña|[Ii]ntroduzca|[Aa]segúrese|[Ee]scoja|[Vv]uelva|[Ii]ngrese)\b"
)


def _formal(page: str) -> list[str]:
    return FORMAL.findall(page)


@pytest.fixture
def lectora(alice: User) -> User:
    alice.language = "es"
    alice.save(update_fields=["language"])
    return alice


@pytest.mark.django_db
class PasswordFormTests:
    def test_it_asks_for_a_new_password_in_the_pages_voice(
        self, lectora: User, alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("password_change")).content.decode()
        assert "Al menos 8 caracteres" in page  # the one-line hint, not Django's rules
        assert "Repite la nueva contraseña" in page
        assert _formal(page) == []

    def test_it_refuses_a_wrong_current_password_as_tu(
        self, lectora: User, alice_client: Client
    ) -> None:
        response = alice_client.post(
            reverse("password_change"),
            {"old_password": "nope", "new_password1": "x", "new_password2": "y"},
        )
        page = response.content.decode()
        assert "Esa no es tu contraseña actual; vuelve a escribirla." in page
        assert "Las dos contraseñas no coinciden." in page
        assert _formal(page) == []

    def test_it_keeps_english_for_an_english_reader(self, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("password_change"),
            {"old_password": "nope", "new_password1": "x", "new_password2": "y"},
        )
        page = response.content.decode()
        assert "That is not your current password; try it again." in page
        assert "The two passwords are not the same." in page

    def test_it_still_changes_the_password(self, lectora: User, alice_client: Client) -> None:
        new = PASSWORD + " renewed"
        response = alice_client.post(
            reverse("password_change"),
            {"old_password": PASSWORD, "new_password1": new, "new_password2": new},
        )
        assert response.status_code == 302
        lectora.refresh_from_db()
        assert lectora.check_password(new)

    def test_it_refuses_a_username_as_tu_at_sign_up(self, client: Client) -> None:
        response = client.post(
            reverse("signup"),
            {"username": "una lectora!", "password1": PASSWORD, "password2": PASSWORD},
            headers=SPANISH,
        )
        page = response.content.decode()
        assert "Escribe un nombre de usuario válido" in page
        assert _formal(page) == []


@pytest.mark.django_db
class SearchFormTests:
    def test_it_refuses_a_bad_date_and_note_filter_as_tu(
        self, lectora: User, alice_client: Client
    ) -> None:
        response = alice_client.get(
            reverse("search"), {"q": "sentence", "added_from": "ayer", "has_note": "quizá"}
        )
        page = response.content.decode()
        assert "Escribe la fecha como año-mes-día, por ejemplo 2024-03-01." in page
        assert "«quizá» no es una de las opciones." in page
        assert _formal(page) == []

    def test_it_searches_a_query_past_the_limit_cut_to_it(
        self, lectora: User, alice_client: Client
    ) -> None:
        library_of(lectora, 2)
        long_query = "something " * 60  # 600 characters; the limit is 500
        response = alice_client.get(reverse("search"), {"q": long_query, "mode": "keyword"})
        page = response.content.decode()
        assert page.count("<mark>something</mark> of its own") == 2
        assert "500" not in re.sub(r"<[^>]+>", "", page)  # no "at most 500 characters"
        assert _formal(page) == []
        found = alice_client.get(reverse("search_json"), {"q": long_query, "mode": "keyword"})
        assert found.status_code == 200
        assert len(found.json()) == 2
