#!/bin/bash
# device_issue3.sh: measures the VRAM of the golden decoder configs
# (tests/fixtures/configs) in bf16 and fp32, inference at two context
# lengths and one AdamW step, on the GPU machine. JSON lines to
# $OUT/fit_measured.jsonl; bench/fit_compare.py turns them into the table.
set -u
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRANSFORMERS_VERBOSITY=error
for c in qwen2-0.5b llama3.2-1b qwen3-1.7b phi3-mini-3.8b mistral-7b llama3.1-8b; do
    for d in bf16 fp32; do
        python3 bench/gpu/fit_measure.py tests/fixtures/configs/$c.json $d 2048 8192 \
            2>>"$OUT/fit_measure.err" | tee -a "$OUT/fit_measured.jsonl"
    done
done
