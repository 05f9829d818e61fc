#!/bin/bash
# gpu_proxy_switch.sh: the model proxy on a real GPU. Two PyTorch models of
# 8 and 16 GiB (bench/gpu/serve_model.py) under a 20 GiB budget that holds
# one at a time, behind `listen =`. Requests alternate between them through
# the proxy (/m/NAME/generate): each one that finds its model suspended
# waits for the resume (and the other's suspend); the times to the answer
# are compared with requests to a resident model, and every answer with
# the first one. Expects .devbuild/ (vram).
set -u
. "$(dirname "$0")/serve_user.sh" # as root, the models run as vram-model
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
B=$PWD/.devbuild
T=$(mktemp -d)
export VRAM_SOCKET=$T/vram.sock
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $OUT/logs
budget = 20G
port_base = 24200
listen = 127.0.0.1:11500
wait = 5m
CONF
for g in 8 16; do
    printf '\n[model m%s]\ncommand = python3 %s/bench/gpu/serve_model.py --gib %s\nvram = %sG\nidle = 0\nstart_timeout = 5m\n' \
        "$g" "$PWD" "$g" "$((g + 1))" >>"$T/vram.conf"
done
"$B/vram" serve --config "$T/vram.conf" >"$OUT/serve6.log" 2>&1 &
D=$!
for _ in $(seq 1 100); do "$B/vram" ps >/dev/null 2>&1 && break; sleep 0.1; done
ask() { curl -s -m 300 -o "$T/ans" -w '%{time_total}' "http://127.0.0.1:11500/m/$1/generate"; }
{
    echo "== cold: first request to each (starts it, evicting the other)"
    for m in m8 m16; do echo "cold $m $(ask $m)"; cp "$T/ans" "$T/first.$m"; done
    echo "== resident: 5 requests to m16 in a row"
    for i in 1 2 3 4 5; do echo "resident m16 $(ask m16)"; cmp -s "$T/ans" "$T/first.m16" || echo "DIFFERENT"; done
    echo "== alternating: each request finds its model suspended"
    for i in 1 2 3; do
        for m in m8 m16; do
            echo "swap $m $(ask $m)"
            cmp -s "$T/ans" "$T/first.$m" && echo "same answer" || echo "DIFFERENT answer"
        done
    done
    "$B/vram" ps
    grep -E "proxy|suspended|resumed" "$OUT/serve6.log" | tail -30
} >"$OUT/issue6.log" 2>&1
kill -TERM $D
for _ in $(seq 1 150); do kill -0 $D 2>/dev/null || break; sleep 0.1; done
kill -9 $D 2>/dev/null
pkill -9 -f serve_model.py
cat "$OUT/issue6.log"
echo
python3 - "$OUT/issue6.log" <<'PY'
import statistics, sys
rows = {}
same = diff = 0
for line in open(sys.argv[1]):
    p = line.split()
    if p and p[0] in ("cold", "resident", "swap"):
        rows.setdefault((p[0], p[1]), []).append(float(p[2]))
    same += line.startswith("same answer")
    diff += line.startswith("DIFFERENT")
print("kind      model  n  median_s")
for (k, m), v in sorted(rows.items()):
    print(f"{k:9} {m:6} {len(v)}  {statistics.median(v):.3f}")
print(f"answers after a swap identical to the first: {same} of {same + diff}")
PY
