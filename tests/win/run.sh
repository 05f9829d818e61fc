#!/bin/sh
# The Windows build under wine. The registry record (test_winstate.exe) and
# vram headless (wine has no NVIDIA adapter: `on` must refuse and change
# nothing); then status, doctor and top against the simulated driver,
# installed as nvml.dll in wine's System32 where the NVIDIA driver puts
# it: the seed's desktop (dwm.exe, explorer.exe...) with a finished
# training's python.exe, and the same desktop under WDDM, whose per-process
# figures come from a recorded counter set (sim pdh.dll). With VRAM set to a
# Linux build of vram, its status --json on the same machine file must give
# the same breakdown. Prints "ok"/"not ok" lines and exits 1 if any failed.
set -u
cd "$(dirname "$0")/../.."
./scripts/build-windows >/dev/null || { echo "not ok - build-windows"; exit 1; }
WINEPREFIX=$(mktemp -d /tmp/vram-wine-XXXXXX)
export WINEPREFIX WINEDEBUG=-all
trap 'wineserver -k 2>/dev/null; rm -rf "$WINEPREFIX"' EXIT
# one wineserver for every run below (each then takes a tenth of a second,
# not five); the trap ends it. The prefix is made first, its services
# started with no pipe of ours to hold open.
wineboot -i >/dev/null 2>&1 </dev/null
wineserver -p
FAIL=0
ok() { echo "ok - $1"; }
not_ok() { FAIL=$((FAIL + 1)); echo "not ok - $1"; shift; for l in "$@"; do printf '#   %s\n' "$l"; done; }
check() { if printf '%s\n' "$2" | grep -Eq -- "$3"; then ok "$1"; else not_ok "$1" "no /$3/ in:" "$2"; fi; }
check_not() { if printf '%s\n' "$2" | grep -Eq -- "$3"; then not_ok "$1" "/$3/ in:" "$2"; else ok "$1"; fi; }
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:      $2" "expected: $3"; fi; }
# vram ARGS: sets OUT (without wine's CRs) and RC; ALL gathers every output
ALL=""
vram() {
    wine build-win/vram.exe "$@" >"$WINEPREFIX/out" 2>&1
    RC=$?
    OUT=$(tr -d '\r' <"$WINEPREFIX/out")
    ALL="$ALL
$OUT"
}
hwsch() { wine reg query 'HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers' /v HwSchMode 2>&1 | tr -d '\r'; }
winpath() { printf 'Z:%s' "$(realpath "$1")" | tr / '\\'; }

OUT=$(wine build-win/test_winstate.exe 2>&1 | tr -d '\r')
echo "$OUT" | grep -E '^(not )?ok|^#'
echo "$OUT" | grep -q '^0 failed$' || FAIL=$((FAIL + 1))

BEFORE=$(hwsch)
vram headless
check "headless status: exit 0" "$RC" "^0$"
check "headless status: the adapters and the scheduling setting" "$OUT" "hardware-accelerated GPU scheduling: "
vram headless on --yes
check "on without an NVIDIA adapter: exit 1" "$RC" "^1$"
check "on without an NVIDIA adapter: says why" "$OUT" "no NVIDIA display adapter"
check "on refused: HwSchMode untouched" "$(hwsch)" "^$(printf '%s' "$BEFORE" | head -1)"
[ "$(hwsch)" = "$BEFORE" ] && ok "on refused: the registry is as before" || not_ok "on refused: the registry is as before"
vram headless off
check "off when not on: nothing to restore" "$OUT" "headless is not on"
vram headless sideways
check "unknown verb: exit 2" "$RC" "^2$"
vram run -- python.exe
check "a Linux-only command: exit 2, and the commands there are" "$RC:$OUT" "^2:vram: unknown command 'run'"
check "... and what Windows lacks" "$OUT" "no caps, no swap, no daemon"

# no driver: exit 3, and where vram looked
vram status
check "no nvml.dll: exit 3" "$RC" "^3$"
check "no nvml.dll: says where it looked" "$OUT" "cannot load nvml.dll .*System32 and Program Files.NVIDIA Corporation.NVSMI"

# the simulated driver where the NVIDIA driver puts nvml.dll
SYS32="$WINEPREFIX/drive_c/windows/system32"
cp build-win/nvml.dll "$SYS32/"
VRAM_SIM=$(winpath tests/fixtures/machines/win-desktop.json)
export VRAM_SIM

vram status
check "status: exit 0" "$RC" "^0$"
check "status: the card" "$OUT" "^GPU 0  NVIDIA GeForce RTX 5070 Ti   16.0 GiB   used 5.10 GiB   free 10.9 GiB$"
check "status: the desktop's processes named, the display tax per process" "$OUT" \
    "desktop / display +1.60 GiB   dwm.exe 0.90 GiB, explorer.exe 0.30 GiB, msedge.exe 0.25 GiB, \+2 more"
