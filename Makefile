# Two commands for a newcomer (see README): `make run` and `make test`.
SHELL := bash
CARGO ?= cargo
# Honour a shared CARGO_TARGET_DIR (several clones, one build cache).
TARGET := $(or $(CARGO_TARGET_DIR),target)
PY := target/pyenv/bin/python
# Radicale for kairos-caldav's tests (tests/caldav/setup.sh).
CALDAV_PY := target/caldav-pyenv/bin/python
# aiosmtpd for kairos-server's e-mail tests (tests/smtp/setup.sh).
SMTP_PY := target/smtp-pyenv/bin/python
ICS ?= docs/sample.ics

.PHONY: run test deps ui ui-test lint unit differential e2e check-windows check-macos bench bench-engine bench-chaos bench-app bench-app-sync fmt deploy-check

## The main job: the desktop app. On a machine with no display (no $DISPLAY
## or $WAYLAND_DISPLAY) the fallback is the headless reminder daemon on a
## database holding $(ICS), printing each reminder as it fires.
run: deps ui
	@if [[ -n "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]]; then \
	  $(CARGO) build --release -p kairos-desktop && exec $(TARGET)/release/kairos-desktop; \
	else \
	  echo "make run: no display; running the headless daemon instead (Ctrl-C stops it)"; \
	  $(CARGO) build --release -p kairos-cli && \
	  $(TARGET)/release/kairos --db $(TARGET)/run/kairos.db import $(ICS) && \
	  $(TARGET)/release/kairos --db $(TARGET)/run/kairos.db upcoming --limit 5 && \
	  exec $(TARGET)/release/kairos --db $(TARGET)/run/kairos.db daemon --sink stdout; \
	fi

## Everything CI runs.
test: deps ui lint ui-test unit deploy-check differential e2e check-windows check-macos
	@echo "make test: all checks passed"

## The web UI: installed from package-lock.json, built into ui/dist (the
## desktop binary embeds it, so this comes before any cargo build of it).
ui: ui/node_modules/.package-lock.json
	cd ui && npm run build

ui/node_modules/.package-lock.json: ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund

## UI logic (Vitest) and the built UI in Chromium with the IPC mocked.
ui-test: ui
	cd ui && npm test && npm run test:browser

## The real app binary in a real webview under Xvfb, with a test-owned
## notification server on a private session bus (tests/e2e); then the app
## on a paired database with a real kairos-server and the CLI as a second
## device. The CalDAV step runs Radicale from tests/caldav/setup.sh's venv.
e2e: $(CALDAV_PY)
	$(CARGO) build -p kairos-desktop -p kairos-cli -p kairos-server --locked
	tests/e2e/selftest.sh
	tests/e2e/run_app_test.sh $(TARGET)/debug/kairos-desktop
	tests/e2e/run_sync_test.sh $(TARGET)/debug/kairos-desktop

## Windows (issue #18): the whole workspace type-checked for
## x86_64-pc-windows-gnu (the desktop shell included; it embeds ui/dist),
## kairos.exe and kairos-server.exe cross-built, and the engine's, host's and
## CLI's tests run under Wine (scripts/wine/run.sh; its prefix lives in the
## target directory).
WINDOWS := x86_64-pc-windows-gnu
check-windows: deps ui
	$(CARGO) check --target $(WINDOWS) --workspace --all-targets --locked
	$(CARGO) build --target $(WINDOWS) -p kairos-cli -p kairos-server --locked
	CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$(CURDIR)/scripts/wine/run.sh \
	  $(CARGO) test --target $(WINDOWS) -p kairos-engine -p kairos-host --locked
	# The CLI's tests one at a time: run in parallel under Wine 8, one of
	# them now and then waits forever on a child's output pipe after the
	# child is gone (2 of 2 parallel runs on 2026-12-06, a different test
	# each time; 0 of 2 serial runs, 136 s and 117 s).
	CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$(CURDIR)/scripts/wine/run.sh \
	  $(CARGO) test --target $(WINDOWS) -p kairos-cli --locked -- --test-threads=1

## macOS: only the crates without C parts (no macOS SDK here for bundled
## SQLite or ring): the calendar core and the sync protocol.
check-macos: deps
	$(CARGO) check --target x86_64-apple-darwin -p kairos-core -p kairos-proto --locked

deps:
	@scripts/deps.sh

lint: ui
	@! grep -rln "@tauri-apps/" ui/src --include=*.ts | grep -v "^ui/src/ipc/" || \
	  (echo "lint: only ui/src/ipc may import @tauri-apps/*" >&2; exit 1)
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

## Every crate's tests (kairos-caldav's start a real Radicale and Xandikos:
## their venv first); then the sync server's suite again with every
## server's store in PostgreSQL (a throw-away cluster, tests/it/pg.rs).
unit: $(CALDAV_PY) $(SMTP_PY)
	$(CARGO) test --workspace --locked
	KAIROS_TEST_STORE=postgres $(CARGO) test -p kairos-server --locked

## The systemd unit (deploy/) through `systemd-analyze verify`, its
## ExecStart pointed at the built binary (verify wants it to exist).
deploy-check:
	$(CARGO) build -p kairos-server --locked
	deploy/check.sh $(TARGET)/debug/kairos-server

$(SMTP_PY): tests/smtp/requirements.txt tests/smtp/setup.sh scripts/pyenv.sh
	tests/smtp/setup.sh

## Two-way CalDAV (issue #19 §2) against a real Radicale on 127.0.0.1.
$(CALDAV_PY): tests/caldav/requirements.txt tests/caldav/setup.sh scripts/pyenv.sh
	tests/caldav/setup.sh

.PHONY: caldav
caldav: $(CALDAV_PY)
	$(CARGO) test -p kairos-caldav --locked

$(PY): tests/differential/requirements.txt tests/differential/setup.sh scripts/pyenv.sh
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

## The SIGKILL window (issue #20): the real daemon killed mid-burst and
## restarted, ten times; lost and repeated keys, repeats marked.
bench-chaos: deps
	$(CARGO) build --release -p kairos-cli --locked
	$(CARGO) run --release -p kairos-bench --bin chaos-bench --locked -- --kairos $(TARGET)/release/kairos

## Subscriptions (issue #19): CPU per no-change (304) refresh against a
## local HTTP server.
.PHONY: bench-feeds
bench-feeds:
	$(CARGO) run --release -p kairos-bench --bin feed-bench --locked

## Desktop app (issue #4): start-up to first view, idle CPU (window open and
## closed to the tray), RSS with 10,000 events, sizes of the release binary and
## of the .deb (npm @tauri-apps/cli). Installs xdotool from Debian if missing.
bench-app: deps ui
	@command -v xdotool >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq xdotool)
	$(CARGO) build --release -p kairos-desktop -p kairos-cli --locked
	/usr/bin/python3 scripts/bench_app.py

## The desktop app on sync (issue #18, "Numbers"): `kairos dismiss` on the
## CLI device -> CloseNotification in the app (p50/p99 over 100 reminders),
## and start to first view with sync down vs no sync. The e2e tests' debug
## binaries, one private session bus and Xvfb display; not part of `make test`.
bench-app-sync: deps ui
	$(CARGO) build -p kairos-desktop -p kairos-cli -p kairos-server --locked
	timeout 900 dbus-run-session -- xvfb-run -a -s "-screen 0 1280x860x24" \
	  /usr/bin/python3 scripts/bench_app_sync.py $(TARGET)/debug/kairos-desktop $(APP_SYNC_ARGS)

## Sync (issue #10): acknowledgement propagation over 2,000 WebSockets, the
## real devices end to end, 10,000 idle connections, catch-up, server start
## and durable ingest (against Redis if redis-server is installed). Options
## go in SYNC_BENCH_ARGS, e.g. `make bench-sync SYNC_BENCH_ARGS=--quick`.
.PHONY: bench-sync
bench-sync:
	$(CARGO) build --release -p kairos-server -p kairos-cli --locked
	$(CARGO) build --release -p kairos-bench --bin sync-bench --locked
	$(TARGET)/release/sync-bench $(SYNC_BENCH_ARGS)

## Server reminders (issue #21 §3): 100,000 webhook reminders due in the same
## second, two instances on a throw-away PostgreSQL (and one killed halfway),
## one on SQLite, against a Redis sorted set + Lua pop; exits non-zero if a
## delivery is lost or duplicated. Needs postgresql and redis-server. Options
## go in REMIND_BENCH_ARGS, e.g. `REMIND_BENCH_ARGS="--reminders 2000"`.
.PHONY: bench-remind
bench-remind: deps
	@command -v redis-server >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server)
	$(CARGO) build --release -p kairos-server -p kairos-bench --bin kairos-server --bin remind-bench --locked
	$(TARGET)/release/remind-bench $(REMIND_BENCH_ARGS)

fmt:
	$(CARGO) fmt --all
