#!/bin/sh
# flake_hunt.sh [TEST...]: each command-line test that uses a terminal,
# sockets or time, run RUNS times (default 20) with meson test --repeat
# (two at a time, as meson runs them: a test also meets a copy of itself)
# beside BURNERS CPU burners (default 2: shells spinning at nice 0). A
# test stops at its first failure (meson's --repeat does); its log is kept
# in OUT (default build/flake-hunt/TEST.log). Prints a table last: runs
# passed of runs asked, and the wall time.
#   ninja -C build && bench/flake_hunt.sh                 # the default list
#   RUNS=5 BURNERS=0 bench/flake_hunt.sh switch swap      # some, no burners
# Needs a build with the tests (meson setup build), and what the tests need
# (scripts/deps --test, the npm folders of tests/ui and tests/clients).
set -u
cd "$(dirname "$0")/.."
RUNS=${RUNS:-20}
BURNERS=${BURNERS:-2}
OUT=${OUT:-build/flake-hunt}
TESTS=${*:-top_tmux completion serve serve_check proxy proxy_http proxy_limits switch swap swap_tail
    swap_ipc swap_pools swap_chunks preempt withdraw model_group multigpu crashstart knobs names
    cap run run_gpus reclaim service served security shared tenants ui browser clients}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:verify_asan_link_order=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
mkdir -p "$OUT"
B=""
i=0
while [ $i -lt "$BURNERS" ]; do
    sh -c 'while :; do :; done' &
    B="$B $!"
    i=$((i + 1))
done
trap 'for p in $B; do kill "$p" 2>/dev/null; done' EXIT
: >"$OUT/table"
for t in $TESTS; do
    t0=$(date +%s)
    meson test -C build --no-rebuild --repeat "$RUNS" --print-errorlogs "$t" >"$OUT/$t.log" 2>&1
    cp build/meson-logs/testlog.json "$OUT/$t.json" 2>/dev/null
    ok=$(jq -s '[.[] | select(.result == "OK")] | length' "$OUT/$t.json" 2>/dev/null)
    bad=$(jq -s '[.[] | select(.result != "OK" and .result != "SKIP")] | length' "$OUT/$t.json" 2>/dev/null)
    line=$(printf '%-14s %3s of %s passed%s, %s s, load %s' "$t" "${ok:-?}" "$RUNS" \
        "$([ "${bad:-0}" -gt 0 ] && echo ", FAILED (log: $OUT/$t.log)")" "$(($(date +%s) - t0))" \
        "$(cut -d' ' -f1 /proc/loadavg)")
    echo "$line" | tee -a "$OUT/table"
done
echo
echo "flake hunt: $RUNS runs each, $BURNERS burners, $(nproc) cores"
cat "$OUT/table"
