#!/bin/bash
# status_vs_smi.sh: whole-process time of `vram status --json` against
# nvidia-smi asked for the same information, on a machine with an NVIDIA
# GPU. Runs the commands interleaved (one of each per round, after warm-up
# rounds, so drift in the machine's load touches all alike), and prints
# medians, p90, CPU time and the ratio to nvidia-smi's --query-gpu, table
# last. Logs every round to $OUT.
#
#   bash bench/status_vs_smi.sh [VRAM] [ROUNDS]
#
# VRAM defaults to .devbuild/vram (bench/build_for_device.sh), else
# build-rel/vram, else vram on the PATH; ROUNDS to 40.
set -eu
cd "$(dirname "$0")/.."
VRAM=${1:-}
if [ -z "$VRAM" ]; then
    for c in .devbuild/vram build-rel/vram "$(command -v vram || true)"; do
        [ -n "$c" ] && [ -x "$c" ] && VRAM=$c && break
    done
fi
[ -n "$VRAM" ] && [ -x "$VRAM" ] || { echo "status_vs_smi: no vram binary (give its path)" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "status_vs_smi: no nvidia-smi here" >&2; exit 2; }
ROUNDS=${2:-40}
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
"$VRAM" status --json >"$OUT/status.json" || { echo "status_vs_smi: $VRAM status failed" >&2; exit 1; }

# What vram status --json reports of each GPU, as nvidia-smi fields; the
# processes (with their /proc names, users, states) come on top in vram's
# answer, which nvidia-smi gives only through a second command.
FIELDS=index,name,uuid,pci.bus_id,driver_version,memory.total,memory.reserved,memory.used
FIELDS=$FIELDS,memory.free,utilization.gpu,utilization.memory,power.draw,enforced.power.limit
FIELDS=$FIELDS,temperature.gpu,pstate,persistence_mode,compute_mode,display_mode,display_active
FIELDS=$FIELDS,mig.mode.current,pcie.link.gen.current,pcie.link.width.current,fan.speed

VRAM="$VRAM" FIELDS="$FIELDS" ROUNDS="$ROUNDS" OUT="$OUT" python3 - <<'PY'
import os, statistics, subprocess, time

vram, fields, rounds, out = os.environ["VRAM"], os.environ["FIELDS"], int(os.environ["ROUNDS"]), os.environ["OUT"]
ANCHOR = "nvidia-smi --query-gpu (the same GPU fields)"
cmds = {
    "vram status --json (GPU fields + processes)": [vram, "status", "--json"],
    ANCHOR: ["nvidia-smi", "--query-gpu=" + fields, "--format=csv"],
    "nvidia-smi --query-compute-apps": ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv"],
    "nvidia-smi (default table, with processes)": ["nvidia-smi"],
    "nvidia-smi -L (the least it does)": ["nvidia-smi", "-L"],
    "vram --version (start without NVML)": [vram, "--version"],
}
WARM = 3
wall = {k: [] for k in cmds}
cpu = {k: [] for k in cmds}
with open(os.path.join(out, "status_vs_smi.log"), "w") as log:
    for r in range(rounds + WARM):
        for k, argv in cmds.items():
            t0 = time.perf_counter()
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, st, ru = os.wait4(p.pid, 0)
            dt = (time.perf_counter() - t0) * 1e3
            rc = os.waitstatus_to_exitcode(st)
            log.write(f"round {r} {k}: {dt:.3f} ms, cpu {(ru.ru_utime + ru.ru_stime) * 1e3:.3f} ms, exit {rc}\n")
            if rc != 0:
                raise SystemExit(f"status_vs_smi: {' '.join(argv)} exited {rc}")
            if r >= WARM:
                wall[k].append(dt)
                cpu[k].append((ru.ru_utime + ru.ru_stime) * 1e3)
base = statistics.median(wall[ANCHOR])
print(f"\nwhole-process time, {rounds} interleaved rounds after {WARM} warm-up ({vram})")
print(f"{'command':46} {'wall med ms':>11} {'wall p90':>9} {'cpu med ms':>10} {'x smi':>6}")
for k in cmds:
    m = statistics.median(wall[k])
    p90 = statistics.quantiles(wall[k], n=10)[-1]
    print(f"{k:46} {m:11.2f} {p90:9.2f} {statistics.median(cpu[k]):10.2f} {m / base:6.2f}")
PY
