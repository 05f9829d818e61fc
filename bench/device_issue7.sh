#!/bin/bash
# device_issue7.sh: vram doctor and vram reclaim on a real GPU, on processes
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
cat "$OUT/issue7.log"
echo
echo "used before the jobs: $((BEFORE >> 20)) MiB; with them: $((HELD >> 20)) MiB; after reclaim --yes: $((AFTER >> 20)) MiB"
kill -9 $S $Z 2>/dev/null
