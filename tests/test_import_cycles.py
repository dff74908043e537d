"""No import cycle among the project's modules, imports inside functions counted (grimp, which
import-linter runs on, reads every import statement of a module, wherever it sits).

One kind is allowed: a package's `tasks.py` ↔ `services.py` (the service enqueues the task
on commit, the task calls the service: the usual thin-task pattern). A cycle that has to
stay a while goes into KNOWN_CYCLES with what breaks it (none does now); the list can only
shrink: a cycle it does not hold fails, and so does an entry that is no longer a cycle.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
# import-linter's root packages, and the benchmarks beside them.
PACKAGES = (
    *tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"],
    "bench",
)

# Empty since the import's cycle (importing.services, background, books.tasks, the map's
# refresh) was broken by events (books/events.py); a new entry needs a reason and an owner.
KNOWN_CYCLES: set[frozenset[str]] = set()


def import_cycles(imports: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(imports):
        if start in index:
            continue
        work = [(start, iter(sorted(imports[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, targets = work[-1]
            target = next((t for t in targets if t in imports), None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(imports[target]))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def allowed(cycle: frozenset[str]) -> bool:
    """A package's tasks.py ↔ services.py, and nothing else."""
    packages = {module.rsplit(".", 1)[0] for module in cycle}
    names = {module.rsplit(".", 1)[1] for module in cycle}
    return len(packages) == 1 and names == {"tasks", "services"}


def project_cycles(*packages: str) -> list[frozenset[str]]:
    graph = grimp.build_graph(*packages, cache_dir=None)
    imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    return import_cycles(imports)


@pytest.fixture(scope="module")
def cycles() -> list[frozenset[str]]:
    return project_cycles(*PACKAGES)


class ImportCycleTests:
    def test_it_finds_no_new_cycle(self, cycles: list[frozenset[str]]) -> None:
        new = [sorted(c) for c in cycles if not allowed(c) and c not in KNOWN_CYCLES]
        assert new == [], "import cycles (break them; see this module's docstring)"

    def test_every_known_cycle_is_still_one(self, cycles: list[frozenset[str]]) -> None:
        gone = [sorted(c) for c in KNOWN_CYCLES if c not in cycles]
        assert gone == [], "no longer cycles: delete them from KNOWN_CYCLES"

    def test_it_sees_an_import_inside_a_function(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        package = tmp_path / "cyclic"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "low.py").write_text("def f() -> None:\n    from cyclic import high\n")
        (package / "high.py").write_text("from cyclic import low\n")
        (package / "tasks.py").write_text("from cyclic import services\n")
        (package / "services.py").write_text("def g() -> None:\n    from cyclic import tasks\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        found = project_cycles("cyclic")
        sys.modules.pop("cyclic", None)
        assert sorted(map(sorted, found)) == [
            ["cyclic.high", "cyclic.low"],
            ["cyclic.services", "cyclic.tasks"],
        ]
        assert [allowed(c) for c in sorted(found, key=sorted)] == [False, True]
