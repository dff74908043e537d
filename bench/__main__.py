"""`make bench` / `python -m bench [NAME …]`: every benchmark, or the ones named.

Each module's run() prints its own figures as JSON; this prints them again at the end,
side by side. Every benchmark that needs a database makes a throw-away one.
"""

import argparse
import importlib
import json
import sys
import time
from typing import Any

# In the order the pipeline runs: parse, import, embed, connect, search, affinity, map,
# assistants; then the first requests of a freshly started web process.
BENCHMARKS = {
    "parse": "bench.bench_parse",
    "import": "bench.bench_import",
    "coverage": "bench.bench_import_coverage",
    "encoder": "bench.bench_encoder",
    "pipeline": "bench.bench_pipeline",
    "connections": "bench.bench_connections",
    "search": "bench.bench_search",
    "affinity": "bench.bench_affinity",
    "mcp": "bench.bench_mcp",
    "map": "bench.bench_map",
    "words": "bench.bench_words_deck",
    "merge": "bench.bench_merge",
    "cold": "bench.bench_cold",
    "pages": "bench.bench_pages",
    "memory": "bench.bench_memory",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"any of: {', '.join(BENCHMARKS)} (default: all)")  # fmt: skip
    names = parser.parse_args().names or list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    results: dict[str, Any] = {}
    failed = []
    for name in names:
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        try:
            module = importlib.import_module(BENCHMARKS[name])
            results[name] = module.run()
        except Exception as error:  # one broken benchmark must not hide the others
            failed.append(name)
            results[name] = {"error": f"{type(error).__name__}: {error}"}
            print(f"{name} failed: {error}", file=sys.stderr, flush=True)
        print(f"({name}: {time.perf_counter() - started:.0f} s)", flush=True)
    print("\n=== summary ===")
    print(json.dumps(results, indent=2, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
