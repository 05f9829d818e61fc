#!/bin/bash
# gpu_preempt.sh: time slices on a real GPU (issue 22). M PyTorch model
# servers of GIB each (bench/gpu/trace_model.py) with room for ROOM of them;
# each model first gets a long generation (LONG tokens, tens of seconds),
# then short requests (8 tokens) arrive for S seconds (Poisson, RATE a
# second, Zipf over the models). Side by side in one run:
#   slices     preempt = yes (the default), slice SLICE
#   no-slices  preempt = no: a short request waits for a whole long answer
#   resident   room for all (the ideal)
# Reports the short requests' time to first token p50/p99, the long
# generations' tokens per second (what time slices cost them), the
# preemptions, and whether every model's weights are intact at the end.
#   bash bench/gpu_preempt.sh [M GIB ROOM LONG REQUESTS RATE SLICE POLICIES]
# defaults: 3 16 2 1500 30 0.5 5s "slices no-slices resident"
# Expects .devbuild/ (bench/build_for_device.sh). MODEL_CMD and VRAM_SIM as
# in bench/gpu_trace.sh, for a dry run on the simulated driver.
set -u
. "$(dirname "$0")/serve_user.sh" # as root, the models run as vram-model
M=${1:-3} GIB=${2:-16} ROOM=${3:-2} LONG=${4:-1500} REQ=${5:-30} RATE=${6:-0.5} SLICE=${7:-5s}
POLICIES=${8:-slices no-slices resident}
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
B=${VRAM_BIN_DIR:-$PWD/.devbuild}
SRC=$(cd "$(dirname "$0")/.." && pwd)
FILES=${FILES:-/dev/shm/vram-preempt}
mkdir -p "$FILES"
DEFAULT_CMD="python3 $SRC/bench/gpu/trace_model.py --gib {gib} --file {file} --seed {seed}"
MODEL_CMD=${MODEL_CMD:-$DEFAULT_CMD}
T=$(mktemp -d)
export VRAM_SOCKET=$T/vram.sock
LISTEN=11700
SLOT=$((GIB + 2)) # with its context and allocator cache (a 2 GiB model held 3.57 GiB on the H200)

cmd() { echo "$MODEL_CMD" | sed "s|{gib}|$1|g; s|{file}|$2|g; s|{seed}|$3|g"; }

NAMES=""
for i in $(seq 1 "$M"); do NAMES="$NAMES p$i"; done
echo "policy      short_p50  short_p99  short_max  long_tok_s  preemptions  intact" >"$OUT/preempt-table"
for policy in $POLICIES; do
    room=$ROOM
    [ "$policy" = resident ] && room=$M
    {
        cat <<CONF
[serve]
socket = $T/vram.sock
state = $T/$policy.db
logs = $OUT/logs-$policy
budget = 0:$((room * SLOT))G
host_budget = $((M * SLOT))G
port_base = 24500
listen = 127.0.0.1:$LISTEN
wait = 10m
CONF
        i=0
        for m in $NAMES; do
            i=$((i + 1))
            printf '\n[model %s]\ncommand = %s\nvram = %sG\ngpu = 0\nstart_timeout = 5m\nkeep_alive = forever\nslice = %s\n' \
                "$m" "$(cmd "$GIB" "$FILES/$m.safetensors" "$((20 + i))")" "$SLOT" "$SLICE"
            [ "$policy" = no-slices ] && echo "preempt = no"
        done
    } >"$T/vram.conf"
    setsid "$B/vram" serve --config "$T/vram.conf" >"$OUT/serve-$policy.log" 2>&1 &
    D=$!
    for _ in $(seq 1 200); do "$B/vram" ps >/dev/null 2>&1 && break; sleep 0.1; done
    for m in $NAMES; do # started, and its kernels warm
        "$B/vram" load "$m" --timeout 10m >/dev/null
        curl -s -m 300 "http://127.0.0.1:$LISTEN/v1/chat/completions" \
            -d "{\"model\":\"$m\",\"max_tokens\":2,\"messages\":[]}" >/dev/null
    done
    python3 "$SRC/bench/trace_client.py" --url "http://127.0.0.1:$LISTEN" \
        --models "$(echo $NAMES | tr ' ' ',')" --long "$LONG" --tokens 8 \
        --requests "$REQ" --rate "$RATE" --seed 7 >"$OUT/preempt-$policy.jsonl" 2>"$OUT/preempt-$policy.txt"
    PRE=$("$B/vram" ps --json | python3 -c 'import json,sys; print(sum(m.get("preemptions", 0) for m in json.load(sys.stdin)["models"]))')
    ok=0
    for m in $NAMES; do
        want=$(grep -o 'checksum [0-9a-f]*' "$OUT/logs-$policy/$m.log" | head -1 | cut -d' ' -f2)
        got=$(curl -s -m 300 "http://127.0.0.1:$LISTEN/m/$m/checksum" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sha256"])' 2>/dev/null)
        [ -n "$want" ] && [ "$want" = "$got" ] && ok=$((ok + 1))
    done
    python3 - "$OUT/preempt-$policy.jsonl" "$policy" "$PRE" "$ok/$M" >>"$OUT/preempt-table" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ok = [r for r in rows if r["status"] == 200 and r["ttft_s"] is not None]
t = sorted(r["ttft_s"] for r in ok if r["kind"] == "short")
pct = lambda p: t[min(len(t) - 1, int(round(p / 100 * (len(t) - 1))))] if t else float("nan")
longs = [r for r in ok if r["kind"] == "long"]
span = max((r["total_s"] for r in longs), default=0)
tps = sum(r["tokens"] for r in longs) / span if span else float("nan")
print(f"{sys.argv[2]:10}  {pct(50):9.3f}  {pct(99):9.3f}  {(t[-1] if t else 0):9.3f}"
      f"  {tps:10.1f}  {sys.argv[3]:>11}  {sys.argv[4]}")
PY
    kill -TERM "$D" 2>/dev/null
    for _ in $(seq 1 300); do kill -0 "$D" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$D" 2>/dev/null
    pkill -9 -f trace_model.py 2>/dev/null
    sleep 1
done
rm -rf "$FILES" "$T"
cat "$OUT/preempt-table"
