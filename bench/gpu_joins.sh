#!/bin/bash
# gpu_joins.sh: the cap under joins (issue 17, item 4) on a real GPU: a
# group (`vram run --vram CAP`, default 8G) kept full by 2 allocators that allocate
# and free 1-64 MiB at random, while 40 processes keep joining it (a
# context and 2 MiB, gone after 50-250 ms); NVML's sum over the GPU's
# processes, sampled throughout, against the cap. Side by side: each build
# directory given (default .devbuild; an older build shows the overshoot
# the fix removed). The GPU must hold nothing else while it runs.
# Each build runs until its allocators made ALLOCS_EACH allocations or
# for SECONDS (default 40), whichever comes first.
#   CAP=8G SECONDS_MAX=40 bash bench/gpu_joins.sh [ALLOCS_EACH [BUILD_DIR...]]
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
EACH=${1:-20000}
shift
BUILDS=${*:-.devbuild}
CAP=${CAP:-8G} N=2 SECONDS_MAX=${SECONDS_MAX:-40}
CAPB=$(("${CAP%G}" << 30))
CHURN=$PWD/.devbuild/churn
T=$(mktemp -d)
echo "build          allocs  refused  joins  jrefused  samples  over_cap  max_bytes  max/cap  secs" >"$OUT/joins.table"
for b in $BUILDS; do
    tag=$(basename "$b")
    rm -f "$T"/*
    python3 bench/gpu/nvml_sum.py $CAPB "$T/stop" >"$T/sum.out" 2>&1 &
    S=$!
    for _ in $(seq 1 100); do grep -qs '^sampling' "$T/sum.out" && break; sleep 0.1; done
    START=$(date +%s.%N)
    (sleep "$SECONDS_MAX"; touch "$T/stop") &
    W=$!
    "$b/vram" run --quiet --vram $CAP -- sh -c "
        A=
        for i in \$(seq 1 $N); do
            '$CHURN' alloc $EACH \$i '$T/go' '$T/stop' >'$T/alloc.'\$i 2>&1 &
            A=\"\$A \$!\"
        done
        k=0
        while [ \$(cat '$T'/alloc.* 2>/dev/null | grep -c '^ready\\|^no context') -lt $N ] && [ \$k -lt 600 ]; do
            sleep 0.05; k=\$((k + 1))
        done
        touch '$T/go'
        '$CHURN' spawn 40 '$T/stop' >'$T/spawn.out' 2>&1 &
        S=\$!
        wait \$A
        touch '$T/stop'
        wait \$S" >"$OUT/joins-$tag.run" 2>&1 </dev/null
    touch "$T/stop"
    wait $S
    kill $W 2>/dev/null
    SECS=$(echo "$(date +%s.%N) $START" | awk '{printf "%.0f", $1 - $2}')
    cat "$T"/alloc.* "$T/spawn.out" "$T/sum.out" >"$OUT/joins-$tag.log" 2>&1
    ALLOCS=$(cat "$T"/alloc.* | awk '/^allocs/ {n += $2} END {print n + 0}')
    REF=$(cat "$T"/alloc.* | awk '/^allocs/ {n += $4} END {print n + 0}')
    read -r _ J _ JR <"$T/spawn.out"
    read -r _ SAMP _ OVER _ MAX <<<"$(tail -1 "$T/sum.out")"
    printf '%-14s %7s %8s %6s %9s %8s %9s %10s %8s %5s\n' "$tag" "$ALLOCS" "$REF" "${J:-?}" "${JR:-?}" \
        "${SAMP:-?}" "${OVER:-?}" "${MAX:-?}" "$(awk -v m="${MAX:-0}" -v c=$CAPB 'BEGIN {printf "%.3f", m / c}')" \
        "$SECS" >>"$OUT/joins.table"
done
rm -rf "$T"
cat "$OUT/joins.table"
