#!/bin/bash
# status_vs_smi.sh: whole-process time of `vram status` (text and --json)
# against `nvidia-smi --query-gpu=memory.used,memory.total --format=csv`,
# the least an NVML tool does (issue 46's goal: vram's median no slower),
# `vram status --json --all` as a user's first run meets it (an empty
# cache: the CUDA version and max clocks asked of the driver each time),
# and `vram status --json --all` against nvidia-smi asked for the GPU
# fields it gives. Interleaved:
# one run of each command per round, after warm-up rounds, so drift in the
# machine's load touches all alike; each run a whole process (fork, exec,
# exit), its wall time and its CPU time (wait4's rusage). Median, p99 and
# max of ROUNDS runs each. Then where vram status's start goes, phase by
# phase (vram-status-phases), and what a refresh of vram top costs with 50
# GPU processes (bench/top_cost.sh). Logs every run to $OUT, tables last.
#
#   bash bench/status_vs_smi.sh [DIR] [ROUNDS]
#
# DIR holds vram and the bench programs (default .devbuild, from
# bench/build_for_device.sh; else build-rel); ROUNDS defaults to 20. With
# VRAM_SIM set (no GPU: the simulated driver), vram-smi-like stands for
# nvidia-smi: the same NVML calls as its memory query, and nothing else,
# and every program runs on DIR's simulated driver (VRAM_SIM_NVML_SLOW_MS
# plays a first sample's slow calls, docs/simulator.md). BEFORE=PATH, a
# vram of an earlier build (bench/build_before.sh), adds its two status
# rows to the same rounds; TABLE_ONLY=1 leaves out the phases and top's
# cost.
set -eu
cd "$(dirname "$0")/.."
DIR=${1:-}
if [ -z "$DIR" ]; then
    for c in .devbuild build-rel; do [ -x "$c/vram" ] && DIR=$c && break; done
fi
[ -n "$DIR" ] && [ -x "$DIR/vram" ] || { echo "status_vs_smi: no vram in '$DIR' (bench/build_for_device.sh)" >&2; exit 2; }
ROUNDS=${2:-20}
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
bin() { for p in "$DIR/$1" "$DIR/bench/$1"; do [ -x "$p" ] && { echo "$p"; return; }; done; }
SMI_LIKE=$(bin vram-smi-like)
PHASES=$(bin vram-status-phases)
if [ -n "${VRAM_SIM:-}" ]; then
    [ -n "$SMI_LIKE" ] || { echo "status_vs_smi: no vram-smi-like in $DIR" >&2; exit 2; }
    SMI=""
    VRAM_SIM_LIBDIR=$(cd "$DIR/sim" && pwd)
    export VRAM_SIM_LIBDIR LD_LIBRARY_PATH="$VRAM_SIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
    command -v nvidia-smi >/dev/null || { echo "status_vs_smi: no nvidia-smi here (VRAM_SIM=FILE for the simulated driver)" >&2; exit 2; }
    SMI=nvidia-smi
fi
"$DIR/vram" status --json >"$OUT/status.json" || { echo "status_vs_smi: vram status failed" >&2; exit 1; }
"$DIR/vram" status >"$OUT/status.txt"

# what vram status --json reports of each GPU, as nvidia-smi's fields (the
# processes, with their /proc names, users and states, come on top)
FIELDS=index,name,uuid,pci.bus_id,driver_version,memory.total,memory.reserved,memory.used
FIELDS=$FIELDS,memory.free,utilization.gpu,utilization.memory,power.draw,enforced.power.limit
FIELDS=$FIELDS,temperature.gpu,pstate,persistence_mode,compute_mode,display_mode,display_active
FIELDS=$FIELDS,mig.mode.current,pcie.link.gen.current,pcie.link.width.current,fan.speed

VRAM="$DIR/vram" SMI="$SMI" SMI_LIKE="$SMI_LIKE" FIELDS="$FIELDS" ROUNDS="$ROUNDS" OUT="$OUT" \
    BEFORE="${BEFORE:-}" python3 - <<'PY'
import os, shutil, statistics, subprocess, tempfile, time

