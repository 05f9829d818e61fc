#!/bin/bash
# ui_cpu.sh: what the dashboard costs the daemon, and what it weighs.
# vram serve runs on the simulated driver (two 16 GiB GPUs, two test
# models resident, a proxy address with a token), in a session of its own.
# Each round measures the daemon's CPU time (the scheduler's nanoseconds on
# a CPU, /proc/PID/task/*/schedstat, all its threads)
# over SECONDS with nobody watching (the anchor: the daemon samples the GPUs
# every second anyway) and over SECONDS with three tabs of /ui open in
# headless chromium (bench/ui_pages.mjs; each tab follows the event stream
# with a snapshot and a models event every second, and a model's log), in
# alternating order. Reports medians, in % of one core, and the page's
# weight (every file it loads, as served).
# Usage: bench/ui_cpu.sh [SECONDS [ROUNDS]]  (default 60 s, 3 rounds;
# needs chromium and tests/ui's npm ci; build/ built, or B=folder)
set -eu
cd "$(dirname "$0")/.."
D=${1:-60}
R=${2:-3}
B=${B:-build}
VRAM=$B/vram
[ -x "$VRAM" ] && [ -x "$B/tests/testmodel" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
[ -d tests/ui/node_modules/playwright-core ] || { echo "npm ci --prefix tests/ui first"; exit 2; }
T=$(mktemp -d /tmp/vram-ui-bench-XXXXXX)
export VRAM_SIM=$PWD/tests/fixtures/machines/two-16g.json LD_LIBRARY_PATH=$PWD/$B/sim
export VRAM_SOCKET=$T/vram.sock VRAM_SIM_STATE=$T/ledger VRAM_RUN_DIR=$T
PORT=$((30000 + $$ % 20000))
cp "$B/tests/testmodel" "$T/testmodel-uibench"
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
port_base = $((PORT + 10))
listen = 127.0.0.1:$PORT
token = bench

[model m1]
command = $T/testmodel-uibench --bytes 2G
vram = 2.5G
gpu = 0
swap = driver

[model m2]
command = $T/testmodel-uibench --bytes 3G
vram = 3.5G
gpu = 1
swap = driver
CONF
setsid "$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 1; pkill -9 -f "$T/testmodel-uibench" || true; rm -rf "$T"' EXIT
for _ in $(seq 1 100); do curl -s -m 1 -o /dev/null "http://127.0.0.1:$PORT/ui" && break; sleep 0.05; done
"$VRAM" load m1 >/dev/null
"$VRAM" load m2 >/dev/null

ns() { cat /proc/"$DAEMON"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }
# cpu_over: the daemon's CPU over D seconds, in % of one core
cpu_over() {
    local a b t0 t1
    a=$(ns)
    t0=$(date +%s%N)
    sleep "$D"
    b=$(ns)
    t1=$(date +%s%N)
    echo "$a $b $t0 $t1" | awk '{ printf "%.3f", ($2 - $1) / ($4 - $3) * 100 }'
}
idle() { cpu_over; }
pages() {
    node bench/ui_pages.mjs "http://127.0.0.1:$PORT" bench 3 $((D + 30)) >"$T/pages.out" 2>&1 &
    local P=$! c
    for _ in $(seq 1 600); do grep -q '^open' "$T/pages.out" && break; sleep 0.1; done
    grep -q '^open' "$T/pages.out" || { cat "$T/pages.out" >&2; exit 1; }
    sleep 2 # the tabs' first requests are over
    c=$(cpu_over)
    kill $P 2>/dev/null; wait $P 2>/dev/null || true
    echo "$c"
}
echo "machine: $(nproc) cores, $(uname -r), $(chromium --version 2>/dev/null); $D s per run, $R rounds; $(date -u +%FT%TZ)"
printf '%-5s %-14s %10s\n' round what cpu_pct
for r in $(seq 1 "$R"); do
    if [ $((r % 2)) -eq 1 ]; then order="idle pages"; else order="pages idle"; fi
    for k in $order; do
        c=$($k)
        printf '%-5s %-14s %10s\n' "$r" "$k" "$c"
        echo "$k $c" >>"$T/sum"
    done
done
awk 'function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
        t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { n[$1]++; v[$1, n[$1]] = $2 }
    END { for (k in n) { for (i = 1; i <= n[k]; i++) a[i] = v[k, i]; m[k] = med(a, n[k]) }
        printf "medians: nobody watching %.3f %% of one core; three pages open %.3f %% (+%.3f)\n",
            m["idle"], m["pages"], m["pages"] - m["idle"] }' "$T/sum"

# the weight: every file the page loads, as served
W=0
for f in /ui $(curl -s "http://127.0.0.1:$PORT/ui" | grep -o '"/ui/[^"]*"' | tr -d '"' | sort -u); do
    n=$(curl -s "http://127.0.0.1:$PORT$f" | wc -c)
    z=$(curl -s "http://127.0.0.1:$PORT$f" | gzip -9 | wc -c)
    printf 'weight: %-16s %7d bytes (%d gzipped)\n' "$f" "$n" "$z"
    W=$((W + n))
done
echo "weight: all files $W bytes ($((W / 1024)) KiB)"
