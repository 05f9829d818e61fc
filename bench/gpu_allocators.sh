#!/bin/bash
# gpu_allocators.sh: fast swap for the allocators and runtime patterns
# people use (issue 30), on one GPU, in one run (about 7 minutes on the H200,
# 10 at most: each part has a time limit):
#   - PyTorch with PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, CuPy's
#     MemoryAsyncPool, and CuPy on a pool of the process's own
#     (cuMemPoolCreate), GIB each: N suspends and resumes by fast swap,
#     checksums after each, GB/s each way; D by the driver's checkpoint
#     (vram suspend --driver) beside them, and the ratio;
#   - a PyTorch model captured in a CUDA graph (torch.cuda.graphs), its
#     output bit for bit after each swap, under the default allocator and
#     under cudaMallocAsync (whose graphs keep their outputs in graph
#     memory: the driver's path, with the reason);
#   - two processes sharing a CUDA tensor by IPC (torch.multiprocessing,
#     fast rounds only: the driver's checkpoint does not support IPC memory):
#     suspended child first, producer alone, producer first; intact;
#   - llama.cpp's llama-server (LLAMA_SERVER: built with CUDA) behind vram
#     serve with swap = fast, suspended mid-generation N times (time
#     slices), its answers identical; idle swaps against swap = driver.
# Expects .devbuild/ (bench/build_for_device.sh). Logs and JSON under $OUT,
# the tables last.
#   bash bench/gpu_allocators.sh [GIB N D]        defaults: 8 10 2
#   bash bench/gpu_allocators.sh --sim            a dry run on the simulated
#       driver (poolmodel and testmodel stand in; build/ from meson)
set -u
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --sim ]; then
    B=${VRAM_BIN_DIR:-$SRC/build}
    export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
    export LD_LIBRARY_PATH="$B/sim"
    export VRAM_SIM_STATE=$(mktemp -d)/ledger
    # the sanitized test programs under the preloaded libvramcap
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
    SIM=(--sim "$B/tests/poolmodel")
    LSIM=(--sim "$B/tests/testmodel")
    GIB=0.0625 N=3 D=2
else
    B=${VRAM_BIN_DIR:-$PWD/.devbuild}
    SIM=() LSIM=()
    GIB=${1:-8} N=${2:-10} D=${3:-2}
    nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
fi
export VRAM_RUN_DIR=$(mktemp -d)
T=$(mktemp -d)
rm -f "$OUT/alloc.jsonl"
T0=$(date +%s)
echo "== allocators: $GIB GiB, $N fast swaps, $D by the driver each"
timeout 400 python3 "$SRC/bench/gpu/alloc_bench.py" "$B/vram" "$GIB" "$N" "$D" \
    torch_async cupy_async cupy_pool torch_graph torch_graph_async ipc "${SIM[@]}" \
    >"$OUT/alloc.txt" 2>"$OUT/alloc.err"
echo "allocators: exit $? after $(($(date +%s) - T0)) s"
if [ ${#LSIM[@]} -gt 0 ] || [ -n "${LLAMA_SERVER:-}" ]; then
    echo "== llama-server behind vram serve, swap = fast: $N suspends mid-generation"
    timeout 190 python3 "$SRC/bench/gpu/llama_swap.py" "$B/vram" "${LLAMA_SERVER:-none}" \
        "${LLAMA_DIR:-/dev/shm/vram-llama}" "$N" "$D" "${LSIM[@]}" \
        >"$OUT/llama.txt" 2>"$OUT/llama.err"
    echo "llama: exit $? after $(($(date +%s) - T0)) s"
else
    echo "llama-server: skipped (set LLAMA_SERVER to a llama-server built with CUDA)" >"$OUT/llama.txt"
fi
tail -5 "$OUT/alloc.err" "$OUT/llama.err" 2>/dev/null | grep -v '^$' | tail -8
echo
cat "$OUT/alloc.txt" "$OUT/llama.txt"
rm -rf "$T" "$VRAM_RUN_DIR"
