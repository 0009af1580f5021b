#!/usr/bin/env bash
# Installs what building and testing Kairos needs on Debian 12, and nothing
# else. Idempotent: packages already present are not touched, so a second run
# takes well under a second. Needs root (or sudo) only when something is missing.
set -euo pipefail

# Debian packages:
# - a C toolchain for bundled C code (SQLite), pkg-config, Python's venv for
#   the differential tests;
# - the desktop app (Tauri 2 on WebKitGTK 4.1, tray, notifications);
# - its tests: Xvfb, a private D-Bus session with a test-owned notification
#   server (python3-dbus, python3-gi), WebKitWebDriver (webkit2gtk-driver),
#   xdotool (finds the app's window to close it), and Chromium for the
#   UI's browser tests (playwright-core drives it);
# - PostgreSQL 15 for the sync server's PostgreSQL store tests (they make a
#   throw-away cluster with its initdb; the packaged cluster is not used);
# - systemd for `systemd-analyze verify` of deploy/kairos-server.service
#   (a container image may lack it; nothing is started).
APT_PACKAGES=(build-essential pkg-config python3-venv postgresql systemd
  libwebkit2gtk-4.1-dev libxdo-dev libssl-dev libayatana-appindicator3-dev librsvg2-dev
  xvfb xauth dbus dbus-x11 python3-dbus python3-gi webkit2gtk-driver xdotool chromium procps)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The Windows check (make check-windows): mingw-w64's C compiler for the
# bundled SQLite, and Wine to run the Windows tests. Without recommends: Wine's
# pull in 32-bit Wine, fonts and GL, none of which the tests need.
WINDOWS_PACKAGES=(gcc-mingw-w64-x86-64 wine64)

missing_windows=()
for p in "${WINDOWS_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_windows+=("$p")
done
if ((${#missing[@]} + ${#missing_windows[@]})); then
  echo "deps: installing Debian packages: ${missing[*]} ${missing_windows[*]}"
  if [[ $(id -u) -eq 0 ]]; then SUDO=(); elif command -v sudo >/dev/null; then SUDO=(sudo); else
    echo "deps: need root to install: ${missing[*]} ${missing_windows[*]} (run: sudo apt-get install ${missing[*]} ${missing_windows[*]})" >&2
    exit 1
  fi
  "${SUDO[@]}" apt-get update -qq
  if ((${#missing[@]})); then
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "${missing[@]}"
  fi
  if ((${#missing_windows[@]})); then
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing_windows[@]}"
  fi
fi

if ! command -v npm >/dev/null; then
  echo "deps: npm not found. Install Node.js 20 or later (e.g. apt-get install nodejs npm), then rerun." >&2
  exit 1
fi

if ! command -v cargo >/dev/null; then
  echo "deps: cargo not found. Install Rust with rustup (https://rustup.rs), then rerun." >&2
  exit 1
fi

# Rust's standard library for Windows and macOS (make check-windows,
# check-macos; the toolchain is rust-toolchain.toml's).
installed=$(rustup target list --installed 2>/dev/null || true)
for t in x86_64-pc-windows-gnu x86_64-apple-darwin; do
  if ! grep -qx "$t" <<<"$installed"; then
    echo "deps: adding the Rust target $t"
    rustup target add "$t"
  fi
done

# aiosmtpd, the real SMTP server of kairos-server's e-mail tests, in a venv
# under target/ (tests/smtp/setup.sh; idempotent).
"$(dirname "${BASH_SOURCE[0]}")/../tests/smtp/setup.sh"
