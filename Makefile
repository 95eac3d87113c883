# queuewatch — every target installs what it needs. `make help` lists them.
SHELL := /bin/bash
export SAM_CLI_TELEMETRY := 0
.DEFAULT_GOAL := help

PYTHON313 ?= $(firstword $(wildcard /root/.pyenv/versions/3.13.*/bin/python3.13) $(shell command -v python3.13))
VENV := .venv
VENV_SAM := .venv-sam
PY := $(VENV)/bin/python
SAM := $(VENV_SAM)/bin/sam
CONFIGS := config/queuewatch.yaml $(wildcard config/examples/*.yaml)

.PHONY: help venv venv-sam demo test lint format check-config validate build clean bench cost

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(VENV)/.installed: requirements-dev.txt pyproject.toml
	@test -n "$(PYTHON313)" || { echo "CPython 3.13 not found: set PYTHON313=/path/to/python3.13" >&2; exit 1; }
	$(PYTHON313) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

$(VENV_SAM)/.installed: requirements-sam.txt
	@test -n "$(PYTHON313)" || { echo "CPython 3.13 not found: set PYTHON313=/path/to/python3.13" >&2; exit 1; }
	$(PYTHON313) -m venv $(VENV_SAM)
	$(VENV_SAM)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-sam.txt
	touch $@

venv: $(VENV)/.installed ## the project's virtual environment (.venv)
venv-sam: $(VENV_SAM)/.installed ## aws-sam-cli and cfn-lint, in their own environment (.venv-sam)

demo: venv ## the 114-minute incident end to end on an in-process moto: page, no duplicate, resolve
	$(VENV)/bin/queuewatch demo

test: venv ## unit and integration tests (moto), and every config file checked
	$(VENV)/bin/queuewatch check-config $(CONFIGS)
	$(VENV)/bin/pytest tests/unit tests/integration

check-config: venv ## validate config/queuewatch.yaml and the examples
	$(VENV)/bin/queuewatch check-config $(CONFIGS)

lint: venv venv-sam ## ruff, mypy, sam validate --lint and cfn-lint
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy functions/collect/app.py
	$(VENV)/bin/mypy functions/evaluate/app.py
	$(VENV)/bin/mypy tests
	$(VENV)/bin/mypy bench
	$(SAM) validate --lint --region us-east-1
	$(VENV_SAM)/bin/cfn-lint template.yaml

format: venv ## apply ruff's fixes and formatting
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

build: venv venv-sam check-config ## sam build, after the config passes check-config
	PATH="$(dir $(PYTHON313)):$$PATH" $(SAM) build

FLEETS ?= 10,100,1000,5000
bench: venv ## the benchmark: real ticks against a moto server per fleet size, then docs/COST.md (FLEETS=10,100: a quick run)
	$(PY) -m bench.run --fleets $(FLEETS)

cost: venv ## docs/COST.md again from bench/results.json (the figures of the last full `make bench`)
	$(PY) -m bench.cost

clean: ## remove build output (keeps the virtual environments)
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache
