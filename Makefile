# The README's commands. Everything runs from the project's own virtualenv in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# A fresh clone runs in development mode; production sets DEBUG=0 and SECRET_KEY.
export DEBUG ?= 1

.PHONY: run test lint format bench install install-dev clean

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
