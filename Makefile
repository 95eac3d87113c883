# queuewatch — every target installs what it needs. `make help` lists them.
SHELL := /bin/bash
export SAM_CLI_TELEMETRY := 0
# template.yaml writes its alarms of one shape as Fn::ForEach loops (AWS::LanguageExtensions), which the SAM CLI
# expands only when asked; `make build` then writes them out in the built template, which needs no such flag.
export SAM_CLI_ENABLE_LANGUAGE_EXTENSIONS := 1
.DEFAULT_GOAL := help

# pyenv's CPython 3.13 (where `pyenv root` says, or its default root), else python3.13 on PATH.
PYTHON313 ?= $(firstword $(wildcard $(addsuffix /versions/3.13.*/bin/python3.13,$(shell pyenv root 2>/dev/null) $(HOME)/.pyenv)) $(shell command -v python3.13))
VENV := .venv
VENV_SAM := .venv-sam
VENV_SCAN := .venv-scan
PY := $(VENV)/bin/python
SAM := $(VENV_SAM)/bin/sam
CONFIGS := config/queuewatch.yaml $(wildcard config/examples/*.yaml)
# The config `make build` deploys: a file, or a folder of yours holding queuewatch.yaml (make build CONFIG=...).
# No default: the shipped config/queuewatch.yaml is an example, and a build of it would deploy its pager
# placeholder. The local targets that build (e2e, invoke-*) name it themselves.
STAGED_CONFIG := .aws-sam/config
BUILT_TEMPLATE := .aws-sam/build/template.yaml
# The stack and its nested applications (template.yaml: Tracking, Digest), for cfn-lint and checkov.
TEMPLATES := template.yaml $(wildcard templates/*.yaml)
# `make deploy`: the samconfig.toml environment naming the stack and its region, and any parameter the config
# cannot decide (PARAMETERS="ExistingAlertTopicArn=arn:... ChatTopicArn=arn:...").
DEPLOY_ENV ?= default
PARAMETERS ?=
# pytest-xdist's workers for `make test`: one per core by default (TEST_WORKERS=0 runs in one process). Each
# test file goes to one worker whole, so the worlds a module builds once (the demo, the fleet-wide page, the
# SAM CLI's deploys) are built once.
TEST_WORKERS ?= auto

.PHONY: help require-config venv venv-package venv-demo venv-sam venv-scan demo local-up local-down test lint scan format check-config validate build deploy e2e invoke-collect invoke-evaluate invoke-track clean bench cost

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

# Three steps into one .venv: the package alone (what `make build` needs: the queuewatch command), then
# moto for the demo, then the development tools on top.
$(VENV)/.package-installed: pyproject.toml
	@test -n "$(PYTHON313)" || { echo "CPython 3.13 not found: set PYTHON313=/path/to/python3.13" >&2; exit 1; }
	$(PYTHON313) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.demo-installed: $(VENV)/.package-installed requirements-demo.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-demo.txt
	touch $@

$(VENV)/.installed: $(VENV)/.demo-installed requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

$(VENV_SAM)/.installed: requirements-sam.txt
	@test -n "$(PYTHON313)" || { echo "CPython 3.13 not found: set PYTHON313=/path/to/python3.13" >&2; exit 1; }
	$(PYTHON313) -m venv $(VENV_SAM)
	$(VENV_SAM)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-sam.txt
	touch $@

$(VENV_SCAN)/.installed: requirements-scan.txt
	@test -n "$(PYTHON313)" || { echo "CPython 3.13 not found: set PYTHON313=/path/to/python3.13" >&2; exit 1; }
	$(PYTHON313) -m venv $(VENV_SCAN)
	$(VENV_SCAN)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-scan.txt
	touch $@

venv: $(VENV)/.installed ## the project's virtual environment (.venv), with the development tools
venv-package: $(VENV)/.package-installed ## the package alone (.venv): the queuewatch command, what `make build` needs
venv-demo: $(VENV)/.demo-installed ## the package and moto alone (.venv): what the demo and the local stack need
venv-sam: $(VENV_SAM)/.installed ## aws-sam-cli and cfn-lint, in their own environment (.venv-sam)
venv-scan: $(VENV_SCAN)/.installed ## checkov, in its own environment (.venv-scan)

demo: venv-demo ## the 114-minute incident end to end on an in-process moto: page, no duplicate, resolve
	$(VENV)/bin/queuewatch demo

local-up: venv-demo ## a local stack (moto server on 127.0.0.1) with the demo's incident, for status, history, silences
	$(VENV)/bin/queuewatch local up

local-down: ## stop the local stack
	$(VENV)/bin/queuewatch local down

test: venv venv-sam ## unit and integration tests (moto; the SAM CLI for the README's deploy commands), and every config file checked
	$(VENV)/bin/queuewatch check-config $(CONFIGS)
	$(VENV)/bin/pytest -n $(TEST_WORKERS) --dist loadfile $(wildcard tests/unit tests/integration)

check-config: venv ## validate config/queuewatch.yaml and the examples
	$(VENV)/bin/queuewatch check-config $(CONFIGS)

lint: venv venv-sam scan ## ruff, mypy, sam validate --lint, cfn-lint and checkov
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy  # one run: the layer, the CLI, the handlers, tests and bench ([tool.mypy] files)
	$(SAM) validate --lint --region us-east-1
	$(VENV_SAM)/bin/cfn-lint $(TEMPLATES)

scan: venv-scan ## checkov on template.yaml and its nested templates/, offline; suppressions carry their reason in the template
	$(VENV_SCAN)/bin/checkov $(addprefix --file ,$(TEMPLATES)) --framework cloudformation --skip-download --compact --quiet

format: venv ## apply ruff's fixes and formatting
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

e2e invoke-collect invoke-evaluate invoke-track: CONFIG ?= config/queuewatch.yaml

require-config:
	@test -n "$(CONFIG)" || { echo "make build: name your config: make build CONFIG=path/to/fleet.yaml (config/queuewatch.yaml is the example: CONFIG=config/queuewatch.yaml builds it)" >&2; exit 2; }

# What a failed build leaves: neither the built template nor the staged config, so `sam package` and `sam deploy`
# refuse (the source template's ConfigLayer names a folder that is not there) instead of shipping a half build.
UNBUILD = { rm -rf $(BUILT_TEMPLATE) $(STAGED_CONFIG); echo "the build failed: nothing is left to deploy" >&2; exit 1; }

build: require-config venv-package venv-sam ## sam build of CONFIG=path/to/fleet.yaml (required): the very bytes check-config passes are deployed
	@# All or nothing: the last build's template goes first; stage-config checks CONFIG and swaps those bytes in
	@# as the layer's one file (template.yaml: ConfigLayer), or removes the staged folder; any step failing
	@# removes what the build made so far. stage-dashboard draws that file's thresholds on the dashboard.
	rm -f $(BUILT_TEMPLATE)
	$(VENV)/bin/queuewatch stage-config $(CONFIG) --into $(STAGED_CONFIG) || $(UNBUILD)
	PATH="$(dir $(PYTHON313)):$$PATH" $(SAM) build || $(UNBUILD)
	$(VENV)/bin/queuewatch stage-dashboard $(BUILT_TEMPLATE) --config $(STAGED_CONFIG)/queuewatch.yaml || $(UNBUILD)
	@# Lambda's code is read-only: without .pyc files every cold start compiles every module again.
	$(PYTHON313) -m compileall -q -j 0 --invalidation-mode unchecked-hash .aws-sam/build || $(UNBUILD)

# SAM's `--guided` asks every template parameter; this asks none. The config decides AutoscalerPrefix, its
# matcher config and WatchedAccountIds (queuewatch deploy-parameters), passed on every deploy, empty ones too:
# a parameter left out keeps its previous value. PARAMETERS comes last, so it can override them.
deploy: ## sam deploy of the last build: DEPLOY_ENV's stack and region (samconfig.toml), the config's parameters, and PARAMETERS
	@test -f $(BUILT_TEMPLATE) -a -f $(STAGED_CONFIG)/queuewatch.yaml || { echo "make deploy: nothing is built to deploy: make build CONFIG=path/to/fleet.yaml first" >&2; exit 2; }
	@derived=$$($(VENV)/bin/queuewatch deploy-parameters $(STAGED_CONFIG)/queuewatch.yaml) || exit 1; \
	echo "from $(STAGED_CONFIG)/queuewatch.yaml: $$derived"; \
	set -x; $(SAM) deploy --config-env $(DEPLOY_ENV) --template-file $(BUILT_TEMPLATE) --resolve-s3 \
	  --capabilities CAPABILITY_IAM --parameter-overrides $$derived $(PARAMETERS)

e2e: venv build ## sam local invoke of every function (collect, evaluate, track, the webhook's two, digest): the page, every events/ file; cold start
	QUEUEWATCH_E2E_REQUIRED=1 $(VENV)/bin/pytest tests/e2e -m e2e

invoke-collect: EVENT ?= events/collect_scheduled.json
invoke-collect: venv build ## sam local invoke CollectFunction on EVENT, against a moto container seeded with the incident
	$(PY) tests/e2e/sam_local.py invoke CollectFunction $(EVENT)

invoke-evaluate: EVENT ?= events/evaluate_success.json
invoke-evaluate: venv build ## sam local invoke EvaluateFunction on EVENT, against a seeded moto; prints what it paged
	$(PY) tests/e2e/sam_local.py invoke EvaluateFunction $(EVENT)

invoke-track: EVENT ?= events/track_queued.json
invoke-track: venv build ## sam local invoke TrackFunction (or WebhookFunction, for events/webhook_*.json) on EVENT, against a seeded moto
	$(PY) tests/e2e/sam_local.py invoke $(if $(findstring webhook_,$(EVENT)),WebhookFunction,TrackFunction) $(EVENT)

FLEETS ?= 10,100,1000,5000
bench: venv ## the benchmark: real ticks against a moto server per fleet size; the SLOs' and the forecast's reads per tick at 10 and 5,000 runner types; the jobs' backtest, capacity and --suggest at 14 days x 50,000 jobs a day; then docs/COST.md (FLEETS=10,100: a quick run)
	$(PY) -m bench.track
	$(PY) -m bench.slo_calls
	$(PY) -m bench.autoscaler_words
	$(PY) -m bench.forecast
	$(PY) -m bench.paths --fleets 10,100
	$(PY) -m bench.backtest_jobs
	$(PY) -m bench.capacity
	$(PY) -m bench.capacity 50000 90
	$(PY) -m bench.run --fleets $(FLEETS)

cost: venv ## docs/COST.md again from bench/results.json (the figures of the last full `make bench`)
	$(PY) -m bench.cost

clean: ## remove build output (keeps the virtual environments)
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache
