#!/bin/bash
# gpu_serve.sh: vram serve on a real GPU. Four PyTorch "models" (random
# Llama-shaped transformers of 2, 4, 8 and 16 GiB, bench/gpu/serve_model.py)
# under a 24 GiB budget that cannot hold them all. Measures per model: cold
# start (to healthy), suspend and resume through the daemon (the driver's
# process checkpoint), and checks that generation and a weight checksum are
# the same after resume as before suspend. Expects .devbuild/ (vram).
set -u
. "$(dirname "$0")/serve_user.sh" # as root, the models run as vram-model
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
B=$PWD/.devbuild
T=$(mktemp -d)
export VRAM_SOCKET=$T/vram.sock
ldd "$B/vram" | grep -E "not found" && { echo "missing libraries for vram"; exit 1; }
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $OUT/logs
budget = 24G
port_base = 24100
CONF
for g in 2 4 8 16; do
    cat >>"$T/vram.conf" <<CONF

[model m$g]
command = python3 $PWD/bench/gpu/serve_model.py --gib $g
vram = $((g + 1))G
idle = 0
start_timeout = 5m
CONF
done
"$B/vram" serve --config "$T/vram.conf" >"$OUT/serve.log" 2>&1 &
D=$!
for _ in $(seq 1 100); do "$B/vram" ps >/dev/null 2>&1 && break; sleep 0.1; done
port() { "$B/vram" ps --json | python3 -c "import json,sys; print([m for m in json.load(sys.stdin)['models'] if m['name']=='$1'][0]['port'])"; }
field() { "$B/vram" ps --json | python3 -c "import json,sys; print([m for m in json.load(sys.stdin)['models'] if m['name']=='$1'][0]['$2'])"; }
get() { curl -s -m 300 "http://127.0.0.1:$(port "$1")/$2"; }
now() { date +%s.%N; }
{
    echo "== cold starts (each load evicts what must go)"
    for g in 2 4 8 16; do
        "$B/vram" load m$g --timeout 5m
        get m$g generate >"$T/gen.m$g"
        get m$g checksum >"$T/sum.m$g"
        echo "m$g: start $(field m$g last_start_s) s; $(cat "$T/gen.m$g" | head -c 80)"
        "$B/vram" ps
        nvidia-smi --query-gpu=memory.used --format=csv,noheader
    done
    echo "== suspend and resume each, through the daemon"
    for g in 2 4 8 16; do
        "$B/vram" load m$g --timeout 5m >/dev/null
        get m$g generate >/dev/null # warm
        sleep 0.2
        U1=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits)
        "$B/vram" suspend m$g
        U2=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits)
        S=$(field m$g last_suspend_s); H=$(field m$g host_bytes)
        "$B/vram" resume m$g
        R=$(field m$g last_resume_s)
        G=$(get m$g generate); C=$(get m$g checksum)
        [ "$G" = "$(cat "$T/gen.m$g")" ] && GE=same || GE=DIFFERENT
        [ "$C" = "$(cat "$T/sum.m$g")" ] && CE=same || CE=DIFFERENT
        echo "ROW m$g ${g}GiB start=$(field m$g last_start_s) suspend=$S resume=$R host_bytes=$H used_before=${U1}MiB used_suspended=${U2}MiB generate=$GE checksum=$CE"
    done
    echo "== events"
    "$B/vram" ps
    python3 - "$T/vram.db" <<'PY'
import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute("select model, kind, round(seconds,2), detail from events order by t_ms"):
    print(*r)
PY
} >"$OUT/issue5.log" 2>&1
kill -TERM $D
for _ in $(seq 1 150); do kill -0 $D 2>/dev/null || break; sleep 0.1; done
kill -9 $D 2>/dev/null
pkill -9 -f serve_model.py
cat "$OUT/issue5.log"
echo
grep '^ROW' "$OUT/issue5.log" | python3 bench/serve_table.py
