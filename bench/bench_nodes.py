"""Throughput of one worker node against two (`make nodes`).

`python -m bench.bench_nodes [--clippings 10000]`: for 1 and then 2 nodes, a fresh database
on a PostgreSQL server over TCP (loopback), one Redis broker (EXOGRAM_NODES_REDIS_URL,
default redis://127.0.0.1:6379/13), each node a `celery worker` of one process with its own
data folder and model cache (tests/nodes.py). Measures from the end of the import to the
last highlight embedded and connected, and checks each highlight was embedded once. Then,
with two nodes, one is killed mid-batch and the other must finish.

On one machine the nodes share its cores: with 2 cores, 2 nodes of one process each can at
most double the rate, and only when nothing else runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from bench.bench_backup import _cpu_seconds
from bench.synthetic import make_clippings_file

CLIPPINGS = 10_000


def _one_run(nodes: int, data: bytes, *, kill: bool = False) -> dict[str, Any]:
    from tests.nodes import cluster

    folder = Path(tempfile.mkdtemp(prefix="exogram-nodes-"))
    folder.chmod(0o755)  # the server's own system user reaches its folder
    with cluster(folder / "cluster") as the_cluster:
        the_cluster.import_clippings(data)
        postmaster = psutil.Process(
            int((the_cluster.pg.pg.pgdata / "postmaster.pid").read_text().split()[0])
        )
        server_cpu = _cpu_seconds(postmaster)
        started = time.perf_counter()
        for number in range(nodes):
            the_cluster.start_node(f"node{number + 1}")
        # Each node's CPU from when it is ready: loading Django and the model is not the work.
        ready_cpu = {}
        for name, node in the_cluster.nodes.items():
            while b" ready." not in (the_cluster.folder / name / "worker.log").read_bytes():
                time.sleep(0.2)
            ready_cpu[name] = _cpu_seconds(psutil.Process(node.pid))
        if kill:
            while the_cluster.counts()["done"] < the_cluster.counts()["highlights"] // 4:
                time.sleep(0.5)
            the_cluster.kill_node("node1")
            the_cluster.sweep()
        counts = the_cluster.wait_all_done(timeout=4 * 3600)
        seconds = time.perf_counter() - started
        # The nodes still running (a killed one's time is lost with it).
        node_cpu = sum(
            _cpu_seconds(psutil.Process(node.pid)) - ready_cpu[name]
            for name, node in the_cluster.nodes.items()
        )
        server_cpu = _cpu_seconds(postmaster) - server_cpu
    shutil.rmtree(folder, ignore_errors=True)
    ok = counts["vector_writes"] == counts["vectors_written"] == counts["highlights"] and (
        counts["connection_writes"] == counts["connections_written"] == counts["connections"]
    )
    return {
        "nodes": nodes,
        "killed_one": kill,
        "highlights": counts["highlights"],
        "connections": counts["connections"],
        "seconds": round(seconds, 1),
        "highlights_per_second": round(counts["highlights"] / seconds, 1),
        "each_embedded_and_connected_once": ok,
        "node_cpu_ms_per_highlight": None
        if kill
        else round(node_cpu * 1000 / counts["highlights"], 1),
        "server_cpu_ms_per_highlight": round(server_cpu * 1000 / counts["highlights"], 1),
    }


def run(*, clippings: int = CLIPPINGS) -> dict[str, Any]:
    from bench.db import setup_django

    setup_django()
    data = make_clippings_file(clippings, seed=3)
    one = _one_run(1, data)
    two = _one_run(2, data)
    killed = _one_run(2, data, kill=True)
    report = {
        "clippings": clippings,
        "one_node": one,
        "two_nodes": two,
        "two_nodes_one_killed": killed,
        "speed_up": round(two["highlights_per_second"] / one["highlights_per_second"], 2),
        "cores": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clippings", type=int, default=CLIPPINGS)
    run(clippings=parser.parse_args().clippings)
