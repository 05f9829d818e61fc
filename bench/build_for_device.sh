#!/bin/sh
# build_for_device.sh: a release build of what the GPU checks run, copied to
# .devbuild/ (ignored by git, carried to the GPU machine). Built here
# because the GPU machine has the libraries' run-time files but no headers.
set -eu
cd "$(dirname "$0")/.."
# --reconfigure: a tree set up before an option existed takes it too
if [ -d build-rel ]; then
    meson setup --reconfigure build-rel --buildtype=release -Dstatic_yaml=true >/dev/null
else
    meson setup build-rel --buildtype=release -Dstatic_yaml=true >/dev/null
fi
ninja -C build-rel >/dev/null
rm -rf .devbuild && mkdir -p .devbuild
cp build-rel/vram build-rel/libvramcap.so build-rel/bench/vram-sample-cost \
    build-rel/bench/vram-nvml-calls build-rel/bench/vram-smi-like build-rel/bench/vram-status-phases \
    build-rel/bench/vram-alloc-latency build-rel/bench/vram-pool-cost build-rel/tests/egl_hold \
    build-rel/bench/libvram-slow-nvml.so build-rel/bench/libvram-nvml-timer.so \
    build-rel/tests/simalloc build-rel/tests/churn build-rel/tests/testmodel \
    .devbuild/
# the SPANK plugin, built against this machine's Slurm 22.05 headers: what
# bench/slurm_carry.sh carries (bench/gpu_slurm.sh)
[ -f build-rel/spank_vram.so ] && cp build-rel/spank_vram.so .devbuild/
ls -la .devbuild
# wrk and nginx for bench/proxy_bench.sh there (the GPU machine has
# neither): the programs, the libraries they need beyond glibc, and
# wrappers that find them
if command -v wrk >/dev/null && command -v nginx >/dev/null; then
    mkdir -p .devbuild/tools/lib
    for p in wrk nginx; do
        cp "$(command -v $p)" .devbuild/tools/$p.bin
        ldd "$(command -v $p)" | awk '/=> \// { print $3 }' |
            grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
            xargs -r cp -L -t .devbuild/tools/lib/
        printf '#!/bin/sh\nd=$(dirname "$(readlink -f "$0")")\nLD_LIBRARY_PATH=$d/lib exec "$d/%s.bin" "$@"\n' $p \
            >.devbuild/tools/$p
        chmod +x .devbuild/tools/$p
    done
fi
