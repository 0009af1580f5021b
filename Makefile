# Two commands for a newcomer (see README): `make run` and `make test`.
SHELL := bash
CARGO ?= cargo
# Honour a shared CARGO_TARGET_DIR (several clones, one build cache).
TARGET := $(or $(CARGO_TARGET_DIR),target)
PY := target/pyenv/bin/python
ICS ?= docs/sample.ics

.PHONY: run test deps lint unit differential bench bench-engine fmt

## The main job. Until the desktop app lands: this week's agenda of a calendar.
run: deps
	$(CARGO) build --release -p kairos-cli
	$(TARGET)/release/kairos agenda $(ICS) --days 7

## Everything CI runs.
test: deps lint unit differential
	@echo "make test: all checks passed"

deps:
	@scripts/deps.sh

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

unit:
	$(CARGO) test --workspace --locked

$(PY): tests/differential/requirements.txt tests/differential/setup.sh
	tests/differential/setup.sh

differential: $(PY)
	$(CARGO) build -p kairos-cli --locked
	KAIROS_BIN=$(TARGET)/debug/kairos $(PY) tests/differential/run.py

## Calendar core vs python-dateutil (issue #2).
bench: $(PY)
	$(CARGO) run --release -p kairos-bench --bin kairos-bench --locked

## Reminder engine: lateness, burst vs Redis, daemon at 1M instances (issue #3).
## Installs redis-server and strace from Debian if missing.
bench-engine: deps
	@command -v redis-server >/dev/null && command -v strace >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server strace)
	$(CARGO) build --release -p kairos-cli --locked
	$(CARGO) run --release -p kairos-bench --bin engine-bench --locked

fmt:
	$(CARGO) fmt --all