check "status: the training leftover is a workload" "$OUT" "workloads +3.00 GiB   python.exe 3.00 GiB"
check "status: the driver's reserve" "$OUT" "driver reserved +0.45 GiB"
vram status --all
check "status --all: the power draw and the display too" "$OUT" "^GPU 0  NVIDIA GeForce RTX 5070 Ti   16.0 GiB   used 5.10 GiB   free 10.9 GiB   24 W   display: active$"
vram status --processes
check "status -p: dwm.exe with its path, as NVML names it" "$OUT" \
    "4194404 .* display +compute\+graphics +921.6 MiB .*C:.Windows.System32.dwm.exe"
check "status -p: NVDisplay.Container.exe is the desktop's" "$OUT" "4194420 .* display +graphics"
vram status --json
WJ=$OUT
expect_eq "status --json: the desktop's bytes" "$(printf "%s\n" "$WJ" | jq '.gpus[0].breakdown.display')" \
    $((966367641 + 322122547 + 268435456 + 107374182 + 53687091))
expect_eq "status --json: roles by name" \
    "$(printf "%s\n" "$WJ" | jq -c '[.gpus[0].processes[] | [.name, .role]] | sort')" \
    '[["NVDisplay.Container.exe","display"],["SearchHost.exe","display"],["dwm.exe","display"],["explorer.exe","display"],["msedge.exe","display"],["python.exe","workload"]]'
LINUX=${VRAM:-}
[ -z "$LINUX" ] && for b in build-check/vram build/vram; do [ -x "$b" ] && LINUX=$b && break; done
if [ -n "$LINUX" ]; then
    LJ=$("$LINUX" --sim tests/fixtures/machines/win-desktop.json status --json)
    check "Linux's vram read the same machine" "$(printf '%s\n' "$LJ" | jq '.gpus | length')" "^1$"
    # what may differ: the clock, and the driver's CUDA version read another way
    norm='del(.taken_ms) | .gpus[].processes |= sort_by(.pid) | .gpus[].processes[] |= {pid, name, role, type, used, used_source}'
    expect_eq "status --json: the same breakdown and processes as Linux's vram on this machine" \
        "$(printf "%s\n" "$WJ" | jq -cS "$norm | .gpus")" "$(printf "%s\n" "$LJ" | jq -cS "$norm | .gpus")"
else
    ok "# SKIP no Linux build of vram to compare with (VRAM=path)"
fi

vram doctor
check "doctor: exit 1 (things to do)" "$RC" "^1$"
check "doctor: the desktop's share, by process" "$OUT" \
    "GPU 0: the desktop holds 1.60 GiB \(dwm.exe, explorer.exe, msedge.exe, SearchHost.exe, NVDisplay.Container.exe\)"
check "doctor: the training leftover named" "$OUT" "pid 4194440 \(python.exe\) holds 3.00 GiB while the GPU does no work"
check "doctor: and how to end it" "$OUT" "fix: if it is finished: taskkill /PID 4194440"
check "doctor: hardware-accelerated GPU scheduling" "$OUT" "hardware-accelerated GPU scheduling is not set"
check "doctor: the driver's reserve" "$OUT" "the driver reserves 460.8 MiB"
vram doctor --json
expect_eq "doctor --json: the findings" "$(printf "%s\n" "$OUT" | jq -c '[.findings[].kind]')" \
    '["display","reserved","idle","gpu_scheduling"]'

vram top --once -d 0.2
check "top --once: the header" "$OUT" "^vram top +sort vram +every 0.2s +driver 581.57"
check "top --once: the card's line" "$OUT" "^0  RTX 5070 Ti +5.1/16.0 +GiB \[r+d+w+"
check "top --once: the breakdown" "$OUT" "reserved 0.45  display 1.60  work 3.00  other 0.00  unattributed 0.05 GiB"
check "top --once: the meters" "$OUT" "^   GPU +[0-9]+% .* MBW +[0-9]+% "
check "top --once: 80 columns, as on Linux" "$OUT" "^ +PID USER +GPU +VRAM +SM% +CPU% +RSS +TIME COMMAND"
check "top --once: python.exe first (largest)" "$(printf "%s\n" "$OUT" | grep -A1 '^ *PID')" "4194440 .* 0 +3.00 GiB"
check "top --once: no CPU % on Windows: -, not 0" "$(printf "%s\n" "$OUT" | grep '^ *4194440 ')" " 3.00 GiB +[0-9-]+ +- "
COLUMNS=160 LINES=40 vram top --once -d 0.2
check "top --once at \$COLUMNS: dwm.exe as display" "$OUT" "4194404 .* display +C\+G +921.6 MiB"
vram top --once --json -d 0.2 --filter role:display --sort pid
expect_eq "top --once --json: the filter and the sort, as on Linux" \
    "$(printf "%s\n" "$OUT" | jq -c '[.top.filter, .top.sort, .top.rows[0].pid]')" '["role:display","pid",4194404]'
vram top --once --filter bogus:1
check "top: a filter that does not parse: exit 2" "$RC:$OUT" "^2:vram top: --filter: 'bogus': no such filter"
vram top
check "top without a console: exit 2, and what to use" "$RC:$OUT" "^2:vram top: needs a console; for scripts use vram status --watch or vram top --once"

