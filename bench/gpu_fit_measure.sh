#!/bin/bash
# gpu_fit_measure.sh: measures the VRAM of decoder configs (tests/fixtures/
# configs) in bf16 and fp32, inference at context lengths CTXS and one
# AdamW step, on the GPU machine. JSON lines to $OUT/$NAME.jsonl;
# bench/fit_compare.py turns them into the table.
#   CONFIGS  which configs (default: the six of the accuracy table)
#   CTXS     context lengths (default: 2048 8192)
#   NAME     output name (default: fit_measured)
set -u
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
CONFIGS=${CONFIGS:-qwen2-0.5b llama3.2-1b qwen3-1.7b phi3-mini-3.8b mistral-7b llama3.1-8b}
CTXS=${CTXS:-2048 8192}
NAME=${NAME:-fit_measured}
export PYTHONUNBUFFERED=1 TRANSFORMERS_VERBOSITY=error
for c in $CONFIGS; do
    for d in bf16 fp32; do
        python3 bench/gpu/fit_measure.py tests/fixtures/configs/$c.json $d $CTXS \
            2>>"$OUT/$NAME.err" | tee -a "$OUT/$NAME.jsonl"
    done
done
