#!/bin/bash
# gpu_swap.sh: fast swap on a real GPU (issue 8). Runs
# bench/gpu/swap_bench.py for the sizes and allocators given, then a stress
# run with kernels and allocations in flight. Expects .devbuild/ (vram,
# libvramcap.so). Logs and swap.jsonl under $OUT.
#   bash bench/gpu_swap.sh SIZES ALLOCS FAST DRIVER RELOAD [STRESS_GIB]
set -u
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
B=$PWD/.devbuild
SIZES=${1:-2,8,16}
ALLOCS=${2:-default}
NF=${3:-10} ND=${4:-3} NR=${5:-3} STRESS=${6:-}
export VRAM_RUN_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
free -g | head -2
for a in ${ALLOCS//,/ }; do
    python3 bench/gpu/swap_bench.py "$B/vram" "$SIZES" "$a" "$NF" "$ND" "$NR" 2>&1 |
        tee -a "$OUT/bench.log"
done
if [ -n "$STRESS" ]; then
    echo "== stress: $STRESS GiB, matmuls and allocations running while suspended, 20 cycles"
    python3 bench/gpu/swap_bench.py "$B/vram" "$STRESS" default 20 0 0 --busy 2>&1 |
        tee -a "$OUT/bench.log"
fi
nvidia-smi --query-gpu=memory.used --format=csv,noheader
