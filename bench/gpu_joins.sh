#!/bin/bash
# gpu_joins.sh: the cap under joins (issue 17, item 4; issue 28, item 4) on a
# real GPU: a group (`vram run --vram CAP`, default 8G) kept full by 2
# allocators that allocate and free 1-64 MiB at random, while 40 processes
# keep joining it (a context and 2 MiB, gone after 50-250 ms); NVML's sum
# over the GPU's processes, sampled throughout, against the cap. Three
# cases, side by side:
#   base      as above
#   pidns     the group in a PID namespace of its own (unshare --pid, as a
#             container has): NVML lists its processes under host pids that
#             are not theirs, so it cannot name them
#   slownvml  NVML's process lists answer SLOW_MS late (default 6000: longer
#             than members wait for the first context's measurement), through
#             bench/slow_nvml.c in front of the real library; the joiners
#             come while the first context is measured
# For each build directory given (default .devbuild; an older build shows
# the overshoot a fix removed). The GPU must hold nothing else while it runs.
# Each round runs until its allocators made ALLOCS_EACH allocations or for
# SECONDS_MAX (default 40), whichever comes first.
#   CAP=8G SECONDS_MAX=40 CASES="base pidns slownvml" bash bench/gpu_joins.sh [ALLOCS_EACH [BUILD_DIR...]]
# SIM=1 runs it on the simulated driver (examples/workstation.json, a build
# tree such as build/): a dry run of the script, where the namespace is the
# simulated driver's (VRAM_SIM_PIDNS) and slow_nvml sits in front of the
# simulated NVML.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
EACH=${1:-20000}
shift
BUILDS=${*:-.devbuild}
CAP=${CAP:-8G} N=2 SECONDS_MAX=${SECONDS_MAX:-40} SLOW_MS=${SLOW_MS:-6000}
CASES=${CASES:-base pidns slownvml}
CAPB=$(("${CAP%G}" << 30))
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if [ -n "${SIM:-}" ]; then
    export VRAM_SIM=$PWD/examples/workstation.json VRAM_SIM_STATE=$T/ledger
    export ASAN_OPTIONS=verify_asan_link_order=0 # a build tree with sanitizers
    export LD_LIBRARY_PATH=$PWD/${BUILDS%% *}/sim
    REAL_NVML=$LD_LIBRARY_PATH/libnvidia-ml.so.1
else
    REAL_NVML=$(ldconfig -p | awk '/libnvidia-ml\.so\.1 / {print $NF; exit}')
fi
# the PID namespace: as root, or in a user namespace of one's own
NS=
if [ -z "${SIM:-}" ]; then
    for u in "unshare --pid --fork --mount-proc" \
        "unshare --user --map-root-user --pid --fork --mount-proc"; do
        if $u sh -c '[ $$ = 1 ]' 2>/dev/null; then NS=$u && break; fi
    done
fi

echo "build          case      allocs  refused  joins  jrefused  samples  over_cap  max_bytes  max/cap  secs" >"$OUT/joins.table"
for b in $BUILDS; do
    tag=$(basename "$b")
    CHURN=$PWD/$b/churn
    [ -x "$CHURN" ] || CHURN=$PWD/$b/tests/churn
    SLOWLIB=$PWD/$b/libvram-slow-nvml.so
    [ -f "$SLOWLIB" ] || SLOWLIB=$PWD/$b/bench/libvram-slow-nvml.so
    for c in $CASES; do
        rm -rf "${T:?}"/*
        PRE= GROUP_ENV= EARLY=0
        case $c in
        pidns)
            if [ -n "${SIM:-}" ]; then
                GROUP_ENV="VRAM_SIM_PIDNS=1"
            elif [ -n "$NS" ]; then
                PRE=$NS
            else
                echo "$tag $c: no PID namespace can be made here (unshare)" >>"$OUT/joins.table"
                continue
            fi
            ;;
        slownvml)
            mkdir -p "$T/slownvml"
            cp "$SLOWLIB" "$T/slownvml/libnvidia-ml.so.1" || continue
            GROUP_ENV="LD_LIBRARY_PATH=$T/slownvml${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} VRAM_SLOW_NVML_REAL=$REAL_NVML VRAM_SLOW_NVML_MS=$SLOW_MS"
            EARLY=1
            ;;
        esac
        python3 bench/gpu/nvml_sum.py $CAPB "$T/stop" >"$T/sum.out" 2>&1 &
        S=$!
        for _ in $(seq 1 100); do grep -qs '^sampling' "$T/sum.out" && break; sleep 0.1; done
        START=$(date +%s.%N)
        (sleep "$SECONDS_MAX"; touch "$T/stop") &
        W=$!
        $PRE "$b/vram" run --quiet --vram $CAP -- env $GROUP_ENV sh -c "
            A=
            for i in \$(seq 1 $N); do
                '$CHURN' alloc $EACH \$i '$T/go' '$T/stop' >'$T/alloc.'\$i 2>&1 &
                A=\"\$A \$!\"
            done
            if [ $EARLY = 1 ]; then
                '$CHURN' spawn 40 '$T/stop' >'$T/spawn.out' 2>&1 &
                S=\$!
            fi
            k=0
            while [ \$(cat '$T'/alloc.* 2>/dev/null | grep -c '^ready\\|^no context') -lt $N ] && [ \$k -lt 600 ]; do
                sleep 0.05; k=\$((k + 1))
            done
            touch '$T/go'
            if [ $EARLY = 0 ]; then
                '$CHURN' spawn 40 '$T/stop' >'$T/spawn.out' 2>&1 &
                S=\$!
            fi
            wait \$A
            touch '$T/stop'
            wait \$S" >"$OUT/joins-$tag-$c.run" 2>&1 </dev/null
        touch "$T/stop"
        wait $S
        kill $W 2>/dev/null
        SECS=$(echo "$(date +%s.%N) $START" | awk '{printf "%.0f", $1 - $2}')
        cat "$T"/alloc.* "$T/spawn.out" "$T/sum.out" >"$OUT/joins-$tag-$c.log" 2>&1
        ALLOCS=$(cat "$T"/alloc.* | awk '/^allocs/ {n += $2} END {print n + 0}')
        REF=$(cat "$T"/alloc.* | awk '/^allocs/ {n += $4} END {print n + 0}')
        read -r _ J _ JR <"$T/spawn.out"
        read -r _ SAMP _ OVER _ MAX <<<"$(tail -1 "$T/sum.out")"
        printf '%-14s %-9s %7s %8s %6s %9s %8s %9s %10s %8s %5s\n' "$tag" "$c" "$ALLOCS" "$REF" \
            "${J:-?}" "${JR:-?}" "${SAMP:-?}" "${OVER:-?}" "${MAX:-?}" \
            "$(awk -v m="${MAX:-0}" -v c=$CAPB 'BEGIN {printf "%.3f", m / c}')" \
            "$SECS" >>"$OUT/joins.table"
    done
done
cat "$OUT/joins.table"
