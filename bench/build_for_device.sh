#!/bin/sh
# build_for_device.sh: a release build of what the GPU checks run, copied to
# .devbuild/ (ignored by git, carried to the GPU machine). Built here
# because the GPU machine has the libraries' run-time files but no headers.
set -eu
cd "$(dirname "$0")/.."
[ -d build-rel ] || meson setup build-rel --buildtype=release >/dev/null
ninja -C build-rel >/dev/null
rm -rf .devbuild && mkdir -p .devbuild
cp build-rel/vram build-rel/libvramcap.so build-rel/bench/vram-sample-cost \
    build-rel/bench/vram-nvml-calls build-rel/bench/vram-alloc-latency build-rel/bench/vram-pool-cost build-rel/tests/egl_hold \
    build-rel/tests/simalloc \
    .devbuild/
ls -la .devbuild