# a live leftover: python.exe started here, holding 3 GiB in the simulated
# driver: named from the process table, and ended the way doctor says
mkfifo "$WINEPREFIX/in" "$WINEPREFIX/pid"
wine build-win/python.exe <"$WINEPREFIX/in" >"$WINEPREFIX/pid" 2>/dev/null &
LEFT=$!
exec 4>"$WINEPREFIX/in"
read -r LPID <"$WINEPREFIX/pid"
LPID=$(printf '%s' "$LPID" | tr -d '\r')
jq --argjson p "$LPID" '.gpus[0].processes |= map(if .name | test("python") then .pid = $p else . end)' \
    tests/fixtures/machines/win-desktop.json >"$WINEPREFIX/live.json"
VRAM_SIM=$(winpath "$WINEPREFIX/live.json") vram status --processes
check "live python.exe: its path and owner from the process table" "$OUT" \
    "^ +$LPID [^?].* workload +compute\+graphics +3.00 GiB running +Z:.*build-win.python.exe$"
VRAM_SIM=$(winpath "$WINEPREFIX/live.json") vram doctor
check "live python.exe: doctor names it" "$OUT" "pid $LPID \(python.exe\) holds 3.00 GiB while the GPU does no work"
FIX=$(printf '%s\n' "$OUT" | sed -n "s/.*fix: if it is finished: \(taskkill \/PID $LPID\) (add \(\/F\).*/\1 \2/p")
check "live python.exe: and how to end it" "$FIX" "^taskkill /PID $LPID /F$"
# shellcheck disable=SC2086
wine $FIX >/dev/null 2>&1
check "the fix doctor names works: taskkill says done" "$?" "^0$"
exec 4>&-
wait $LEFT
# ended by taskkill, not by its input closing (which exits with 3)
check "... and python.exe was ended by it" "$?" "^[^3]"

# WDDM: NVML lists the processes without their memory
export VRAM_SIM="$(winpath examples/windows-desktop.json)"
vram status
check "WDDM, no counters: the driver model" "$OUT" "free 13.9 GiB   WDDM$"
check "WDDM, no counters: n/a, not a guess" "$OUT" "desktop / display +0.00 GiB   dwm.exe n/a"
check "WDDM, no counters: says so" "$OUT" "note: WDDM hides 5 processes' memory from the driver and Windows' GPU counters gave none"
vram doctor
check "WDDM, no counters: doctor says where to look" "$OUT" "Task Manager's Details tab"
# the recorded counter set, through a pdh.dll in System32 that answers from it
cp build-win/pdh.dll "$SYS32/"
export VRAM_SIM_PDH="$(winpath tests/fixtures/wddm/windows-desktop.csv)" WINEDLLOVERRIDES=pdh=n
vram status
check "WDDM, counters: the desktop's share from Windows's figures" "$OUT" \
    "desktop / display +1.60 GiB   dwm.exe 0.90 GiB, explorer.exe 0.30 GiB, msedge.exe 0.25 GiB"
check "WDDM, counters: says where the figures come from" "$OUT" \
    "note: WDDM gives the driver no per-process figures: these are Windows' GPU counters"
vram status --json
expect_eq "WDDM, counters: JSON says so per process" \
    "$(printf "%s\n" "$OUT" | jq -c '[.gpus[0].driver_model, ([.gpus[0].processes[].used_source] | unique)]')" \
    '["wddm",["windows_counters"]]'
expect_eq "WDDM, counters: the same breakdown as with the driver's figures" \
    "$(printf "%s\n" "$OUT" | jq -c '.gpus[0].breakdown | [.reserved, .display, .workloads, .unattributed]')" \
    "$(printf "%s\n" "$WJ" | jq -c '.gpus[0].breakdown | [.reserved, .display, 0, .unattributed]')"
vram doctor
check "WDDM, counters: doctor names the desktop's share" "$OUT" "the desktop holds 1.60 GiB \(dwm.exe"
unset VRAM_SIM_PDH WINEDLLOVERRIDES

# every command vram.exe names exists on Windows, and no Linux tool is named
for c in status top doctor headless; do vram "$c" --help; done
vram --help
vram help doctor
check "help COMMAND: the command's help, exit 0" "$RC:$OUT" "^0:usage: vram doctor \[--json\]"
vram help reclaim
check "help of a Linux-only command: exit 2, and why" "$RC:$OUT" "^2:vram help: 'reclaim' is not a command of vram.exe"
BAD=$(printf '%s\n' "$ALL" | grep -oE "vram [a-z]+" | sort -u | grep -vE "^vram (status|top|doctor|headless|help|run|serve)$")
expect_eq "every 'vram COMMAND' named is one of Windows's" "$BAD" ""
check_not "no Linux command is suggested" "$ALL" "vram reclaim|sudo |kill -|nvidia-persistenced|--proc-root|vram --sim"
echo "$FAIL failed"
[ "$FAIL" -eq 0 ]
