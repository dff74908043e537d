"""Faults injected into real processes: a worker killed mid-batch, a broker that is down,
a database that restarts during an import, an external PostgreSQL, RabbitMQ.

Each test starts what it needs (workers, a PostgreSQL server on a TCP port, web servers)
on this machine's loopback only, and bounds every wait.
"""

import http.cookiejar
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest
import redis
from django.db import connection
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.models import Highlight, Import
from books.tasks import QUEUE_UNREACHABLE
from exogram.celery import app
from tests.books.kindle import BORGES, SACKS, Entry, clippings_file
from tests.external_postgres import ExternalPostgres, external_postgres, free_port
from tests.worker import RABBITMQ_URL, ROOT, celery_worker, rabbitmq_queue, wait_for

REDIS_URL = "redis://127.0.0.1:6379/12"


def _library(count: int, *, prefix: str = "passage") -> bytes:
    return clippings_file(
        *(
            Entry(
                f"{prefix.title()} {BORGES if n % 2 else SACKS}",
                f"The {prefix} {n}: memory is the treasure and the guardian of all things.",
                location=f"{n * 10}",
            )
            for n in range(1, count + 1)
        )
    )


def _upload(data: bytes) -> dict[str, object]:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return {"file": SimpleUploadedFile("My Clippings.txt", data, content_type="text/plain")}


