#!/bin/bash
# gpu_trace.sh: many models on one GPU, as users meet it. A seeded Zipf
# trace of streamed OpenAI chat requests (bench/trace_client.py, open-loop
# Poisson arrivals) over N PyTorch model servers (bench/gpu/trace_model.py,
# weights from safetensors files in the page cache) whose sizes add up to
# well over the room on the GPU, through vram serve's proxy, under four
# policies side by side in one run:
#   resident   all models stay on the GPU (the ideal; needs the room)
#   restart    evict = stop: stopped and started again from the page-cached
#              file (what Ollama and llama-swap do)
#   checkpoint swap = driver: the driver's process checkpoint
#   fast       swap = fast (the default): libvramcap's fast swap, the
#              daemon's shared host pool, overlapped switches
#   fast@DUR   the same with min_resident = DUR (default 1s: how long a
#              model that came back is kept against thrash)
#   tiers      fast, with host_budget for only TIER_SLOTS models (default
#              5): the rest go to the disk tier (spill = SPILL, else beside
#              the state), least recently used first (issue 41)
# The models are started least popular first and nothing is asked before
# the trace, so the first suspends of the resident ones fall inside it.
# Reports time to first token p50/p99/max, wall time, switches, the
# longest suspend in the trace (from the daemon's events; * when one never
# reported its result), how late the daemon's loop ran at worst, the
# daemon's CPU, and whether every model is intact at the end (a checksum
# read back from the GPU against the one taken at load), and the longest
# generation after a first byte (a server slowed from inside); pool-POLICY.txt
# samples the daemon's CPU and its host pool every half second. First,
# a switch between two models of SWITCH_GIB each, one at a time on the
# GPU, timed from the daemon's events, with overlap and without.
#   bash bench/gpu_trace.sh [N GIB ROOM REQUESTS RATE SWITCH_GIB POLICIES]
# (SWITCH_MODES="yes" times the switch with overlap only; SEED=N another
# trace than the seed 42 of RESULTS, ZIPF and TOKENS its skew and length)
# defaults: 5 6 2 30 1 16 "fast checkpoint restart resident"
# Expects .devbuild/ (bench/build_for_device.sh). MODEL_CMD (with {gib},
# {file}, {seed}) and VRAM_SIM let it run on the simulated driver with
# tests/helpers/testmodel, to try the script without a GPU.
set -u
N=${1:-5} GIB=${2:-6} ROOM=${3:-2} REQ=${4:-30} RATE=${5:-1} SWG=${6:-16}
POLICIES=${7:-fast checkpoint restart resident}
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
B=${VRAM_BIN_DIR:-$PWD/.devbuild}
SRC=$(cd "$(dirname "$0")/.." && pwd)
FILES=${FILES:-/dev/shm/vram-trace}
mkdir -p "$FILES"
. "$(dirname "$0")/serve_user.sh" # as root, the models run as vram-model
DEFAULT_CMD="python3 $SRC/bench/gpu/trace_model.py --gib {gib} --file {file} --seed {seed}"
MODEL_CMD=${MODEL_CMD:-$DEFAULT_CMD}
T=$(mktemp -d)
export VRAM_SOCKET=$T/vram.sock
LISTEN=11600
# GiB a model takes with its context and allocator cache (measured on the
# H200: a 2 GiB model held 3.57 GiB); SLOT=... for a MODEL_CMD whose
# servers hold more (bench/gpu/llm_model.py: 10.4 GiB)
SLOT=${SLOT:-$((GIB + 2))}
SLOT0=$SLOT
# host_budget in models' slots: all of them (HOST_SLOTS, default N), or
# TIER_SLOTS for the tiers policy; the GPU's budget BUDGET_GIB (default
# ROOM slots)
HOST_SLOTS=${HOST_SLOTS:-$N} TIER_SLOTS=${TIER_SLOTS:-5}

cmd() { echo "$MODEL_CMD" | sed "s|{gib}|$1|g; s|{file}|$2|g; s|{seed}|$3|g"; }
ticks() { awk '{print $14 + $15}' /proc/"$1"/stat 2>/dev/null || echo 0; }

# conf POLICY RUN BUDGET_GIB NAME:GIB:SEED...: the daemon's configuration
conf() {
    local policy=$1 run=$2 budget=$3 tiers=0
    shift 3
    [ "$policy" = tiers ] && tiers=1
    cat <<CONF
[serve]
socket = $T/vram.sock
state = $T/$run.db
logs = $OUT/logs-$run
budget = 0:${budget}G
host_budget = $(( (tiers ? TIER_SLOTS : HOST_SLOTS) * SLOT))G
port_base = 24300
listen = 127.0.0.1:$LISTEN
wait = 10m
CONF
    [ "$policy" = fast-sequential ] && echo "overlap = no"
    [ -n "${SPILL:-}" ] && echo "spill = $SPILL/$run"
    case $policy in fast@*) echo "min_resident = ${policy#fast@}" ;; esac
    for spec in "$@"; do
        IFS=: read -r name gib seed <<<"$spec"
        printf '\n[model %s]\ncommand = %s\nvram = %sG\ngpu = 0\nstart_timeout = 5m\nkeep_alive = forever\n' \
            "$name" "$(cmd "$gib" "$FILES/$name.safetensors" "$seed")" "$SLOT"
        case $policy in
        restart) echo "evict = stop" ;;
        checkpoint) echo "swap = driver" ;;
        esac
    done
}

