# The README's commands. Everything runs from the project's own virtualenv in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Nothing here turns DEBUG on but `make dev`: `make run` is the product. Without a
# SECRET_KEY, every process reads the one generated in EXOGRAM_DATA_DIR (var/secret_key).

.PHONY: run dev test lint format bench install install-dev clean

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

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/python -m exogram.run

# Django's error pages, static files from the source folders, code reloaded on change.
dev: install
	DEBUG=1 $(BIN)/python -m exogram.run

test: install-dev $(AXE)
	$(BIN)/python -m pytest

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install-dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: install-dev
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) var
