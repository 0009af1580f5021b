#!/usr/bin/env bash
# Cargo's runner for x86_64-pc-windows-gnu (CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER):
# runs a Windows test binary under Debian's Wine 8, in a prefix of our own
# ($KAIROS_WINEPREFIX, default <target dir>/wine) that holds a stand-in for
# bcryptprimitives.dll (see bcryptprimitives.c). Made on first use.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${CARGO_TARGET_DIR:-$here/../../target}
export WINEPREFIX=${KAIROS_WINEPREFIX:-$target/wine}
export WINEDEBUG=${WINEDEBUG:--all}
shim=$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll
if [[ ! -f $shim ]]; then
  mkdir -p "$WINEPREFIX"
  /usr/lib/wine/wine64 wineboot --init >/dev/null 2>&1 || true
  /usr/lib/wine/wineserver -w || true
  x86_64-w64-mingw32-gcc -O2 -shared -o "$shim.tmp" \
    "$here/bcryptprimitives.c" "$here/bcryptprimitives.def" -lbcrypt
  mv "$shim.tmp" "$shim"
fi
exec /usr/lib/wine/wine64 "$@"
