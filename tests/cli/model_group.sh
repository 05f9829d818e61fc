#!/bin/bash
# A capped model of vram serve is one budget per GPU across all its
# processes (issue 21): a launcher and its workers, or a worker per GPU
# (vLLM, SGLang), together hold its share on each GPU, not a share each.
# The daemon makes a group file per GPU of the model, as `vram run` does;
# the files go when the model does (unload, crash, a daemon that finds it
# dead), and stay while a restarted daemon adopts it.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
cp "$TESTMODEL" "$T/testmodel-group"
TM="$T/testmodel-group"
export VRAM_SIM="$SRV"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
export VRAM_SOCKET="$T/vram.sock"
PORTS=$((10000 + ($$ * 29) % 20000))
# duo: two processes on one GPU, 2000M each (and a context of 520M each on
#   the simulated H200) in a share of 4G: either alone fits, both do not.
# pair: a worker per GPU after the server (512M and a context on each GPU):
#   a worker's 1G and a context fit in the 3G share left on its GPU, a
#   second 1G only if it had the share to itself.
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
port_base = $PORTS
min_resident = 0

[model duo]
command = sh -c '"$SIMALLOC" --bytes 2000M --hold >"$T/duo1.out" 2>&1 </dev/null &
  until grep -q "^ready\|^oom" "$T/duo1.out" 2>/dev/null; do sleep 0.05; done;
  "$SIMALLOC" --bytes 2000M --hold >"$T/duo2.out" 2>&1 </dev/null &
  exec "$TM" --bytes 16M'
vram = 4G
gpu = 0
cap = yes
swap = driver

# big: a share far larger than what it holds, so that its promise shows
[model big]
command = "$TM" --bytes 16M
vram = 60G
gpu = 0
cap = yes
swap = driver

