"""Messages the services write in English, shown in Spanish: an import's problem lines (a
KOReader file's Lua among them), a search notice, an embedding's waiting reason (the model's
own when it cannot load), a failed backup on /status/. The record stays English
(`books.wording`, `backups.wording`)."""

from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from accounts.models import User
from backups import wording as backup_wording
from backups.models import BackupRun
from backups.nightly import backup_nightly, folder_name
from books.embedding.profiles import MINILM
from books.embedding.spec import (
    E5_INSTALL_HINT,
    EMBEDDING_MODEL,
    INSTALL_HINT,
    EncoderUnavailable,
    read_verified,
)
from books.importing.koreader import ANNOTATION_NO_TEXT, parse_koreader_lua
from books.importing.services import clippings_import
from books.models import Highlight
from books.tasks import QUEUE_UNREACHABLE
from books.wording import _MESSAGES, _templates, translated
from tests.books.importing.devices import sidecar
from tests.books.library import library_of

SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}

# A sidecar whose second highlight has no text: a problem line of the import report.
_SIDECAR = sidecar("The Quiet Engine", "Chidi Okonkwo", ["Machines hum when they are lonely.", ""])


# A sidecar with code where data belongs: read, never run, and the entry is a problem.
_HOSTILE = b"""return {
    ["annotations"] = {
        [1] = {
            ["datetime"] = "2026-02-20 18:08:18",
            ["pageno"] = 21,
            ["text"] = "Machines hum when they are lonely.",
        },
        [2] = os.execute("rm -rf /"),
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

    def test_the_lua_readers_token_messages_are_in_spanish(self) -> None:
        result = parse_koreader_lua(b"local x = 1\nreturn {}")
        [problem] = result.problems
        assert problem.message == (
            "not KOReader data: 'local' where 'return {' was expected; the file was read, never run"
        )
        escaped = parse_koreader_lua(
            b'return { ["annotations"] = { [1] = { ["text"] = "a\\q b", ["pageno"] = 3 } } }'
        )
        [inside] = escaped.problems
        assert inside.message == (
            "annotation 1: an unknown escape '\\q' (only data is read, nothing is run)"
        )
        with translation.override("es"):
            assert translated(problem.message).startswith(
                "no son datos de KOReader: 'local' donde se esperaba 'return {'"
            )
            # Three messages deep: the annotation, the value, the token.
            assert translated(inside.message) == (
                "anotación 1: un escape desconocido '\\q' (solo se leen datos, no se ejecuta nada)"
            )

    def test_a_missing_model_is_said_in_spanish_with_its_file_and_fix(self, tmp_path: Path) -> None:
        missing = tmp_path / "model.onnx"
        with pytest.raises(EncoderUnavailable) as raised:
            read_verified(missing, None, EMBEDDING_MODEL, INSTALL_HINT)
        stored = str(raised.value)
        assert stored == (
            f"The embedding model is missing: looked for {missing}. Fix: {INSTALL_HINT}."
        )
        with translation.override("es"):
            said = translated(stored)
        assert said.startswith(f"Falta el modelo de significado: se ha buscado en {missing}.")
        assert "(con --force-reinstall si están instalados pero alterados)" in said

    def test_the_e5_hint_names_the_english_model_as_its_profile_does(self) -> None:
        # Written out for the catalogue: it must follow the profile's name.
        assert f"EXOGRAM_EMBEDDING_MODEL={MINILM.choice} " in E5_INSTALL_HINT

    def test_every_stored_message_has_a_spanish_wording(self) -> None:
        """A template added without its translation would be shown in English."""
        # The same in both languages: only placeholders and punctuation.
        same = {"%(name)s: %(problem)s"}
        pairs = _MESSAGES.plural_pairs()
        in_pairs = {template for pair in pairs for template in pair}
        with translation.override("es"):
            untranslated = [
                t
                for t in _templates()
                if t not in same and t not in in_pairs and translation.gettext(t) == t
            ]
            untranslated += [
                pair[n > 1]
                for pair in pairs
                for n in (1, 2)
                if translation.ngettext(*pair, n) == pair[n > 1]
            ]
        assert untranslated == []
        assert pairs  # the messages that count something
        assert len(_templates()) > 50
        backup_same = {"%(kind)s: %(error)s"}
        with translation.override("es"):
            untranslated = [
                t
                for t in backup_wording._templates()
                if t not in backup_same and translation.gettext(t) == t
            ]
        assert untranslated == []
        assert len(backup_wording._templates()) == 5


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

    def test_a_model_that_cannot_load_is_explained_in_spanish_on_the_highlight(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        clippings_import(reader=alice, data=_SIDECAR, file_name="metadata.epub.lua")
        highlight = Highlight.objects.get(reader=alice)
        with pytest.raises(EncoderUnavailable) as raised:
            read_verified(tmp_path / "model.onnx", None, EMBEDDING_MODEL, INSTALL_HINT)
        Highlight.objects.filter(pk=highlight.pk).update(
            embedding_status=Highlight.EmbeddingStatus.PENDING, embedding_error=str(raised.value)
        )
        url = reverse("highlight", args=[highlight.code])

        page = alice_client.get(url, headers=SPANISH).content.decode()
        assert "Falta el modelo de significado" in page
        assert "is missing" not in page
        assert "The embedding model is missing" in alice_client.get(url).content.decode()

    def test_a_hostile_sidecars_problem_is_in_spanish_on_the_report(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = clippings_import(reader=alice, data=_HOSTILE, file_name="metadata.epub.lua")
        [problem] = the_import.problems
        assert "(only data is read, nothing is run)" in problem["message"]
        url = reverse("import_report", args=[the_import.code])

        page = alice_client.get(url, headers=SPANISH).content.decode()
        assert "(solo se leen datos, no se ejecuta nada)" in page
        assert "nothing is run" not in page

    def test_a_failed_backup_is_in_spanish_on_the_status_page(self, tmp_path: Path) -> None:
        now = datetime(2026, 12, 4, 3, 30, tzinfo=UTC)
        taken = tmp_path / folder_name("nightly", now)
        taken.mkdir()
        (taken / "left-over").write_text("something")
        run = backup_nightly(folder=tmp_path, now=now)
        assert run.status == BackupRun.Status.FAILED
        assert run.error == (
            f"BackupError: {taken} already exists and is not empty; name a new folder"
        )
        keeper = User.objects.create_user("keeper", is_staff=True)
        client = Client()
        client.force_login(keeper)

        page = client.get(reverse("status"), headers=SPANISH).content.decode()
        assert f"BackupError: {taken} ya existe y no está vacía; indica una carpeta nueva" in page
        assert "name a new folder" not in page
