#!/bin/bash
# gpu_cap.sh: the real-GPU checks and overhead benchmarks of
# libvramcap and `vram run`, in one call on the GPU machine. Expects
# .devbuild/ from bench/build_for_device.sh. Logs to $OUT, a table last.
set -u
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
PYTHONUNBUFFERED=1 python3 bench/gpu_cap.py .devbuild 2>&1 | tee "$OUT/table4.txt"
