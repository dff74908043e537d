"""Messages the services write in English, shown in Spanish: an import's problem lines, a
search notice, an embedding's waiting reason. The record stays English (`books.wording`)."""

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from accounts.models import User
from books.importing.koreader import ANNOTATION_NO_TEXT
from books.importing.services import clippings_import
from books.models import Highlight
from books.tasks import QUEUE_UNREACHABLE
from books.wording import _templates, translated
from tests.books.library import library_of

SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}

# A sidecar whose second highlight has no text: a problem line of the import report.
_SIDECAR = b"""return {
    ["annotations"] = {
        [1] = {
            ["datetime"] = "2026-02-20 18:08:18",
            ["pageno"] = 21,
            ["pos0"] = "/body/DocFragment[7]/body/div/p[12]/text().14",
            ["pos1"] = "/body/DocFragment[7]/body/div/p[12]/text().48",
            ["text"] = "Machines hum when they are lonely.",
        },
        [2] = {
            ["datetime"] = "2026-02-20 18:09:00",
            ["pageno"] = 22,
            ["pos0"] = "/body/DocFragment[7]/body/div/p[14]/text().0",
            ["text"] = "",
        },
    },
    ["doc_props"] = { ["authors"] = "Chidi Okonkwo", ["title"] = "The Quiet Engine" },
}
"""


class WordingTests:
    def test_it_says_a_stored_message_and_the_message_inside_it_in_spanish(self) -> None:
        inner = ANNOTATION_NO_TEXT % {"key": 2}
        stored = f"Tidal.sdr/metadata.epub.lua: {inner}"
        with translation.override("es"):
            assert translated(stored) == (
                "Tidal.sdr/metadata.epub.lua: anotación 2: un subrayado sin texto"
            )
            assert translated("Something no template says.") == "Something no template says."
        with translation.override("en"):
            assert translated(stored) == stored

    def test_every_stored_message_has_a_spanish_wording(self) -> None:
        """A template added without its translation would be shown in English."""
        # The same in both languages: only placeholders and punctuation.
        same = {"%(name)s: %(problem)s"}
        with translation.override("es"):
            untranslated = [
                t for t in _templates() if t not in same and translation.gettext(t) == t
            ]
        assert untranslated == []
        assert len(_templates()) > 50


@pytest.mark.django_db
class SpanishServiceMessageTests:
    def test_the_import_report_lists_a_problem_in_spanish(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = clippings_import(reader=alice, data=_SIDECAR, file_name="metadata.epub.lua")
        assert the_import.problems[0]["message"] == "annotation 2: a highlight without text"
        url = reverse("import_report", args=[the_import.code])

        page = alice_client.get(url, headers=SPANISH).content.decode()
        assert "anotación 2: un subrayado sin texto" in page
        assert "a highlight without text" not in page
        english = alice_client.get(url).content.decode()
        assert "annotation 2: a highlight without text" in english

    def test_a_search_notice_is_in_spanish(self, alice: User, alice_client: Client) -> None:
        library_of(alice, 2)
        url = reverse("search") + "?q=memoria+author:nadie"
        page = alice_client.get(url, headers=SPANISH).content.decode()
        assert "Ninguno de tus libros coincide con author:nadie." in page
        assert "No book of yours matches" not in page
        assert "No book of yours matches author:nadie." in alice_client.get(url).content.decode()

    def test_a_waiting_reason_is_in_spanish(self, alice: User, alice_client: Client) -> None:
        the_import = clippings_import(reader=alice, data=_SIDECAR, file_name="metadata.epub.lua")
        Highlight.objects.filter(reader=alice).update(
            embedding_status=Highlight.EmbeddingStatus.PENDING, embedding_error=QUEUE_UNREACHABLE
        )
        url = reverse("import_report", args=[the_import.code])

        page = alice_client.get(url, headers=SPANISH).content.decode()
        assert "El procesado se retrasa: no se puede acceder a la cola de tareas." in page
        assert "the task queue cannot be reached" not in page
        assert "the task queue cannot be reached" in alice_client.get(url).content.decode()
