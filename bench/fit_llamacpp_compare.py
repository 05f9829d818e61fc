#!/usr/bin/env python3
"""vram fit --runtime llamacpp against llama-server's VRAM measured on a GPU.

Reads bench/gpu_fit_llamacpp.sh's JSON lines, asks `vram fit --json` for the
same GGUF, context, KV cache type, flash attention and -ngl, and prints a
table: measured (the process's highest VRAM in NVML, after one prompt that
fills 90% of the context), predicted, the error, and llama.cpp's own buffers
(model + KV + compute, from its log) to show what the rest (CUDA context,
cuBLAS, ggml's pool) came to.

usage: bench/fit_llamacpp_compare.py MEASURED.jsonl [VRAM_BINARY] [GGUF_DIR]
(the GGUF files: python3 bench/mkgguf.py GGUF_DIR; default /tmp/vram-gguf)"""
import json
import os
import subprocess
import sys

meas = sys.argv[1] if len(sys.argv) > 1 else "bench/fit_llamacpp_h200.jsonl"
vram = sys.argv[2] if len(sys.argv) > 2 else "build/vram"
gguf = sys.argv[3] if len(sys.argv) > 3 else "/tmp/vram-gguf"
M = 2**20
rows, errs = [], []
for line in open(meas):
    d = json.loads(line)
    m = max(d.get("after", 0), d.get("peak", 0))
    if not m or "error" in d:  # not run, or the prompt was refused: not a full measurement
        continue
    path = os.path.join(gguf, f"{d['model']}-{d['quant']}.gguf")
    args = [vram, "fit", "--json", "--runtime", "llamacpp", "--vram", "1000G", "--ctx", str(d["ctx"]),
            "--flash-attn", d["fa"], "--kv-dtype", d["kv"], "--ngl", str(d["ngl"]), path]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{' '.join(args)}: {out.stderr}")
    e = json.loads(out.stdout)["models"][0]["estimates"][0]
    bufs = sum(v for k, v in d.get("buffers", {}).items() if k.startswith("CUDA0"))
    err = (e["total"] - m) / m * 100
    errs.append(err)
    rows.append((d["name"], m, e["total"], err, bufs))
print(f"{'case':44} {'measured':>9} {'vram fit':>9} {'err':>7} {'llama.cpp buffers':>18}")
for name, m, p, err, bufs in sorted(rows):
    print(f"{name:44} {m / M:9.0f} {p / M:9.0f} {err:+6.1f}% {bufs / M:18.0f}")
if errs:
    print(f"\n{len(errs)} cases (MiB); error from {min(errs):+.1f}% to {max(errs):+.1f}%, "
          f"{sum(abs(x) <= 5 for x in errs)} within 5%")
