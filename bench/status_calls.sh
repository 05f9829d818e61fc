#!/bin/bash
# status_calls.sh: where the time of `vram status` (text and --json) goes
# on the real driver, call by call: each command runs ROUNDS times as a
# whole process with bench/nvml_timer.c standing in for libnvidia-ml.so.1
# (it times every NVML call and passes it to the real library), beside
# vram-smi-like (the NVML calls of nvidia-smi's memory query) under the
# same. For each: the median of when the first NVML call began after the
# process was started, of each call's time in the order the command makes
# them, of the time from the last call's end to the process's end, and of
# the whole; calls on other threads are marked. Logs in $OUT/calls/.
#
#   bash bench/status_calls.sh [DIR] [ROUNDS]     (.devbuild, 10)
set -eu
cd "$(dirname "$0")/.."
DIR=${1:-.devbuild}
ROUNDS=${2:-10}
OUT=${OUT:-/tmp/vram-out}
TIMER=$DIR/libvram-nvml-timer.so
[ -f "$TIMER" ] || TIMER=$DIR/bench/libvram-nvml-timer.so
[ -f "$TIMER" ] || { echo "status_calls: no libvram-nvml-timer.so in $DIR (bench/build_for_device.sh)" >&2; exit 2; }
REAL=${NVML_REAL:-$(ldconfig -p | awk '/libnvidia-ml.so.1 .*x86-64/ { print $NF; exit }')}
[ -n "$REAL" ] || { echo "status_calls: no libnvidia-ml.so.1 here" >&2; exit 2; }
L=$OUT/calls
mkdir -p "$L/lib"
cp "$TIMER" "$L/lib/libnvidia-ml.so.1"
SMI_LIKE=$DIR/vram-smi-like
[ -x "$SMI_LIKE" ] || SMI_LIKE=$DIR/bench/vram-smi-like
VRAM=$DIR/vram L=$L ROUNDS=$ROUNDS REAL=$REAL SMI_LIKE=$SMI_LIKE python3 - <<'PY'
import os, statistics, subprocess, time
L, rounds = os.environ["L"], int(os.environ["ROUNDS"])
vram = os.environ["VRAM"]
cmds = {
    "smi-like (nvidia-smi's memory query)": [os.environ["SMI_LIKE"]],
    "vram status": [vram, "status"],
    "vram status --json": [vram, "status", "--json"],
    "vram status --json --all": [vram, "status", "--json", "--all"],
}
env = dict(os.environ, LD_LIBRARY_PATH=f"{L}/lib", VRAM_NVML_TIMER_REAL=os.environ["REAL"])
runs = {k: [] for k in cmds}
for r in range(rounds + 2):
    for i, (k, argv) in enumerate(cmds.items()):
        log = f"{L}/{i}-{r}.log"
        env["VRAM_NVML_TIMER_LOG"] = log
        t0 = time.monotonic_ns()
        p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        p.wait()
        t1 = time.monotonic_ns()
        calls = []
        for line in open(log) if os.path.exists(log) else []:
            a, b, tid, name, rc = line.split()
            calls.append((int(a), int(b), int(tid), name, int(rc)))
        if r >= 2 and calls:  # two rounds to warm the page cache
            runs[k].append((t0, t1, calls))
out = []
for k, rs in runs.items():
    if not rs:
        out.append(f"\n{k}: no run logged")
        continue
    main_tid = rs[0][2][0][2]
    out.append(f"\n{k}: median of {len(rs)} runs, us")
    first = statistics.median((c[0][0] - t0) / 1e3 for t0, _, c in rs)
    out.append(f"  {'start to the first NVML call (exec, libraries, vram own start)':62} {first:9.0f}")
    # the calls in the order of the first run, matched by name and rank
    seq = {}
    for t0, _, calls in rs:
        seen = {}
        for a, b, tid, name, rc in calls:
            n = seen[name] = seen.get(name, 0) + 1
            key = (name, n)
            seq.setdefault(key, []).append(((b - a) / 1e3, tid != calls[0][2], rc, (a - t0) / 1e3))
    order = sorted(seq, key=lambda key: statistics.median(x[3] for x in seq[key]))
    for key in order:
        v = seq[key]
        name = key[0] + (f" #{key[1]}" if key[1] > 1 else "")
        thread = " (thread)" if any(x[1] for x in v) else ""
        rc = v[0][2]
        out.append(f"  {name + thread + (f' rc {rc}' if rc else ''):62} {statistics.median(x[0] for x in v):9.0f}"
                   f"   at {statistics.median(x[3] for x in v):7.0f}")
    tail = statistics.median((t1 - max(c[1] for c in calls)) / 1e3 for _, t1, calls in rs)
    busy = statistics.median(sum(c[1] - c[0] for c in calls if c[2] == calls[0][2]) / 1e3 for _, _, calls in rs)
    out.append(f"  {'the last call end to the process end (output, exit)':62} {tail:9.0f}")
    out.append(f"  {'in NVML on the main thread, all calls':62} {busy:9.0f}")
    out.append(f"  {'whole process':62} {statistics.median((t1 - t0) / 1e3 for t0, t1, _ in rs):9.0f}")
open(f"{L}/table.txt", "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
