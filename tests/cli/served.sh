#!/bin/sh
# vram status, doctor and reclaim know the models of a live vram serve
# (issue 31): by the daemon's state and its cgroups, a model's processes
# (its main one, and a worker it started) are shown as "model NAME of vram
# serve", never proposed or taken for reclaim, and pointed at vram unload
# NAME. Another user's process that carries the model's tag, under the
# model's name, gains nothing: it is reclaimed as before.
# Skipped (77) where it cannot make users: not root, or no useradd/setpriv.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/users.sh"
: "${TESTMODEL:?}"
make_users || { echo "1..0 # SKIP needs root, useradd and setpriv to make a user"; exit 77; }
# the model's programs, under names of their own (counted and killed by name
# nowhere else)
cp "$TESTMODEL" "$T/bin/testmodel-served"
cp "$SIMALLOC" "$T/bin/simalloc-served"
chmod a+rx "$T/bin/testmodel-served" "$T/bin/simalloc-served"
export VRAM_SOCKET="$T/vram.sock"
# where the CLI finds the daemon's state: the configuration vram serve reads
export VRAM_CONFIG="$T/vram.conf"
PORTS=$((10000 + ($$ * 11) % 20000))
{
    serve_head
    cat <<CONF

[model m]
command = sh -c '$T/bin/simalloc-served --bytes 256M --hold & exec $T/bin/testmodel-served --bytes 512M'
vram = 1G
gpu = 0
swap = driver
keep_alive = forever
CONF
} >"$T/vram.conf"
"$VRAM" serve >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
wait_for 20 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
trap 'kill -TERM $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null; cleanup' EXIT

run() { OUT=$("$@" 2>&1); RC=$?; }
run "$VRAM" load m
expect_match "the model is ready" "$OUT" "^m: ready on GPU 0"
M=$("$VRAM" ps --json | jq -r '.models[0].pid')
# its worker: the simalloc its command started, on the GPU once it says so
wait_for 10 sh -c "'$VRAM' status --json | jq -e '[.gpus[].processes[] | select(.name == \"simalloc-served\")] | length == 1' >/dev/null"
W=$("$VRAM" status --json | jq '.gpus[].processes[] | select(.name == "simalloc-served") | .pid')

# another user's process, named like the model and carrying its tag
$AS_B env VRAM_MODEL_PID="$M" PORT=$((PORTS + 500)) "$T/bin/testmodel-served" --bytes 128M \
    >"$T/b/fake.out" 2>&1 &
F=$!
JOBS="$JOBS $F"
wait_for 10 sh -c "'$VRAM' status --json | jq -e '.gpus[].processes[] | select(.pid == $F)' >/dev/null" ||
    not_ok "the other user's process runs" "$(cat "$T/b/fake.out")"

J=$("$VRAM" status --json)
expect_eq "status --json: the model's main process and its worker, by name" \
    "$(echo "$J" | jq -c "[.gpus[].processes[] | select(.pid == $M or .pid == $W) | .model] | sort")" '["m","m"]'
expect_eq "status --json: the other user's look-alike is no model's" \
    "$(echo "$J" | jq -c ".gpus[].processes[] | select(.pid == $F) | .model")" null
run "$VRAM" status -p
expect_match "status -p: the main process shown as the model of vram serve" "$OUT" \
    "^ +$M +vram-model .* model m of vram serve: "
expect_match "status -p: its worker too" "$OUT" "^ +$W +vram-model .* model m of vram serve: "

# idle for 2 s: doctor and reclaim
run "$VRAM" doctor --idle 2s --json
expect_eq "doctor --idle: the model, as information, pointed at vram unload" \
    "$(echo "$OUT" | jq -c "[.findings[] | select(.pid == $M) | [.level, .fix]]")" \
    '[["info","nothing to do: vram serve gives it back after its keep_alive; vram unload m frees it now"]]'
expect_eq "doctor --idle: reclaim proposed for none of the model's processes" \
    "$(echo "$OUT" | jq "[.findings[] | select((.pid == $M or .pid == $W) and (.fix | test(\"reclaim\")))] | length")" 0
run "$VRAM" doctor --idle 2s
expect_match "doctor --idle: by name" "$OUT" "model m of vram serve \(pid $M\) holds [0-9.]+ [MG]iB and did no GPU work for 2s"
run "$VRAM" reclaim --idle 2s --all-users
case "$OUT" in
*"would stop $M "* | *"would stop $W "*) not_ok "reclaim --idle: the model's processes are not targets" "$OUT" ;;
*) ok "reclaim --idle: the model's processes are not targets" ;;
esac
expect_match "reclaim --idle: left to vram serve, with the fix" "$OUT" \
    "left to vram serve: $M, model m \(vram-model, idle\): .* vram unload m frees it"
expect_match "reclaim --idle: the other user's look-alike is a target" "$OUT" "would stop $F \(testmodel-served, $USER_B, idle\)"
run "$VRAM" reclaim --idle 2s --yes --grace 1
expect_eq "reclaim --idle --yes: the model and its worker still run" \
    "$(kill -0 "$M" 2>/dev/null && kill -0 "$W" 2>/dev/null && echo running)" running
expect_eq "reclaim --idle --yes: vram ps says it is ready" "$("$VRAM" ps --json | jq -r '.models[0].state')" ready
J=$("$VRAM" reclaim --idle 2s --all-users --json) # the model is vram-model's, not root's
expect_eq "reclaim --json: the models left to vram serve" \
    "$(echo "$J" | jq -c "[.served[] | select(.pid == $M) | [.model, .fix]]")" '[["m","vram unload m"]]'

# as root, --all-users reaches the look-alike: it is taken like any process
run "$VRAM" reclaim --idle 2s --all-users --yes --grace 1
wait_for 5 sh -c "! kill -0 $F 2>/dev/null"
expect_eq "the other user's look-alike was reclaimed" "$(kill -0 "$F" 2>/dev/null && echo running || echo gone)" gone
expect_eq "and the model was not" "$(kill -0 "$M" 2>/dev/null && echo running)" running

finish
