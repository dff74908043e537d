"""Worker nodes as two hosts would run them: separate processes, each with its own data
folder and model cache, sharing one PostgreSQL over TCP and one Redis broker.

Used by tests/test_two_nodes.py (a small library, one node killed mid-batch) and by
`make nodes` (python -m bench.bench_nodes: 10,000 clippings, 1 node against 2).
"""

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.external_postgres import ExternalPostgres, external_postgres

ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = os.environ.get("EXOGRAM_NODES_REDIS_URL", "redis://127.0.0.1:6379/13")
# Every (re)write of a vector, and every connection written, counted by triggers.
_COUNTERS = """
CREATE TABLE vector_writes (highlight_id bigint NOT NULL);
CREATE TABLE connection_writes (a bigint NOT NULL, b bigint NOT NULL);
CREATE FUNCTION record_vector_write() RETURNS trigger AS $$ BEGIN
  INSERT INTO vector_writes VALUES (NEW.id); RETURN NEW; END $$ LANGUAGE plpgsql;
CREATE TRIGGER record_vector_write AFTER UPDATE ON books_highlight FOR EACH ROW
  WHEN (NEW.embedding_status = 'done' AND OLD.embedding_status <> 'done')
  EXECUTE FUNCTION record_vector_write();
CREATE FUNCTION record_connection_write() RETURNS trigger AS $$ BEGIN
  INSERT INTO connection_writes VALUES (NEW.highlight_a_id, NEW.highlight_b_id); RETURN NEW; END $$
  LANGUAGE plpgsql;
CREATE TRIGGER record_connection_write AFTER INSERT ON books_connection FOR EACH ROW
  EXECUTE FUNCTION record_connection_write();
"""


@dataclass
class Cluster:
    """One database, one broker queue, and the nodes started on them."""

    folder: Path
    pg: ExternalPostgres
    queue: str = field(default_factory=lambda: f"nodes-{uuid.uuid4().hex[:8]}")
    nodes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def env(self, data_dir: Path) -> dict[str, str]:
        env = {
            **os.environ,
            "DATABASE_URL": self.pg.url,
            "CELERY_BROKER_URL": REDIS_URL,
            "EXOGRAM_TASK_QUEUE": self.queue,
            "EXOGRAM_DATA_DIR": str(data_dir),
            # One key for the whole deployment, as every host of one instance must share.
            "SECRET_KEY": "nodes-test-key-" + "k" * 40,
            # A worker host serves no pages: it takes its cores at the ordinary priority.
            "EXOGRAM_WORKER_NICE": "0",
        }
        env.pop("DEBUG", None)
        return env

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env(self.folder / "admin"),
            capture_output=True, text=True, timeout=1800, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed: {done.stderr[-2000:]}")
        return done.stdout

    def start_node(self, name: str) -> subprocess.Popen[bytes]:
        data_dir = self.folder / name
        models = data_dir / "models"
        if not models.exists():
            # Its own copy of the model folder, as a host of its own would have built.
            from books.embedding.encoder import model_cache_dir

            shutil.copytree(model_cache_dir(), models)
        log = (data_dir / "worker.log").open("ab")
        node = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "exogram", "worker", "--pool", "solo",
             "--hostname", f"{name}@%h", "--loglevel", "INFO"],
            cwd=ROOT, env=self.env(data_dir), stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        self.nodes[name] = node
        return node

    def kill_node(self, name: str) -> None:
        node = self.nodes.pop(name)
        os.kill(node.pid, signal.SIGKILL)
        node.wait(timeout=30)

    def sweep(self) -> None:
        """What the beat sends every five minutes (exogram/settings.py), sent now."""
        self.manage(
            "shell", "-c", "from books.tasks import sweep_pending_embeddings as s; s.delay()"
        )

    def query(self, sql: str) -> Any:
        with self.pg.connect() as conn:
            return conn.execute(sql).fetchone()

    def import_clippings(self, data: bytes, *, reader: str = "ada") -> None:
        path = self.folder / f"{reader}.txt"
        path.write_bytes(data)
        make = f"from accounts.models import User; User.objects.create_user({reader!r})"
        self.manage("shell", "-c", make)
        self.manage("import_clippings", str(path), "--user", reader)

    def counts(self) -> dict[str, int]:
        row = self.query(
            "SELECT count(*), count(*) FILTER (WHERE embedding_status = 'done'), "
            "count(*) FILTER (WHERE embedding_status = 'claimed'), "
            "(SELECT count(*) FROM vector_writes), "
            "(SELECT count(DISTINCT highlight_id) FROM vector_writes), "
            "(SELECT count(*) FROM connection_writes), "
            "(SELECT count(*) FROM (SELECT DISTINCT a, b FROM connection_writes) w), "
            "(SELECT count(*) FROM books_connection) FROM books_highlight"
        )
        names = ["highlights", "done", "claimed", "vector_writes", "vectors_written",
                 "connection_writes", "connections_written", "connections"]  # fmt: skip
        return dict(zip(names, row, strict=True))

    def wait_all_done(self, *, timeout: float) -> dict[str, int]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            counts = self.counts()
            if counts["done"] == counts["highlights"]:
                return counts
            for name, node in self.nodes.items():
                if node.poll() is not None:
                    raise RuntimeError(f"node {name} exited ({node.returncode}); see its log")
            time.sleep(1)
        raise AssertionError(f"not every highlight embedded in {timeout} s: {self.counts()}")


@contextmanager
def cluster(folder: Path) -> Iterator[Cluster]:
    """A migrated database on a TCP port, counters installed; every node stopped after."""
    (folder / "admin").mkdir(parents=True)
    with external_postgres(folder) as pg:
        the_cluster = Cluster(folder=folder, pg=pg)
        the_cluster.manage("migrate", "-v0")
        with pg.connect() as conn:
            conn.execute(_COUNTERS)
        try:
            yield the_cluster
        finally:
            for node in the_cluster.nodes.values():
                node.terminate()
            for node in the_cluster.nodes.values():
                try:
                    node.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    node.kill()
            _forget_queue(the_cluster.queue)


def _forget_queue(queue: str) -> None:
    """Delete the lists of the instance's three queues (exogram.queues), each with its
    priority lists, that kombu keeps in Redis."""
    import redis

    from exogram.queues import task_queues

    client = redis.Redis.from_url(REDIS_URL)
    for name in (q.name for q in task_queues(queue)):
        client.delete(name, f"{name}\x06\x163", f"{name}\x06\x166", f"{name}\x06\x169")
