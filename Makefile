# Session Keeper — `make demo` runs the main job, `make test` runs every test. Both set up
# everything they need (a virtualenv in .venv) on a fresh clone.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: help demo test test-python test-extension bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP) ## the story: record, crash (kill -9), drift, resume
	$(VENV)/bin/sessionkeeper demo

test: test-python test-extension ## every test: the server's tiers, then the extension's

test-python: $(STAMP) ## lint, type-check, then unit, contract, fault, LSP and e2e tests of the server
	bash tests/faults/install-fault-tools.sh
	bash tests/postgres/install-postgresql.sh  # the shared-index tests start their own server
	bash tests/e2e/agents/install.sh codex >/dev/null  # the real agents (pinned, from npm, cached)
	bash tests/e2e/agents/install.sh claude >/dev/null
	bash tests/e2e/agents/install.sh hermes >/dev/null  # Hermes Agent (pinned, from PyPI, own venv)
	bash tests/e2e/agents/install.sh openclaw >/dev/null  # with npm's node@24 (its engines need >= 24.16)
	$(VENV)/bin/ruff check server tests
	$(VENV)/bin/mypy
	$(PY) -m compileall -q server  # bytecode once (PYTHONDONTWRITEBYTECODE: every process compiles)
	$(PY) -m pytest -q

test-extension: $(STAMP) ## the VS Code extension: build, unit tests, e2e in code-server + Chromium
	E2E_PYTHON=$(abspath $(PY)) bash vscode-extension/scripts/test-all.sh

bench: $(STAMP) ## benchmarks, side by side with raw baselines (prints ratios)
	$(PY) tests/benchmarks/bench_store.py
	$(PY) tests/benchmarks/bench_resume.py
	$(PY) tests/benchmarks/bench_workspace.py
	$(PY) tests/benchmarks/bench_startup.py
	$(PY) tests/benchmarks/bench_blobs.py
	$(PY) tests/benchmarks/bench_live_drift.py
	$(PY) tests/benchmarks/bench_live_drift.py --files 500
	$(PY) tests/benchmarks/bench_redact.py
	$(PY) tests/benchmarks/bench_frameworks.py
	$(PY) tests/benchmarks/bench_agents.py
	$(PY) tests/benchmarks/bench_agent_index.py
	$(PY) tests/benchmarks/bench_hermes.py
	$(PY) tests/benchmarks/bench_openclaw.py --turns 10
	$(PY) tests/benchmarks/bench_hooks.py
	$(PY) tests/benchmarks/bench_agent_hooks.py
	$(PY) tests/benchmarks/bench_postgres.py  # starts its own server (tests/pg_server.py)
	$(PY) tests/benchmarks/bench_mcp.py

clean: ## remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache build server/*.egg-info
