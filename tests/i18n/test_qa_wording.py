"""Wording a QA walk found wanting: the login error's "Both tell capitals from small
letters", "Email:" on the password reset beside "E-mail address" everywhere else, the words
deck's tangled intro, "all ready for connections" said of words that never connect, and
Spanish pages that put “felicidad” next to «qwzxv»."""

import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Highlight, Tag
from tests.books.kindle import BORGES, MEMORY_LIBRARY, Entry, clippings_file
from tests.i18n.po_file import po_entries

PO = Path(__file__).resolve().parents[2] / "locale" / "es" / "LC_MESSAGES" / "django.po"
SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", "", html).split())


@pytest.mark.django_db
class LoginErrorTests:
    def test_it_says_case_sensitive_plainly(self, alice: User, client: Client) -> None:
        data = {"username": "alice", "password": "not it"}
        page = client.post(reverse("login"), data).content.decode()
        assert "No account has that username and password. Both are case-sensitive." in page
        assert "capitals" not in page
        spanish = client.post(reverse("login"), data, headers=SPANISH).content.decode()
        assert "se distinguen mayúsculas y minúsculas" in spanish


@pytest.mark.django_db
class PasswordResetLabelTests:
    def test_the_field_is_the_e_mail_address_as_everywhere(self, client: Client) -> None:
        page = client.get(reverse("password_reset")).content.decode()
        assert ">E-mail address:</label>" in page
        assert ">Email:</label>" not in page
        spanish = client.get(reverse("password_reset"), headers=SPANISH).content.decode()
        assert ">Correo electrónico:</label>" in spanish


@pytest.mark.django_db
class WordsDeckIntroTests:
    def test_it_says_each_word_comes_in_its_sentence(self, alice: User) -> None:
        source = (PO.parents[3] / "templates" / "review" / "words.html").read_text()
        assert "each in the sentence you met it in when you highlighted that sentence too" in (
            source
        )
        assert "wherever you highlighted it too" not in source


@pytest.mark.django_db
class ReadyForConnectionsTests:
    def test_words_are_not_said_ready_for_connections(
        self, alice: User, alice_client: Client
    ) -> None:
        look_up = Entry(BORGES, "ostensibly", location="500-500")
        clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY, look_up), file_name="c.txt"
        )
        assert Highlight.objects.filter(reader=alice, is_word=True).count() == 1
        # The library read to its end, as the worker leaves it.
        Highlight.objects.filter(reader=alice).update(
            embedding_status=Highlight.EmbeddingStatus.DONE
        )
        home = _text(alice_client.get(reverse("home")).content.decode())
        assert "ready for connections" not in home
        assert "All 6 highlights ready; 0 connections found between their passages." in (home)
        assert "1 of your highlights is a word, which never connects." in home


@pytest.mark.django_db
class SpanishQuotesTests:
    def test_the_spanish_catalogue_quotes_with_angle_quotes_only(self) -> None:
        curly = [
            (entry.line, text)
            for entry in po_entries(PO)
            for text in entry.msgstr.values()
            if "“" in text or "”" in text
        ]
        assert curly == []

    def test_the_library_and_a_tag_page_quote_the_spanish_way(
        self, alice: User, alice_client: Client
    ) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
        library = alice_client.get(reverse("library"), {"q": "qwzxv"}, headers=SPANISH)
        assert "Ningún libro coincide con «qwzxv»." in _text(library.content.decode())
        tag = Tag.objects.create(reader=alice, name="felicidad")
        tag.highlights.add(Highlight.objects.filter(reader=alice)[0])
        page = alice_client.get(reverse("tag", args=[tag.name]), headers=SPANISH).content.decode()
        assert '<h1 class="tag-title">«felicidad»</h1>' in page
        english = alice_client.get(reverse("tag", args=[tag.name])).content.decode()
        assert '<h1 class="tag-title">“felicidad”</h1>' in english
