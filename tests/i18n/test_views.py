"""Pages and e-mails in Spanish: from the browser's Accept-Language or the reader's setting."""

import re
from datetime import UTC, date, datetime

import pytest
from django.core import mail
from django.core.mail import EmailMultiAlternatives
from django.test import Client
from django.urls import reverse
from django.utils import translation
from django.utils.formats import date_format

from accounts.models import User
from books.importing.services import clippings_import
from review.models import ReviewSettings
from review.services import review_emails_send
from tests.books.kindle import BORGES, Entry, clippings_file
from tests.books.library import library_of

SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}


@pytest.mark.django_db
class BrowserLanguageTests:
    def test_it_serves_the_login_page_in_spanish_to_a_spanish_browser(self, client: Client) -> None:
        response = client.get(reverse("login"), headers=SPANISH)
        page = response.content.decode()
        assert response["Content-Language"] == "es"
        assert '<html lang="es">' in page
        assert "<h1>Iniciar sesión</h1>" in page
        assert "¿Has olvidado tu contraseña?" in page
        assert "Nombre de usuario" in page  # Django's own form labels come in Spanish too

    def test_it_refuses_a_wrong_password_in_the_pages_own_spanish(
        self, client: Client, alice: User
    ) -> None:
        response = client.post(
            reverse("login"), {"username": "alice", "password": "nope"}, headers=SPANISH
        )
        page = response.content.decode()
        assert "Ninguna cuenta tiene ese nombre de usuario y esa contraseña." in page
        assert "introduzca" not in page  # Django's own, formal wording

    def test_it_keeps_english_without_a_spanish_browser(self, client: Client) -> None:
        for headers in ({}, {"Accept-Language": "fr-FR,de;q=0.8"}):
            response = client.get(reverse("login"), headers=headers)
            page = response.content.decode()
            assert response["Content-Language"] == "en"
            assert '<html lang="en">' in page
            assert "<h1>Log in</h1>" in page

    def test_it_serves_a_readers_pages_in_spanish(self, alice: User, alice_client: Client) -> None:
        library_of(alice, 3)
        home = alice_client.get(reverse("home"), headers=SPANISH).content.decode()
        assert "Tu memoria de lectura" in home
        assert ">Biblioteca</a>" in home
        library = alice_client.get(reverse("library"), headers=SPANISH).content.decode()
        assert "Descargar tu biblioteca:" in library
        assert "2 subrayados" in library  # Ficciones holds two of the three
        connections = alice_client.get(reverse("connections"), headers=SPANISH).content.decode()
        # One sentence to translate, not seven pieces stitched in English order.
        assert (
            "Una conexión son dos pasajes de libros distintos que dicen algo parecido: la "
            "<strong>misma idea</strong>, o un tema <strong>relacionado</strong>"
        ) in connections
        assert f'<a href="{reverse("words")}">tus palabras</a>, y nunca se conectan.' in connections

    def test_it_serves_the_kept_book_list_in_the_language_asked(
        self, alice: User, alice_client: Client
    ) -> None:
        library_of(alice, 3)
        url = reverse("library")
        english = alice_client.get(url).content.decode()
        spanish = alice_client.get(url, headers=SPANISH).content.decode()
        again = alice_client.get(url).content.decode()

        assert "2 highlights" in english
        assert "2 subrayados" in spanish
        assert "2 highlights" in again
        assert "subrayados" not in again

    def test_it_localizes_dates(self, alice: User, alice_client: Client) -> None:
        highlight = library_of(alice, 1)[0]
        highlight.added_at = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
        highlight.save(update_fields=["added_at"])
        url = highlight.get_absolute_url()
        assert "4 Dec 2026" in alice_client.get(url).content.decode()
        page = alice_client.get(url, headers=SPANISH).content.decode()
        # Spanish writes a month's abbreviation in small letters; English capitalises it.
        assert "añadido el 4 dic 2026" in page
        assert "Dic" not in page

    def test_it_writes_dates_and_times_each_languages_way(self) -> None:
        moment = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
        with translation.override("es"):
            assert date_format(moment) == "4 dic 2026"
            assert date_format(moment, "DATETIME_FORMAT") == "4 dic 2026, 09:30"
        with translation.override("en"):
            assert date_format(moment) == "4 Dec 2026"
            assert date_format(moment, "DATETIME_FORMAT") == "4 Dec 2026, 09:30"


