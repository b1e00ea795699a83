# Session Keeper — `make demo` runs the main job, `make test` runs every test. Both set up
# everything they need (a virtualenv in .venv) on a fresh clone.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: help demo test test-python test-extension bench lint clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP) ## the story: record, crash (kill -9), drift, resume
	$(VENV)/bin/sessionkeeper demo

test: test-python ## every test (Python tiers)

test-python: $(STAMP) ## unit, contract, fault, LSP and e2e tests of the server
	$(PY) -m pytest -q

bench: $(STAMP) ## benchmarks, side by side with raw baselines (prints ratios)
	$(PY) tests/benchmarks/bench_store.py
	$(PY) tests/benchmarks/bench_startup.py

lint: $(STAMP) ## ruff
	$(VENV)/bin/ruff check server tests

clean: ## remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache build server/*.egg-info
