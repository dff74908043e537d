"""The restore drill: a whole library is backed up, wiped, restored, and comes back the same,
row for row; a reader logs in and sees the same pages. Then the same against a PostgreSQL
server reached over TCP through DATABASE_URL."""

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, date, datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.urls import reverse

from accounts.models import User
from affinity.services import sharing_update
from api.services import api_token_create
from backups.services import DUMP, MANIFEST
from books.importing.services import clippings_import
from books.models import Book, Connection, Highlight
from books.services import highlight_favourite_toggle, highlight_note_update, highlight_tag
from review.scheduler import Answer
from review.services import review_answer, review_queue
from tests.backups.tables import table_rows
from tests.books.importing.devices import sidecar
from tests.conftest import PASSWORD
from tests.external_postgres import ExternalPostgres, external_postgres
from tests.test_embedded_postgres import private_data_dir
from tests.worker import ROOT

# Passages that say the same things in two books, so that connections are made.
PAIRS = [
    ("Memory is the treasure and the guardian of all things.",
     "What we remember guards everything we treasure."),
    ("A library is an infinite sphere whose centre is any hexagon.",
     "The library is a sphere without end, centred on every room."),
    ("Reading is a conversation with the dead.",
     "To read is to talk with those who have died."),
    ("Forgetting is the price of thinking.",
     "To think, one has to forget."),
]  # fmt: skip


def _clippings(title: str, texts: list[str]) -> bytes:
    entries = [
        f"{title}\r\n- Your Highlight on Location {10 * n}-{10 * n + 2} | Added on "
        f"Monday, 3 March 2025 10:{n:02d}:00\r\n\r\n{text}\r\n==========\r\n"
        for n, text in enumerate(texts, start=1)
    ]
    return "".join(entries).encode()


# A KOReader sidecar: its highlight carries the device's position (Highlight.position).
_SIDECAR = sidecar("The Quiet Engine", "Chidi Okonkwo", ["Machines hum when they are lonely."])


def _build_library() -> dict[str, str]:
    """Three readers with imports, notes, tags, favourites, review state, connections,
    sharing and API tokens. Returns alice's token."""
    readers = [User.objects.create_user(name, password=PASSWORD) for name in ("alice", "bob")]
    User.objects.create_superuser("keeper", password=PASSWORD)
    for n, reader in enumerate(readers):
        first = [pair[0] for pair in PAIRS] + [f"{reader.username} noted page {n} twice."]
        second = [pair[1] for pair in PAIRS]
        clippings_import(reader=reader, data=_clippings("Ficciones (Borges)", first),
                         file_name="My Clippings.txt")  # fmt: skip
        clippings_import(reader=reader, data=_clippings("On Memory (Sacks)", second),
                         file_name="More Clippings.txt")  # fmt: skip
        highlight = Highlight.objects.filter(reader=reader).order_by("pk").first()
        assert highlight is not None
        highlight_note_update(highlight=highlight, note="The sentence I keep coming back to.")
        highlight_tag(highlight=highlight, name="memory")
        highlight_favourite_toggle(highlight=highlight)
        today = date(2026, 12, 1)
        cards = review_queue(reader=reader, today=today)
        review_answer(card=cards[0], answer=Answer.KEEP, today=today,
                      now=datetime(2026, 12, 1, 9, tzinfo=UTC))  # fmt: skip
        sharing_update(reader=reader, discoverable=True, display_name=reader.username.title(),
                       excluded_books=[])  # fmt: skip
    clippings_import(reader=readers[0], data=_SIDECAR, file_name="metadata.epub.lua")
    _, raw = api_token_create(reader=readers[0], name="my script")
    return {"token": raw}


CSRF = re.compile(
    r'(name="csrfmiddlewaretoken" value="|csrf-token" content="|X-CSRFToken": ")[^"]+'
)


def _pages(client: Client) -> dict[str, str]:
    alice = User.objects.get(username="alice")
    highlight = Highlight.objects.filter(reader=alice, note__gt="").get()
    book = Book.objects.filter(reader=alice).order_by("title").first()
    assert book is not None
    urls = [
        reverse("library"), reverse("connections"), reverse("tags"), reverse("words"),
        reverse("highlight", args=[highlight.code]), reverse("book", args=[book.code]),
        reverse("tag", args=["memory"]), reverse("api_tokens"), reverse("sharing_settings"),
        reverse("search") + "?q=memory",
    ]  # fmt: skip
    pages = {}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        pages[url] = CSRF.sub(r"\1…", response.content.decode())
    return pages


