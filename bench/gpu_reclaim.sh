#!/bin/bash
# gpu_reclaim.sh: vram doctor and vram reclaim on a real GPU, on processes
# this script starts (never the card's settings): one that allocated 2 GiB
# and was stopped (SIGSTOP), one defunct (its main thread exited, a worker
# holds 1 GiB and the context). Expects .devbuild/ (vram, simalloc).
set -u
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
B=.devbuild
used() { "$B/vram" status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['gpus'][0]['memory']['used'])"; }
BEFORE=$(used)
"$B/simalloc" --bytes 2G --hold >"$OUT/stopped.out" 2>&1 &
S=$!
"$B/simalloc" --bytes 1G --zombie >"$OUT/zombie.out" 2>&1 &
Z=$!
for _ in $(seq 1 200); do
    grep -q ready "$OUT/stopped.out" && grep -q ready "$OUT/zombie.out" && break
    sleep 0.05
done
kill -STOP $S
sleep 0.5
HELD=$(used)
{
    echo "== nvidia-smi --query-compute-apps"; nvidia-smi --query-compute-apps=pid,used_memory --format=csv
    echo "== ps"; ps -o pid,stat,comm -p $S,$Z
    echo "== vram status -p"; "$B/vram" status -p
    echo "== vram doctor"; "$B/vram" doctor; echo "exit $?"
    echo "== vram reclaim (dry run)"; "$B/vram" reclaim
    echo "== ps after the dry run"; ps -o pid,stat,comm -p $S,$Z
    echo "== vram reclaim --yes"; "$B/vram" reclaim --yes --grace 2
    sleep 1
    echo "== vram status -p"; "$B/vram" status -p
    echo "== nvidia-smi --query-compute-apps"; nvidia-smi --query-compute-apps=pid,used_memory --format=csv
} >"$OUT/issue7.log" 2>&1
AFTER=$(used)

# --idle: one PyTorch process only holds its memory, another keeps working
python3 bench/gpu/hold_torch.py --gib 3 >"$OUT/idle.out" 2>&1 &
I=$!
python3 bench/gpu/hold_torch.py --gib 2 --busy >"$OUT/busy.out" 2>&1 &
W=$!
for _ in $(seq 1 600); do
    grep -q ready "$OUT/idle.out" && grep -q ready "$OUT/busy.out" && break
    sleep 0.1
done
sleep 6
IDLE_HELD=$(used)
{
    echo "== vram status -p (idle $I, busy $W)"; "$B/vram" status -p
    echo "== vram doctor --idle 5s"; "$B/vram" doctor --idle 5s; echo "exit $?"
    echo "== vram reclaim --idle 5s (dry run)"; "$B/vram" reclaim --idle 5s
    echo "== vram reclaim --idle 5s --yes --match python3"; "$B/vram" reclaim --idle 5s --yes --grace 3 --match python3
    sleep 1
    echo "== ps"; ps -o pid,stat,comm -p $I,$W
    echo "== vram status -p"; "$B/vram" status -p
} >>"$OUT/issue7.log" 2>&1
IDLE_AFTER=$(used)
BUSY_ALIVE=$(kill -0 $W 2>/dev/null && echo yes || echo no)
kill -9 $I $W 2>/dev/null
cat "$OUT/issue7.log"
echo
echo "used before the jobs: $((BEFORE >> 20)) MiB; with them: $((HELD >> 20)) MiB; after reclaim --yes: $((AFTER >> 20)) MiB"
echo "idle check: used with both PyTorch jobs: $((IDLE_HELD >> 20)) MiB; after reclaim --idle --yes: $((IDLE_AFTER >> 20)) MiB; busy job still running: $BUSY_ALIVE"
kill -9 $S $Z 2>/dev/null