start_daemon() {
    setsid "$B/vram" serve --config "$T/vram.conf" >"$OUT/serve-$1.log" 2>&1 &
    D=$!
    for _ in $(seq 1 200); do "$B/vram" ps >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "the daemon did not start:"; cat "$OUT/serve-$1.log"; return 1
}

stop_daemon() {
    kill -TERM "$D" 2>/dev/null
    for _ in $(seq 1 300); do kill -0 "$D" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$D" 2>/dev/null
    pkill -9 -f trace_model.py 2>/dev/null
    sleep 1
}
# killed (a timeout around the script): the daemon is in a session of its
# own, so it is stopped here or it holds the port and the GPU for the next run
D=
trap '[ -n "$D" ] && stop_daemon; exit 143' TERM INT

# intact RUN NAMES...: each model's checksum now (read through the
# proxy, which brings it back) against the one it logged when it loaded
intact() {
    local policy=$1 ok=0
    shift
    for m in "$@"; do
        want=$(grep -o 'checksum [0-9a-f]*' "$OUT/logs-$policy/$m.log" | head -1 | cut -d' ' -f2)
        got=$(curl -s -m 300 "http://127.0.0.1:$LISTEN/m/$m/checksum" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sha256"])' 2>/dev/null)
        [ -n "$want" ] && [ "$want" = "$got" ] && ok=$((ok + 1))
    done
    echo "$ok/$#"
}

NAMES=""
for i in $(seq 1 "$N"); do NAMES="$NAMES m$i"; done
MODELS=$(echo $NAMES | tr ' ' ',')
SPECS=""
for i in $(seq 1 "$N"); do SPECS="$SPECS m$i:$GIB:$i"; done

# the switch between two large models, timed from the daemon's events; the
# first of each model's switches pins the shared pool in it, the median is
# what a switch costs after
: >"$OUT/table"
if [ "$SWG" -gt 0 ]; then
    echo "switch of 2 x ${SWG} GiB   overlap  median_s  runs (from 'X suspending' to 'Y resumed')" >>"$OUT/table"
    for ov in ${SWITCH_MODES:-yes no}; do
        SLOT=$((SWG + 2))
        run=switch-$ov
        policy=fast
        [ $ov = no ] && policy=fast-sequential
        conf "$policy" "$run" "$SLOT" "a:$SWG:11" "b:$SWG:12" >"$T/vram.conf"
        start_daemon "$run" || continue
        curl -sN -m 600 --unix-socket "$T/vram.sock" http://x/v1/events >"$OUT/events-$ov.txt" 2>/dev/null &
        EV=$!
        for m in a b a b a b a b; do "$B/vram" load $m --timeout 10m >/dev/null; done
        kill $EV 2>/dev/null
        python3 - "$OUT/events-$ov.txt" "$ov" >>"$OUT/table" <<'PY'
import json, statistics, sys
ev = [json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith("data: ")]
runs, start = [], None
for e in ev:
    if e["event"] == "suspending":
        start = e["t_ms"]
    elif e["event"] == "resumed" and start is not None:
        runs.append((e["t_ms"] - start) / 1000)
        start = None
print(f"{'':25} {sys.argv[2]:7}  {statistics.median(runs) if runs else float('nan'):8.3f}  "
      + " ".join(f"{r:.3f}" for r in runs))
PY
        echo "intact after the switches: $(intact "$run" a b)" >>"$OUT/table"
        stop_daemon
    done
    rm -f "$FILES"/a.safetensors "$FILES"/b.safetensors
    SLOT=$SLOT0
    echo >>"$OUT/table"
fi
echo "policy     ok  ttft_p50  ttft_p99  ttft_max  wall_s  switches  suspend_max  loop_late_ms  daemon_cpu_s  intact  gen_max_s" >>"$OUT/table"
for policy in $POLICIES; do
    budget=${BUDGET_GIB:-$((ROOM * SLOT))}
    [ "$policy" = resident ] && budget=$((N * SLOT))
    # shellcheck disable=SC2086
    conf "$policy" "$policy" "$budget" $SPECS >"$T/vram.conf"
    start_daemon "$policy" || continue
    # every model started (each server warms its kernels before it says it
    # is up), the least popular first: the most popular ones are resident
    # when the trace begins and their first suspends fall inside it. No
    # request before the trace: a warm-up would hide the first switches.
    for m in $(echo $NAMES | tr ' ' '\n' | tac); do
        "$B/vram" load "$m" --timeout 10m >/dev/null
    done
    curl -sN -m 3000 --unix-socket "$T/vram.sock" http://x/v1/events >"$OUT/events-$policy.txt" 2>/dev/null &
    EV=$!
    sleep 0.2
    MARK=$(wc -l <"$OUT/serve-$policy.log")
    C0=$(ticks "$D")
    # every half second: the daemon's CPU ticks and what its host pool
    # made and freed, to set beside a slow request
    while :; do
        echo "$(date +%s.%N) $(ticks "$D") $("$B/vram" ps --json 2>/dev/null |
            grep -oE '"(made|freed|spare|held)_bytes": *[0-9]+' | tr -d ' "' | tr '\n' ' ')"
        sleep 0.5
    done >"$OUT/pool-$policy.txt" 2>/dev/null &
    SAMPLER=$!
    python3 "$SRC/bench/trace_client.py" --url "http://127.0.0.1:$LISTEN" --models "$MODELS" \
        --requests "$REQ" --rate "$RATE" --seed "${SEED:-42}" --zipf "${ZIPF:-1.0}" --tokens "${TOKENS:-16}" \
        >"$OUT/trace-$policy.jsonl" 2>"$OUT/trace-$policy.txt"
    C1=$(ticks "$D")
    kill $EV $SAMPLER 2>/dev/null
    SW=$(tail -n +"$MARK" "$OUT/serve-$policy.log" | grep -cE ': (resumed|ready):')
    CPU=$(echo "$C0 $C1 $(getconf CLK_TCK)" | awk '{printf "%.2f", ($2 - $1) / $3}')
    "$B/vram" ps --json >"$OUT/ps-$policy.json" 2>/dev/null
    # shellcheck disable=SC2086
    OK=$(intact "$policy" $NAMES)
    python3 - "$OUT/trace-$policy.jsonl" "$policy" "$SW" "$CPU" "$OK" "$OUT/events-$policy.txt" \
        "$OUT/ps-$policy.json" >>"$OUT/table" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
