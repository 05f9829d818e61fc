#!/bin/sh
# fit_speed.sh: `vram fit` on a 100-shard safetensors folder and a 40 GiB
# GGUF (both sparse files: headers like real ones, holes for weights),
# against reading the same files' bytes once, which is what a tool that
# loads weights to count them would pay at the least. Medians of 11 runs.
# usage: bench/fit_speed.sh [BUILD_DIR]
set -eu
B=${1:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$B/tests/mkmodel" shards "$T/shards" 100
"$B/tests/mkmodel" gguf "$T/big.gguf" 40
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { # COMMAND...: wall milliseconds of one run
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    echo $(((e - s) / 1000))
}
for what in shards big.gguf; do
    fit=$(for i in $(seq 11); do ms "$B/vram" fit --vram 80G "$T/$what"; done | median)
    if [ "$what" = shards ]; then
        read_all=$(for i in $(seq 3); do ms sh -c "cat '$T/shards'/*.safetensors"; done | median)
    else
        read_all=$(for i in $(seq 3); do ms cat "$T/big.gguf"; done | median)
    fi
    size=$(du -sh --apparent-size "$T/$what" | cut -f1)
    printf '%-10s %6s   vram fit %8.1f ms   read every byte %9.1f ms   ratio %.0fx\n' \
        "$what" "$size" "$(echo "$fit / 1000" | bc -l)" "$(echo "$read_all / 1000" | bc -l)" \
        "$(echo "$read_all / $fit" | bc -l)"
done
