#!/bin/bash
# gpu_fit_llamacpp.sh: VRAM of llama-server against `vram fit --runtime
# llamacpp`, on the GPU machine. Makes GGUF files with zero weights and the
# shapes of real models (bench/mkgguf.py: sparse, no disk), runs llama-server
# on each case (bench/gpu/llamacpp_measure.py: context 2k/8k/32k, KV cache
# f16 and q8_0, flash attention on and off, all layers and partial -ngl),
# and reads each process's VRAM from NVML; then, with a vram binary, prints
# measured against predicted (bench/fit_llamacpp_compare.py).
#   LLAMA_SERVER  llama-server built with CUDA (required: any llama.cpp
#                 build of yours; bench/RESULTS.md names the one measured)
#   VRAM          vram binary for the table (default: .devbuild/vram)
#   BUDGET        seconds in which cases may start (default 300)
#   CASES         all (default), or case names separated by commas
# Writes $OUT/llamacpp.jsonl and $OUT/llamacpp_logs.tar.gz (servers' logs).
set -u
OUT=${OUT:-/tmp/vram-out}
: "${LLAMA_SERVER:?set LLAMA_SERVER to a llama-server built with CUDA}"
VRAM=${VRAM:-.devbuild/vram}
here=$(cd "$(dirname "$0")" && pwd)
gg=${GGUF_DIR:-/tmp/vram-gguf}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 "$here/mkgguf.py" "$gg" >/dev/null || exit 1
python3 "$here/gpu/llamacpp_measure.py" "$LLAMA_SERVER" "$gg" "$OUT" "${BUDGET:-300}" \
    "${CASES:-all}" >/dev/null
tar czf "$OUT/llamacpp_logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
if [ -x "$VRAM" ]; then
    python3 "$here/fit_llamacpp_compare.py" "$OUT/llamacpp.jsonl" "$VRAM" "$gg"
fi