@pytest.mark.django_db
class ReaderLanguageTests:
    def test_it_uses_the_readers_setting_over_the_browsers(
        self, alice: User, alice_client: Client
    ) -> None:
        alice.language = "es"
        alice.save(update_fields=["language"])
        page = alice_client.get(reverse("settings")).content.decode()
        assert "<h1>Ajustes</h1>" in page
        alice.language = "en"
        alice.save(update_fields=["language"])
        page = alice_client.get(reverse("settings"), headers=SPANISH).content.decode()
        assert "<h1>Settings</h1>" in page

    def test_it_saves_the_language_on_the_settings_page(
        self, alice: User, alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("settings")).content.decode()
        assert 'name="language"' in page
        response = alice_client.post(reverse("language_change"), {"language": "es"}, follow=True)
        alice.refresh_from_db()
        assert alice.language == "es"
        assert "Idioma guardado." in response.content.decode()
        alice_client.post(reverse("language_change"), {"language": ""})
        alice.refresh_from_db()
        assert alice.language == ""  # back to following the browser

    def test_it_refuses_a_language_it_does_not_offer(
        self, alice: User, alice_client: Client
    ) -> None:
        response = alice_client.post(reverse("language_change"), {"language": "fr"})
        assert response.status_code == 400
        alice.refresh_from_db()
        assert alice.language == ""

    def test_it_changes_only_the_logged_in_readers_language(
        self, alice: User, bob: User, bob_client: Client
    ) -> None:
        # The view takes no id: whatever bob posts, only his own row changes.
        bob_client.post(reverse("language_change"), {"language": "es"})
        alice.refresh_from_db()
        bob.refresh_from_db()
        assert (alice.language, bob.language) == ("", "es")

    def test_it_sends_anonymous_readers_to_login(self, client: Client) -> None:
        response = client.post(reverse("language_change"), {"language": "es"})
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class SpanishEmailTests:
    def test_it_sends_the_daily_review_in_the_readers_language(self, alice: User) -> None:
        alice.email = alice.verified_email = "alice@example.org"
        alice.language = "es"
        alice.save()
        ReviewSettings.objects.create(reader=alice, daily_email=True)
        library_of(alice, 3)
        assert review_emails_send(today=date(2026, 12, 4)) == 1
        message = mail.outbox[0]
        assert message.subject == "Tu repaso diario: 3 subrayados"
        assert message.body.startswith("Tu repaso diario, viernes 4 de diciembre")
        assert "Recibes esto porque activaste el correo del repaso diario." in message.body
        assert isinstance(message, EmailMultiAlternatives)
        html = message.alternatives[0][0]
        assert "Darse de baja" in str(html)

    def test_it_sends_the_password_reset_in_the_readers_language(
        self, alice: User, client: Client
    ) -> None:
        alice.email = alice.verified_email = "alice@example.org"
        alice.language = "es"
        alice.save()
        client.post(reverse("password_reset"), {"email": "alice@example.org"})
        message = mail.outbox[0]
        assert message.subject == "Restablece tu contraseña de Exogram"
        assert "la cuenta de Exogram «alice»" in message.body

    def test_it_follows_the_page_without_a_setting(self, alice: User, client: Client) -> None:
        alice.email = alice.verified_email = "alice@example.org"
        alice.save()
        client.post(reverse("password_reset"), {"email": "alice@example.org"}, headers=SPANISH)
        client.post(reverse("password_reset"), {"email": "alice@example.org"})
        spanish, english = mail.outbox
        assert spanish.subject == "Restablece tu contraseña de Exogram"
        assert english.subject == "Reset your Exogram password"


@pytest.mark.django_db
class WordsPageTests:
    def test_it_names_every_kind_of_word_in_spanish(
        self, alice: User, alice_client: Client
    ) -> None:
        entries = [
            Entry(BORGES, "ineffable", location="500"),  # a word looked up
            Entry(BORGES, "Why Incentives Fail", location="510"),  # a heading
            Entry(BORGES, "continue to", location="520"),  # a piece of a sentence
        ]
        clippings_import(reader=alice, data=clippings_file(*entries), file_name="c.txt")
        page = alice_client.get(reverse("words"), headers=SPANISH).content.decode()
        assert "buscada · en el mazo" in page
        assert "un encabezado" in page
        assert "un fragmento de frase" in page
        assert not re.search(r">\s*(heading|fragment|look-up)\s*<", page)
        english = alice_client.get(reverse("words")).content.decode()
        assert "a heading" in english
        assert "a piece of a sentence" in english
