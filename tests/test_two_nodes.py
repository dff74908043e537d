"""Two worker nodes (separate processes, data folders and model caches) share one PostgreSQL
over TCP and one Redis: one is killed mid-batch, the other finishes, and every highlight is
embedded and connected exactly once. The 10,000-clipping run with throughput figures is
`make nodes` (bench/bench_nodes.py); this is its small version, for the suite."""

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.synthetic import make_clippings_file
from tests.nodes import cluster
from tests.test_embedded_postgres import private_data_dir

CLIPPINGS = 400  # about 340 highlights: two embedding tasks (256 a task)


@pytest.fixture
def folder() -> Iterator[Path]:
    path = private_data_dir()
    yield path
    shutil.rmtree(path.parent, ignore_errors=True)


class TwoNodesTests:
    def test_a_node_killed_mid_batch_leaves_the_other_to_finish_each_highlight_once(
        self, folder: Path
    ) -> None:
        with cluster(folder) as nodes:
            nodes.import_clippings(make_clippings_file(CLIPPINGS, seed=7))
            nodes.start_node("first")
            nodes.start_node("second")
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:  # a bounded wait for the middle of a batch
                counts = nodes.counts()
                if counts["done"] > 0 and counts["claimed"] > 0:
                    break
                time.sleep(0.5)
            nodes.kill_node("first")
            # The beat's sweep (every five minutes) hands the dead node's claims out again.
            nodes.sweep()
            counts = nodes.wait_all_done(timeout=1500)
        assert counts["highlights"] > 300
        # Every highlight embedded once: no vector written twice, none left out.
        assert counts["vector_writes"] == counts["vectors_written"] == counts["highlights"]
        # Connected once: each pair written once and kept.
        assert counts["connections"] > 0
        assert counts["connection_writes"] == counts["connections_written"]
        assert counts["connections_written"] == counts["connections"]
        first_log = (folder / "first" / "worker.log").read_text()
        second_log = (folder / "second" / "worker.log").read_text()
        assert "embed_highlights" in first_log
        assert "embed_highlights" in second_log