t = sorted(r["ttft_s"] for r in rows if r["status"] == 200 and r["ttft_s"] is not None)
pct = lambda p: t[min(len(t) - 1, int(round(p / 100 * (len(t) - 1))))] if t else float("nan")
wall = max((r["total_s"] for r in rows), default=0)
# the longest generation after the first byte: a server slowed from inside
# (not waiting for a switch) shows here, and delays the requests behind it
gen = max((r["total_s"] - r["ttft_s"] for r in rows if r["status"] == 200 and r["ttft_s"] is not None),
          default=0)
# every suspend in the trace, from its events: the longest, and any left without a result
ev = [json.loads(l[6:]) for l in open(sys.argv[6]) if l.startswith("data: ")]
began, longest, open_ = {}, 0.0, 0
for e in ev:
    if e["event"] == "suspending":
        began[e["model"]] = e["t_ms"]
    elif e["event"] in ("suspended", "suspend failed") and e["model"] in began:
        longest = max(longest, (e["t_ms"] - began.pop(e["model"])) / 1000)
open_ = len(began)
try:
    loop = json.load(open(sys.argv[7])).get("loop", {}).get("late_max_ms", -1)
except Exception:
    loop = -1
print(f"{sys.argv[2]:10} {len(t):3}  {pct(50):8.3f}  {pct(99):8.3f}  {(t[-1] if t else 0):8.3f}"
      f"  {wall:6.1f}  {sys.argv[3]:>8}  {longest:9.3f}{'*' if open_ else ' '} {loop:9}"
      f"  {sys.argv[4]:>12}  {sys.argv[5]:>6}  {gen:9.3f}")
PY
    # the disk tier's moves in the trace, and their rates (the link's is
    # the suspend's: bytes over suspend time, in the events)
    tail -n +"$MARK" "$OUT/serve-$policy.log" | python3 -c '
import re, statistics, sys
down, out, back = [], [], []
for l in sys.stdin:
    m = re.search(r"moved to disk: .*, ([0-9]+) MB/s", l)
    if m: down.append(float(m.group(1)))
    m = re.search(r"went to disk .* \(([0-9]+) MB/s\)", l)
    if m: out.append(float(m.group(1)))
    m = re.search(r"read back from disk .* \(([0-9]+) MB/s\)", l)
    if m: back.append(float(m.group(1)))
f = lambda v: f"{len(v)} (median {statistics.median(v):.0f} MB/s, min {min(v):.0f})" if v else "0"
if down or out or back:
    print(" " * 11 + f"disk tier: moved down {f(down)}; written at suspend {f(out)}; read back at resume {f(back)}")
' >>"$OUT/table"
    stop_daemon
done

rm -rf "$FILES" "$T"
cat "$OUT/table"