def _logged_in() -> Client:
    client = Client()
    response = client.post(reverse("login"), {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302, "alice could not log in"
    return client


def _api_books(token: str) -> object:
    response = Client().get(reverse("api_books"), headers={"authorization": f"Bearer {token}"})
    assert response.status_code == 200
    return response.json()


@pytest.mark.django_db(transaction=True)
class RestoreDrillTests:
    def test_it_brings_back_every_row_and_the_same_pages(
        self, tmp_path: Path, settings: object
    ) -> None:
        data_dir = tmp_path / "data"
        data_dir.mkdir()
        (data_dir / "secret_key").write_text(settings.SECRET_KEY + "\n")  # type: ignore[attr-defined]
        settings.EXOGRAM_DATA_DIR = data_dir  # type: ignore[attr-defined]
        token = _build_library()["token"]
        assert Connection.objects.count() > 0
        assert not Highlight.objects.filter(embedding__isnull=True).exists()
        api = _api_books(token)  # first: it stamps the token as used
        pages = _pages(_logged_in())
        positions = sorted(Highlight.objects.exclude(position="").values_list("pk", "position"))
        assert positions  # the device's position is in the rows the checksums cover
        before = table_rows()

        backup = tmp_path / "backup"
        call_command("backup", to=backup, stdout=StringIO())
        manifest = json.loads((backup / MANIFEST).read_text())
        assert manifest["counts"] == {table: count for table, (count, _) in before.items()}
        assert manifest["secret_key"] == "file"
        assert ("books", "0001_initial") in {
            (app, name) for app, names in manifest["migrations"].items() for name in names
        }

        with pytest.raises(CommandError, match="is not empty"):
            call_command("restore", backup)

        with connection.cursor() as cursor:  # the wipe: an empty database
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        (data_dir / "secret_key").unlink()
        call_command("restore", backup, stdout=StringIO())

        assert table_rows() == before
        assert (
            sorted(Highlight.objects.exclude(position="").values_list("pk", "position"))
            == positions
        )
        assert (data_dir / "secret_key").read_text().strip() == settings.SECRET_KEY  # type: ignore[attr-defined]
        assert _pages(_logged_in()) == pages
        assert _api_books(token) == api
        # The sequences came back too: new rows take new ids.
        alice = User.objects.get(username="alice")
        clippings_import(reader=alice, data=_clippings("New Book (Someone)", ["A new line."]),
                         file_name="new.txt")  # fmt: skip

    def test_it_says_when_the_backup_came_from_other_code(
        self, tmp_path: Path, alice: User, settings: object
    ) -> None:
        settings.EXOGRAM_DATA_DIR = tmp_path / "data"  # type: ignore[attr-defined]
        backup = tmp_path / "backup"
        call_command("backup", to=backup, stdout=StringIO())
        manifest = json.loads((backup / MANIFEST).read_text())
        manifest["code_version"] = "0123456789abcdef" * 2 + "01234567"  # not in the sums
        (backup / MANIFEST).write_text(json.dumps(manifest))
        with connection.cursor() as cursor:
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        out = StringIO()
        call_command("restore", backup, stdout=out)
        assert "The backup came from other code: commit 0123456789ab; this is commit " in (
            out.getvalue()
        )
        assert User.objects.filter(username="alice").exists()

    def test_it_refuses_a_damaged_backup(self, tmp_path: Path, alice: User) -> None:
        backup = tmp_path / "backup"
        call_command("backup", to=backup, stdout=StringIO())
        with (backup / DUMP).open("r+b") as dump:
            dump.seek(200)
            byte = dump.read(1)
            dump.seek(200)
            dump.write(bytes([byte[0] ^ 0xFF]))  # one bit rotted
        with pytest.raises(CommandError, match="does not match its sha256"):
            call_command("restore", backup, "--force")
        assert User.objects.filter(username="alice").exists()  # nothing was touched

    def test_it_refuses_to_write_into_a_folder_that_is_not_empty(self, tmp_path: Path) -> None:
        (tmp_path / "something").write_text("kept")
        with pytest.raises(CommandError, match="is not empty"):
            call_command("backup", to=tmp_path)
        assert [path.name for path in tmp_path.iterdir()] == ["something"]


# --- The same drill through DATABASE_URL ----------------------------------------------------

_BUILD = """
from datetime import date
from accounts.models import User
from books.importing.services import clippings_import
from books.embedding.pipeline import highlights_embed, pending_highlight_ids
from books.models import Highlight
from books.services import highlight_favourite_toggle, highlight_tag
from api.services import api_token_create
from tests.backups.test_drill import PAIRS, _clippings
reader = User.objects.create_user("ada", password="a long and unguessable passphrase")
clippings_import(reader=reader, data=_clippings("A (B)", [p[0] for p in PAIRS]), file_name="a")
clippings_import(reader=reader, data=_clippings("C (D)", [p[1] for p in PAIRS]), file_name="c")
highlights_embed(ids=pending_highlight_ids())
first = Highlight.objects.order_by("pk").first()
highlight_tag(highlight=first, name="memory")
highlight_favourite_toggle(highlight=first)
api_token_create(reader=reader, name="script")
"""


def _external_rows(pg: ExternalPostgres) -> dict[str, tuple[int, str]]:
    found = {}
    with pg.connect() as conn:
        tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        for (table,) in tables.fetchall():
            row = conn.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::text, chr(10) ORDER BY t::text), "
                f"'')) FROM \"{table}\" t"
            ).fetchone()
            assert row is not None
            found[table] = (row[0], row[1])
    return found


class ExternalRestoreDrillTests:
    def test_it_backs_up_and_restores_a_server_named_by_database_url(self) -> None:
        folder = private_data_dir()
        folder.mkdir()
        with external_postgres(folder) as pg:
            env = {**os.environ, "DEBUG": "1", "DATABASE_URL": pg.url,
                   "EXOGRAM_DATA_DIR": str(folder), "EXOGRAM_TASK_QUEUE": "drill-none"}  # fmt: skip

            def manage(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run(
                    [sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                    capture_output=True, text=True, timeout=600, check=False,
                )  # fmt: skip

            assert manage("migrate", "-v0").returncode == 0
            built = manage("shell", "-c", _BUILD)
            assert built.returncode == 0, built.stderr
            before = _external_rows(pg)
            assert before["books_connection"][0] > 0
            backup = folder / "backup"
            done = manage("backup", "--to", str(backup))
            assert done.returncode == 0, done.stderr
            assert "18" in json.loads((backup / MANIFEST).read_text())["database"]["server_version"]

            refused = manage("restore", str(backup))
            assert refused.returncode == 1
            assert f"127.0.0.1:{pg.port} is not empty" in refused.stderr

            with pg.connect() as conn:
                conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
            done = manage("restore", str(backup))
            assert done.returncode == 0, done.stderr
            assert _external_rows(pg) == before
        shutil.rmtree(folder.parent, ignore_errors=True)
