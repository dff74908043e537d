"""The home page while a background import reads and saves a large file: it says so (with
how many it is saving) instead of "Your library is empty", which invited a second upload."""

import re
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.connections.selectors import library_connections
from books.embedding.encoder import active_model_id
from books.embedding.pipeline import embedding_turn_take, highlights_embed
from books.importing import background
from books.importing.clippings import parse_clippings
from books.importing.screening import screen_entries
from books.importing.services import clippings_import
from books.library_cache import library_version_bump
from books.models import Connection, Highlight, Import
from books.tasks import embed_highlights, run_import
from tests.books.kindle import MEMORY_LIBRARY, Entry, clippings_file
from tests.books.library import pending_backlog

DATA = clippings_file(*MEMORY_LIBRARY)


@pytest.fixture
def small_inline_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any file goes to the background (a real 2 MB file would only make the test slow)."""
    monkeypatch.setattr("books.importing.background.IMPORT_INLINE_MAX_BYTES", 100)


def _upload(data: bytes) -> dict[str, SimpleUploadedFile]:
    return {"file": SimpleUploadedFile("My Clippings.txt", data, content_type="text/plain")}


def _file(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, DATA, content_type="application/octet-stream")


def _text(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub("<[^>]+>", "", page))


EMPTY = "Your library is empty."


@pytest.mark.django_db
@pytest.mark.usefixtures("small_inline_limit")
class HomeDuringImportTests:
    def test_the_home_page_never_shows_the_empty_state_while_an_import_runs(
        self, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        alice_client.post(reverse("import"), _upload(DATA))
        home = alice_client.get(reverse("home")).content.decode()
        assert "Importing My Clippings.txt: waiting for a worker…" in home
        assert EMPTY not in home
        seen: list[str] = []

        def home_while(step: Any) -> Any:
            # The real step, with the home page read as it begins.
            def step_seen(*args: Any, **kwargs: Any) -> Any:
                seen.append(alice_client.get(reverse("home")).content.decode())
                return step(*args, **kwargs)

            return step_seen

        monkeypatch.setattr(background, "parse_in_pieces", home_while(background.parse_in_pieces))
        saving = home_while(background.parsed_clippings_save)
        monkeypatch.setattr(background, "parsed_clippings_save", saving)
        assert run_import(Import.objects.get().pk) == Import.Status.DONE
        reading, saving_page = seen
        assert "Importing My Clippings.txt: reading the file…" in reading
        # Bookmarks are never saved; the note goes on its highlight, but it is said.
        assert "Importing My Clippings.txt: saving 5 highlights and 1 note…" in saving_page
        assert all(EMPTY not in page for page in seen)
        assert all('class="button" href="/import/"' not in page for page in seen)
        done = alice_client.get(reverse("home")).content.decode()
        assert 'id="import-stage"' not in done
        assert EMPTY not in done

    def test_the_home_page_polls_the_import_and_reloads_when_it_is_done(
        self, alice_client: Client
    ) -> None:
        alice_client.post(reverse("import"), _upload(DATA))
        the_import = Import.objects.get()
        poll = reverse("import_progress", args=[the_import.code]) + "?under_way=1&home=1"
        home = alice_client.get(reverse("home")).content.decode()
        assert 'hx-get="' + poll.replace("&", "&amp;") + '"' in home
        stage = alice_client.get(poll).content.decode()
        assert "Importing My Clippings.txt: waiting for a worker…" in stage
        assert f'href="{the_import.get_absolute_url()}">See the import' in stage
        run_import(the_import.pk)
        assert alice_client.get(poll).headers["HX-Refresh"] == "true"

    def test_the_report_says_how_many_it_is_saving(self, alice_client: Client) -> None:
        alice_client.post(reverse("import"), _upload(DATA))
        the_import = Import.objects.get()
        Import.objects.filter(pk=the_import.pk).update(
            status=Import.Status.SAVING,
            counts=background.saving_counts(screen_entries(parse_clippings(DATA))),
            finished_at=timezone.now() - timedelta(minutes=2),
        )
        report = alice_client.get(the_import.get_absolute_url()).content.decode()
        assert "saving 5 highlights and 1 note…" in report
        assert "Saving for 2\xa0minutes" in report
        assert "See the import" not in report  # the report is the import

    def test_several_queued_files_are_counted_and_the_one_under_way_is_followed(
        self, alice_client: Client
    ) -> None:
        # Four Kobo databases queued at once: the home page named only one of them.
        for name in ("a.sqlite", "b.sqlite", "c.sqlite", "d.sqlite"):
            alice_client.post(reverse("import"), {"file": _file(name)})
        Import.objects.filter(file_name="c.sqlite").update(status=Import.Status.READING)

        home = _text(alice_client.get(reverse("home")).content.decode())

        assert "Importing 4 files: 1 under way, 3 waiting for a worker. See every import" in home
        assert "Importing c.sqlite: reading the file…" in home
        page = alice_client.get(reverse("home")).content.decode()
        assert 'href="/import/">See every import</a>' in page

    def test_it_says_so_in_spanish(self, alice_client: Client) -> None:
        alice_client.post(reverse("import"), {"file": _file("a.sqlite")})
        alice_client.post(reverse("import"), {"file": _file("b.sqlite")})
        home = alice_client.get(reverse("home"), headers={"accept-language": "es"})
        assert (
            "Importando 2 archivos: 2 esperando a un proceso de fondo. Ver todas las importaciones"
            in _text(home.content.decode())
        )

    def test_one_file_is_not_counted(self, alice_client: Client) -> None:
        alice_client.post(reverse("import"), _upload(DATA))
        assert 'id="imports-under-way"' not in alice_client.get(reverse("home")).content.decode()

    def test_another_readers_import_is_not_on_the_home_page(
        self, alice_client: Client, bob_client: Client
    ) -> None:
        alice_client.post(reverse("import"), _upload(DATA))
        home = bob_client.get(reverse("home")).content.decode()
        assert "Importing" not in home
        assert EMPTY in home


@pytest.mark.django_db
@pytest.mark.usefixtures("small_inline_limit")
class PlannerAfterALargeImportTests:
    def test_the_planner_counts_the_highlights_a_large_import_saved(
        self, alice_client: Client
    ) -> None:
        # Left to autovacuum, the planner saw a table of 110,938 fresh pending rows as it
        # was before, and each embedding turn sorted them all (docs/operations.md).
        alice_client.post(reverse("import"), _upload(DATA))
        assert run_import(Import.objects.get().pk) == Import.Status.DONE
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'books_highlight'")
            (estimated,) = cursor.fetchone()
        assert estimated == Highlight.objects.count() == 5


@pytest.mark.django_db
class HomeWhenReadyTests:
    def test_it_says_the_library_is_ready_instead_of_a_full_bar(
        self, alice: User, alice_client: Client
    ) -> None:
        clippings_import(reader=alice, data=DATA, file_name="c.txt")
        under_way = alice_client.get(reverse("home")).content.decode()
        # Under way, in the reader's words: ready for connections, still to go; a bar.
        # Never "read": a reader took "5,484 read / 250 still to read" as what they had read.
        assert "<strong>0 of 5</strong> highlights ready" not in under_way  # starting
        assert '0</span><span class="label">ready</span>' in under_way
        assert "Starting</strong>: 5 highlights waiting for the model." in under_way
        assert '5</span><span class="label">still to go</span>' in under_way
        assert "embedded" not in _text(under_way)
        assert not re.search(r"\bread\b", _text(under_way))
        assert 'role="progressbar"' in under_way
        mine = Highlight.objects.filter(reader=alice)
        highlights_embed(ids=list(mine.values_list("pk", flat=True)))
        found = library_connections(alice).count()
        for url in (reverse("home"), reverse("library_progress")):
            done = _text(alice_client.get(url).content.decode())
            assert f"All 5 highlights ready for connections; {found} connections found." in done
            assert "still to go" not in done
            assert not re.search(r"\bread\b", done)
        home = alice_client.get(reverse("home")).content.decode()
        assert 'role="progressbar"' not in home
        assert "hx-trigger" not in home
        assert _text(home).count("ready for connections;") == 1

    def test_the_connections_are_counted_once_per_version_of_the_library(
        self, alice: User, alice_client: Client
    ) -> None:
        clippings_import(reader=alice, data=DATA, file_name="c.txt")
        Highlight.objects.update(embedding_status=Highlight.EmbeddingStatus.DONE)
        Connection.objects.all().delete()
        said = "All 5 highlights ready for connections; {} connections found."
        assert said.format(0) in _text(alice_client.get(reverse("home")).content.decode())
        passages = Highlight.objects.filter(reader=alice, is_word=False).order_by("pk")
        first = passages.first()
        assert first is not None
        other = passages.exclude(book=first.book).first()
        assert other is not None
        Connection.objects.create(
            reader=alice, highlight_a=first, highlight_b=other, distance=0.1, probability=0.9,
            strength=Connection.Strength.RELATED, embedding_model="m",
        )  # fmt: skip
        # Counted under this version of the library: the pair written behind its back waits
        # for the library's next change, as every other cached read does.
        assert said.format(0) in _text(alice_client.get(reverse("home")).content.decode())
        library_version_bump(reader_ids={alice.pk})
        home = _text(alice_client.get(reverse("home")).content.decode())
        assert "All 5 highlights ready for connections; 1 connection found." in home

    def test_one_highlight_is_not_all_one_highlight(
        self, alice: User, alice_client: Client
    ) -> None:
        clippings_import(reader=alice, data=clippings_file(MEMORY_LIBRARY[0]), file_name="c.txt")
        Highlight.objects.update(embedding_status=Highlight.EmbeddingStatus.DONE)
        home = _text(alice_client.get(reverse("home")).content.decode())
        assert "1 highlight ready for connections; 0 connections found." in home
        assert "All 1" not in home

    def test_the_link_to_the_connections_follows_them_not_the_image_highlights(
        self, alice: User, alice_client: Client
    ) -> None:
        image = Entry(MEMORY_LIBRARY[0].title, "", location="500")
        clippings_import(reader=alice, data=DATA + clippings_file(image)[3:], file_name="c.txt")
        embed_highlights(list(Highlight.objects.values_list("pk", flat=True)))
        passages = Highlight.objects.filter(reader=alice, is_word=False).exclude(text="")
        first = passages.order_by("pk").first()
        assert first is not None
        other = passages.exclude(book=first.book).first()
        assert other is not None
        Connection.objects.create(
            reader=alice, highlight_a=first, highlight_b=other, distance=0.1, probability=0.9,
            strength=Connection.Strength.RELATED, embedding_model="m",
        )  # fmt: skip
        library_version_bump(reader_ids={alice.pk})

        home = alice_client.get(reverse("home")).content.decode()

        link = f'<a href="{reverse("connections")}">See them</a>'
        assert f" found. {link}. 1 highlight has no text" in " ".join(home.split())
        image_said = (
            "1 highlight has no text (an image, perhaps): kept on its book\u2019s page, with "
            "nothing to connect."
        )
        assert image_said in home
        after = home.split(image_said, 1)[1].split("</p>", 1)[0]
        assert "<a " not in after

    def test_it_says_so_in_spanish(self, alice: User, alice_client: Client) -> None:
        clippings_import(reader=alice, data=DATA, file_name="c.txt")
        Highlight.objects.update(embedding_status=Highlight.EmbeddingStatus.DONE)
        home = alice_client.get(reverse("home"), HTTP_ACCEPT_LANGUAGE="es-ES").content.decode()
        said = "Todo listo con 5 subrayados: <strong>0</strong> conexiones encontradas."
        assert said in home
        assert "Lectura" not in home
        assert "leíd" not in home


def _a_turn_takes(ids: list[int]) -> None:
    model_id = active_model_id()
    assert model_id
    assert embedding_turn_take(ids=ids, model_id=model_id) == ids


@pytest.mark.django_db
@pytest.mark.usefixtures("small_inline_limit")
class WaitingForAWorkerTests:
    """A queued upload says what it waits for: a worker's turn of embedding (at most
    EXOGRAM_EMBEDDING_TURN_SECONDS and a group), when one is under way, instead of
    "shortly" while it waited six minutes."""

    TURN = "it starts as soon as a worker finishes its current turn of embedding."
    FREE = "a worker starts on it as soon as one is free."

    def _stage(self, client: Client, language: str = "en") -> str:
        the_import = Import.objects.get()
        poll = reverse("import_progress", args=[the_import.code]) + "?under_way=1"
        headers = {"accept-language": language}
        stage = client.get(poll, headers=headers).content.decode()
        report = client.get(the_import.get_absolute_url(), headers=headers).content.decode()
        home = client.get(reverse("home"), headers=headers).content.decode()
        assert len({_text(page).count("Your file is saved") for page in (stage, report)}) == 1
        return " ".join(_text(page) for page in (stage, report, home))

    def test_it_says_it_waits_for_a_turn_of_embedding_when_one_is_under_way(
        self, alice_client: Client, bob: User
    ) -> None:
        alice_client.post(reverse("import"), _upload(DATA))
        assert self.FREE in self._stage(alice_client)
        assert self.TURN not in self._stage(alice_client)
        _a_turn_takes(pending_backlog(bob, 3))  # a worker's turn embeds bob's highlights
        pages = self._stage(alice_client)
        assert pages.count(self.TURN) == 3  # the poll, the report and the home page
        assert self.FREE not in pages
        spanish = self._stage(alice_client, "es")
        assert "empieza en cuanto un proceso de fondo termine su turno actual" in spanish

    def test_over_rabbitmq_it_does_not_promise_the_next_turn(
        self, alice_client: Client, bob: User, settings: Any
    ) -> None:
        # RabbitMQ picks among the queues at random: an upload may wait for a few turns.
        settings.CELERY_BROKER_URL = "amqp://guest:guest@127.0.0.1:5672//"
        alice_client.post(reverse("import"), _upload(DATA))
        _a_turn_takes(pending_backlog(bob, 3))
        pages = self._stage(alice_client)
        assert self.FREE in pages
        assert self.TURN not in pages