[model pair]
command = sh -c '( until curl -sf -o /dev/null http://127.0.0.1:\${PORT}/health; do sleep 0.05; done;
  CUDA_VISIBLE_DEVICES=\${CUDA_VISIBLE_DEVICES%%,*} "$SIMALLOC" --devices 1 --bytes 1G --then 1G --hold >"$T/w0.out" 2>&1 </dev/null &
  CUDA_VISIBLE_DEVICES=\${CUDA_VISIBLE_DEVICES#*,} "$SIMALLOC" --devices 1 --bytes 1G --then 1G --hold >"$T/w1.out" 2>&1 </dev/null & ) &
  exec "$TM" --bytes 512M --all-gpus'
vram = 3G
gpus = 2
cap = yes
swap = driver
CONF

run() { OUT=$("$@" 2>&1); RC=$?; }
state() { "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .$2"; }
slices() { find "$T" -maxdepth 1 -name 'vram-group-*' | wc -l; }
has() { grep -q "$2" "$1" 2>/dev/null; }
start_daemon() {
    "$VRAM" serve --config "$T/vram.conf" >>"$T/serve.log" 2>&1 &
    DAEMON=$!
    JOBS="$JOBS $DAEMON"
    wait_for 10 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
}
# the daemon stops its models as it exits; what is left, by pid
stop_all() {
    kill -TERM "$DAEMON" 2>/dev/null
    wait_for 10 sh -c "! kill -0 $DAEMON 2>/dev/null"
    for f in "$T"/duo1.out "$T"/duo2.out; do
        p=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$f" 2>/dev/null)
        [ -n "$p" ] && JOBS="$JOBS $p"
    done
    cleanup
}
trap stop_all EXIT
start_daemon

# 1. two processes on one GPU share the model's 4G: the second is refused
#    at what the first left (each alone had 4G before)
run "$VRAM" load duo --timeout 30s
expect_match "duo loads" "$OUT" "^duo: ready"
wait_for 10 has "$T/duo2.out" '^ready\|^oom'
expect_match "its first process takes 2000M of the 4G share" "$(cat "$T/duo1.out")" "^ready"
expect_match "its second is refused the 2000M more (one budget for both)" \
    "$(cat "$T/duo2.out")" "^oom"
expect_eq "one group file for its one GPU" "$(slices)" 1
P1=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$T/duo1.out")
PM=$(state duo pid)
JOBS="$JOBS $PM"
J=$("$VRAM" status --json)
expect_eq "status: its processes on GPU 0 show the one 4G slice" \
    "$(echo "$J" | jq -c "[.gpus[0].processes[] | select(.pid == $P1 or .pid == $PM) | .cap] | unique")" \
    "[$((4 * GiB))]"
expect_eq "and what they hold together is within it" \
    "$(echo "$J" | jq "[.gpus[0].processes[] | select(.pid == $P1 or .pid == $PM) | .counted] | add <= $((4 * GiB))")" \
    true

# 2. a restarted daemon adopts the model and keeps its file; a model that
#    died while no daemon ran leaves none once a daemon is back
kill -9 "$DAEMON"
wait "$DAEMON" 2>/dev/null
start_daemon
expect_eq "a restarted daemon adopts duo" "$(state duo state)" ready
expect_eq "and its group file stays" "$(slices)" 1
kill -9 "$DAEMON"
wait "$DAEMON" 2>/dev/null
kill -9 "$PM" "$P1" 2>/dev/null
wait_for 10 sh -c "! kill -0 $PM 2>/dev/null && ! kill -0 $P1 2>/dev/null"
start_daemon
wait_for 10 sh -c "[ \"\$(find '$T' -maxdepth 1 -name 'vram-group-*' | wc -l)\" = 0 ]"
expect_eq "the file of a model that died while no daemon ran is removed" "$(slices)" 0

# 3. a worker per GPU: each GPU capped at the share, the server's part of
#    it counted (a private cap each would have let the second 1G in)
run "$VRAM" load pair --timeout 30s
expect_match "pair loads" "$OUT" "^pair: ready"
wait_for 10 has "$T/w0.out" '^dev 0 then'
wait_for 10 has "$T/w1.out" '^dev 0 then'
for w in 0 1; do
    expect_match "worker $w takes 1G on its GPU" "$(cat "$T/w$w.out")" "^dev 0 ok$"
    expect_match "worker $w is refused a second 1G (the server holds part of the share)" \
        "$(cat "$T/w$w.out")" "^dev 0 then oom"
done
expect_eq "one group file per GPU of the model" "$(slices)" 2
PP=$(state pair pid)
JOBS="$JOBS $PP"
expect_eq "status: its server shows the 3G slice once on each of its GPUs" \
    "$("$VRAM" status --json | jq -c "[.gpus[] | .processes[] | select(.pid == $PP) | .cap]")" \
    "[$((3 * GiB)),$((3 * GiB))]"

# 4. unloaded, crashed: the files go with the model
run "$VRAM" unload pair
wait_for 10 sh -c "[ \"\$(find '$T' -maxdepth 1 -name 'vram-group-*' | wc -l)\" = 0 ]"
expect_eq "unloaded: no group file left" "$(slices)" 0
"$VRAM" load duo --timeout 30s >/dev/null 2>&1
expect_eq "duo again: its file" "$(slices)" 1
PM=$(state duo pid)
kill -9 "$PM"
# back: started again, ready, another process (a stopped model has no pid,
# and its old file may not be gone yet)
back() { [ "$(state duo state)" = ready ] && [ "$(state duo pid)" != "$PM" ]; }
wait_for 20 back
expect_eq "crashed and started again: one file, the new process's" "$(slices)" 1
run "$VRAM" unload duo

# 5. a suspended model's slices promise nothing: what it gave back is free
#    for a `vram run` (counted as taken while it runs)
"$VRAM" load big --timeout 30s >/dev/null 2>&1
JOBS="$JOBS $(state big pid)"
FREE=$("$VRAM" status --json | jq '.gpus[0].memory.free')
WANT=$(((FREE - 30 * GiB) / MiB))M
run "$VRAM" run --quiet --gpu 0 --vram "$WANT" -- true
expect_eq "big ready: its unused share is promised, a $WANT run does not fit beside it" "$RC" 1
"$VRAM" suspend big >/dev/null 2>&1
expect_eq "big suspended" "$(state big state)" suspended
run "$VRAM" run --quiet --gpu 0 --vram "$WANT" -- true
expect_eq "big suspended: its slice promises nothing, the $WANT run fits" "$RC" 0
"$VRAM" resume big >/dev/null 2>&1
expect_eq "big back" "$(state big state)" ready
run "$VRAM" run --quiet --gpu 0 --vram "$WANT" -- true
expect_eq "big back: promised again" "$RC" 1
run "$VRAM" unload big
kill -TERM "$DAEMON"
wait_for 15 sh -c "! kill -0 $DAEMON 2>/dev/null"
expect_eq "the daemon gone: no group file left" "$(slices)" 0

# 5. a folder others may write without the sticky bit is no place for
#    slices: the daemon says so and caps each process on its own
mkdir -m 0777 "$T/open"
chmod 0777 "$T/open" # whatever the umask
VRAM_RUN_DIR="$T/open" start_daemon
rm -f "$T/duo1.out" "$T/duo2.out"
run "$VRAM" load duo --timeout 30s
expect_match "duo loads without group files" "$OUT" "^duo: ready"
wait_for 5 grep -q 'duo: no group file' "$T/serve.log"
expect_match "the daemon says why, and what it does instead" "$(cat "$T/serve.log")" \
    "duo: no group file \($T/open is writable by other users without the sticky bit.*\): a cap for each of its processes alone"
wait_for 10 has "$T/duo2.out" '^ready\|^oom'
expect_match "each process has the share to itself" "$(cat "$T/duo2.out")" "^ready"
expect_eq "and no file was made" "$(find "$T/open" -name 'vram-group-*' | wc -l)" 0
run "$VRAM" unload duo
finish
