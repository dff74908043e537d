import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Book, Highlight, Import
from tests.books.kindle import MEMORY_LIBRARY, clippings_file
from tests.conftest import PASSWORD


@pytest.mark.django_db
class DeleteAccountTests:
    def test_it_deletes_the_reader_and_all_their_data(
        self, alice: User, bob: User, alice_client: Client
    ) -> None:
        for reader in (alice, bob):
            clippings_import(reader=reader, data=clippings_file(*MEMORY_LIBRARY), file_name="c")
        assert alice_client.get(reverse("settings")).status_code == 200
        response = alice_client.post(
            reverse("delete_account"), {"confirm": "alice", "password": PASSWORD}
        )
        assert response.status_code == 302
        assert not User.objects.filter(username="alice").exists()
        assert not Highlight.objects.filter(reader_id=alice.pk).exists()
        assert not Book.objects.filter(reader_id=alice.pk).exists()
        assert not Import.objects.filter(reader_id=alice.pk).exists()
        assert Highlight.objects.filter(reader=bob).count() == 5  # bob keeps everything
        assert alice_client.get(reverse("library")).status_code == 302

    def test_it_suggests_exporting_the_library_first(self, alice_client: Client) -> None:
        for language, words in (("en", "export your library"), ("es", "exporta tu biblioteca")):
            page = alice_client.get(reverse("settings"), headers={"Accept-Language": language})
            section = page.content.decode().split('id="delete-heading"')[1]
            assert f'<a href="{reverse("library_export")}">{words}</a>' in section

    def test_it_needs_the_username_typed(self, alice: User, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("delete_account"), {"confirm": "bob", "password": PASSWORD}
        )
        assert response.status_code == 400
        assert "nothing was deleted" in response.content.decode()
        assert User.objects.filter(username="alice").exists()

    def test_it_needs_the_password(self, alice: User, alice_client: Client) -> None:
        # A session left open on a shared computer must not be enough to delete it all.
        for password in ("", "a guess"):
            data = {"confirm": "alice", "password": password}
            response = alice_client.post(reverse("delete_account"), data)
            assert response.status_code == 400
        assert "not your password" in response.content.decode()
        assert User.objects.filter(username="alice").exists()

    def test_anonymous_readers_are_sent_to_login(self, client: Client) -> None:
        assert client.get(reverse("settings")).status_code == 302
        assert client.post(reverse("delete_account")).status_code == 302


@pytest.mark.django_db
class DeleteAccountWordingTests:
    """Settings said everything is deleted "at once" ("se borran de inmediato") while a large
    account's deletion waited minutes behind embedding turns, its username still taken."""

    def test_it_says_a_large_library_goes_in_the_background_and_when_the_name_is_free(
        self, alice_client: Client
    ) -> None:
        for language, said, unsaid in (
            ("en", "in the background within a minute or so", "deleted at once"),
            ("es", "en segundo plano en un minuto o así", "se borran de inmediato"),
        ):
            page = alice_client.get(reverse("settings"), headers={"Accept-Language": language})
            section = page.content.decode().split('id="delete-heading"')[1]
            assert said in section
            assert unsaid not in section
        assert "Tu nombre de usuario vuelve a quedar libre cuando termina." in section


@pytest.mark.django_db
class DeleteAccountLanguageTests:
    """The confirmation came in the deleted reader's Spanish above the login page's English:
    it is said in the language of the page it is shown on."""

    def _delete(self, reader: User, client: Client, accept: str) -> str:
        reader.language = "es"
        reader.save(update_fields=["language"])
        response = client.post(
            reverse("delete_account"),
            {"confirm": reader.username, "password": PASSWORD},
            headers={"Accept-Language": accept},
            follow=True,
        )
        assert response.redirect_chain[-1][0] == reverse("login")
        return response.content.decode()

    def test_a_spanish_readers_confirmation_is_english_on_an_english_login_page(
        self, alice: User, alice_client: Client
    ) -> None:
        page = self._delete(alice, alice_client, "en")
        assert '<html lang="en"' in page
        assert "Your account and all its data are deleted." in page
        assert "Tu cuenta" not in page

    def test_it_is_spanish_on_a_spanish_login_page(self, alice: User, alice_client: Client) -> None:
        page = self._delete(alice, alice_client, "es")
        assert '<html lang="es"' in page
        assert "Tu cuenta y todos sus datos se han borrado." in page
