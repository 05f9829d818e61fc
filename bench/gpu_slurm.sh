#!/bin/bash
# gpu_slurm.sh: vram under Slurm on a real GPU (issue 43), in one call on
# the GPU machine, as root: the one-node cluster of tests/slurm/run.sh
# (tests/slurm/cluster.sh: munge, slurmctld, slurmd, the SPANK plugin,
# cli_filter.lua, the GRES from vram slurm gres) started from Debian 12's
# Slurm carried by bench/slurm_carry.sh; two PyTorch jobs under
# `srun --vram=CAP` side by side, CAP a little under half the GPU, each
# filling its GPU until its own allocation fails, one then trying 1 GiB
# past its cap; both at their caps at once, measured (nvidia-smi, vram
# status), their bytes checked; a third job of the same size waits until
# they end; the peaks in the jobs' records; a step's start with and
# without the plugin. Needs, carried: .devbuild/ (bench/build_for_device.sh,
# with spank_vram.so) and .slurmcarry/ (bench/slurm_carry.sh). Logs to
# $OUT, a table last.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
R=$PWD
D=${DEVBUILD:-$R/.devbuild}
C=$R/.slurmcarry
for f in "$D/vram" "$D/libvramcap.so" "$D/spank_vram.so" "$C/bin/slurmd" "$C/bin/munged"; do
    if [ ! -e "$f" ]; then
        echo "gpu_slurm: no $f: run bench/build_for_device.sh and bench/slurm_carry.sh here first," \
            "and carry .devbuild and .slurmcarry"
        exit 1
    fi
done
S=$(mktemp -d /tmp/vram-slurm-XXXXXX)
SPANK=$D/spank_vram.so
SLURM_BIN=$C/bin
SLURM_PLUGINDIR=$C/root/usr/lib/x86_64-linux-gnu/slurm-wlm
STEPD=$C/bin/slurmstepd
PLUG_ARGS="vram=$D/vram"
if ! GRES_OUT=$("$D/vram" slurm gres 2>&1); then
    echo "gpu_slurm: vram slurm gres failed: $GRES_OUT"
    exit 1
fi
echo "$GRES_OUT" >"$OUT/slurm_gres.txt"
GRES_TYPES=vram
NODE_GRES=$(printf '%s\n' "$GRES_OUT" | sed -n 's/^NodeName=[^ ]* Gres=//p')
GRES_CONF="AutoDetect=off
$(printf '%s\n' "$GRES_OUT" | grep '^NodeName=.* Name=vram ')"
CONF_EXTRA="CliFilterPlugins=cli_filter/lua"
mkdir -p "$S"
cp examples/slurm/cli_filter.lua "$S/"
. tests/slurm/cluster.sh
finish_logs() {
    cluster_stop
    cp "$S"/*.log "$S"/*.out "$S"/*.json "$S"/slurm.conf "$S"/gres.conf "$S"/plugstack.conf "$OUT/" 2>/dev/null
}
trap finish_logs EXIT
ms() { echo $(($(date +%s%N) / 1000000)); }
# the GPU must be free for two jobs at their caps: a run started seconds
# after another once found it taken at CUDA's start (what held it, said)
BUSY=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>/dev/null)
if [ -n "$BUSY" ]; then
    echo "gpu_slurm: the GPU already has processes on it (pid, name, MiB); the jobs' caps may not fit:"
    echo "$BUSY"
fi
t0=$(ms)
if ! cluster_start 2>"$OUT/cluster_start.err"; then
    echo "gpu_slurm: the cluster did not start:"
    cat "$OUT/cluster_start.err"
    exit 1
fi
START_MS=$(($(ms) - t0))
# the one GPU's memory for jobs, and a cap two jobs fit in and three do not
USABLE_MIB=$(printf '%s\n' "$NODE_GRES" | sed -n 's/^vram:\([0-9]*\)M$/\1/p')
if [ -z "$USABLE_MIB" ]; then
    USABLE_MIB=$(printf '%s\n' "$NODE_GRES" | sed -n 's/^vram:gpu0:\([0-9]*\)M,.*/\1/p')
    echo "gpu_slurm: several GPUs: the cap is sized from GPU 0's memory"
fi
CAP=$(((USABLE_MIB / 2 - 1024) / 1024))
job() { # NAME ARGS...: a PyTorch job under srun --vram=CAPG, in the background
    n=$1
    shift
    sl srun -D "$S" -J "$n" --vram="${CAP}G" \
        python3 "$R/bench/gpu/slurm_torch.py" --name "$n" --out "$S/$n.json" \
        --ready "$S/$n.ready" --go "$S/go" "$@" >"$S/$n.out" 2>&1 &
    eval "SRUN_$n=\$!"
}
jobid() { sl squeue -h -n "$1" -o %i 2>/dev/null | head -1; }
# both at their caps, or one of them gone (failed: its output says why)
both_ready() {
    { [ -e "$S/A.ready" ] && [ -e "$S/B.ready" ]; } ||
        ! kill -0 "$SRUN_A" 2>/dev/null || ! kill -0 "$SRUN_B" 2>/dev/null
}
both_done() { [ -e "$S/A.json" ] && [ -e "$S/B.json" ]; }
c_queued() { [ -n "$(sl squeue -h -n C -o %r 2>/dev/null)" ]; }
smi() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null; }

T_SUB=$(ms)
job A
job B --past
cl_wait 300 both_ready
READY_MS=$(($(ms) - T_SUB))
if ! [ -e "$S/A.ready" ] || ! [ -e "$S/B.ready" ]; then
    echo "gpu_slurm: the jobs did not reach their caps:"
    tail -20 "$S/A.out" "$S/B.out"
    exit 1
