#!/bin/bash
# gpu_tiers.sh: issue 41's checks on the GPU, in one call.
#  1. the disk the spill folder is on: its raw rates with direct I/O (dd,
#     8 GiB), to set beside the link's and what the disk tier reaches;
#  2. vram run --swap's first suspend against the later ones (16 GiB,
#     PyTorch): the host pool is readied while the process is idle;
#  3. 12 transformers LLMs of Llama-3.2-3B's shape (bench/gpu/llm_model.py
#     --trim: ~7 GiB each, slots of 8) on a 24 GiB budget, 48 streamed
#     requests at 1/s, 16 tokens, Zipf 1.0: host_budget for 5 of them
#     (tiers: the rest on disk, vram's defaults otherwise) beside
#     host_budget for all (fast), through bench/gpu_trace.sh; cold starts
#     and first suspends inside the trace, answers checked against the
#     checksums at load. A policy takes ~5 minutes (twelve servers start,
#     ~17 s each, mostly Python's imports): one a call.
# Logs in $OUT (tiers-logs.tgz), the table last. SKIP_SWAP=1 leaves out 2,
# SKIP_DD=1 leaves out 1.
#   bash bench/gpu_tiers.sh [POLICIES] [REQUESTS]
# Expects .devbuild/ (bench/build_for_device.sh).
set -u
POLICIES=${1:-tiers fast}
REQ=${2:-48}
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=$SRC/.devbuild
RAW=$(mktemp -d /tmp/vram-tiers-XXXXXX)
T0=$(date +%s)
{
    nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
    free -g | head -2
    df -h "$RAW" | tail -1
    nproc
} >"$RAW/machine.txt" 2>&1
cat "$RAW/machine.txt"

# 1. the disk, direct I/O, 8 GiB each way
[ "${SKIP_DD:-0}" = 1 ] || {
dd if=/dev/zero of="$RAW/raw.bin" bs=64M count=128 oflag=direct conv=fsync 2>"$RAW/dd-write.txt"
dd if="$RAW/raw.bin" of=/dev/null bs=64M iflag=direct 2>"$RAW/dd-read.txt"
rm -f "$RAW/raw.bin"
rate() { grep -oE '[0-9.]+ [GM]B/s' "$1" | tail -1; }
echo "disk (dd, direct I/O, 8 GiB): write $(rate "$RAW/dd-write.txt"), read $(rate "$RAW/dd-read.txt")" |
    tee "$RAW/table"
}

# 2. vram run --swap: the first suspend, readied ahead, against the later ones
[ "${SKIP_SWAP:-0}" = 1 ] || {
OUT=$RAW timeout 240 python3 "$SRC/bench/gpu/swap_bench.py" "$B/vram" 16 default 6 0 0 \
    >"$RAW/swap.txt" 2>&1
grep -E "first suspend|^ *16G|error" "$RAW/swap.txt" | tee -a "$RAW/table"
}

# 3. the trace: tiers (host_budget for 5) and fast (host_budget for all)
left=$((560 - ($(date +%s) - T0)))
SLOT=8 BUDGET_GIB=24 TIER_SLOTS=5 HOST_SLOTS=11 OUT=$RAW/trace \
    MODEL_CMD="python3 $SRC/bench/gpu/llm_model.py --trim --seed {seed}" \
    timeout "$left" bash "$SRC/bench/gpu_trace.sh" 12 7 3 "$REQ" 1 0 "$POLICIES" \
    >"$RAW/trace.txt" 2>&1
cat "$RAW/trace/table" >>"$RAW/table" 2>/dev/null
tar czf "$OUT/tiers-logs.tgz" -C "$RAW" . 2>/dev/null
cp "$RAW/table" "$OUT/table.txt"
rm -rf "$RAW"
echo
cat "$OUT/table.txt"
