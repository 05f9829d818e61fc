#!/bin/sh
# libvramcap against the simulated driver: the cap, the virtual view, every
# way a program reaches the driver, group budgets shared by processes, no
# overshoot under concurrent allocation, and shares given back by processes
# that die.
. "$(dirname "$0")/lib.sh"
: "${HAMMER:?}" "${NEXTPROBE:?}" "${CALLPPID:?}" "${SHIM:?}"
export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
CTX=$((300 * MiB))

# run_job NAME ARGS...: vram run in the background, stdout to $T/NAME.out
run_bg() {
    name=$1
    shift
    "$VRAM" run "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null &
    BG=$!
    JOBS="$JOBS $BG"
}
wait_line() { # FILE PATTERN: until FILE has a line matching (5 s at most)
    for _ in $(seq 1 100); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# 1. under the cap: fine, and the process sees a 4 GiB GPU
OUT=$("$VRAM" run --quiet --vram 4G -- "$SIMALLOC" --bytes 3G </dev/null)
expect_eq "3 GiB under a 4 GiB cap: allowed" "$?" 0
expect_match "cuMemGetInfo says total = the cap, free = cap - context - 3 GiB" "$OUT" \
    "ready [0-9]+ free $((4 * GiB - 3 * GiB - CTX)) total $((4 * GiB)) "
expect_match "NVML asked from inside says total = the cap" "$OUT" "nvml $((4 * GiB))$"

# 2. over the cap: CUDA_ERROR_OUT_OF_MEMORY (2); the context counts too
OUT=$("$VRAM" run --quiet --vram 4G -- "$SIMALLOC" --bytes 3900M </dev/null)
RC=$?
expect_match "3.8 GiB + context over a 4 GiB cap: out of memory" "$OUT" '^oom 2$'
expect_eq "and vram run returns the command's exit status" "$RC" 3

# 3. the same through cuGetProcAddress, as CUDA 12/13 runtimes resolve it
OUT=$("$VRAM" run --quiet --vram 4G -- "$SIMALLOC" --proc-address --bytes 1G --count 4 </dev/null)
expect_match "cuGetProcAddress-resolved cuMemAlloc is capped the same" "$OUT" '^oom 2$'
OUT=$("$VRAM" run --quiet --vram 4G -- "$SIMALLOC" --proc-address --bytes 1G --count 3 </dev/null)
expect_match "and the view too (cuMemGetInfo by cuGetProcAddress)" "$OUT" \
    "free $((GiB - CTX)) total $((4 * GiB))"

# without --vram, vram run counts but shows the whole GPU
OUT=$("$VRAM" run --quiet -- "$SIMALLOC" --bytes 1G </dev/null)
expect_match "no --vram: the whole GPU is seen, by CUDA and NVML" "$OUT" \
    "total $((16 * GiB)) nvml $((16 * GiB))$"

# 4. the cap with no vram run: LD_PRELOAD and VRAM_CAP
OUT=$(LD_PRELOAD="$SHIM" VRAM_CAP=2G "$SIMALLOC" --bytes 2G </dev/null)
expect_match "VRAM_CAP alone caps a process" "$OUT" '^oom 2$'

# 5. vram status shows the slice and what libvramcap counted
run_bg capped --vram 4G -- "$SIMALLOC" --bytes 1G --hold
wait_line "$T/capped.out" '^ready' || not_ok "capped job started" "$(cat "$T/capped.err")"
P=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$T/capped.out")
J=$("$VRAM" status --json)
expect_eq "status: the capped process's slice and count" \
    "$(echo "$J" | jq -c ".gpus[0].processes[] | select(.pid == $P) | [.cap, .counted, .used]")" \
    "[$((4 * GiB)),$((GiB + CTX)),$((GiB + CTX))]"
expect_match "status -p: the slice in the process table" "$("$VRAM" status -p)" \
    "\[slice 1\.29 of 4\.00 GiB\]"
kill $P
wait $BG 2>/dev/null

# 6. one budget for all the processes of one vram run
# (the second starts once the first holds its 2 GiB: under load a fixed
# pause let the second go first, take its 2 GiB, exit, and leave them to
# the first: two ready, none refused)
OUT=$("$VRAM" run --quiet --vram 4G -- sh -c \
    "'$SIMALLOC' --bytes 2G --hold >'$T/six.out' 2>&1 & A=\$!
     until grep -q '^ready\\|^oom' '$T/six.out' || ! kill -0 \$A; do sleep 0.05; done; cat '$T/six.out'
     '$SIMALLOC' --bytes 2G </dev/null; kill \$A; wait" 2>&1)
expect_eq "two processes of one group: one gets 2 GiB, the other is refused" \
    "$(echo "$OUT" | grep -c '^ready') $(echo "$OUT" | grep -c '^oom 2')" "1 1"

# 7. a member killed with SIGKILL gives its share back
# (killed once it holds them, not after a pause it may not have used)
OUT=$("$VRAM" run --quiet --vram 4G -- sh -c \
    "'$SIMALLOC' --bytes 3G --hold >'$T/seven.out' 2>&1 & A=\$!
     until grep -q '^ready\\|^oom' '$T/seven.out' || ! kill -0 \$A; do sleep 0.05; done; kill -9 \$A; wait \$A
     '$SIMALLOC' --bytes 3G </dev/null" 2>&1)
expect_match "the member killed held its 3 GiB first" "$(cat "$T/seven.out")" "^ready"
expect_match "after SIGKILL, its 3 GiB are free for the next member" "$OUT" \
    "ready [0-9]+ free $((GiB - CTX))"

# 8. no overshoot: 4 processes x 8 threads allocating 64 MiB at the same instant
# a copy of its own: what is killed after is this test's hammers, no one else's
cp "$HAMMER" "$T/hammer"
run_bg hammer --quiet --vram 3G -- sh -c \
    "for i in 1 2 3 4; do '$T/hammer' 8 64M '$T/go' & done; wait"
for _ in $(seq 1 100); do
    [ "$(grep -c '^ctx' "$T/hammer.out" 2>/dev/null)" -ge 4 ] && break
    sleep 0.05
done
touch "$T/go"
for _ in $(seq 1 100); do
    [ "$(grep -c '^done' "$T/hammer.out" 2>/dev/null)" -ge 4 ] && break
    sleep 0.1
done
expect_eq "all 4 hammering processes stopped at the cap" "$(grep -c '^done' "$T/hammer.out")" 4
HELD=$("$VRAM" status --json | jq '[.gpus[0].processes[] | select(.cap != null) | .used] | add')
[ "$HELD" -le $((3 * GiB)) ] && ok "what they hold ($HELD) never passes the 3 GiB cap" ||
    not_ok "no overshoot" "held $HELD > $((3 * GiB))"
[ "$HELD" -gt $((3 * GiB - 64 * MiB)) ] && ok "and the cap was really reachable" ||
    not_ok "the cap was reachable" "held only $HELD"
pkill -f "^$T/hammer"
wait $BG 2>/dev/null

# 10. members in PID namespaces of their own, each with its own /proc, as
#     container runtimes and Apptainer make them (issue 42, item 5): each
#     is pid 1 there, and was counted by that pid, so that the second took
#     the first's place in the group (its pid 1 was not the first's) and
#     the first's share went back: both admitted over the cap, and vram
#     status (on the host, where neither is pid 1) listed neither
ns_pair() { # NAME SIZE: two members of one 1 GiB slice, each in a namespace of its own
    run_bg "$1" --quiet --vram 1G -- sh -c "
        unshare --kill-child -pf --mount-proc '$SIMALLOC' --bytes $2 --hold >'$T/$1.a' 2>&1 &
        A=\$!
        until grep -q '^ready\|^oom' '$T/$1.a' 2>/dev/null; do sleep 0.05; done
        unshare --kill-child -pf --mount-proc '$SIMALLOC' --bytes $2 --hold >'$T/$1.b' 2>&1 &
        B=\$!
        until grep -q '^ready\|^oom' '$T/$1.b' 2>/dev/null; do sleep 0.05; done
        echo \$A \$B >'$T/$1.pids'
        echo both; wait"
    wait_line "$T/$1.out" '^both'
}
ns_end() { # NAME: its unshares (each takes its member, pid 1 of its namespace, with it)
    kill -9 $(cat "$T/$1.pids") 2>/dev/null # unshare ignores TERM while it waits
    wait $BG 2>/dev/null
}
if unshare --kill-child -pf --mount-proc true 2>/dev/null; then
    ns_pair nsbig 400M
    expect_eq "two 400 MiB members (with their contexts 700 MiB each), 1 GiB slice: one admitted" \
        "$(cat "$T/nsbig.a" "$T/nsbig.b" | grep -c '^ready') $(cat "$T/nsbig.a" "$T/nsbig.b" | grep -c '^oom')" "1 1"
    ns_end nsbig
    ns_pair nssmall 100M
    expect_eq "two 100 MiB members: both admitted" "$(cat "$T/nssmall.a" "$T/nssmall.b" | grep -c '^ready')" 2
    expect_eq "vram status lists both, with the slice and what each counted" \
        "$("$VRAM" status --json | jq -c "[.gpus[0].processes[] | select(.cap == $GiB) | .counted]")" \
        "[$((100 * MiB + CTX)),$((100 * MiB + CTX))]"
    ns_end nssmall
else
    echo "# skipped 10: no PID namespace can be made here (unshare -pf --mount-proc)"
fi

# 9. RTLD_NEXT stays relative to its caller through libvramcap's dlsym
OUT=$(LD_PRELOAD="$SHIM:$NEXTPROBE" "$CALLPPID")
RC=$?
expect_eq "a profiler-style preload's dlsym(RTLD_NEXT) still finds the next getppid" "$RC" 0
expect_match "and gets the real answer" "$OUT" "^ppid $$"

finish