fi
JA=$(jobid A)
JB=$(jobid B)
# both at their caps, at once: what the driver and vram see
SMI_BOTH=$(smi)
"$D/vram" status -p >"$OUT/status_both.txt" 2>&1
STATES_AB="$(sl squeue -h -j "$JA" -o %T 2>/dev/null) $(sl squeue -h -j "$JB" -o %T 2>/dev/null)"
# a third of the same size waits for them
sl srun -D "$S" -J C --vram="${CAP}G" python3 -c \
    'import torch; x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); print("C ran")' \
    >"$S/C.out" 2>&1 &
cl_wait 30 c_queued
JC=$(jobid C)
C_WAIT="$(sl squeue -h -j "$JC" -o '%T:%r' 2>/dev/null)"
touch "$S/go"
cl_wait 120 both_done
cl_wait 120 grep -q 'C ran' "$S/C.out"
C_RAN=$(grep -c 'C ran' "$S/C.out")
cl_wait 60 cl_empty
for j in $JA $JB $JC; do sl scontrol show job "$j" >"$S/job_$j.txt" 2>&1; done
NOTE_A=$(sed -n 's/.*AdminComment=//p' "$S/job_$JA.txt")
NOTE_B=$(sed -n 's/.*AdminComment=//p' "$S/job_$JB.txt")
NOTE_C=$(sed -n 's/.*AdminComment=//p' "$S/job_$JC.txt")

# a step's start: srun true, with and without a cap (the plugin's helper)
step_times() { # ARGS...: five runs' wall times
    for _ in 1 2 3 4 5; do
        s=$(ms)
        sl srun -D "$S" "$@" true >/dev/null 2>&1
        echo $(($(ms) - s))
    done | sort -n | sed -n 3p
}
PLAIN=$(step_times)
CAPPED=$(step_times --vram=1G)

export SMI_BOTH STATES_AB C_WAIT C_RAN NOTE_A NOTE_B NOTE_C PLAIN CAPPED START_MS CAP USABLE_MIB S \
    READY_MS
python3 - <<'PY' | tee "$OUT/table.txt"
import json, os
e = os.environ
S = e["S"]
def load(n):
    try:
        return json.load(open(f"{S}/{n}.json"))
    except Exception as x:
        return {"error": str(x)}
a, b = load("A"), load("B")
cap = int(e["CAP"]) << 30
G = 1 << 30
def gib(v):
    return f"{v / G:.2f} GiB" if isinstance(v, (int, float)) else "?"
smi = {}
for line in e["SMI_BOTH"].splitlines():
    p = [x.strip() for x in line.split(",")]
    if len(p) == 2 and p[1].isdigit():
        smi[int(p[0])] = int(p[1]) << 20
def ok(c):
    return "PASS" if c else "FAIL"
rows = [
    ("cluster (munge, slurmctld, slurmd) started", "PASS", f"{int(e['START_MS']) / 1000:.1f} s; GRES vram:{e['USABLE_MIB']}M (vram slurm gres)"),
]
for j in (a, b):
    n = j.get("name", "?")
    rows.append((f"job {n}: sees its cap as its GPU", ok(j.get("total") == cap and j.get("capped")),
                 f"mem_get_info total {gib(j.get('total'))} of --vram={e['CAP']}G, CUDA_VISIBLE_DEVICES {j.get('cuda_visible_devices')}"))
    rows.append((f"job {n}: filled to its cap, stopped by its own OOM",
                 ok(j.get("fill_ended_by") == "OutOfMemoryError" and j.get("held", 0) > cap - 2 * G),
                 f"{gib(j.get('held'))} in 256 MiB tensors in {j.get('fill_s', 0):.2f} s, "
                 f"reserved {gib(j.get('reserved'))}, nvidia-smi {gib(smi.get(j.get('pid')))}"))
rows.append(("job B: 1 GiB past its cap", ok(b.get("past") == "OutOfMemoryError"), f"torch: {b.get('past')}"))
rows.append(("both at their caps at once", ok(e["STATES_AB"] == "RUNNING RUNNING" and a.get("go") and b.get("go")),
             f"squeue: {e['STATES_AB']}, both full {int(e['READY_MS']) / 1000:.1f} s after srun; nvidia-smi: "
             + ", ".join(gib(v) for v in smi.values())))
rows.append(("bytes intact after the neighbour's OOM", ok(a.get("intact") and b.get("intact")),
             f"A {a.get('bad_chunks')} bad chunks, B {b.get('bad_chunks')} (checked in {a.get('check_s', 0):.2f} s)"))
rows.append(("a third job of the same size waits", ok(e["C_WAIT"] == "PENDING:Resources" and e["C_RAN"] == "1"),
             f"{e['C_WAIT']} while A and B ran; ran after: {e['C_RAN'] == '1'}"))
for n in "ABC":
    rows.append((f"job {n}'s record (AdminComment)", ok(e[f"NOTE_{n}"].startswith("vram step 0: peak VRAM")), e[f"NOTE_{n}"]))
rows.append(("a step's start, srun true (median of 5)", "-",
             f"{int(e['PLAIN'] or 0) / 1000:.2f} s plain, {int(e['CAPPED'] or 0) / 1000:.2f} s with --vram=1G"))
print("| check | result | detail |\n|---|---|---|")
for r in rows:
    print(f"| {r[0]} | {r[1]} | {r[2]} |")
PY
