#!/bin/bash
# gpu_proxy_bench.sh: bench/proxy_bench.sh and proxy_anatomy.sh on the
# GPU machine (16 cores: the load generator, the backend and the proxy each
# have cores of their own, unlike on a 2-core machine), the daemon on the
# real driver. Expects .devbuild/ from bench/build_for_device.sh, with
# tools/ (wrk and nginx, which that machine lacks).
# Usage: bench/gpu_proxy_bench.sh [SECONDS [ROUNDS]]   (default 5 s, 5 rounds)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
export B=$PWD/.devbuild NGINX_BIN=$PWD/.devbuild/tools/nginx WRK_BIN=$PWD/.devbuild/tools/wrk
"$NGINX_BIN" -v >"$OUT/tools.log" 2>&1 && "$WRK_BIN" --version >>"$OUT/tools.log" 2>&1
bash bench/proxy_bench.sh "${1:-5}" "${2:-5}" 2>&1 | tee "$OUT/proxy_bench.log"
bash bench/proxy_anatomy.sh 3 2>&1 | tee "$OUT/proxy_anatomy.log"
echo "== summary"
grep -E "^(machine|medians|added|vram/nginx)" "$OUT/proxy_bench.log"
grep -E "^(vram|nginx) " "$OUT/proxy_anatomy.log"