vram, smi, like = os.environ["VRAM"], os.environ["SMI"], os.environ["SMI_LIKE"]
before = os.environ["BEFORE"]
rounds, out, fields = int(os.environ["ROUNDS"]), os.environ["OUT"], os.environ["FIELDS"]
if smi:
    ANCHOR = "nvidia-smi --query-gpu=memory.used,memory.total"
    cmds = {
        "vram status --json": [vram, "status", "--json"],
        "vram status": [vram, "status"],
        "vram status --json --all": [vram, "status", "--json", "--all"],
        ANCHOR: [smi, "--query-gpu=memory.used,memory.total", "--format=csv"],
        "nvidia-smi --query-gpu= (vram's 23 GPU fields)": [smi, "--query-gpu=" + fields, "--format=csv"],
        "nvidia-smi -L": [smi, "-L"],
        "vram --version (no NVML)": [vram, "--version"],
    }
else:
    ANCHOR = "vram-smi-like (nvidia-smi's memory query)"
    cmds = {
        "vram status --json": [vram, "status", "--json"],
        "vram status": [vram, "status"],
        "vram status --json --all": [vram, "status", "--json", "--all"],
        ANCHOR: [like],
        "vram --version (no NVML)": [vram, "--version"],
    }
# a user's first run: nothing in vram's cache (the CUDA version, the max
# clocks), as every run of this row finds it
FIRST = "vram status --json --all, empty user cache"
cmds[FIRST] = [vram, "status", "--json", "--all"]
if before:
    cmds["before: vram status --json"] = [before, "status", "--json"]
    cmds["before: vram status"] = [before, "status"]
WARM = 3
wall = {k: [] for k in cmds}
cpu = {k: [] for k in cmds}
with open(os.path.join(out, "status_vs_smi.log"), "w") as log:
    for r in range(rounds + WARM):
        for k, argv in cmds.items():
            t0 = time.perf_counter()
            env = None
            if k == FIRST:
                env = dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp(prefix="vram-first-"))
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            _, st, ru = os.wait4(p.pid, 0)
            if env:
                shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)
            dt = (time.perf_counter() - t0) * 1e3
            c = (ru.ru_utime + ru.ru_stime) * 1e3
            rc = os.waitstatus_to_exitcode(st)
            log.write(f"round {r} {k}: {dt:.3f} ms, cpu {c:.3f} ms, exit {rc}\n")
            if rc != 0:
                raise SystemExit(f"status_vs_smi: {' '.join(argv)} exited {rc}")
            if r >= WARM:
                wall[k].append(dt)
                cpu[k].append(c)

def p99(v):
    return statistics.quantiles(v, n=100, method="inclusive")[98] if len(v) > 1 else v[0]

base = statistics.median(wall[ANCHOR])
table = [f"\nwhole-process time, {rounds} interleaved rounds after {WARM} warm-up ({vram})",
         f"{'command':48} {'median ms':>9} {'p99 ms':>8} {'max ms':>8} {'cpu med':>8} {'x anchor':>8}"]
for k in cmds:
    m = statistics.median(wall[k])
    table.append(f"{k:48} {m:9.2f} {p99(wall[k]):8.2f} {max(wall[k]):8.2f} "
                 f"{statistics.median(cpu[k]):8.2f} {m / base:8.2f}")
goal = statistics.median(wall["vram status --json"]) <= base
table.append(f"goal (vram status --json's median at most the anchor's): {'met' if goal else 'NOT met'}")
with open(os.path.join(out, "status_vs_smi.txt"), "w") as f:
    f.write("\n".join(table) + "\n")
PY
if [ -n "${TABLE_ONLY:-}" ]; then
    cat "$OUT/status_vs_smi.txt"
    exit 0
fi
if [ -n "$PHASES" ]; then
    "$PHASES" "$ROUNDS" >"$OUT/status_phases.txt" 2>&1 || true
fi
bash bench/top_cost.sh "$DIR" 50 0.5 20 >"$OUT/top_cost.txt" 2>&1 ||
    echo "(top_cost.sh failed: $OUT/top_cost.txt)" >>"$OUT/top_cost.txt"
cat "$OUT/status_phases.txt" 2>/dev/null || true
tail -5 "$OUT/top_cost.txt"
cat "$OUT/status_vs_smi.txt"
