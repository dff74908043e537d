"""The Spanish pages read as written in Spanish: "pares" of passages (never "parejas"), the
pages' own "tú" in every message, Spanish examples in the search help, and no space left
between an inline <code> and the punctuation after it."""

import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from accounts.models import User
from tests.i18n.po_file import po_entries

PO = Path(__file__).resolve().parents[2] / "locale" / "es" / "LC_MESSAGES" / "django.po"
SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}
# Django's formal Spanish, which the pages never use.
FORMAL = re.compile(r"\b(usted|ustedes|introduzca|asegúrese|escoja|su contraseña)\b", re.IGNORECASE)


def _spanish(msgid: str) -> str:
    with translation.override("es"):
        return gettext(msgid)


def _text(html: str) -> str:
    """The words of a page as a reader sees them: tags gone, white space collapsed."""
    return " ".join(re.sub(r"<[^>]+>", "", html).split())


class CatalogueWordingTests:
    def test_it_calls_two_passages_a_pair_never_a_couple(self) -> None:
        couples = [e.msgid for e in po_entries(PO) for t in e.msgstr.values() if "pareja" in t]
        assert couples == []

    def test_it_never_speaks_as_usted(self) -> None:
        formal = [e.msgid for e in po_entries(PO) for t in e.msgstr.values() if FORMAL.search(t)]
        assert formal == []

    def test_it_words_the_connections_naturally(self) -> None:
        at_most = _spanish(
            "Here, at most %(per_book_pair)s pairs from the same two books, those Exogram is "
            "surest of; choose a book to see all of its pairs."
        )
        assert at_most.startswith("Aquí, como mucho %(per_book_pair)s pares de los mismos dos")
        assert "todos sus pares" in at_most
        likely = _spanish("%(percent)s%% likely related") % {"percent": 56}
        assert likely == "56\u00a0% de probabilidad de relación"
        assert _spanish("Date added") == "Fecha en que se añadió"
        assert _spanish("Done") == "Terminado"


@pytest.mark.django_db
class SpanishPageWordingTests:
    def test_the_search_help_gives_spanish_examples(
        self, alice: User, alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("search"), headers=SPANISH).content.decode()
        assert "<code>palacio O río</code>" in page
        assert "<code>autor:borges</code>" in page
        assert "palace" not in page

    def test_the_connections_page_says_what_a_connection_is_in_plain_words(
        self, alice: User, alice_client: Client
    ) -> None:
        # A long paragraph on the order of pairs "según el juez de pares": jargon.
        for headers, said in (
            ({}, "A connection is two passages from different books that say something alike"),
            (SPANISH, "Una conexión son dos pasajes de libros distintos que dicen algo parecido"),
        ):
            page = alice_client.get(reverse("connections"), headers=headers).content.decode()
            intro = _text(page.split("<h1>", 1)[1].split("</p>", 1)[0])
            assert said in intro
            assert "judge" not in intro
            assert "juez" not in intro
            assert len(intro.split()) < 72  # it was 73 words in English, 83 in Spanish

    def test_the_import_page_leaves_no_space_before_punctuation(
        self, alice: User, alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("import"), headers=SPANISH).content.decode()
        text = _text(page)
        assert "(en su carpeta .sdr), un zip de muchas carpetas .sdr o" in text
        assert "también los -wal y -shm: Libros guarda" in text
        assert "busca documents/My Clippings.txt. Si importas" in text
        # A space before a closing mark (".sdr" is a name, not a full stop).
        stray = re.findall(r".{20}\s(?:[),;:]|\.(?!\w))", text)
        assert stray == []

    def test_the_import_page_reads_the_same_in_english(
        self, alice: User, alice_client: Client
    ) -> None:
        text = _text(alice_client.get(reverse("import")).content.decode())
        assert "a book's metadata.epub.lua (in its .sdr folder), a zip of many .sdr" in text
        assert "Books keeps most recent highlights in the -wal file." in text
