#!/bin/sh
# The cap under joins (issue 17): 40 processes joining and leaving a full
# group while others allocate and free at random; the simulated driver's sum
# for the GPU, sampled throughout, must never pass the cap. A context is
# charged before it is made, so a process joining a full group is refused
# without the driver ever holding its context.
# JOINSTRESS_ALLOCS: how many allocations to make (default 10^6), within
# JOINSTRESS_SECONDS of the clock (default 480; 10^6 take about 560 s of
# the build machine's two cores alone): a loaded machine makes fewer, and
# the test then holds the cap over what it made, at least a tenth.
# JOINSTRESS_CASE (issue 28, item 4): base; pidns: the group runs in a PID
# namespace of its own, as in a container, and NVML lists its processes
# under pids they do not know as theirs (the simulated driver's
# VRAM_SIM_PIDNS); slownvml: NVML's process list takes 6 s to answer
# (VRAM_SIM_NVML_DELAY_MS), longer than members wait for the first
# context's measurement, and the joiners come while it runs.
. "$(dirname "$0")/lib.sh"
: "${CHURN:?}" "${LEDGERSUM:?}"
export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
WANT=${JOINSTRESS_ALLOCS:-1000000}
N=${JOINSTRESS_ALLOCATORS:-4}
EACH=$(((WANT + N - 1) / N))
SECS_MAX=${JOINSTRESS_SECONDS:-480}
CAP=4G
CASE=${JOINSTRESS_CASE:-base}
EARLY=0
case $CASE in
base) WRAP= ;;
pidns) WRAP="env VRAM_SIM_PIDNS=1" ;;
slownvml) WRAP="env VRAM_SIM_NVML_DELAY_MS=6000" EARLY=1 ;;
*) echo "JOINSTRESS_CASE=$CASE: base, pidns or slownvml" >&2 && exit 2 ;;
esac
echo "# case: $CASE"

"$LEDGERSUM" "$WS" 0 $CAP "$T/stop" >"$T/sum.out" 2>&1 &
SAMPLER=$!
JOBS="$JOBS $SAMPLER"
wait_for 5 grep -qs '^sampling' "$T/sum.out" || not_ok "the sampler started" "$(cat "$T/sum.out")"
# the group: N allocators keeping it full, and 40 joiners coming and going
# until the allocators are done. Joiners that come early (slownvml) can fill
# the group before an allocator has its context: it retries, as a framework
# would, until one leaves
START=$(date +%s)
"$VRAM" run --quiet --vram $CAP -- $WRAP sh -c "
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
    while [ \$(cat '$T'/alloc.* 2>/dev/null | grep -c '^ready\\|^no context') -lt $N ] && [ \$k -lt 400 ]; do
        sleep 0.05; k=\$((k + 1))
    done
    touch '$T/go'
    { sleep $SECS_MAX; touch '$T/stop'; } &
    D=\$!
    if [ $EARLY = 0 ]; then
        '$CHURN' spawn 40 '$T/stop' >'$T/spawn.out' 2>&1 &
        S=\$!
    fi
    wait \$A
    touch '$T/stop'
    pkill -P \$D 2>/dev/null; kill \$D 2>/dev/null
    wait \$S" >"$T/run.out" 2>&1 </dev/null
RC=$?
touch "$T/stop"
wait $SAMPLER
SECS=$(($(date +%s) - START))
expect_eq "the group's command finished" "$RC" 0
ALLOCS=$(cat "$T"/alloc.* | awk '/^allocs/ {n += $2} END {print n + 0}')
REFUSED=$(cat "$T"/alloc.* | awk '/^allocs/ {n += $4} END {print n + 0}')
JOINS=$(awk '{print $2}' "$T/spawn.out")
JREFUSED=$(awk '{print $4}' "$T/spawn.out")
read -r _ SAMPLES _ OVER _ MAX <<EOS
$(tail -1 "$T/sum.out")
EOS
echo "# $ALLOCS allocations ($REFUSED refused at the cap), $JOINS joins ($JREFUSED refused)," \
    "$SAMPLES samples of the driver's sum in $SECS s: $OVER over the cap, the most $MAX"
if [ "$ALLOCS" -ge "$WANT" ]; then
    ok "at least $WANT allocations ($ALLOCS)"
elif [ "$ALLOCS" -ge $((WANT / 10)) ]; then
    ok "$ALLOCS allocations in the ${SECS_MAX} s the run had (of $WANT asked: a loaded machine)"
else
    not_ok "at least $((WANT / 10)) allocations" "$ALLOCS" "$(cat "$T"/alloc.* "$T/run.out")"
fi
[ "${JOINS:-0}" -gt 0 ] && [ "${JREFUSED:-0}" -gt 0 ] &&
    ok "joiners came in and were refused at the cap ($JOINS joined, $JREFUSED refused)" ||
    not_ok "joiners came and went" "$(cat "$T/spawn.out")"
[ "$REFUSED" -gt 0 ] && ok "the group was full (allocations refused)" || not_ok "the group was full"
[ "${SAMPLES:-0}" -gt 1000 ] && ok "the driver's sum was sampled throughout ($SAMPLES)" ||
    not_ok "sampled throughout" "$(cat "$T/sum.out")"
expect_eq "no sample of the driver's sum over the 4 GiB cap" "${OVER:-x}" 0
finish
