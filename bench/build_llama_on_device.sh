#!/bin/bash
# build_llama_on_device.sh: llama.cpp's llama-server with CUDA, built on the
# GPU machine (it has nvcc, CMake and ninja; nothing can be fetched there),
# for bench/gpu_discover.sh and bench/gpu_allocators.sh.
#
# Here, once: bring the sources with the session's fetch (github:ggml-org/
# llama.cpp), export them to .llama/src (ignored by git), and pack what the
# build needs (no docs, models, tests or examples: ~7 MB):
#   tar -C .llama/src --exclude=./docs --exclude=./models --exclude=./media \
#       --exclude=./examples --exclude=./tests --exclude=./benches \
#       --exclude=./.github --exclude=./gguf-py --exclude=./pocs \
#       -cJf .llama/llama-src.tar.xz .
# There (carry .llama/llama-src.tar.xz):
#   bash bench/build_llama_on_device.sh [BUILD_DIR]     (default /tmp/llama)
# prints the path of llama-server last. Static ggml (one file to carry back:
# LLAMA_PACK=DIR also writes it there, xz-packed in parts under 16 MiB),
# sm_90 only, no FlashAttention kernels (the largest part of the build; the
# server then runs attention without them), no UI.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-/tmp/llama}
TAR=${LLAMA_TAR:-.llama/llama-src.tar.xz}
export PATH=/usr/local/cuda/bin:$PATH
if [ ! -x "$B/build/bin/llama-server" ]; then
    mkdir -p "$B/src"
    tar -C "$B/src" -xJf "$TAR"
    T0=$(date +%s)
    cmake -S "$B/src" -B "$B/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_FA=OFF \
        -DGGML_CUDA_NCCL=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF >"$B/configure.log" 2>&1 ||
        { tail -30 "$B/configure.log"; exit 1; }
    ninja -C "$B/build" -j "$(nproc)" llama-server >"$B/build.log" 2>&1 ||
        { tail -40 "$B/build.log"; exit 1; }
    echo "llama-server built in $(($(date +%s) - T0)) s" >&2
fi
if [ -n "${LLAMA_PACK:-}" ]; then
    mkdir -p "$LLAMA_PACK"
    strip -o "$B/llama-server.stripped" "$B/build/bin/llama-server"
    xz -T0 -6 -c "$B/llama-server.stripped" | split -b 15M -d - "$LLAMA_PACK/llama-server.xz."
    ls -la "$LLAMA_PACK" >&2
fi
echo "$B/build/bin/llama-server"