def _count_vector_writes() -> None:
    """Record every write of a vector (pending or claimed -> done) in a table of the test's."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE vector_writes (highlight_id bigint NOT NULL)")
        cursor.execute(
            "CREATE FUNCTION record_vector_write() RETURNS trigger AS $$ BEGIN "
            "INSERT INTO vector_writes VALUES (NEW.id); RETURN NEW; END $$ LANGUAGE plpgsql"
        )
        cursor.execute(
            "CREATE TRIGGER record_vector_write AFTER UPDATE ON books_highlight FOR EACH ROW "
            "WHEN (NEW.embedding_status = 'done' AND OLD.embedding_status <> 'done') "
            "EXECUTE FUNCTION record_vector_write()"
        )


def _vector_writes() -> tuple[int, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), count(DISTINCT highlight_id) FROM vector_writes")
        total, distinct = cursor.fetchone()
    return total, distinct


def _all_embedded(reader: User, count: int) -> bool:
    return Highlight.objects.filter(reader=reader, embedding_status="done").count() == count


@pytest.mark.django_db(transaction=True)
class WorkerKilledTests:
    def test_a_worker_killed_mid_batch_leaves_every_highlight_embedded_exactly_once(
        self, alice: User, tmp_path: Path
    ) -> None:
        _count_vector_writes()
        count = 600
        with celery_worker(broker_url="filesystem://", data_dir=tmp_path) as worker:
            Client().force_login(alice)
            from books.importing.services import clippings_import

            clippings_import(reader=alice, data=_library(count), file_name="c.txt")
            # Mid-batch: some highlights written, others claimed by the running task.
            wait_for(
                lambda: (
                    Highlight.objects.filter(reader=alice, embedding_status="done").exists()
                    and Highlight.objects.filter(reader=alice, embedding_status="claimed").exists()
                ),
                timeout=180,
                what="the worker to be in the middle of a batch",
            )
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait(timeout=30)
        stuck = Highlight.objects.filter(reader=alice, embedding_status="claimed").count()
        assert stuck > 0  # the killed worker's claims
        (tmp_path / "worker.log").rename(tmp_path / "killed-worker.log")
        # A new worker on the same broker: its start-up sweep hands the dead worker's claims
        # out again, and it consumes what is still queued.
        with celery_worker(broker_url="filesystem://", data_dir=tmp_path):
            wait_for(
                lambda: _all_embedded(alice, count),
                timeout=400,
                what="every highlight to be embedded after the restart",
            )
        total, distinct = _vector_writes()
        assert (total, distinct) == (count, count)  # each written once, none twice
        assert "released" in (tmp_path / "worker.log").read_text()


def _broker_down_then_back(
    alice: User, alice_client: Client, tmp_path: Path, *, down: str, up: str, queue: str
) -> None:
    saved = (app.conf.broker_url, app.conf.task_always_eager, app.conf.task_default_queue)
    app.conf.update(broker_url=down, task_always_eager=False, task_default_queue=queue)
    app._pool = None
    app.amqp._producer_pool = None
    try:
        response = alice_client.post(reverse("import"), _upload(_library(40)), follow=True)
    finally:
        app.conf.update(
            broker_url=saved[0], task_always_eager=saved[1], task_default_queue=saved[2]
        )
        app._pool = None
        app.amqp._producer_pool = None
    page = response.content.decode()
    the_import = Import.objects.get(reader=alice)
    assert the_import.status == Import.Status.DONE  # saved, whatever the broker
    assert Highlight.objects.filter(reader=alice).count() == 40
    assert "Embedding is delayed: the task queue cannot be reached" in page
    assert set(Highlight.objects.values_list("embedding_error", flat=True)) == {QUEUE_UNREACHABLE}
    # The broker is back and a worker starts: its start-up sweep sends everything.
    with celery_worker(broker_url=up, data_dir=tmp_path, queue=queue):
        wait_for(lambda: _all_embedded(alice, 40), timeout=240, what="the sweep to embed all")
    progress = alice_client.get(the_import.get_absolute_url()).content.decode()
    assert (
        "All 40 highlights ready: connections and search by meaning work on all of them."
        in progress
    )
    assert "task queue cannot be reached" not in progress


@pytest.mark.django_db(transaction=True)
class BrokerDownTests:
    def test_with_redis_down_the_import_is_saved_and_embedded_once_it_is_back(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        redis.Redis.from_url(REDIS_URL).flushdb()
        _broker_down_then_back(
            alice,
            alice_client,
            tmp_path,
            down=f"redis://127.0.0.1:{free_port()}/0",  # nothing listens there
            up=REDIS_URL,
            queue=f"exogram-test-{uuid.uuid4().hex[:8]}",
        )

    def test_with_rabbitmq_down_the_import_is_saved_and_embedded_once_it_is_back(
        self, alice: User, alice_client: Client, tmp_path: Path
    ) -> None:
        with rabbitmq_queue() as queue:
            _broker_down_then_back(
                alice,
                alice_client,
                tmp_path,
                down=f"amqp://guest:guest@127.0.0.1:{free_port()}//",
                up=RABBITMQ_URL,
                queue=queue,
            )


@pytest.mark.django_db(transaction=True)
class RabbitMQTests:
    def test_an_import_is_embedded_by_a_worker_over_rabbitmq(
        self, alice: User, tmp_path: Path
    ) -> None:
        from books.importing.services import clippings_import

        with (
            rabbitmq_queue() as queue,
            celery_worker(broker_url=RABBITMQ_URL, data_dir=tmp_path, queue=queue),
        ):
            clippings_import(reader=alice, data=_library(30), file_name="c.txt")
            wait_for(lambda: _all_embedded(alice, 30), timeout=240, what="the worker to embed")


# --- An external PostgreSQL (DATABASE_URL), and a restart of it during an import ---------


def _manage(
    database_url: str, data_dir: Path, *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DEBUG": "1",
        "DATABASE_URL": database_url,
        "EXOGRAM_DATA_DIR": str(data_dir),
    }
    env.pop("CELERY_BROKER_URL", None)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=check,
    )  # fmt: skip


def _counts(pg: ExternalPostgres) -> tuple[int, int]:
    with pg.connect() as conn:
        row = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE embedding IS NOT NULL) FROM books_highlight"
        ).fetchone()
    assert row is not None
    return row[0], row[1]


@pytest.fixture(scope="class")
def external_pg() -> object:
    # Under the checkout's var/, not pytest's temporary folders: those are private to
    # root, and the server runs as its own user when the tests run as root.
    folder = ROOT / "var" / f"external-pg-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    with external_postgres(folder) as pg:
        _manage(pg.url, folder, "migrate", "--noinput")
        _manage(
            pg.url, folder, "shell", "-c",
            "from accounts.models import User; User.objects.create_user('carol', password='x')",
        )  # fmt: skip
        yield pg, folder
    shutil.rmtree(folder, ignore_errors=True)


class ExternalPostgresTests:
    def test_it_imports_and_embeds_on_an_external_server(self, external_pg: object) -> None:
        pg, folder = external_pg  # type: ignore[misc]
        path = folder / "small.txt"
        path.write_bytes(_library(25, prefix="small"))
        result = _manage(
            pg.url, folder, "import_clippings", str(path), "--user", "carol", check=False
        )
        assert result.returncode == 0, result.stderr
        assert "new highlights" in result.stdout
        _manage(pg.url, folder, "embed_pending", "--now")
        with pg.connect() as conn:
            row = conn.execute(
                "SELECT count(*) FROM books_highlight h JOIN books_book b ON b.id = h.book_id "
                "WHERE h.text LIKE 'The small%%' AND h.embedding IS NOT NULL"
            ).fetchone()
            version = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
        assert row == (25,)
        assert version is not None
        assert tuple(int(p) for p in version[0].split(".")[:2]) >= (0, 8)

    def test_a_restart_during_an_import_rolls_it_back_and_a_retry_imports_everything(
        self, external_pg: object
    ) -> None:
        pg, folder = external_pg  # type: ignore[misc]
        before, _ = _counts(pg)
        path = folder / "large.txt"
        path.write_bytes(_library(30_000, prefix="large"))
        env = {**os.environ, "DEBUG": "1", "DATABASE_URL": pg.url, "EXOGRAM_DATA_DIR": str(folder)}
        importing = subprocess.Popen(
            [sys.executable, "manage.py", "import_clippings", str(path), "--user", "carol"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

        def import_writing() -> bool:
            with pg.connect() as conn:
                # The import holds its per-reader advisory lock while it writes.
                return (
                    conn.execute(
                        "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted"
                    ).fetchone()
                    is not None
                )

        wait_for(import_writing, timeout=300, what="the import to start writing")
        pg.stop()
        _, err = importing.communicate(timeout=120)
        assert importing.returncode == 1
        assert "Traceback" not in err
        assert "the import failed and nothing was saved" in err
        pg.start()
        assert _counts(pg)[0] == before  # rolled back whole
        retry = _manage(pg.url, folder, "import_clippings", str(path), "--user", "carol")
        assert re.search(r"new highlights\s+30000\n", retry.stdout), retry.stdout
        assert _counts(pg)[0] == before + 30_000

    def test_the_web_server_reconnects_after_a_restart(self, external_pg: object) -> None:
        pg, folder = external_pg  # type: ignore[misc]
        port = free_port()
        env = {**os.environ, "DEBUG": "1", "DATABASE_URL": pg.url, "EXOGRAM_DATA_DIR": str(folder)}
        web = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}",
             "--config", "python:exogram.gunicorn_conf", "--workers", "1"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(lambda: _status(f"{base}/login/") == 200, timeout=120, what="gunicorn")
            assert _log_in(base) == 200  # a page that reads the database
            pg.stop()
            assert _log_in(base) == 500
            pg.start()
            assert _log_in(base) == 200
        finally:
            web.terminate()
            web.wait(timeout=30)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # loopback only
            status: int = response.status
            return status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def _log_in(base: str) -> int:
    """Post carol's credentials to the login form: it reads the users table."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(f"{base}/login/", timeout=10) as response:
        page = response.read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    data = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token.group(1), "username": "carol", "password": "wrong"}
    ).encode()
    request = urllib.request.Request(f"{base}/login/", data=data, headers={"Referer": base})
    try:
        with opener.open(request, timeout=30) as response:
            status: int = response.status
            return status
    except urllib.error.HTTPError as error:
        return error.code
