# The README's commands. Everything runs from the project's own virtualenv in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Nothing here turns DEBUG on but `make dev`: `make run` is the product. Without a
# SECRET_KEY, every process reads the one generated in EXOGRAM_DATA_DIR (var/secret_key).

.PHONY: run dev test test-fast lint format bench fuzz load nodes install install-dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Reinstall whenever pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

# axe-core for the browser tests' accessibility check, from the npm registry.
AXE := tests/e2e/node_modules/axe-core/axe.min.js
$(AXE): tests/e2e/package.json tests/e2e/package-lock.json
	npm ci --prefix tests/e2e --no-audit --no-fund --silent
	touch $@

# Debian's Chromium for the browser tests: Playwright drives it and never downloads a
# browser of its own. Installed with apt-get (through sudo when not root) when missing.
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
$(CHROMIUM):
	$(SUDO) apt-get update
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends chromium

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/python -m exogram.run

# Django's error pages, static files from the source folders, code reloaded on change.
dev: install
	DEBUG=1 $(BIN)/python -m exogram.run

# The whole suite: 3,894 tests, about 30 minutes on 2 cores (docs/testing.md).
test: install-dev $(AXE) $(CHROMIUM)
	$(BIN)/python -m pytest

# The edit loop, 3,232 tests: no browser, no worker, server or MCP processes, no shared corpus
# (2 minutes on 2 quiet cores; docs/testing.md).
test-fast: install-dev
	$(BIN)/python -m pytest -m "not browser and not slow and not corpus" -q

# Style, types, the layers (import-linter) and no import cycle but tasks <-> services.
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_import_cycles.py

format: install-dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: install-dev
	$(BIN)/python -m bench

# The parsers and the import under Hypothesis: 10,000 examples each, 5 s at most per input,
# new examples every run (the suite draws the same ones each time).
fuzz: install-dev
	HYPOTHESIS_PROFILE=explore EXOGRAM_FUZZ_EXAMPLES=10000 EXOGRAM_FUZZ_DEADLINE_MS=5000 \
		$(BIN)/python -m pytest tests/books/importing/test_fuzz.py \
		tests/books/importing/test_device_fuzz.py -q -p no:cacheprovider

# 20 clients for 30 s against a server started on 127.0.0.1 (see bench/load.py).
load: install-dev
	$(BIN)/python -m bench.load

# Two worker nodes against one PostgreSQL over TCP and one Redis: 10,000 clippings with 1
# node, then 2, then 2 with one killed mid-batch (see bench/bench_nodes.py).
nodes: install-dev
	$(BIN)/python -m bench.bench_nodes

clean:
	rm -rf $(VENV) var
