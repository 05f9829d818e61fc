#!/bin/bash
# gpu_fit_user.sh: PyTorch models measured as a user's script runs them
# (bench/gpu/fit_user.py: from_pretrained, generate(), the process's peak
# from outside, no empty_cache), for issue 31's short contexts. JSON lines
# to $OUT/fit_user.jsonl, then the table from bench/fit_compare.py (needs
# VRAM, a vram binary; the table is printed last).
#   CONFIGS  configs of tests/fixtures/configs (default: the four small ones)
#   CTXS     prompt lengths (default: 512 2048 8192)
#   DTYPES   bf16 fp32 (the default), or one of them
set -u
OUT=${OUT:-/tmp/vram-out}
VRAM=${VRAM:-build/vram}
mkdir -p "$OUT"
CONFIGS=${CONFIGS:-qwen2-0.5b llama3.2-1b gemma2-2b qwen3-1.7b}
CTXS=${CTXS:-512 2048 8192}
DTYPES=${DTYPES:-bf16 fp32}
export PYTHONUNBUFFERED=1 TRANSFORMERS_VERBOSITY=error
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for c in $CONFIGS; do
    python3 bench/gpu/fit_user.py save tests/fixtures/configs/$c.json "$W/$c" 2>>"$OUT/fit_user.err" || continue
    for d in $DTYPES; do
        for x in $CTXS; do
            python3 bench/gpu/fit_user.py run "$W/$c" $d $x $c 2>>"$OUT/fit_user.err" |
                tee -a "$OUT/fit_user.jsonl"
        done
    done
    rm -rf "${W:?}/$c"
done
python3 bench/fit_compare.py "$OUT/fit_user.jsonl" "$VRAM" | tee "$OUT/fit_user_table.txt"
