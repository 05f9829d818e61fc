#!/bin/bash
# gpu_status.sh: the real-GPU checks and benchmarks of `vram status` and
# `vram top`, in one call on the GPU machine. Expects the binaries built here
# in .devbuild/ (bench/build_for_device.sh) and EGL loaders in .gl/ when the
# machine lacks them. Logs to $OUT, a short table last.
set -u
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
if [ -d .gl ] && ! ldconfig -p | grep -q libEGL.so.1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
v=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f $v ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$v
PYTHONUNBUFFERED=1 python3 bench/gpu_status.py .devbuild 2>&1 | tee "$OUT/table.txt"
