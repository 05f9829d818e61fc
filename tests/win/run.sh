#!/bin/sh
# The Windows build under wine: the registry record (test_winstate.exe),
# and vram.exe's status, refusals and usage. Wine has no NVIDIA adapter, so
# `on` must refuse and change nothing. Prints "ok"/"not ok" lines and
# exits 1 if any failed.
set -u
cd "$(dirname "$0")/../.."
./scripts/build-windows >/dev/null || { echo "not ok - build-windows"; exit 1; }
WINEPREFIX=$(mktemp -d /tmp/vram-wine-XXXXXX)
export WINEPREFIX WINEDEBUG=-all
trap 'wineserver -k 2>/dev/null; rm -rf "$WINEPREFIX"' EXIT
FAIL=0
ok() { echo "ok - $1"; }
not_ok() { FAIL=$((FAIL + 1)); echo "not ok - $1"; shift; for l in "$@"; do echo "#   $l"; done; }
check() { if printf '%s\n' "$2" | grep -Eq -- "$3"; then ok "$1"; else not_ok "$1" "no /$3/ in:" "$2"; fi; }
# vram ARGS: sets OUT (without wine's CRs) and RC
vram() { wine build-win/vram.exe "$@" >"$WINEPREFIX/out" 2>&1; RC=$?; OUT=$(tr -d '\r' <"$WINEPREFIX/out"); }
hwsch() { wine reg query 'HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers' /v HwSchMode 2>&1 | tr -d '\r'; }

OUT=$(wine build-win/test_winstate.exe 2>&1 | tr -d '\r')
echo "$OUT" | grep -E '^(not )?ok|^#'
echo "$OUT" | grep -q '^0 failed$' || FAIL=$((FAIL + 1))

BEFORE=$(hwsch)
vram headless
check "status: exit 0" "$RC" "^0$"
check "status: the adapters and the scheduling setting" "$OUT" "hardware-accelerated GPU scheduling: "
vram headless on --yes
check "on without an NVIDIA adapter: exit 1" "$RC" "^1$"
check "on without an NVIDIA adapter: says why" "$OUT" "no NVIDIA display adapter"
check "on refused: HwSchMode untouched" "$(hwsch)" "^$(printf '%s' "$BEFORE" | head -1)"
[ "$(hwsch)" = "$BEFORE" ] && ok "on refused: the registry is as before" || not_ok "on refused: the registry is as before"
vram headless off
check "off when not on: nothing to restore" "$OUT" "headless is not on"
vram headless sideways
check "unknown verb: exit 2" "$RC" "^2$"
vram status
check "other commands: exit 2, and why" "$RC:$OUT" "^2:vram: on Windows only .vram headless. is available"
echo "$FAIL failed"
[ "$FAIL" -eq 0 ]
