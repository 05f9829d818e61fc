#!/bin/sh
# vram run against the simulated driver: choosing the GPU, admission (slices
# are promises), waiting in line, exit statuses, signals, what a job leaves
# behind, and bad input refused before anything starts.
. "$(dirname "$0")/lib.sh"
export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"

run() { OUT=$("$@" 2>&1); RC=$?; }
pid_of() { # FILE: the pid simalloc printed
    for _ in $(seq 1 100); do
        P=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$1" 2>/dev/null)
        [ -n "$P" ] && return 0
        sleep 0.05
    done
    return 1
}

# bad input, refused before anything runs
run "$VRAM" run --vram lots -- true
expect_eq "--vram lots: exit 2" "$RC" 2
expect_match "--vram lots: says what to give" "$OUT" "--vram 'lots': give a size"
run "$VRAM" run --vram 0 -- true
expect_eq "--vram 0: exit 2" "$RC" 2
run "$VRAM" run --gpu 7 -- true
expect_eq "--gpu 7 on a one-GPU machine: exit 2" "$RC" 2
expect_match "and lists the GPUs there are" "$OUT" "no such GPU; there are: 0 \(GPU-3f1c2a9e"
run "$VRAM" run --gpu GPU-00000000 -- true
expect_eq "an unknown UUID: exit 2" "$RC" 2
run "$VRAM" run --vram 1G
expect_eq "no command: exit 2" "$RC" 2
run "$VRAM" run --timeout 5s -- true
expect_match "--timeout without --wait" "$OUT" "needs --wait"
run "$VRAM" run -- /nonexistent/command arg
expect_eq "a command that cannot start: exit 127" "$RC" 127
expect_match "with the reason" "$OUT" "cannot start '/nonexistent/command': No such file"

# exit statuses pass through
run "$VRAM" run --quiet -- sh -c 'exit 7'
expect_eq "the command's exit status" "$RC" 7
run "$VRAM" run --quiet -- sh -c 'kill -9 $$'
expect_eq "death by signal 9: 137" "$RC" 137

# the report
run "$VRAM" run --vram 4G -- "$SIMALLOC" --bytes 1G </dev/null
expect_match "reports the peak against the slice" "$OUT" \
    "vram run: exit 0 after [0-9.]+ s on GPU 0; peak VRAM 1.29 GiB of 4.00 GiB; GPU energy .*nothing left on the GPU"

# signals sent to vram run reach the command
"$VRAM" run --quiet -- "$SIMALLOC" --bytes 256M --hold >"$T/sig.out" 2>&1 &
R=$!
JOBS="$JOBS $R"
pid_of "$T/sig.out" || not_ok "held job started"
kill -TERM $R
wait $R
expect_eq "kill -TERM vram-run: the command gets it (143)" "$?" 143

# admission: a 10 GiB slice is a promise, even before it is used
"$VRAM" run --quiet --vram 10G -- "$SIMALLOC" --bytes 256M --hold >"$T/big.out" 2>&1 &
R1=$!
JOBS="$JOBS $R1"
pid_of "$T/big.out" || not_ok "first 10 GiB job started"
H1=$P
run "$VRAM" run --vram 10G -- true
expect_eq "a second 10 GiB slice on a 13.9 GiB-free card: refused (exit 1)" "$RC" 1
expect_match "and says why and what to do" "$OUT" "no GPU has room: 10.0 GiB free.*--wait"
run "$VRAM" run --quiet --vram 10G --wait --timeout 0.5s -- true
expect_eq "--wait --timeout gives up (exit 1)" "$RC" 1
expect_match "saying it timed out" "$OUT" "timed out waiting"
"$VRAM" run --vram 10G --wait -- "$SIMALLOC" --bytes 256M >"$T/waiter.out" 2>&1 </dev/null &
W=$!
JOBS="$JOBS $W"
wait_for 10 grep -q 'waiting [0-9]* s for' "$T/waiter.out"
grep -q '^ready' "$T/waiter.out" && not_ok "the waiter waits" || ok "the waiter waits while the slice is taken"
expect_match "and says so" "$(cat "$T/waiter.out")" "waiting [0-9]+ s for 10.0 GiB free"
kill $H1
wait $R1 2>/dev/null
pid_of "$T/waiter.out" && ok "the waiter starts once the slice is free" ||
    not_ok "the waiter starts" "$(cat "$T/waiter.out")"
wait $W

# a vram run killed by SIGKILL leaves a group file; it must not block anyone
"$VRAM" run --quiet --vram 10G -- "$SIMALLOC" --bytes 256M --hold >"$T/dead.out" 2>&1 &
R2=$!
JOBS="$JOBS $R2"
pid_of "$T/dead.out"
kill -9 $R2 $P
wait $R2 2>/dev/null
# until the job is gone from the process table (an orphan is reaped by
# init, which a loaded machine may not run at once): a zombie still holds
# its pid, and its slice
wait_for 10 sh -c "[ ! -e /proc/$P ]"
run "$VRAM" run --quiet --vram 10G -- true
expect_eq "after a vram run died, its slice is free again" "$RC" 0

# what a job leaves behind: named, and with --reap stopped
# (the command ends once its orphan holds the memory, not after a pause
# the orphan may not have used)
orphan() { echo "'$SIMALLOC' --bytes 1G --hold >'$T/$1' 2>&1 & until grep -q '^ready' '$T/$1' || ! kill -0 \$!; do sleep 0.05; done"; }
run "$VRAM" run -- sh -c "$(orphan orphan1.out)"
expect_match "an orphan still holding VRAM is named" "$OUT" \
    "pid [0-9]+ \(simalloc\) still holds 1.29 GiB on GPU 0"
expect_match "with the way to stop it" "$OUT" "--reap would stop it"
# stop that orphan (by its pid: other tests' jobs run beside this one)
kill "$(echo "$OUT" | sed -n 's/^vram run: pid \([0-9]*\) (simalloc) still holds.*/\1/p' | head -1)"
run "$VRAM" run --reap -- sh -c "$(orphan orphan2.out)"
expect_match "--reap stops it and says the memory is back" "$OUT" \
    "reaped 1 process; their memory is back"
R=$(echo "$OUT" | sed -n 's/^vram run: pid \([0-9]*\) (simalloc) still holds.*/\1/p' | head -1)
ST=$(ps -o stat= -p "$R" 2>/dev/null)
case "$ST" in "" | Z*) ok "the reaped process is gone" ;; *) not_ok "the reaped process is gone" "pid $R: $ST" ;; esac

# the GPU: auto takes the one with the most room; --gpu picks one
export VRAM_SIM="$SRV"
"$VRAM" run --quiet --vram 1G -- "$SIMALLOC" --bytes 256M --hold >"$T/auto.out" 2>&1 &
JOBS="$JOBS $!"
pid_of "$T/auto.out"
A=$P
"$VRAM" run --quiet --gpu 3 -- "$SIMALLOC" --bytes 256M --hold >"$T/three.out" 2>&1 &
JOBS="$JOBS $!"
pid_of "$T/three.out"
B=$P
J=$("$VRAM" status --json)
expect_eq "auto: GPU 0 (most room; ties go to the lowest index)" \
    "$(echo "$J" | jq -c "[.gpus[] | select(.processes[].pid == $A) | .index]")" "[0]"
expect_eq "--gpu 3: GPU 3" \
    "$(echo "$J" | jq -c "[.gpus[] | select(.processes[].pid == $B) | .index]")" "[3]"
kill $A $B

finish
