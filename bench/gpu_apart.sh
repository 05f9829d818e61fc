#!/bin/bash
# gpu_apart.sh: issue 42's models apart, on a real GPU, in one call.
#  1. The switch of two 16 GiB PyTorch models, one at a time on the GPU
#     (gpu_trace.sh's first part, SWITCH_MODES=yes, no trace), with the
#     build from before the issue (.devbuild-base) and this one
#     (.devbuild), ROUNDS times each, alternated: each run's median from
#     "a suspending" to "b resumed", and after / before (the issue: within
#     5 %). Under this build the models run as vram-model.
#  2. tests/cli/isolation.sh's attack with the real driver (this build):
#     root's daemon, the default configuration, a testmodel victim holding
#     a known pattern in 2 GiB of GPU memory and the hostile model
#     (tests/cli/isolation_hostile.py), with the victim running and
#     suspended by fast swap: what the hostile model found, which process
#     obeyed it, whether the victim's bytes are intact, who the models ran
#     as.
# Expects .devbuild/ (bench/build_for_device.sh, with tests/testmodel) and
# .devbuild-base/ (the same script run at the commit before the issue,
# its .devbuild renamed). Logs in $OUT/switch-*/ and $OUT/apart/; the table
# last.
#   bash bench/gpu_apart.sh [ROUNDS]        (default 1)
set -u
ROUNDS=${1:-1}
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
HERE=$PWD
. "$(dirname "$0")/serve_user.sh" # as root, the models run as vram-model
: >"$OUT/apart-table"

# ---- 1. the switch, before and after ----
med() { awk '$1 == "yes" { print $2 }' "$1" 2>/dev/null | head -1; }
for r in $(seq 1 "$ROUNDS"); do
    for b in base new; do
        dir=.devbuild
        [ $b = base ] && dir=.devbuild-base
        [ -x "$dir/vram" ] || { echo "no $dir/vram" >>"$OUT/apart-table"; continue; }
        o=$OUT/switch-$b-$r
        mkdir -p "$o"
        SWITCH_MODES=yes OUT=$o VRAM_BIN_DIR=$HERE/$dir timeout 540 \
            bash bench/gpu_trace.sh 5 6 2 0 1 16 " " >"$o/run.log" 2>&1
        # the table's switch line: "   yes  MEDIAN  RUNS..."
        grep -E '^ +yes ' "$o/table" | sed 's/^ *//' >"$o/switch"
        echo "switch $b round $r: median $(med "$o/switch") s; $(grep intact "$o/table")" >>"$OUT/apart-table"
    done
done
python3 - "$OUT" "$ROUNDS" >>"$OUT/apart-table" <<'PY'
import statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
m = {"base": [], "new": []}
for b in m:
    for r in range(1, rounds + 1):
        try:
            f = open(f"{out}/switch-{b}-{r}/switch").read().split()
            m[b] += [float(x) for x in f[2:]]
        except (OSError, ValueError, IndexError):
            pass
if m["base"] and m["new"]:
    a, b = statistics.median(m["base"]), statistics.median(m["new"])
    print(f"switch of 2 x 16 GiB, median of every run: before {a:.3f} s, after {b:.3f} s, "
          f"after/before {b / a:.3f}")
PY

# ---- 2. the attack, with the real driver ----
B=$HERE/.devbuild
T=$(mktemp -d)
chmod 1777 "$T"
A=$OUT/apart
mkdir -p "$A"
cp "$B/testmodel" "$HERE/tests/cli/isolation_hostile.py" "$T/"
chmod a+rx "$T/testmodel" "$T/isolation_hostile.py"
export VRAM_SOCKET=$T/vram.sock
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $A/logs
port_base = 24500

[model victim]
command = $T/testmodel --bytes 2G
vram = 4G

[model hostile]
command = python3 $T/isolation_hostile.py victim
vram = 1G
CONF
setsid "$B/vram" serve --config "$T/vram.conf" >"$A/serve.log" 2>&1 &
D=$!
for _ in $(seq 1 200); do "$B/vram" ps >/dev/null 2>&1 && break; sleep 0.1; done
field() { "$B/vram" ps --json | python3 -c "import json,sys; print(next(m['$2'] for m in json.load(sys.stdin)['models'] if m['name'] == '$1'))"; }
"$B/vram" load victim --timeout 5m >"$A/load.txt" 2>&1
"$B/vram" load hostile --timeout 5m >>"$A/load.txt" 2>&1
VP=$(field victim pid) HP=$(field hostile pid) HPORT=$(field hostile port) VPORT=$(field victim port)
uids() { sed -n 's/^Uid:[[:space:]]*//p' "/proc/$1/status" | tr -s '\t' ' '; }
echo "models run as: victim uid $(uids "$VP"), hostile uid $(uids "$HP") (vram-model: $(id -u vram-model))" >>"$OUT/apart-table"
summary() { # ROUND WHEN
    curl -s -m 300 "http://127.0.0.1:$HPORT/attack" >"$A/round$1.json"
    python3 - "$A/round$1.json" "$2" "$VP" <<'PY'
import json, sys
r, when, vp = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
print(f"attack, victim {when}: as uid {r['uid']}; found {len(r['found'])} {r['found'][:2]}; "
      f"victim's fds/mem opened {vp in r['fd_dirs']}/{vp in r['mem_opened']}; "
      f"obeyed {len(r['obeyed'])}; copied {len(r['copied'])}; refused {len(r['refused'])}")
PY
}
summary 1 running >>"$OUT/apart-table"
"$B/vram" suspend victim >"$A/suspend.txt" 2>&1
summary 2 "suspended ($(field victim suspended_by))" >>"$OUT/apart-table"
"$B/vram" resume victim >"$A/resume.txt" 2>&1
echo "victim's bytes after the swap: $(curl -s -m 60 "http://127.0.0.1:$VPORT/checksum")" >>"$OUT/apart-table"
kill -TERM "$D"
for _ in $(seq 1 300); do kill -0 "$D" 2>/dev/null || break; sleep 0.1; done
kill -9 "$D" 2>/dev/null
cat "$OUT/apart-table"
